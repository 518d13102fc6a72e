"""Filtered BC: behaviour-clone the steps of the top-reward (successful) trajectories."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from digirl.algorithms.base import ActorAlgorithm, Phase, Sample
from digirl.algorithms.configs import FilteredBCConfig
from digirl.algorithms.functional import filtered_bc_keep
from digirl.core.types import Trajectory
from digirl.data.annotations import StepAnnotation


class FilteredBC(ActorAlgorithm[FilteredBCConfig]):
    """Annotations: which steps the last update behaviour-cloned (those of the kept trajectories)."""

    name = "filtered_bc"
    config_class = FilteredBCConfig

    def select(self, trajectories: Sequence[Trajectory]) -> list[Trajectory]:
        trajs = [t for t in trajectories if not t.env_failure]
        keep = filtered_bc_keep([t.reward for t in trajs], self.cfg.fbc_quantile)
        return [t for t, k in zip(trajs, keep) if k]

    def update(
        self, trajectories: Sequence[Trajectory], phase: Phase, *, step_weights: Mapping[str, Sequence[float]] | None = None
    ) -> dict[str, float]:
        kept = self.select(trajectories)
        iw = step_weights or {}
        ids = {t.traj_id for t in kept}
        self._annotations = [
            StepAnnotation(t.traj_id, i, kept=t.traj_id in ids)
            for t in trajectories
            if not t.env_failure
            for i in range(t.length)
        ]
        samples = [
            Sample(s.observation, s.action, float(w))
            for t in kept
            for s, w in zip(t.steps, iw.get(t.traj_id, [1.0] * t.length))  # off-policy correction weights
        ]
        metrics = self.bc_actor(samples, phase)
        n = max(1, sum(1 for t in trajectories if not t.env_failure))
        metrics["train/kept_trajectory_fraction"] = len(kept) / n
        metrics["train/kept_steps"] = float(len(samples))
        return metrics
