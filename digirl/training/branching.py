"""Branching in the online loop: an algorithm that wants branches gets them with every collected iteration.

An algorithm asks for branches by having ``branch_plan()`` (:class:`digirl.algorithms.branch.BranchAlgorithm`).
:meth:`Brancher.expand` then branches each new episode (:func:`digirl.envs.branching.branch_episodes`,
in a local env of the run's kind, in the main process) before the iteration is stored, and writes into
each episode's metadata what the algorithm reads and what the branches cost:

- ``branches``: one dict per branch (step, action, text, log_prob, value, success, env_steps);
- ``branch_env_steps``: the env steps its branches executed (``rollout_metrics`` adds them to
  ``rollout/env_steps``, the budget to compare methods at);
- ``branch_skipped``: why an episode got no branches (no seed, a replay that did not reproduce it).

The steps that re-reached the branched states are logged (``branch/replay_steps``), not charged.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from digirl.core.acting import ActFn
from digirl.core.errors import ConfigError
from digirl.core.types import Trajectory
from digirl.envs.branching import BranchPlan, branch_episodes
from digirl.training.config import EnvConfig

__all__ = ["Brancher", "brancher_for"]

log = logging.getLogger(__name__)


class Brancher:
    """Branches each online iteration's episodes for the algorithm, in a local env of ``env``'s kind."""

    def __init__(self, env: EnvConfig, plan: BranchPlan, *, seed: int, score: str = "rollout") -> None:
        """``score``: ``rollout`` (execute the branches: the env must clone and replay its states), ``critic``
        (only sample them; the algorithm's critic scores them), or ``auto`` (rollout where the env can)."""
        from dataclasses import replace

        from digirl.envs.registry import env_has, make

        missing = [c for c in ("state_clone", "state_replay") if not env_has(env.id, c)]
        if score == "auto":
            score = "critic" if missing else "rollout"
            if missing:
                log.info("branching: %s cannot copy its states (%s); a critic scores the branches", env.id, ", ".join(missing))
        if score not in ("rollout", "critic"):
            raise ConfigError(f"algo.branch_score must be auto, rollout or critic, got {score!r}")
        if score == "rollout" and missing:
            raise ConfigError(
                f"algo.branch_score=rollout executes sampled actions on copies of visited states; env {env.id} does not "
                f"declare {' and '.join(missing)} (see `digirl envs list`): use branch_score=critic (or auto)"
            )
        self.score = score
        self.plan = replace(plan, execute=score == "rollout")
        self.env = None
        if self.plan.execute:
            kwargs = {k: v for k, v in env.env_kwargs().items() if k != "latency_s"}  # steps are counted, not waited for
            self.env = make(env.id, **kwargs)
        self.seed = seed

    def expand(self, trajectories: Sequence[Trajectory], act_fn: ActFn, iteration: int) -> dict[str, float]:
        """Branch ``trajectories`` in place (their metadata); returns the ``branch/…`` metrics."""
        report = branch_episodes(self.env, trajectories, act_fn, self.plan, seed=[self.seed, iteration, 0xB7A])
        for t in trajectories:
            bs = report.branches.get(t.traj_id, [])
            t.metadata["branches"] = [b.to_dict() for b in bs]
            t.metadata["branch_env_steps"] = sum(b.env_steps for b in bs)
            if t.traj_id in report.skipped:
                t.metadata["branch_skipped"] = report.skipped[t.traj_id]
        return report.metrics()

    def close(self) -> None:
        if self.env is not None:
            self.env.close()


def brancher_for(algo: Any, env: EnvConfig, *, seed: int) -> Brancher | None:
    """The brancher ``algo`` asks for (it has ``branch_plan()``), else ``None``."""
    plan = getattr(algo, "branch_plan", None)
    if not callable(plan):
        return None
    fields = dict(plan())
    score = str(fields.pop("score", "rollout"))
    return Brancher(env, BranchPlan(**fields), seed=seed, score=score)
