"""Filtered BC: behaviour-clone the steps of the top-reward (successful) trajectories."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from digirl.algorithms.base import Phase, Sample, actor_step_count, bc_update, make_optimizer
from digirl.algorithms.configs import FilteredBCConfig
from digirl.algorithms.functional import filtered_bc_keep
from digirl.core.types import Trajectory
from digirl.data.annotations import StepAnnotation
from digirl.policies.base import Policy
from digirl.utils import distributed as dist


class FilteredBC:
    name = "filtered_bc"
    config_class = FilteredBCConfig

    def __init__(self, policy: Policy, cfg: FilteredBCConfig, *, seed: int = 0) -> None:
        self.policy = policy
        self.cfg = cfg
        dist.broadcast_parameters(policy.parameters())  # identical start on every rank
        self.optimizer = make_optimizer(policy.parameters(), cfg.lr)
        self.rng = np.random.default_rng(seed)
        self._annotations: list[StepAnnotation] = []

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
        steps = actor_step_count(self.cfg, phase, samples)
        metrics = bc_update(
            self.policy,
            self.optimizer,
            samples,
            steps=steps,
            batch_size=self.cfg.batch_size,
            grad_accum=self.cfg.grad_accum,
            max_grad_norm=self.cfg.max_grad_norm,
            rng=self.rng,
        )
        n = max(1, sum(1 for t in trajectories if not t.env_failure))
        metrics["train/kept_trajectory_fraction"] = len(kept) / n
        metrics["train/kept_steps"] = float(len(samples))
        return metrics

    def annotations(self) -> list[StepAnnotation]:
        """Which steps the last update behaviour-cloned (those of the kept trajectories)."""
        return list(self._annotations)

    def state_dict(self) -> dict[str, Any]:
        return {"optimizer": self.optimizer.state_dict(), "rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
        self.rng.bit_generator.state = state["rng"]
