"""Data parallelism that leaves the algorithms unchanged and exact (a no-op in one process).

Under ``accelerate launch`` or ``torchrun`` every rank runs the same program with the same seed, so
every rank draws the SAME global minibatch. Each rank scores only its slice (:func:`shard`),
normalises its loss by the GLOBAL weight sum (:func:`all_sum`), and the gradients are summed
across ranks before clipping and the optimizer step. The update is then the one-process update on
the global minibatch, up to float rounding, with identical weights on every rank — no DDP wrapper,
no model-specific code. Trajectories travel through the trajectory store (rank 0 collects and
appends a shard; every rank reads it back), never as pickles.

Summing gradients, two ways with the same result:

- :func:`sum_grads` after the backward passes: every gradient in one flat buffer per dtype and
  device, one all-reduce each (the critics' small updates).
- :class:`GradSync` during the last backward pass of an optimizer step, as DDP does (the actor
  updates): the trainable parameters are grouped once into buckets of about ``bucket_mb`` in reverse
  registration order (the order backward tends to produce their gradients); a gradient hook notices
  when a bucket's gradients are all final and starts its all-reduce asynchronously while backward
  goes on. Buckets start strictly in bucket order on every rank (a ready bucket waits for the ones
  before it), so the collectives match even when ranks produce gradients in different orders or one
  rank, with an empty slice, runs no backward at all; :meth:`GradSync.finish` starts the rest in
  order (a missing gradient counts as zero), waits, and writes the sums back. No other collective may
  be issued from the backward pass after :meth:`GradSync.arm` until :meth:`GradSync.finish` (the
  buckets are collectives in flight, started at different times on different ranks).
  ``DIGIRL_GRAD_SYNC=flat`` makes it call :func:`sum_grads` instead (for benchmarks).

Process group: :func:`init` joins the group the launcher describes in the environment (``RANK``,
``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``/``MASTER_PORT``): NCCL on GPUs (each rank on
``cuda:LOCAL_RANK``), gloo on CPUs.
"""

from __future__ import annotations

import datetime
import functools
import logging
import os
from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import Any, TypeVar

import torch
import torch.distributed as dist

__all__ = [
    "GradSync",
    "all_sum",
    "barrier",
    "broadcast_parameters",
    "init",
    "is_main",
    "rank",
    "shard",
    "sum_grads",
    "world_size",
]

log = logging.getLogger(__name__)
T = TypeVar("T")


def _active() -> bool:
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def init(timeout_min: float = 120.0) -> bool:
    """Join the launcher's process group (once); True when running with more than one process.

    The long timeout covers rank 0 collecting and evaluating while the others wait at a barrier.
    """
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size() > 1
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return False
    cuda = torch.cuda.is_available() and os.environ.get("DIGIRL_DIST_BACKEND", "") != "gloo"
    if cuda:
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group(backend="nccl" if cuda else "gloo", timeout=datetime.timedelta(minutes=timeout_min))
    log.info("rank %d of %d (%s)", dist.get_rank(), dist.get_world_size(), dist.get_backend())
    return dist.get_world_size() > 1


def rank() -> int:
    return dist.get_rank() if _active() else 0


def world_size() -> int:
    return dist.get_world_size() if _active() else 1


def is_main() -> bool:
    """Rank 0 (or the only process): the one that collects, evaluates, logs and writes checkpoints."""
    return rank() == 0


def barrier() -> None:
    if _active():
        dist.barrier()


def shard(items: Sequence[T]) -> list[T]:
    """This rank's contiguous slice of a global batch (the whole batch in one process)."""
    n, r, w = len(items), rank(), world_size()
    lo, hi = (n * r) // w, (n * (r + 1)) // w
    return list(items[lo:hi])


def _reducible(t: torch.Tensor) -> torch.Tensor:
    """``t``, or a copy on this rank's GPU when the group is NCCL's, which reduces GPU tensors only
    (host scalars such as a count of dropped samples, CPU critics beside a GPU policy)."""
    if t.is_cuda or dist.get_backend() != "nccl":
        return t
    return t.to(torch.device("cuda", torch.cuda.current_device()))


def all_sum(t: torch.Tensor) -> torch.Tensor:
    """The sum of ``t`` over ranks (``t`` itself in one process); differentiable ``t`` is detached."""
    if not _active():
        return t
    out = _reducible(t.detach().clone())
    dist.all_reduce(out, op=dist.ReduceOp.SUM)
    return out.to(t.device)


def sum_grads(params: Iterable[torch.nn.Parameter]) -> None:
    """Sum the gradients of ``params`` over ranks, in place (a missing gradient counts as zero).

    Gradients are flattened into one buffer per dtype and device, so a step costs one
    all-reduce per buffer instead of one per parameter.
    """
    if not _active():
        return
    groups: dict[tuple[torch.dtype, torch.device], list[torch.nn.Parameter]] = {}
    for p in params:
        if p.requires_grad:
            if p.grad is None:
                p.grad = torch.zeros_like(p)
            groups.setdefault((p.grad.dtype, p.grad.device), []).append(p)
    for ps in groups.values():
        flat = _reducible(torch.cat([p.grad.reshape(-1) for p in ps if p.grad is not None]))
        dist.all_reduce(flat, op=dist.ReduceOp.SUM)
        pos = 0
        for p in ps:
            assert p.grad is not None
            n = p.grad.numel()
            p.grad.copy_(flat[pos : pos + n].view_as(p.grad))
            pos += n


class _Bucket:
    """Parameters whose gradients are all-reduced together, through one preallocated flat buffer."""

    def __init__(self, params: list[torch.nn.Parameter]) -> None:
        self.params = params
        size = sum(p.numel() for p in params)
        self.flat = _reducible(torch.empty(size, dtype=params[0].dtype, device=params[0].device))
        self.ready: set[int] = set()  # ids of the parameters whose gradient of this step is final
        self.started = False
        self.handle: Any = None

    def complete(self) -> bool:
        return len(self.ready) == len(self.params)

    def start(self) -> None:
        """Copy the gradients into the buffer and start its all-reduce (a missing gradient is zero)."""
        for p in self.params:
            if p.grad is None:
                p.grad = torch.zeros_like(p)
        grads = [p.grad.reshape(-1) for p in self.params if p.grad is not None]
        if all(g.device == self.flat.device for g in grads):
            torch.cat(grads, out=self.flat)
        else:  # CPU gradients under NCCL
            self.flat.copy_(torch.cat(grads))
        self.handle = dist.all_reduce(self.flat, op=dist.ReduceOp.SUM, async_op=True)
        self.started = True

    def finish(self) -> None:
        """Wait for the all-reduce and write the sums back into the gradients."""
        if not self.started:  # already finished (an error while finishing, then the context's exit)
            return
        self.handle.wait()
        pos = 0
        for p in self.params:
            assert p.grad is not None
            n = p.numel()
            p.grad.copy_(self.flat[pos : pos + n].view_as(p.grad))
            pos += n
        self.handle, self.started = None, False
        self.ready.clear()


def _bucketed(params: Sequence[torch.nn.Parameter], bucket_mb: float) -> list[list[torch.nn.Parameter]]:
    """``params`` in reverse order, cut into runs of one dtype and device of about ``bucket_mb`` each."""
    limit = bucket_mb * 2**20
    out: list[list[torch.nn.Parameter]] = []
    filling: dict[tuple[torch.dtype, torch.device], tuple[list[torch.nn.Parameter], list[int]]] = {}
    for p in reversed(params):
        key, nbytes = (p.dtype, p.device), p.numel() * p.element_size()
        bucket, size = filling.get(key, ([], [0]))
        if not bucket or size[0] + nbytes > limit:
            bucket, size = [], [0]
            filling[key] = (bucket, size)
            out.append(bucket)
        bucket.append(p)
        size[0] += nbytes
    return out


class GradSync:
    """Sums the gradients of ``params`` over ranks while the last backward pass of a step runs.

    Use as a context manager around an update's optimizer steps (its hooks live that long)::

        with GradSync(policy.parameters()) as sync:
            for step ...:
                for each micro-batch:
                    if last: sync.arm()   # this backward pass starts the all-reduces
                    loss.backward()
                sync.finish()             # every .grad now holds its sum over ranks
                clip; optimizer.step()

    The result is :func:`sum_grads`'s; ``arm`` only lets communication overlap the backward pass
    (without it, ``finish`` starts everything). A no-op in one process. ``history`` records every
    bucket started: (bucket index, whether it started during the backward pass).
    """

    def __init__(self, params: Iterable[torch.nn.Parameter], bucket_mb: float = 25.0) -> None:
        self.params = list(dict.fromkeys(p for p in params if p.requires_grad))
        self.active = _active() and bool(self.params)
        how = os.environ.get("DIGIRL_GRAD_SYNC", "overlap")
        if how not in ("overlap", "flat"):
            raise ValueError(f"DIGIRL_GRAD_SYNC={how!r}: use overlap (the default) or flat")
        self.flat = how == "flat"
        overlap = self.active and not self.flat
        self.buckets = [_Bucket(ps) for ps in _bucketed(self.params, bucket_mb)] if overlap else []
        self.history: list[tuple[int, bool]] = []
        self._armed = False
        self._next = 0  # the next bucket to start: buckets start in index order on every rank
        self._hooks: list[Any] = []

    def __enter__(self) -> GradSync:
        for i, b in enumerate(self.buckets):
            for p in b.params:
                hook = functools.partial(self._on_grad, i)
                self._hooks.append(p.register_post_accumulate_grad_hook(hook))  # type: ignore[no-untyped-call]
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        try:
            if exc is not None and self._armed:
                # Ranks that raise together after arm() (a non-finite loss) finish the step's collectives,
                # those that started none (an empty slice) included, so the next collective matches.
                self._complete()
        finally:
            for h in self._hooks:
                h.remove()
            self._hooks.clear()
            self._armed = False

    def arm(self) -> None:
        """The next backward pass is the optimizer step's last: its gradients are final."""
        self._armed = bool(self.buckets)

    def finish(self) -> None:
        """Make every gradient the sum over ranks (before clipping and the optimizer step)."""
        if not self.active:
            return
        if self.flat:
            sum_grads(self.params)
            return
        self._complete()

    def _complete(self) -> None:
        self._armed = False
        while self._next < len(self.buckets):
            self._start(during_backward=False)
        for b in self.buckets:
            b.finish()
        self._next = 0

    def _on_grad(self, index: int, p: torch.Tensor) -> None:
        if not self._armed:
            return
        bucket = self.buckets[index]
        if bucket.started:
            raise RuntimeError(
                "a gradient changed after its bucket's all-reduce started (a parameter accumulated twice "
                "in one backward pass, e.g. under reentrant checkpointing); set DIGIRL_GRAD_SYNC=flat"
            )
        bucket.ready.add(id(p))
        while self._next < len(self.buckets) and self.buckets[self._next].complete():
            self._start(during_backward=True)

    def _start(self, during_backward: bool) -> None:
        self.buckets[self._next].start()
        self.history.append((self._next, during_backward))
        self._next += 1


def broadcast_parameters(params: Iterable[torch.Tensor]) -> None:
    """Make every rank's ``params`` equal to rank 0's (guards against any difference in initialisation)."""
    if not _active():
        return
    with torch.no_grad():
        for p in params:
            data = p.data
            buf = _reducible(data)
            dist.broadcast(buf, src=0)
            if buf is not data:
                data.copy_(buf)
