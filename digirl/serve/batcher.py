"""Concurrent requests → one ``policy.act`` call: a queue, one worker thread, a short wait to fill a batch.

The worker takes the oldest waiting request, then keeps taking requests until the batch holds
``max_batch`` observations or ``max_wait_s`` has passed since that first request. Requests with the
same sampling settings (greedy, temperature) share one ``act`` call; the policy is only ever called
from the worker thread, so it needs no locking. A request that makes ``act`` fail fails alone: the
batch is retried in halves without it.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

from digirl.core.types import Observation
from digirl.policies.base import ActOutput

__all__ = ["ActCall", "BatchResult", "Batcher"]

log = logging.getLogger(__name__)

#: ``act(observations, greedy, temperature)`` → one output per observation.
ActCall = Callable[[Sequence[Observation], bool, float], list[ActOutput]]


@dataclass(frozen=True)
class BatchResult:
    outputs: list[ActOutput]
    #: How many observations the ``act`` call that produced these outputs held.
    batch_size: int


@dataclass
class _Job:
    observations: list[Observation]
    greedy: bool
    temperature: float
    future: Future[BatchResult] = field(default_factory=Future)


class Batcher:
    """Runs ``act`` on batches of queued observations in one background thread."""

    def __init__(self, act: ActCall, *, max_batch: int = 32, max_wait_s: float = 0.005) -> None:
        if max_batch < 1 or max_wait_s < 0:
            raise ValueError("max_batch must be >= 1 and max_wait_s >= 0")
        self.act = act
        self.max_batch = max_batch
        self.max_wait_s = max_wait_s
        self._q: queue.Queue[_Job | None] = queue.Queue()
        self._lock = threading.Lock()
        #: Sizes of the ``act`` calls made so far (observations per call), for stats and tests.
        self.batch_sizes: list[int] = []
        self.requests = 0
        #: Requests whose ``act`` failed even alone (each got the error; the others in its batch did not).
        self.failed = 0
        self._thread = threading.Thread(target=self._run, name="digirl-serve-batcher", daemon=True)
        self._thread.start()

    def pending(self) -> int:
        """Requests waiting in the queue (not yet taken by the worker)."""
        return self._q.qsize()

    def submit(self, observations: list[Observation], *, greedy: bool, temperature: float) -> Future[BatchResult]:
        job = _Job(observations, greedy, temperature)
        with self._lock:
            self.requests += 1
        self._q.put(job)
        return job.future

    def close(self) -> None:
        self._q.put(None)
        self._thread.join(timeout=10)

    def _gather(self, first: _Job) -> tuple[list[_Job], bool]:
        jobs, size = [first], len(first.observations)
        deadline = time.monotonic() + self.max_wait_s
        while size < self.max_batch:
            try:
                nxt = self._q.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if nxt is None:
                return jobs, True
            jobs.append(nxt)
            size += len(nxt.observations)
        return jobs, False

    def _run(self) -> None:
        stop = False
        while not stop:
            first = self._q.get()
            if first is None:
                break
            jobs, stop = self._gather(first)
            groups: dict[tuple[bool, float], list[_Job]] = {}
            for j in jobs:
                groups.setdefault((j.greedy, j.temperature), []).append(j)
            for (greedy, temperature), group in groups.items():
                self._act(group, greedy, temperature)

    def _act(self, group: list[_Job], greedy: bool, temperature: float) -> None:
        """One ``act`` call for the group. Should it fail, the group is split in halves and each half
        tried again, down to single requests: the request that makes ``act`` fail gets the error
        alone and every other one its answer (a request that passed validation should never fail,
        so this is the safety net for what validation cannot foresee, e.g. a policy bug)."""
        obs = [o for j in group for o in j.observations]
        try:
            outputs = self.act(obs, greedy, temperature)
            if len(outputs) != len(obs):
                raise RuntimeError(f"the policy returned {len(outputs)} actions for {len(obs)} observations")
        except Exception as e:
            if len(group) > 1:
                log.warning("policy.act failed on a batch of %d requests (%s); retrying them apart", len(group), _one_line(e))
                half = len(group) // 2
                self._act(group[:half], greedy, temperature)
                self._act(group[half:], greedy, temperature)
                return
            log.error("policy.act failed on one request of %d observations: %s", len(obs), _one_line(e), exc_info=e)
            with self._lock:
                self.failed += 1
            group[0].future.set_exception(e)
            return
        with self._lock:
            self.batch_sizes.append(len(obs))
        i = 0
        for j in group:
            k = len(j.observations)
            j.future.set_result(BatchResult(outputs[i : i + k], len(obs)))
            i += k


def _one_line(e: BaseException) -> str:
    return f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
