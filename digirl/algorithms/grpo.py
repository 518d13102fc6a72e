"""GRPO: group-relative policy optimisation (Shao et al., DeepSeekMath, arXiv 2402.03300) for GUI agents.

The run collects G rollouts of each sampled task with one env seed (``group_size`` = G of the
training run): the same start screen, different sampled actions. One ``update`` reads top to bottom:

1. take the newest iteration's trajectories (on-policy) and group them by (task, seed);
2. (``success_replay``, ARPO) a group with no success gets a stored success of its task in place of
   one failure, so a task the policy rarely solves still gives a signal; the replay keeps the last
   N successes of every task;
3. score each trajectory's return (the outcome, less ``efficiency_coef``·steps/horizon on a success)
   and normalise it within its group (``grpo_advantage=trajectory``), or each step's discounted
   return-to-go over its group's steps (``step``);
4. skip (or down-weight) groups whose returns are all equal: they carry no ranking signal;
5. minimise PPO's clipped surrogate with a k3 KL penalty to the reference policy (the policy the run
   started from, typically SFT), over ``update_epochs`` passes.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from digirl.algorithms.configs import GRPOConfig
from digirl.algorithms.onpolicy import OnPolicyAlgorithm, ReferencePolicy, clipped_update, pg_batch, weights_with_correction
from digirl.algorithms.policy_gradient import efficiency_return, group_normalized_advantages, group_step_advantages
from digirl.core.types import Trajectory
from digirl.policies.base import Policy

__all__ = ["GRPO", "group_key", "task_key"]


def task_key(t: Trajectory) -> str:
    """What identifies a trajectory's task: its id, else its instruction."""
    return t.task.task_id or t.task.instruction


def group_key(t: Trajectory) -> Hashable:
    """A GRPO group: the same task from the same env seed."""
    return (task_key(t), t.seed)


class GRPO(OnPolicyAlgorithm[GRPOConfig]):
    """Annotations: per step of the last batch, its advantage, whether it was trained on, its loss weight."""

    name = "grpo"
    config_class = GRPOConfig

    def __init__(self, policy: Policy, cfg: GRPOConfig, *, seed: int = 0) -> None:
        super().__init__(policy, cfg, seed=seed)
        self.reference = ReferencePolicy(policy) if cfg.kl_coef > 0 else None
        #: task → ids of its last ``success_replay`` successful trajectories (oldest first)
        self.replay: dict[str, list[str]] = {}

    # ------------------------------------------------------------------ groups
    def _with_replay(self, fresh: list[Trajectory], pool: Mapping[str, Trajectory]) -> tuple[list[Trajectory], int]:
        """``fresh`` with, in every group without a success, one failure replaced by a stored success of
        its task (ARPO); then the replay remembers the fresh successes. Returns the batch and the count replaced."""
        if self.cfg.success_replay == 0:
            return fresh, 0
        groups: dict[Hashable, list[int]] = {}
        for i, t in enumerate(fresh):
            groups.setdefault(group_key(t), []).append(i)
        out = list(fresh)
        replaced = 0
        for members in groups.values():
            if len(members) < 2 or any(fresh[i].success for i in members):
                continue
            stored = [pool[k] for k in self.replay.get(task_key(fresh[members[0]]), []) if k in pool]
            if stored:
                pick = stored[int(self.rng.integers(len(stored)))]
                # the replayed episode joins this group (its own seed may differ: ARPO replays by task)
                out[members[-1]] = _in_group(pick, fresh[members[0]].seed)
                replaced += 1
        for t in fresh:
            if t.success:
                ids = [k for k in self.replay.get(task_key(t), []) if k != t.traj_id] + [t.traj_id]
                self.replay[task_key(t)] = ids[-self.cfg.success_replay :]
        return out, replaced

    def advantages(self, trajs: Sequence[Trajectory]) -> tuple[list[np.ndarray], np.ndarray]:
        """Per trajectory: the step advantages and the spread of its group (0: all returns equal)."""
        cfg = self.cfg
        returns = [efficiency_return(t.reward, t.length, t.task.horizon, cfg.efficiency_coef) for t in trajs]
        groups = [group_key(t) for t in trajs]
        if cfg.grpo_advantage == "step":
            return group_step_advantages(returns, [t.length for t in trajs], groups, gamma=cfg.gamma, scale=cfg.grpo_scale)
        adv, std = group_normalized_advantages(returns, groups, scale=cfg.grpo_scale)
        return [np.full(t.length, a) for t, a in zip(trajs, adv)], std

    def _group_weight(self, spread: float) -> float:
        if spread > 0 or self.cfg.zero_variance == "keep":
            return 1.0
        return self.cfg.zero_variance_weight if self.cfg.zero_variance == "downweight" else 0.0

    # ------------------------------------------------------------------ the update
    def learn(
        self, fresh: list[Trajectory], trajectories: Sequence[Trajectory], step_weights: Mapping[str, Sequence[float]] | None
    ) -> dict[str, float]:
        cfg = self.cfg
        batch, replaced = self._with_replay(fresh, {t.traj_id: t for t in trajectories})
        advs, spread = self.advantages(batch)
        group_w = [self._group_weight(float(s)) for s in spread]
        weights = [weights_with_correction(t, [g] * t.length, step_weights) for t, g in zip(batch, group_w)]
        samples, self._annotations = pg_batch(batch, advs, weights)
        n_groups = len({group_key(t) for t in batch})
        flat = np.concatenate(advs)
        metrics = {
            "train/groups": float(n_groups),
            "train/group_size": len(batch) / max(1, n_groups),
            "train/zero_variance_groups": float(len({group_key(t) for t, s in zip(batch, spread) if s == 0})),
            "train/replayed_successes": float(replaced),
            "train/adv_mean": float(flat.mean()),
            "train/adv_std": float(flat.std()),
            "train/batch_success_rate": float(np.mean([t.success for t in batch])),
        }
        ref, kl = self.reference, cfg.kl_coef
        return metrics | clipped_update(self.policy, self.optimizer, samples, cfg, self.rng, reference=ref, kl_coef=kl)

    # ------------------------------------------------------------------ checkpointing
    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict() | {"replay": {k: list(v) for k, v in self.replay.items()}}
        if self.reference is not None:
            state["reference"] = self.reference.state_dict()
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.replay = {str(k): [str(i) for i in v] for k, v in state.get("replay", {}).items()}
        if self.reference is not None:
            if "reference" not in state:
                raise ValueError("the checkpoint has no GRPO reference policy (it was saved with algo.kl_coef=0)")
            self.reference.load_state_dict(state["reference"])


def _in_group(t: Trajectory, seed: int | None) -> Trajectory:
    """``t`` as a member of the group of ``seed`` (a shallow copy: its steps are shared, not copied)."""
    return replace(t, seed=seed)
