"""Branching (``algo.name=branch``): group-wise advantages on hand-computed numbers, branches executed on
clones of the toy env, the config and registry, and a CPU run on simulator tasks that shows it learns."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from digirl.algorithms.branch import (
    BranchAlgorithm,
    advantage_weights,
    group_advantages,
    group_members,
    read_branches,
)
from digirl.algorithms.configs import AlgoConfig, BranchConfig
from digirl.algorithms.registry import algorithm_config_class, make_algorithm
from digirl.core.acting import ActOutput
from digirl.core.actions import Action
from digirl.core.codecs import action_to_dict
from digirl.core.errors import ConfigError, DataError
from digirl.core.types import Observation, Step, TaskSpec, Trajectory
from digirl.envs.branching import Branch, BranchPlan, branch_episodes, choose_states
from digirl.envs.toy import ToyEnv
from digirl.envs.wrappers import RecordEpisode
from digirl.training.branching import Brancher
from digirl.training.config import EnvConfig

# ----------------------------------------------------------------------------- pure functions


def test_group_advantage_is_value_minus_the_mean_of_its_state():
    # state a: values 1, 0, 0, 1 (mean 0.5); state b: 0.5 alone; state c: 0.9, 0.3, 0.0 (mean 0.4)
    adv = group_advantages([1, 0, 0, 1, 0.5, 0.9, 0.3, 0.0], ["a", "a", "a", "a", "b", "c", "c", "c"])
    np.testing.assert_allclose(adv, [0.5, -0.5, -0.5, 0.5, 0.0, 0.5, -0.1, -0.4], atol=1e-12)
    # groups need not be contiguous
    np.testing.assert_allclose(group_advantages([2.0, 7.0, 4.0, 1.0], [1, 2, 1, 2]), [-1.0, 3.0, 1.0, -3.0])
    with pytest.raises(ValueError, match="differ in length"):
        group_advantages([1.0], [0, 1])


def test_advantage_weights():
    adv = np.array([0.5, -0.5, 0.0, 0.25])
    np.testing.assert_allclose(advantage_weights(adv, "positive", 0.5), [0.5, 0.0, 0.0, 0.25])
    np.testing.assert_allclose(advantage_weights(adv, "awr", 0.5), [math.e, 1 / math.e, 1.0, math.exp(0.5)])
    assert advantage_weights(np.array([30.0]), "awr", 1.0)[0] == 20.0  # clipped
    with pytest.raises(ValueError, match="unknown branch weighting"):
        advantage_weights(adv, "hard", 0.5)  # type: ignore[arg-type]


def test_choose_states():
    rng = np.random.default_rng(0)
    assert choose_states(5, BranchPlan(k=2, states="first", max_states=2), rng) == [0, 1]
    assert choose_states(5, BranchPlan(k=2, states="last", max_states=2), rng) == [3, 4]
    assert choose_states(5, BranchPlan(k=2, states="all", max_states=2), rng) == [0, 1, 2, 3, 4]
    assert choose_states(3, BranchPlan(k=2, states="random", max_states=0), rng) == [0, 1, 2]
    assert choose_states(2, BranchPlan(k=2, states="random", max_states=5), rng) == [0, 1]
    picked = choose_states(10, BranchPlan(k=2, states="random", max_states=3), rng)
    assert len(picked) == 3 and picked == sorted(set(picked)) and all(0 <= h < 10 for h in picked)
    with pytest.raises(ValueError, match="k >= 1"):
        BranchPlan(k=0)


def _obs(step: int) -> Observation:
    return Observation(np.full((8, 8, 3), step, np.uint8), "do it", step=step)


def _traj(rewards: Sequence[float], branches: list[dict] | None = None, tid: str = "t") -> Trajectory:
    steps = [Step(_obs(h), Action.tap(0.1 * h, 0.5), "x", r, h == len(rewards) - 1, False) for h, r in enumerate(rewards)]
    return Trajectory(TaskSpec("do it"), steps, seed=1, traj_id=tid, metadata={"branches": branches or []})


def _b(step: int, value: float, x: float = 0.9) -> dict:
    return Branch(step, Action.tap(x, 0.9), "t", None, value, value > 0, 2).to_dict()


def test_group_members_add_the_taken_action_valued_by_its_return():
    # rewards 0, 0, 1 with gamma 0.5: returns 0.25, 0.5, 1.0; branches at step 1 (values 1.0, 0.0)
    t = _traj([0, 0, 1], [_b(1, 1.0), _b(1, 0.0, x=0.8)])
    members = group_members([t, _traj([0, 1], tid="plain")], gamma=0.5, include_taken=True)
    assert [(m.step, m.value, m.taken) for m in members] == [(1, 0.5, True), (1, 1.0, False), (1, 0.0, False)]
    assert members[0].action == t.steps[1].action
    assert [m.taken for m in group_members([t], 0.5, include_taken=False)] == [False, False]
    # the advantages of that group: 0.5, 1.0, 0.0 minus their mean 0.5
    np.testing.assert_allclose(group_advantages([m.value for m in members], [0, 0, 0]), [0.0, 0.5, -0.5])


def test_malformed_branches_name_the_trajectory():
    with pytest.raises(DataError, match="trajectory bad: branch 0 is malformed"):
        read_branches(_traj([0, 1], [{"step": 5, "action": action_to_dict(Action.back()), "value": 1.0}], tid="bad"))
    with pytest.raises(DataError, match="branch 0 is malformed"):
        read_branches(_traj([0, 1], [{"step": 0, "value": 1.0}], tid="bad"))


# ----------------------------------------------------------------------------- branches on clones


def _type_episode(env: ToyEnv, actions: list[Action], seed: int = 4) -> Trajectory:
    rec = RecordEpisode(env)
    task = next(t for t in env.tasks() if t.params["target"] == "hello")
    rec.reset(seed=seed, options={"task": task})
    for a in actions:
        *_, term, trunc, _ = rec.step(a)
        if term or trunc:
            break
    assert rec.trajectory is not None
    return rec.trajectory


class Scripted:
    """Types ``words`` in turn at the first step (one per call), presses enter afterwards."""

    def __init__(self, words: Sequence[str]) -> None:
        self.words = list(words)
        self.calls = 0

    def __call__(self, observations: Sequence[Observation]) -> list[ActOutput]:
        out = []
        for o in observations:
            if o.step == 0:
                w = self.words[self.calls % len(self.words)]
                self.calls += 1
                out.append(ActOutput(Action.type_text(w), w, -0.7))
            else:
                out.append(ActOutput(Action.enter(), "enter", None))
        return out


def test_branches_execute_sampled_actions_on_clones_and_count_their_steps():
    env = ToyEnv(mode="type", horizon=4)
    t = _type_episode(ToyEnv(mode="type", horizon=4), [Action.type_text("nope"), Action.enter()])
    assert not t.success and t.length == 2
    plan = BranchPlan(k=3, states="first", max_states=1, gamma=0.5)
    report = branch_episodes(env, [t], Scripted(["hello", "world", "hello"]), plan)
    got = report.branches[t.traj_id]
    # type hello -> enter: reward 1 on the 2nd step, value 0.5^1 = 0.5; type world -> enter: 0
    assert [(b.step, b.action.text, b.value, b.success, b.env_steps) for b in got] == [
        (0, "hello", 0.5, True, 2),
        (0, "world", 0.0, False, 2),
        (0, "hello", 0.5, True, 2),
    ]
    assert got[0].log_prob == -0.7 and got[0].text == "hello"
    assert report.env_steps == 6 and report.replay_steps == 0 and not report.skipped
    m = report.metrics()
    assert m["branch/states"] == 1 and m["branch/actions"] == 3 and m["branch/success_rate"] == pytest.approx(2 / 3)
    # to_dict / from_dict round trip (what the store keeps)
    assert [Branch.from_dict(json.loads(json.dumps(b.to_dict()))) for b in got] == got


def test_branching_a_later_state_replays_to_it_and_leaves_the_record_alone():
    t = _type_episode(ToyEnv(mode="type", horizon=4), [Action.type_text("hel"), Action.type_text("lo"), Action.back()])
    shots = [s.observation.screenshot.copy() for s in t.steps]
    enter = lambda obs: [ActOutput(Action.enter(), "enter") for _ in obs]  # noqa: E731
    report = branch_episodes(ToyEnv(mode="type", horizon=4), [t], enter, BranchPlan(k=2, states="last", max_states=2))
    # steps 1 and 2: at step 1 only "hel" is typed (enter fails); at step 2 "hello" is (enter succeeds)
    assert [(b.step, b.value, b.env_steps) for b in report.branches[t.traj_id]] == [
        (1, 0.0, 1),
        (1, 0.0, 1),
        (2, 1.0, 1),
        (2, 1.0, 1),
    ]
    assert report.replay_steps == 2 and report.env_steps == 4
    assert all(np.array_equal(a, s.observation.screenshot) for a, s in zip(shots, t.steps))


def test_branches_are_rolled_out_in_bounded_batches(monkeypatch):
    import digirl.envs.branching as branching

    eps = [
        _type_episode(ToyEnv(mode="type", horizon=4), [Action.type_text("hel"), Action.type_text("lo"), Action.back()]),
        _type_episode(ToyEnv(mode="type", horizon=4), [Action.type_text("hello"), Action.back()], seed=9),
    ]
    enter = lambda obs: [ActOutput(Action.enter(), "enter") for _ in obs]  # noqa: E731
    plan = BranchPlan(k=2, states="all", max_states=0)
    whole = branch_episodes(ToyEnv(mode="type", horizon=4), eps, enter, plan)
    monkeypatch.setattr(branching, "MAX_LIVE", 1)  # roll out after every episode's clones
    batched = branch_episodes(ToyEnv(mode="type", horizon=4), eps, enter, plan)
    assert batched.branches == whole.branches and batched.env_steps == whole.env_steps == 10
    # enter succeeds where "hello" is typed: steps 2 of the first episode and 1 of the second
    assert [b.value for b in whole.branches[eps[1].traj_id]] == [0.0, 0.0, 1.0, 1.0]


def test_an_episode_that_does_not_replay_gets_no_branches():
    t = _type_episode(ToyEnv(mode="type", horizon=4), [Action.type_text("hel"), Action.enter()])
    t.steps[1].observation.screenshot[:] = 0  # not what the env shows after typing "hel"
    no_seed = _type_episode(ToyEnv(mode="type", horizon=4), [Action.enter()])
    no_seed.seed = None
    plan = BranchPlan(k=2, states="all", max_states=0)
    report = branch_episodes(ToyEnv(mode="type"), [t, no_seed], Scripted(["hello"]), plan)
    assert report.branches == {}
    assert "replayed screen at step 1 differs" in report.skipped[t.traj_id]
    assert "no seed" in report.skipped[no_seed.traj_id]


def test_brancher_needs_an_env_that_clones_and_replays():
    with pytest.raises(ConfigError, match="does not declare state_clone and state_replay"):
        Brancher(EnvConfig(id="digirl/android-general-v0"), BranchPlan(k=2), seed=0)
    b = Brancher(EnvConfig(id="digirl/toy-type-v0"), BranchPlan(k=2, states="first", max_states=1, gamma=0.5), seed=0)
    t = _type_episode(ToyEnv(mode="type"), [Action.type_text("nope"), Action.enter()])
    m = b.expand([t], Scripted(["hello", "world"]), iteration=0)
    assert m["branch/env_steps"] == 4 and t.metadata["branch_env_steps"] == 4
    assert [(h, a.text, v) for h, a, v in read_branches(t)] == [(0, "hello", 0.5), (0, "world", 0.0)]


def test_rollout_metrics_count_the_branch_steps():
    from digirl.training.run import rollout_metrics

    a, b = _traj([0, 1], tid="a"), _traj([0, 0, 0], tid="b")
    a.metadata["branch_env_steps"] = 5
    m = rollout_metrics([a, b])
    assert m["rollout/env_steps"] == 10.0 and m["rollout/branch_env_steps"] == 5.0
    plain = rollout_metrics([_traj([0, 1], tid="c")])
    assert plain["rollout/env_steps"] == 2.0 and "rollout/branch_env_steps" not in plain


# ----------------------------------------------------------------------------- config, registry, update


def test_branch_is_registered_with_its_own_config():
    assert algorithm_config_class("branch") is BranchConfig
    cfg = AlgoConfig(name="branch", branch_k=3, branch_states="first")
    own = BranchConfig.of(cfg)
    assert (own.branch_k, own.branch_states, own.branch_max_states, own.branch_weighting) == (3, "first", 2, "positive")
    for bad, match in (
        ({"branch_k": 0}, "branch_k must be >= 1"),
        ({"branch_k": 1, "branch_include_taken": False}, "groups of one action"),
        ({"branch_states": "middle"}, "branch_states must be"),
        ({"branch_max_states": -1}, "branch_max_states"),
        ({"branch_beta": 0.0}, "branch_beta"),
    ):
        with pytest.raises(ValueError, match=match):
            BranchConfig(**bad)


def test_update_clones_the_better_than_average_actions():
    from digirl.policies.default import DefaultPolicy, PolicyNetConfig

    policy = DefaultPolicy(PolicyNetConfig(dim=32, layers=1, heads=2), seed=0)
    algo = make_algorithm(policy, AlgoConfig(name="branch", actor_steps=2, batch_size=4, gamma=0.5), seed=0)
    assert isinstance(algo, BranchAlgorithm)
    assert algo.branch_plan() == {"k": 4, "states": "random", "max_states": 2, "gamma": 0.5, "score": "auto"}
    t = _traj([0, 0, 1], [_b(1, 1.0), _b(1, 0.0, x=0.8)])
    flat = _traj([0, 1], [_b(0, 0.5)], tid="flat")  # taken: 0.5 (= 0.5 * 1), branch 0.5: nothing to learn
    m = algo.update([t, flat], "online")
    assert m["train/branch_groups"] == 2 and m["train/branch_members"] == 5
    assert m["train/branch_flat_groups"] == 0.5 and m["train/kept_steps"] == 1  # only the branch worth 1.0
    assert m["train/actor_steps"] == 2 and np.isfinite(m["train/actor_loss"])
    notes = algo.annotations()
    assert [(n.traj_id, n.step, n.value, n.q, n.advantage, n.kept) for n in notes] == [
        ("t", 1, 0.5, 0.5, 0.0, False),
        ("flat", 0, 0.5, 0.5, 0.0, False),
    ]
    state = algo.state_dict()
    algo.load_state_dict(state)


# ----------------------------------------------------------------------------- critic scoring (envs that cannot clone)


def test_action_features():
    from digirl.algorithms.branch_critic import ACTION_DIM, action_features

    f = action_features([Action.tap(0.25, 0.5), Action.back()])
    assert f.shape == (2, ACTION_DIM) and f.dtype == np.float32
    # tap: DUAL_POINT one-hot, then x, y, and sin/cos of 2*pi*f*x, 2*pi*f*y for f = 1, 2, 4 (touch, then lift)
    assert f[0, 0] == 1.0 and f[0, 1:8].sum() == 0
    np.testing.assert_allclose(f[0, 8:14], [0.25, 0.5, 1.0, 0.0, 0.0, -1.0], atol=1e-6)
    np.testing.assert_allclose(f[0, 8:22], f[0, 22:36])  # a tap: the lift is the touch
    assert f[1, 2] == 1.0 and f[1].sum() == 1.0  # PRESS_BACK: its one-hot only


def test_the_q_critic_learns_which_action_pays():
    import torch

    from digirl.algorithms.branch_critic import ActionValueCritic, fit_action_values
    from digirl.algorithms.encoder_config import CriticEncoderConfig

    torch.manual_seed(0)
    critic = ActionValueCritic(CriticEncoderConfig(dim=16, layers=1, heads=2))
    opt = torch.optim.AdamW(critic.parameters(), lr=1e-2)
    obs = [_obs(0)] * 2
    good, bad = Action.tap(0.2, 0.3), Action.tap(0.8, 0.7)
    m = fit_action_values(critic, opt, obs, [good, bad], [1.0, 0.0], steps=20, batch_size=2, rng=np.random.default_rng(0))
    q = critic.q_value(obs, [good, bad])
    assert m["critic/q_loss"] < 0.6 and q[0] > 0.8 and q[1] < 0.2


def test_brancher_falls_back_to_critic_scoring_where_the_env_cannot_clone():
    with pytest.raises(ConfigError, match="branch_score=rollout"):
        Brancher(EnvConfig(id="digirl/android-general-v0"), BranchPlan(k=2), seed=0, score="rollout")
    b = Brancher(EnvConfig(id="digirl/android-general-v0"), BranchPlan(k=2, states="all", max_states=0), seed=0, score="auto")
    assert b.score == "critic" and b.env is None and not b.plan.execute
    t = _type_episode(ToyEnv(mode="type"), [Action.type_text("nope"), Action.enter()])
    m = b.expand([t], Scripted(["hello", "world"]), iteration=0)
    assert m["branch/env_steps"] == 0 and m["branch/actions"] == 4 and t.metadata["branch_env_steps"] == 0
    # two per state, sampled from the recorded observation, not executed (no value)
    assert [(h, a.text or a.kind, v) for h, a, v in read_branches(t)] == [
        (0, "hello", None),
        (0, "world", None),
        (1, "enter", None),
        (1, "enter", None),
    ]
    assert Brancher(EnvConfig(id="digirl/toy-type-v0"), BranchPlan(k=2), seed=0, score="auto").score == "rollout"


def _policy():
    from digirl.policies.default import DefaultPolicy, PolicyNetConfig

    return DefaultPolicy(PolicyNetConfig(dim=32, layers=1, heads=2), seed=0)


def test_critic_scored_groups_take_q_for_every_member():
    cfg = AlgoConfig(name="branch", actor_steps=1, batch_size=4, gamma=0.5, branch_critic_steps=3, branch_critic_batch=4)
    cfg.critic = dataclasses.replace(cfg.critic, dim=16, layers=1, heads=2)
    algo = make_algorithm(_policy(), cfg, seed=0)
    assert isinstance(algo, BranchAlgorithm) and algo.critic is not None
    unscored = {"step": 1, "action": action_to_dict(Action.tap(0.9, 0.9)), "value": None}
    t = _traj([0, 0, 1], [unscored, dict(unscored, action=action_to_dict(Action.back()))])
    executed = _traj([0, 1], [_b(0, 1.0)], tid="executed")  # its group keeps the returns: 0.5 taken, 1.0 branch
    m = algo.update([t, executed], "online")
    assert m["critic/scored_actions"] == 3 and np.isfinite(m["critic/q_loss"]) and m["train/branch_groups"] == 2
    notes = {n.traj_id: n for n in algo.annotations()}
    assert notes["executed"].q == 0.5 and notes["executed"].advantage == pytest.approx(-0.25)
    assert 0.0 < notes["t"].q < 1.0 and notes["t"].q != 0.5  # Q(s, a), not the return-to-go
    state = algo.state_dict()
    assert {"critic", "critic_optimizer"} <= set(state)
    algo.load_state_dict(state)
    rollout_only = make_algorithm(_policy(), AlgoConfig(name="branch", branch_score="rollout"), seed=0)
    with pytest.raises(DataError, match="branches that were not executed"):
        rollout_only.update([t], "online")


# ----------------------------------------------------------------------------- it learns

TASKS = [
    "Open the clock app",
    "Open the calendar app",
    "Open the camera",
    "Open the settings app",
    "Open YouTube",
    "Open Google Maps",
    "Open the Play Store",
    "Open the photos app",
    "Open the Chrome app",
]


def _learn(tmp_path: Path, extra: list[str]) -> tuple[list[dict], list[dict]]:
    from digirl.config.core import load_config
    from digirl.training.config import TrainConfig
    from digirl.training.loop import train

    tasks = tmp_path / "tasks.txt"
    tasks.write_text("\n".join(TASKS) + "\n")
    base = [
        "mode=online",
        f"env.task_file={tasks}",
        "env.runner=inline",
        "env.num_envs=4",
        "env.perturbation=0",
        "iterations=3",
        "rollout_size=16",
        "eval.every=100",
        "eval.test_tasks=0",
        "eval.train_tasks=9",
        "eval.seed=7",
        "algo.name=branch",
        "algo.branch_k=4",
        "algo.branch_states=first",
        "algo.branch_max_states=1",
        "algo.actor_steps=12",
        "algo.batch_size=32",
        "algo.lr=2e-3",
        "policy.default.dim=48",
        "policy.default.layers=1",
        "policy.default.heads=2",
        "log.tensorboard=false",
        "seed=0",
    ]
    history = train(load_config(TrainConfig, overrides=base + extra), tmp_path / "run")["history"]
    before, after = history[0]["eval/train_success_rate"], history[-1]["eval/train_success_rate"]
    assert before <= 0.25, f"the untrained policy should mostly fail, got {before}"
    assert after >= before + 0.5, f"branch did not learn: {before:.2f} -> {after:.2f}"
    metrics = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    return history, metrics


@pytest.mark.learning
@pytest.mark.timeout(900)  # ~70 s of CPU; minutes of wall-clock beside other runs
def test_branch_learns_on_simulator_tasks(tmp_path: Path) -> None:
    """Branches executed on clones of the simulator (branch_score=rollout)."""
    _, metrics = _learn(tmp_path, ["algo.branch_score=rollout"])
    rollouts = [m for m in metrics if "rollout/env_steps" in m]
    assert len(rollouts) == 3
    for m in rollouts:  # the budget counts the branches: 16 episodes' steps plus 16 x 4 branches of >= 1 step
        assert m["rollout/branch_env_steps"] >= 64 and m["rollout/env_steps"] > m["rollout/branch_env_steps"]
    assert any(m.get("train/branch_groups") == 16 for m in metrics)


@pytest.mark.slow
@pytest.mark.learning
@pytest.mark.timeout(1500)  # ~2 min of CPU (the Q critic's fits); 11.5 min of wall-clock beside other runs
def test_branch_learns_with_critic_scores(tmp_path: Path) -> None:
    """The fallback for envs that cannot clone: the K actions are not executed, a Q(s, a) scores them."""
    critic = ["algo.critic.dim=48", "algo.critic.layers=1", "algo.critic.heads=2", "algo.branch_critic_steps=30"]
    _, metrics = _learn(tmp_path, ["algo.branch_score=critic", *critic])
    rollouts = [m for m in metrics if "rollout/env_steps" in m]
    assert len(rollouts) == 3 and all("rollout/branch_env_steps" not in m for m in rollouts)  # no branch steps
    assert all(m["critic/scored_actions"] > 0 for m in metrics if "critic/q_loss" in m)
