"""An in-memory FIFO replay buffer of whole trajectories (DigiRL keeps 2000–5000 of them)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

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

    def add(self, trajectories: Iterable[Trajectory]) -> int:
        """Append trajectories (oldest evicted first). Returns how many were kept."""
        kept = 0
        for t in trajectories:
            if not isinstance(t, Trajectory):
                raise TypeError(f"ReplayBuffer.add takes Trajectory objects, got {type(t).__name__}")
            if t.env_failure and not self.keep_env_failures:
                continue
            self._trajs.append(t)
            kept += 1
        if kept:
            self._cum = None
        return kept

    def clear(self) -> None:
        """Drop everything."""
        self._trajs.clear()
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
