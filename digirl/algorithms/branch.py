"""Branching (``algo.name=branch``): many actions per state with a group-wise advantage (Android Coach style).

Collection (:mod:`digirl.training.branching`, with :mod:`digirl.envs.branching`) adds to each online
episode its *branches*: at ``branch_max_states`` visited states s_h, K actions sampled from the
policy, each executed on a clone of the env at s_h and rolled out to the end with the policy; a
branch's value is its discounted return from s_h. They are stored with the episode
(``metadata["branches"]``, see :func:`read_branches`).

One ``update`` reads top to bottom:

1. group: the K branches of each state (with ``branch_include_taken``, also the action the episode
   took there, valued by the episode's own return from s_h);
2. advantage of each action: its value minus the mean value of its group (:func:`group_advantages`);
3. actor: behaviour-clone the grouped actions at their states, weighted by the positive part of the
   advantage or by exp(A/β) (:func:`advantage_weights`), with the shared weighted BC update.

With executed branches (``branch_score=rollout``, or ``auto`` on an env that clones) no critic is
needed: the values are Monte-Carlo returns of real rollouts from the same state, so a group's baseline
is exact for that state (groups whose actions all did equally well teach nothing and get weight 0).
Where the env cannot clone (``critic``, or ``auto`` there), the K actions are only sampled and a
learned Q(s, a) (:mod:`digirl.algorithms.branch_critic`, fitted at each update on the taken actions'
returns-to-go) values every action of their group. The offline phase, which has no branches,
behaviour-clones the successful episodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch

from digirl.algorithms.base import ActorAlgorithm, Phase, Sample
from digirl.algorithms.branch_critic import ActionValueCritic, fit_action_values
from digirl.algorithms.configs import BranchConfig
from digirl.core.actions import Action
from digirl.core.codecs import action_from_dict
from digirl.core.errors import DataError
from digirl.core.types import Trajectory
from digirl.data.annotations import StepAnnotation
from digirl.policies.base import Policy
from digirl.utils import distributed as dist

__all__ = ["BranchAlgorithm", "GroupMember", "advantage_weights", "group_advantages", "group_members", "read_branches"]

#: Where collection stores an episode's branches (a list of dicts) and what they cost.
BRANCHES_KEY = "branches"
BRANCH_STEPS_KEY = "branch_env_steps"


@dataclass(frozen=True)
class GroupMember:
    """One action of a state's group: where it was taken, what it was worth."""

    traj_id: str
    step: int
    action: Action
    #: Its return from the state; ``None`` for a branch that was not executed (the critic scores it).
    value: float | None
    #: Whether it is the episode's own action (else a branch).
    taken: bool


def group_advantages(values: Sequence[float], groups: Sequence[int]) -> np.ndarray:
    """A_i = v_i − mean of the values of i's group (``groups[i]``: any hashable id per member)."""
    v = np.asarray(values, dtype=np.float64)
    g = np.asarray(groups)
    if v.shape != g.shape:
        raise ValueError(f"values and groups differ in length: {v.shape[0]} vs {g.shape[0]}")
    _, inverse = np.unique(g, return_inverse=True)
    sums = np.bincount(inverse, weights=v)
    counts = np.bincount(inverse)
    return v - (sums / counts)[inverse]


def advantage_weights(adv: np.ndarray, mode: Literal["positive", "awr"], beta: float, clip: float = 20.0) -> np.ndarray:
    """Actor loss weights: ``positive`` keeps max(A, 0); ``awr`` is exp(A/β), clipped at ``clip``."""
    a = np.asarray(adv, dtype=np.float64)
    if mode == "positive":
        return np.maximum(a, 0.0)
    if mode == "awr":
        return np.minimum(np.exp(a / beta), clip)
    raise ValueError(f"unknown branch weighting {mode!r}")


def read_branches(t: Trajectory) -> list[tuple[int, Action, float | None]]:
    """(step, action, value) of each branch stored with ``t`` (none when it was not branched; a value is
    ``None`` where the branch was sampled but not executed)."""
    raw = t.metadata.get(BRANCHES_KEY) or []
    out = []
    for i, d in enumerate(raw):
        try:
            h = int(d["step"])
            if not 0 <= h < t.length:
                raise ValueError(f"step {h} is outside the episode's {t.length} steps")
            v = d["value"]
            out.append((h, action_from_dict(d["action"]), None if v is None else float(v)))
        except (KeyError, TypeError, ValueError) as e:
            raise DataError(f"trajectory {t.traj_id}: branch {i} is malformed: {e}") from e
    return out


def group_members(trajectories: Sequence[Trajectory], gamma: float, include_taken: bool) -> list[GroupMember]:
    """Every grouped action of the branched episodes: the branches, and (``include_taken``) the episode's
    own action at each branched state, valued by its discounted return from there."""
    out: list[GroupMember] = []
    for t in trajectories:
        if t.env_failure:
            continue
        branches = read_branches(t)
        if not branches:
            continue
        returns = t.mc_returns(gamma)
        if include_taken:
            for h in sorted({h for h, _, _ in branches}):
                out.append(GroupMember(t.traj_id, h, t.steps[h].action, float(returns[h]), True))
        out.extend(GroupMember(t.traj_id, h, a, v, False) for h, a, v in branches)
    return out


class BranchAlgorithm(ActorAlgorithm[BranchConfig]):
    """Annotations: per branched state, the episode's own action: its group mean (``value``), its return
    (``q``), its advantage and weight (with ``branch_include_taken``)."""

    name = "branch"
    config_class = BranchConfig

    def __init__(self, policy: Policy, cfg: BranchConfig, *, seed: int = 0) -> None:
        super().__init__(policy, cfg, seed=seed)
        self.critic: ActionValueCritic | None = None
        self.critic_opt: torch.optim.Optimizer | None = None
        if cfg.branch_score != "rollout":  # branches that were not executed are scored by Q(s, a)
            self.critic = ActionValueCritic(cfg.critic).to(policy.device)
            dist.broadcast_parameters(self.critic.parameters())
            self.critic_opt = torch.optim.AdamW(self.critic.parameters(), lr=cfg.branch_critic_lr)

    def update(self, trajectories: Sequence[Trajectory], phase: Phase) -> dict[str, float]:
        cfg = self.cfg
        by_id = {t.traj_id: t for t in trajectories}
        if phase == "offline":  # no branches yet: clone the successes
            samples = [Sample(s.observation, s.action) for t in trajectories if t.success for s in t.steps]
            metrics = self.bc_actor(samples, phase)
            self._annotations = []
            return metrics | {"train/kept_steps": float(len(samples))}
        members = group_members(trajectories, cfg.gamma, cfg.branch_include_taken)
        groups = [(m.traj_id, m.step) for m in members]
        ids = {g: i for i, g in enumerate(dict.fromkeys(groups))}
        values, critic_metrics = self._values(members, groups, trajectories)
        adv = group_advantages(values, [ids[g] for g in groups])
        weights = advantage_weights(adv, cfg.branch_weighting, cfg.branch_beta)
        samples = [
            Sample(by_id[m.traj_id].steps[m.step].observation, m.action, float(w)) for m, w in zip(members, weights) if w > 0
        ]
        self._annotations = [  # value: the group's mean (the state's baseline); q: this action's value
            StepAnnotation(m.traj_id, m.step, value=v - float(a), q=v, advantage=float(a), kept=w > 0, weight=float(w))
            for m, v, a, w in zip(members, values, adv, weights)
            if m.taken
        ]
        metrics = critic_metrics | self.bc_actor(samples, phase)
        informative = {g for g, a in zip(groups, adv) if a != 0}  # a group whose actions all did equally well teaches nothing
        metrics |= {
            "train/branch_groups": float(len(ids)),
            "train/branch_members": float(len(members)),
            "train/branch_flat_groups": 1.0 - len(informative) / len(ids) if ids else 0.0,
            "train/adv_mean_abs": float(np.abs(adv).mean()) if len(adv) else 0.0,
            "train/kept_steps": float(len(samples)),
        }
        return metrics

    def _values(
        self, members: list[GroupMember], groups: list[tuple[str, int]], trajectories: Sequence[Trajectory]
    ) -> tuple[list[float], dict[str, float]]:
        """Each member's value: its return where every action of its group was executed, else (the whole
        group alike, so that its members compare on one scale) Q(s, a) of the critic fitted just now."""
        unscored = {g for g, m in zip(groups, members) if m.value is None}
        if not unscored:
            return [float(m.value) for m in members if m.value is not None], {}
        if self.critic is None or self.critic_opt is None:
            raise DataError("the replay data holds branches that were not executed: train with algo.branch_score=critic or auto")
        metrics = self._fit_critic(trajectories, members)
        by_id = {t.traj_id: t for t in trajectories}
        todo = [i for i, g in enumerate(groups) if g in unscored]
        q = self.critic.q_value(
            [by_id[members[i].traj_id].steps[members[i].step].observation for i in todo], [members[i].action for i in todo]
        )
        values = [float(m.value) if m.value is not None else 0.0 for m in members]
        for i, v in zip(todo, q.tolist()):
            values[i] = float(v)
        return values, metrics | {"critic/scored_actions": float(len(todo))}

    def _fit_critic(self, trajectories: Sequence[Trajectory], members: list[GroupMember]) -> dict[str, float]:
        """Fit Q(s, a) on every taken step (its discounted return-to-go) and every executed branch (its return)."""
        assert self.critic is not None and self.critic_opt is not None
        obs, acts, ys = [], [], []
        for t in trajectories:
            if t.env_failure:
                continue
            for s, g in zip(t.steps, t.mc_returns(self.cfg.gamma)):
                obs.append(s.observation)
                acts.append(s.action)
                ys.append(g)
        by_id = {t.traj_id: t for t in trajectories}
        for m in members:
            if not m.taken and m.value is not None:
                obs.append(by_id[m.traj_id].steps[m.step].observation)
                acts.append(m.action)
                ys.append(m.value)
        c = self.cfg
        return fit_action_values(
            self.critic,
            self.critic_opt,
            obs,
            acts,
            ys,
            steps=c.branch_critic_steps,
            batch_size=c.branch_critic_batch,
            rng=self.rng,
        )

    # ------------------------------------------------------------------ what collection reads
    def branch_plan(self) -> dict[str, Any]:
        """How collection branches for this algorithm (``digirl.envs.branching.BranchPlan``'s fields)."""
        c = self.cfg
        plan = {"k": c.branch_k, "states": c.branch_states, "max_states": c.branch_max_states, "gamma": c.gamma}
        return plan | {"score": c.branch_score}

    def state_dict(self) -> dict[str, Any]:
        out = super().state_dict()
        if self.critic is not None and self.critic_opt is not None:
            out |= {"critic": self.critic.state_dict(), "critic_optimizer": self.critic_opt.state_dict()}
        return out

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        if self.critic is not None and self.critic_opt is not None and "critic" in state:
            self.critic.load_state_dict(state["critic"])
            self.critic_opt.load_state_dict(state["critic_optimizer"])
