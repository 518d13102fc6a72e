"""Data parallelism that leaves the algorithms unchanged and exact (a no-op in one process).

Under ``accelerate launch`` or ``torchrun`` every rank runs the same program with the same seed, so
every rank draws the SAME global minibatch. Each rank scores only its slice (:func:`shard`),
normalises its loss by the GLOBAL weight sum (:func:`all_sum`), and the gradients are summed
across ranks (:func:`sum_grads`) before clipping and the optimizer step. The update is then the
one-process update on the global minibatch, up to float rounding, with identical weights on every
rank — no DDP wrapper, no model-specific hooks. Trajectories travel through the trajectory store
(rank 0 collects and appends a shard; every rank reads it back), never as pickles.

Process group: :func:`init` joins the group the launcher describes in the environment (``RANK``,
``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``/``MASTER_PORT``): NCCL on GPUs (each rank on
``cuda:LOCAL_RANK``), gloo on CPUs.
"""

from __future__ import annotations

import datetime
import logging
import os
from collections.abc import Iterable, Sequence
from typing import TypeVar

import torch
import torch.distributed as dist

__all__ = [
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
