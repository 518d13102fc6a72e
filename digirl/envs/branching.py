"""Branching: K sampled actions from visited states of collected episodes, each executed on a clone.

(Where an env cannot clone, ``BranchPlan(execute=False)`` only samples the K actions; a critic scores them.)

"Single state, multiple actions" (Android Coach): from a state s_h that an episode visited, the
policy samples K actions; each is executed on its own copy of the env at s_h and rolled out to the
end of the episode with the policy, and the branch's discounted return is that action's value. The
values of one state form a group (the algorithm turns them into group-wise advantages).

How a state is reached again: the episode is replayed in a local env from its seed and task with
its recorded actions (``state_replay``), every replayed screen checked byte for byte against the
recorded one, and the env is cloned at the chosen steps (``state_clone``). So branching works on
episodes from any collector backend (process workers, Ray) without changing them.

Cost accounting, so that methods are compared at equal environment steps: ``env_steps`` counts
every step a branch executes (its sampled action and its rollout) — what branching would cost on
any env that can snapshot a state. The replay steps that re-reach s_h are counted apart
(``replay_steps``): a collector that cloned while collecting would not spend them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from digirl.core.acting import ActFn, ActOutput, as_act_output
from digirl.core.actions import Action
from digirl.core.types import Observation, Trajectory
from digirl.envs.base import DeviceEnv

__all__ = ["Branch", "BranchPlan", "BranchReport", "ReplayMismatch", "branch_episodes", "choose_states"]

log = logging.getLogger(__name__)

StateChoice = Literal["all", "random", "first", "last"]
#: Observations per act_fn call (a memory bound for large policies).
ACT_CHUNK = 256
#: Branches alive at once: the clones of more states wait until these are rolled out (a memory bound).
MAX_LIVE = 512


class ReplayMismatch(RuntimeError):
    """A replayed episode did not reproduce its recorded screens (the env is not deterministic for it)."""


@dataclass(frozen=True)
class BranchPlan:
    """Which states to branch from and how many actions each gets."""

    k: int
    #: ``all`` visited states, ``random`` ones, the ``first`` or the ``last`` ones.
    states: StateChoice = "random"
    #: States per episode (0: every visited state).
    max_states: int = 2
    gamma: float = 0.95
    #: Execute each sampled action on a clone and roll it out (False: only sample the actions; their
    #: values are left to a critic, for envs that cannot clone).
    execute: bool = True

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ValueError(f"branching needs k >= 1 actions per state, got {self.k}")
        if self.states not in ("all", "random", "first", "last"):
            raise ValueError(f"branch states must be all, random, first or last, got {self.states!r}")
        if self.max_states < 0:
            raise ValueError(f"max_states must be >= 0 (0 = every state), got {self.max_states}")


@dataclass(frozen=True)
class Branch:
    """One sampled action at step ``step`` of an episode and what it led to."""

    step: int
    action: Action
    text: str
    log_prob: float | None
    #: Discounted return from s_step of the branch (its action, then the policy to the episode's end);
    #: ``None`` when it was not executed (a critic scores it).
    value: float | None
    success: bool | None
    #: Env steps the branch executed (1 + its rollout; 0 when not executed).
    env_steps: int

    def to_dict(self) -> dict[str, Any]:
        from digirl.core.codecs import action_to_dict

        return {
            "step": self.step,
            "action": action_to_dict(self.action),
            "text": self.text,
            "log_prob": self.log_prob,
            "value": self.value,
            "success": self.success,
            "env_steps": self.env_steps,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Branch:
        from digirl.core.codecs import action_from_dict

        lp, v, ok = d.get("log_prob"), d.get("value"), d.get("success")
        return cls(
            step=int(d["step"]),
            action=action_from_dict(d["action"]),
            text=str(d.get("text", "")),
            log_prob=None if lp is None else float(lp),
            value=None if v is None else float(v),
            success=None if ok is None else bool(ok),
            env_steps=int(d["env_steps"]),
        )


@dataclass
class BranchReport:
    """What :func:`branch_episodes` did: branches by trajectory id, and what they cost."""

    branches: dict[str, list[Branch]] = field(default_factory=dict)
    env_steps: int = 0
    replay_steps: int = 0
    #: traj_id → why it got no branches (no seed, replay mismatch).
    skipped: dict[str, str] = field(default_factory=dict)

    def metrics(self, prefix: str = "branch") -> dict[str, float]:
        groups = {(tid, b.step) for tid, bs in self.branches.items() for b in bs}
        n = sum(len(bs) for bs in self.branches.values())
        wins = sum(bool(b.success) for bs in self.branches.values() for b in bs)
        return {
            f"{prefix}/states": float(len(groups)),
            f"{prefix}/actions": float(n),
            f"{prefix}/success_rate": wins / n if n else 0.0,
            f"{prefix}/env_steps": float(self.env_steps),
            f"{prefix}/replay_steps": float(self.replay_steps),
            f"{prefix}/skipped_episodes": float(len(self.skipped)),
        }


def choose_states(length: int, plan: BranchPlan, rng: np.random.Generator) -> list[int]:
    """The steps (0 ≤ h < ``length``) of an episode to branch from, ascending."""
    n = length if plan.max_states == 0 else min(plan.max_states, length)
    if plan.states == "all" or n >= length:
        return list(range(length))
    if plan.states == "first":
        return list(range(n))
    if plan.states == "last":
        return list(range(length - n, length))
    return sorted(int(h) for h in rng.choice(length, size=n, replace=False))


def _act(act_fn: ActFn, observations: Sequence[Observation]) -> list[ActOutput]:
    out: list[ActOutput] = []
    for i in range(0, len(observations), ACT_CHUNK):
        chunk = observations[i : i + ACT_CHUNK]
        got = [as_act_output(o) for o in act_fn(chunk)]
        if len(got) != len(chunk):
            raise RuntimeError(f"act_fn returned {len(got)} actions for {len(chunk)} observations")
        out.extend(got)
    return out


def _replay_to(env: DeviceEnv, traj: Trajectory, steps: Sequence[int], k: int) -> tuple[dict[int, list[DeviceEnv]], int]:
    """Replay ``traj`` in ``env`` and clone it ``k`` times at each of ``steps``; returns the clones and
    the env steps the replay took. Raises :class:`ReplayMismatch` if a screen differs from the record."""
    assert traj.seed is not None
    obs, _ = env.reset(seed=int(traj.seed), options={"task": traj.task})
    clones: dict[int, list[DeviceEnv]] = {}
    last = max(steps)
    replayed = 0
    for h, step in enumerate(traj.steps[: last + 1]):
        if not np.array_equal(obs.screenshot, step.observation.screenshot):
            raise ReplayMismatch(f"trajectory {traj.traj_id}: the replayed screen at step {h} differs from the recorded one")
        if h in steps:
            clones[h] = [env.clone() for _ in range(k)]
        if h < last:
            obs, *_ = env.step(step.action)
            replayed += 1
    return clones, replayed


@dataclass
class _Live:
    """A branch being rolled out."""

    observation: Observation  # the recorded s_step the action is sampled from
    traj_id: str
    step: int
    env: DeviceEnv
    first: ActOutput | None = None
    obs: Observation | None = None
    ret: float = 0.0
    discount: float = 1.0
    success: bool = False
    steps: int = 0
    done: bool = False

    def take(self, action: Action | str, gamma: float) -> None:
        obs, r, term, trunc, _ = self.env.step(action)
        self.ret += self.discount * float(r)
        self.discount *= gamma
        self.success = self.success or r > 0
        self.steps += 1
        self.obs = obs
        self.done = term or trunc


def branch_episodes(
    env: DeviceEnv | None, trajectories: Sequence[Trajectory], act_fn: ActFn, plan: BranchPlan, *, seed: int | Sequence[int] = 0
) -> BranchReport:
    """Branch every usable trajectory of ``trajectories`` as ``plan`` says (see the module docstring).

    ``env`` is a local env of the kind that collected them; it must clone its state (``None`` when
    ``plan.execute`` is off). The K actions at a state are sampled by ``act_fn`` from the recorded
    observation; the rollouts after them act with ``act_fn`` too, all live branches in one batch per step.
    """
    rng = np.random.default_rng(list(seed) if isinstance(seed, Sequence) else seed)
    if not plan.execute:
        return _sample_only(trajectories, act_fn, plan, rng)
    if env is None:
        raise ValueError("executing branches needs an env")
    report = BranchReport()
    live: list[_Live] = []
    for t in trajectories:
        if len(live) >= MAX_LIVE:
            _roll_out(live, act_fn, plan.gamma, report)
            live = []
        if t.env_failure or not t.steps:
            continue
        if t.seed is None:
            report.skipped[t.traj_id] = "no seed: the episode cannot be replayed"
            continue
        steps = choose_states(len(t.steps), plan, rng)
        try:
            clones, replayed = _replay_to(env, t, steps, plan.k)
        except ReplayMismatch as e:
            log.warning("branching: %s; it gets no branches", e)
            report.skipped[t.traj_id] = str(e)
            continue
        report.replay_steps += replayed
        for h in steps:
            live.extend(_Live(t.steps[h].observation, t.traj_id, h, c) for c in clones[h])
    _roll_out(live, act_fn, plan.gamma, report)
    return report


def _roll_out(live: list[_Live], act_fn: ActFn, gamma: float, report: BranchReport) -> None:
    """Sample each branch's action, execute it and roll out with ``act_fn`` to the end; add them to ``report``."""
    firsts = _act(act_fn, [b.observation for b in live])
    for b, out in zip(live, firsts):
        b.first = out
        b.take(out.action, gamma)
    active = [b for b in live if not b.done]
    while active:
        outs = _act(act_fn, [b.obs for b in active if b.obs is not None])
        for b, out in zip(active, outs):
            b.take(out.action, gamma)
        active = [b for b in active if not b.done]
    for b in live:
        assert b.first is not None
        report.env_steps += b.steps
        report.branches.setdefault(b.traj_id, []).append(
            Branch(b.step, b.first.action, b.first.text, b.first.log_prob, b.ret, b.success, b.steps)
        )
        b.env.close()


def _sample_only(trajectories: Sequence[Trajectory], act_fn: ActFn, plan: BranchPlan, rng: np.random.Generator) -> BranchReport:
    """K sampled actions per chosen state, not executed (no env steps; a critic values them)."""
    report = BranchReport()
    wanted = [(t, h) for t in trajectories if not t.env_failure and t.steps for h in choose_states(len(t.steps), plan, rng)]
    outs = _act(act_fn, [t.steps[h].observation for t, h in wanted for _ in range(plan.k)])
    for i, (t, h) in enumerate(wanted):
        for out in outs[i * plan.k : (i + 1) * plan.k]:
            report.branches.setdefault(t.traj_id, []).append(Branch(h, out.action, out.text, out.log_prob, None, None, 0))
    return report
