"""An in-memory FIFO replay buffer of whole trajectories (DigiRL keeps 2000–5000 of them).

It can also prioritise, as DistRL's replay does: every trajectory carries a priority (new ones get
the highest so far, so each is replayed at least once with good odds) and
:meth:`ReplayBuffer.sample_prioritized` draws distinct trajectories with probability ∝ priority^α.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping

import numpy as np

from digirl.core.types import Trajectory

__all__ = ["ReplayBuffer"]


class ReplayBuffer:
    """Holds the most recent ``capacity`` trajectories; adding beyond it drops the oldest.

    Env-failure trajectories are not the agent's doing and are dropped on :meth:`add` unless
    ``keep_env_failures`` is set. Empty trajectories (no steps) are kept but contribute no steps.
    """

    def __init__(self, capacity: int, *, keep_env_failures: bool = False) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ValueError(f"capacity must be a positive integer, got {capacity!r}")
        self.capacity = capacity
        self.keep_env_failures = keep_env_failures
        self._trajs: deque[Trajectory] = deque(maxlen=capacity)
        self._cum: np.ndarray | None = None  # cumulative step counts, rebuilt lazily after add()
        self._priority: dict[str, float] = {}  # traj_id -> priority

    def add(self, trajectories: Iterable[Trajectory]) -> int:
        """Append trajectories (oldest evicted first). Returns how many were kept."""
        kept = 0
        for t in trajectories:
            if not isinstance(t, Trajectory):
                raise TypeError(f"ReplayBuffer.add takes Trajectory objects, got {type(t).__name__}")
            if t.env_failure and not self.keep_env_failures:
                continue
            if len(self._trajs) == self.capacity:  # the oldest is about to be evicted
                self._priority.pop(self._trajs[0].traj_id, None)
            self._priority[t.traj_id] = max(self._priority.values(), default=1.0)
            self._trajs.append(t)
            kept += 1
        if kept:
            self._cum = None
        return kept

    def clear(self) -> None:
        """Drop everything."""
        self._trajs.clear()
        self._priority.clear()
        self._cum = None

    def __len__(self) -> int:
        """Number of trajectories held."""
        return len(self._trajs)

    @property
    def num_steps(self) -> int:
        """Number of steps over all held trajectories."""
        cum = self._cumulative()
        return int(cum[-1]) if len(cum) else 0

    def trajectories(self) -> list[Trajectory]:
        """The held trajectories, oldest first."""
        return list(self._trajs)

    def steps(self) -> list[tuple[Trajectory, int]]:
        """Every held step as ``(trajectory, step_index)``, oldest first."""
        return [(t, i) for t in self._trajs for i in range(len(t.steps))]

    def _cumulative(self) -> np.ndarray:
        if self._cum is None:
            self._cum = np.cumsum([len(t.steps) for t in self._trajs], dtype=np.int64)
        return self._cum

    def sample_steps(self, n: int, rng: np.random.Generator) -> list[tuple[Trajectory, int]]:
        """``n`` steps drawn uniformly with replacement, as ``(trajectory, step_index)``."""
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        cum = self._cumulative()
        total = int(cum[-1]) if len(cum) else 0
        if total == 0:
            if n == 0:
                return []
            raise ValueError("cannot sample steps from an empty replay buffer")
        flat = rng.integers(0, total, size=n)
        # searchsorted maps a flat step index to its trajectory in O(log T).
        ti = np.searchsorted(cum, flat, side="right")
        starts = np.concatenate(([0], cum[:-1]))
        trajs = list(self._trajs)  # deque indexing is O(n) in the middle
        return [(trajs[int(t)], int(f - starts[t])) for t, f in zip(ti, flat)]

    def sample_trajectories(self, n: int, rng: np.random.Generator) -> list[Trajectory]:
        """``n`` trajectories drawn uniformly with replacement."""
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        if not self._trajs:
            if n == 0:
                return []
            raise ValueError("cannot sample trajectories from an empty replay buffer")
        trajs = list(self._trajs)
        return [trajs[int(i)] for i in rng.integers(0, len(trajs), size=n)]

    # ------------------------------------------------------------------ prioritised replay
    def priority(self, traj_id: str) -> float:
        """The priority of a held trajectory (``KeyError`` if it is not held)."""
        return self._priority[traj_id]

    def set_priorities(self, priorities: Mapping[str, float]) -> None:
        """Update priorities by traj_id (ids no longer held are ignored). Priorities must be finite and >= 0."""
        for tid, p in priorities.items():
            if not (np.isfinite(p) and p >= 0):
                raise ValueError(f"priority of {tid!r} must be finite and >= 0, got {p}")
            if tid in self._priority:
                self._priority[tid] = float(p)

    def sample_prioritized(self, n: int, rng: np.random.Generator, *, alpha: float = 0.5, eps: float = 1e-3) -> list[Trajectory]:
        """``min(n, len)`` distinct trajectories, drawn with probability ∝ (priority + eps)^alpha.

        Weighted sampling without replacement (Efraimidis & Spirakis: the ``n`` largest ``u^(1/w)``);
        ``alpha = 0`` is uniform. Returned oldest first, as :meth:`trajectories`.
        """
        if n < 0 or alpha < 0 or eps <= 0:
            raise ValueError(f"need n >= 0, alpha >= 0 and eps > 0, got n={n}, alpha={alpha}, eps={eps}")
        trajs = list(self._trajs)
        if n >= len(trajs):
            return trajs
        w = (np.array([self._priority[t.traj_id] for t in trajs]) + eps) ** alpha
        keys = np.log(rng.random(len(trajs))) / w  # log(u^(1/w)): same order, no underflow
        chosen = np.sort(np.argpartition(-keys, n - 1)[:n]) if n else np.zeros(0, dtype=np.int64)
        return [trajs[int(i)] for i in chosen]
