"""GRPO (issue 45): group-normalised advantages, the clipped surrogate and KL estimator on hand-computed
numbers; grouped collection; the update on real rollouts (default and Hugging Face policies); learning."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from digirl.algorithms.base import AlgoConfig
from digirl.algorithms.configs import GRPOConfig
from digirl.algorithms.grpo import GRPO, group_key
from digirl.algorithms.onpolicy import ReferencePolicy, fresh_trajectories, score_log_probs, update_step_count
from digirl.algorithms.policy_gradient import (
    clipped_surrogate,
    efficiency_return,
    group_normalized_advantages,
    group_step_advantages,
    kl_k3,
    sampled_entropy,
)
from digirl.algorithms.registry import make_algorithm
from digirl.config.core import load_config
from digirl.core.errors import ConfigError
from digirl.core.types import Trajectory
from digirl.envs.vector import EpisodeJob, VectorRunner, env_factory
from digirl.policies.default import DefaultPolicy, PolicyNetConfig
from digirl.training.config import TrainConfig
from digirl.training.run import iteration_jobs
from tests.algorithms.onpolicy_learning import learning_run

SQRT3 = math.sqrt(3.0)


# --------------------------------------------------------------------------- pure functions
def test_group_normalised_advantages_by_hand():
    # groups by label, not position: a = [1, 0, 1, 0] and b = [0, 1], each mean 1/2 and std 1/2 -> ±1
    adv, std = group_normalized_advantages([1, 0, 0, 1, 1, 0], ["a", "a", "b", "a", "b", "a"])
    assert adv == pytest.approx([1.0, -1.0, -1.0, 1.0, 1.0, -1.0], rel=1e-5)
    assert std.tolist() == [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
    # a = [1, 0, 0, 0]: mean 1/4, population std sqrt(3)/4 -> +sqrt(3) and -1/sqrt(3); b = [1, 1] is flat -> 0
    adv, std = group_normalized_advantages([1, 0, 0, 0, 1, 1], ["a", "a", "a", "a", "b", "b"])
    assert adv == pytest.approx([SQRT3, -1 / SQRT3, -1 / SQRT3, -1 / SQRT3, 0.0, 0.0], rel=1e-5)
    assert std == pytest.approx([SQRT3 / 4] * 4 + [0.0, 0.0])
    unscaled, _ = group_normalized_advantages([1, 0, 0, 0, 1, 1], ["a", "a", "a", "a", "b", "b"], scale=False)
    assert unscaled.tolist() == [0.75, -0.25, -0.25, -0.25, 0.0, 0.0]
    with pytest.raises(ValueError, match="one return per group label"):
        group_normalized_advantages([1, 0], ["a"])


def test_step_level_advantages_by_hand():
    # group g: A (R=1, 2 steps) -> step returns [0.5, 1] at gamma 0.5; B (R=0, 1 step) -> [0].
    # The group's steps [0.5, 1, 0]: mean 0.5, std sqrt(1/6) -> A [0, 0.5/sqrt(1/6)], B [-0.5/sqrt(1/6)].
    # group h: two 1-step successes -> all equal -> 0.
    advs, spread = group_step_advantages([1, 0, 1, 1], [2, 1, 1, 1], ["g", "g", "h", "h"], gamma=0.5)
    k = 0.5 / math.sqrt(1 / 6)
    assert advs[0] == pytest.approx([0.0, k], abs=1e-5) and advs[1] == pytest.approx([-k], rel=1e-5)
    assert advs[2].tolist() == [0.0] and advs[3].tolist() == [0.0]
    assert spread == pytest.approx([math.sqrt(1 / 6)] * 2 + [0.0, 0.0])
    # two successes of different lengths still differ at the step level (the shorter is better)
    advs, spread = group_step_advantages([1, 1], [1, 2], ["g", "g"], gamma=0.5, scale=False)
    assert advs[0].tolist() == [1 - 2.5 / 3] and advs[1].tolist() == [0.5 - 2.5 / 3, 1 - 2.5 / 3] and spread[0] > 0


def test_efficiency_return_charges_successes_only():
    assert efficiency_return(1.0, 3, 10, 0.5) == pytest.approx(0.85)
    assert efficiency_return(1.0, 12, 10, 0.5) == pytest.approx(0.5)  # capped at the horizon
    assert efficiency_return(0.0, 3, 10, 0.5) == 0.0  # a quick failure is no better than a slow one
    assert efficiency_return(1.0, 3, 10, 0.0) == 1.0
    with pytest.raises(ValueError, match=r"in \[0, 1\)"):
        efficiency_return(1.0, 3, 10, 1.0)


def test_clipped_surrogate_by_hand():
    lp = torch.log(torch.tensor([1.5, 1.5, 0.5, 0.5])).requires_grad_()
    old = torch.zeros(4)
    adv = torch.tensor([1.0, -1.0, 1.0, -1.0])
    loss, clipped = clipped_surrogate(lp, old, adv, 0.2)
    # rho=1.5,A=+1: min(1.5, 1.2)=1.2 (clipped); A=-1: min(-1.5,-1.2)=-1.5; rho=.5,A=+1: .5; A=-1: min(-.5,-.8)=-.8 (clipped)
    assert loss.tolist() == pytest.approx([-1.2, 1.5, -0.5, 0.8])
    assert clipped.tolist() == [True, False, False, True]
    loss.sum().backward()
    # d(-rho*A)/d log pi = -rho*A where unclipped, 0 where clipped
    assert lp.grad is not None and lp.grad.tolist() == pytest.approx([0.0, 1.5, -0.5, 0.0])


def test_kl_and_entropy_estimators_by_hand():
    lp = torch.log(torch.tensor([0.5, 0.5]))
    ref = torch.log(torch.tensor([0.25, 0.5]))
    # d = log(.25/.5) = -ln 2: e^d - d - 1 = 0.5 + ln 2 - 1
    assert kl_k3(lp, ref).tolist() == pytest.approx([0.5 + math.log(2) - 1, 0.0])
    x = torch.log(torch.tensor([0.5])).requires_grad_()
    ent = sampled_entropy(x, x.detach())
    assert ent.item() == pytest.approx(math.log(2))
    ent.sum().backward()
    assert x.grad is not None and x.grad.item() == pytest.approx(-(1 - math.log(2)))  # -(log pi + 1)


def test_update_step_count():
    assert update_step_count(80, 4.0, 32, 1, 40) == 10  # ceil(4*80/32)
    assert update_step_count(80, 4.0, 32, 1, 6) == 6  # capped by actor_steps
    assert update_step_count(10, 1.0, 32, 2, 40) == 1  # a minibatch is never larger than the data
    assert update_step_count(0, 4.0, 32, 1, 40) == 0


# --------------------------------------------------------------------------- grouped collection
def test_iteration_jobs_play_each_task_group_size_times_from_one_seed():
    pool = [f"task-{i}" for i in range(5)]
    cfg = load_config(TrainConfig, overrides=["algo.name=grpo", "group_size=4", "rollout_size=12"])
    jobs = iteration_jobs(cfg, pool, 3)  # type: ignore[arg-type]
    assert len(jobs) == 12
    for g in range(3):
        members = jobs[4 * g : 4 * g + 4]
        assert len({(j.task, j.seed) for j in members}) == 1
    assert len({(j.task, j.seed) for j in jobs}) == 3
    # group_size=1 draws exactly what the loop always drew
    plain = iteration_jobs(load_config(TrainConfig, overrides=["rollout_size=12"]), pool, 3)  # type: ignore[arg-type]
    rng = np.random.default_rng([0, 3])
    tasks = [pool[int(i)] for i in rng.integers(0, 5, size=12)]
    assert [(j.task, j.seed) for j in plain] == list(zip(tasks, rng.integers(0, 2**31 - 1, size=12).tolist()))


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["algo.name=grpo"], "set group_size >= 2"),
        (["group_size=3"], "divide rollout_size"),
        (["algo.name=grpo", "group_size=4", "mode=off2on", "offline_dataset=x"], "learns on-policy"),
        (["group_size=2", "env.runner=ray", "env.ray.inference=actor"], "inference=learner"),
    ],
)
def test_group_options_that_cannot_apply_are_errors(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_config(TrainConfig, overrides=overrides)


# --------------------------------------------------------------------------- the update
@pytest.fixture(scope="module")
def grouped() -> tuple[PolicyNetConfig, list[Trajectory]]:
    """Four groups of four toy-env rollouts (each group: one seed), tagged as collected by version 1."""
    net = PolicyNetConfig(dim=32, layers=1)
    torch.manual_seed(0)
    pol = DefaultPolicy(net, seed=0)
    jobs = [EpisodeJob(None, s) for s in (11, 12, 13, 14) for _ in range(4)]
    with VectorRunner(env_factory("digirl/toy-tap-v0"), 1, mode="inline") as runner:
        trajs = sorted(runner.run(lambda obs: pol.act(obs), jobs), key=lambda t: t.metadata["job_id"])
    for t in trajs:
        t.policy_version = 1
    assert 0 < sum(t.success for t in trajs) < len(trajs)
    return net, trajs


def _grpo(net: PolicyNetConfig, **kw) -> tuple[DefaultPolicy, GRPO]:
    torch.manual_seed(0)
    pol = DefaultPolicy(net, seed=0)
    cfg = GRPOConfig(batch_size=16, actor_steps=2, lr=1e-2, **kw)
    return pol, GRPO(pol, cfg, seed=0)


def test_update_uses_the_newest_rollouts_and_their_group_advantages(grouped):
    net, trajs = grouped
    old = [dataclasses.replace(t, traj_id=f"old-{i}", policy_version=0) for i, t in enumerate(trajs)]
    assert fresh_trajectories([*old, *trajs]) == trajs
    _, algo = _grpo(net)
    m = algo.update([*old, *trajs], "online")
    assert m["train/groups"] == 4 and m["train/group_size"] == 4
    adv, std = group_normalized_advantages([t.reward for t in trajs], [group_key(t) for t in trajs])
    notes = {(n.traj_id, n.step): n for n in algo.annotations()}
    assert {k[0] for k in notes} == {t.traj_id for t in trajs}  # the old iteration is not trained on
    for t, a, s in zip(trajs, adv, std):
        for i in range(t.length):
            n = notes[(t.traj_id, i)]
            assert n.advantage == pytest.approx(a)
            assert n.kept == (s > 0 and t.steps[i].action.is_valid)  # zero-variance groups skipped
    flat = sum((t.length for t, s in zip(trajs, std) if s == 0), 0)
    assert m["train/zero_variance_groups"] == len({group_key(t) for t, s in zip(trajs, std) if s == 0})
    assert m["train/actor_samples"] == sum(t.length for t in trajs) - flat - sum(
        1 for t, s in zip(trajs, std) if s > 0 for st in t.steps if not st.action.is_valid
    )
    assert math.isfinite(m["train/policy_loss"]) and m["train/kl_ref"] >= 0 and 0 <= m["train/clip_fraction"] <= 1


def test_zero_variance_groups_can_be_down_weighted_or_kept(grouped):
    net, trajs = grouped
    spread = group_normalized_advantages([t.reward for t in trajs], [group_key(t) for t in trajs]).group_std
    flat = [t for t, s in zip(trajs, spread) if s == 0]
    assert flat, "the fixture should hold a group with no variance"
    for mode, w in (("downweight", 0.25), ("keep", 1.0)):
        _, algo = _grpo(net, zero_variance=mode, zero_variance_weight=0.25)
        algo.update(trajs, "online")
        notes = [n for n in algo.annotations() if n.traj_id == flat[0].traj_id]
        assert {n.weight for n in notes} == {w}


def test_the_reference_is_the_starting_policy_and_survives_a_checkpoint(grouped):
    net, trajs = grouped
    pol, algo = _grpo(net)
    obs = [s.observation for t in trajs for s in t.steps]
    acts = [s.action for t in trajs for s in t.steps]
    before = score_log_probs(pol, obs, acts)
    algo.update(trajs, "online")
    after = score_log_probs(pol, obs, acts)
    assert not np.allclose(before, after, equal_nan=True)  # the policy moved
    assert algo.reference is not None
    np.testing.assert_allclose(algo.reference.log_probs(obs, acts), before, rtol=1e-6)
    np.testing.assert_allclose(score_log_probs(pol, obs, acts), after, rtol=1e-6)  # swapped back
    state = algo.state_dict()
    pol2, fresh = _grpo(net)
    for p, q in zip(pol2.parameters(), pol.parameters()):
        p.data.copy_(q.data)  # as a resumed run: the trained weights, then the algorithm's state
    fresh2 = GRPO(pol2, fresh.cfg, seed=5)
    fresh2.load_state_dict(state)
    assert fresh2.reference is not None
    np.testing.assert_allclose(fresh2.reference.log_probs(obs, acts), before, rtol=1e-6)
    assert fresh2.rng.bit_generator.state == algo.rng.bit_generator.state


def test_success_replay_fills_a_group_without_success(grouped):
    net, trajs = grouped
    win = next(t for t in trajs if t.success)
    stored = dataclasses.replace(win, traj_id="stored-win", policy_version=0)

    def failed(i: int, t: Trajectory) -> Trajectory:  # a failure of the winning task, in one group (seed 99)
        last = dataclasses.replace(t.steps[-1], reward=0.0)
        return dataclasses.replace(t, traj_id=f"f{i}", task=win.task, seed=99, steps=[*t.steps[:-1], last])

    fails = [failed(i, t) for i, t in enumerate(trajs[:4])]
    assert not any(f.success for f in fails)
    _, algo = _grpo(net, success_replay=2)
    algo.update([stored], "online")  # the replay learns the task's success
    assert algo.replay == {win.task.task_id or win.task.instruction: ["stored-win"]}
    fresh = [dataclasses.replace(f, policy_version=1) for f in fails]
    m = algo.update([stored, *fresh], "online")
    assert m["train/replayed_successes"] == 1 and m["train/zero_variance_groups"] == 0
    ids = {n.traj_id for n in algo.annotations()}
    assert "stored-win" in ids and "f3" not in ids  # the last failure made room for the stored success
    _, off = _grpo(net)
    assert off.update([stored, *fresh], "online")["train/zero_variance_groups"] == 1  # without replay: no signal


def test_grpo_is_online_only_and_registered(grouped):
    net, trajs = grouped
    pol, algo = _grpo(net)
    with pytest.raises(ConfigError, match="on-policy"):
        algo.update(trajs, "offline")
    section = load_config(TrainConfig, overrides=["algo.name=grpo", "group_size=4", "algo.kl_coef=0.1"]).algo
    built = make_algorithm(pol, section)
    assert isinstance(built, GRPO) and type(built.cfg) is GRPOConfig and built.cfg.kl_coef == 0.1
    assert isinstance(AlgoConfig(name="grpo"), GRPOConfig)
    with pytest.raises(ValueError, match=r"algo\.zero_variance"):
        GRPOConfig(zero_variance="drop")  # type: ignore[arg-type]


def test_reference_policy_rejects_a_checkpoint_of_another_shape():
    ref = ReferencePolicy(DefaultPolicy(PolicyNetConfig(dim=32, layers=1)))
    with pytest.raises(ValueError, match="does not match"):
        ref.load_state_dict(ref.state_dict()[:-1])


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("lora_r", [0, 4])
def test_grpo_updates_a_hugging_face_policy(tiny_vlm, grouped, lora_r):
    """Written against the policy protocol: a tiny VLM (full fine-tuning and LoRA) takes GRPO steps on
    the toy rollouts (valid taps, which it can express; its own random outputs would be INVALID)."""
    from digirl.policies.config import PolicyConfig
    from digirl.policies.registry import build_policy

    overrides = ["kind=hf", f"init={tiny_vlm('qwen2_vl')}", "device=cpu", "hf.max_new_tokens=40", f"hf.lora_r={lora_r}"]
    pol = build_policy(load_config(PolicyConfig, overrides=overrides), seed=0)
    _, trajs = grouped
    # two groups of two one-step episodes, one success each: both groups carry a signal
    batch = [
        dataclasses.replace(t, traj_id=f"hf{i}", seed=i // 2, steps=[dataclasses.replace(t.steps[0], reward=float(i % 2))])
        for i, t in enumerate(trajs[:4])
    ]
    obs, acts = [t.steps[0].observation for t in batch], [t.steps[0].action for t in batch]
    start = score_log_probs(pol, obs, acts)  # type: ignore[arg-type]
    assert np.isfinite(start).all()
    before = [p.detach().clone() for p in pol.parameters()]
    algo = GRPO(pol, GRPOConfig(batch_size=4, actor_steps=2, lr=1e-3), seed=0)  # type: ignore[arg-type]
    m = algo.update(batch, "online")
    assert m["train/actor_steps"] == 2 and math.isfinite(m["train/policy_loss"]) and m["train/zero_variance_groups"] == 0
    assert any(not torch.equal(a, b) for a, b in zip(before, pol.parameters()))
    assert algo.reference is not None and len(algo.reference.params) == len(before)
    np.testing.assert_allclose(algo.reference.log_probs(obs, acts), start, rtol=1e-5)  # the reference stayed put


# --------------------------------------------------------------------------- learning
@pytest.mark.slow
@pytest.mark.learning
@pytest.mark.timeout(1800)  # about a minute of CPU alone; 12 minutes beside other runs on a shared 2-core machine
def test_grpo_learns_on_simulator_tasks(tmp_path):
    history, metrics = learning_run(tmp_path, "grpo", "group_size=4")
    before, after = history[0]["eval/train_success_rate"], history[-1]["eval/train_success_rate"]
    assert history[0]["online_trajectories"] == 0 and history[-1]["online_trajectories"] == 120
    assert before <= 0.25 and after >= before + 0.5, f"grpo did not learn: {before:.2f} -> {after:.2f}"
    updates = [m for m in metrics if "train/policy_loss" in m]
    assert len(updates) == 5 and all(m["train/groups"] == 6 and m["train/group_size"] == 4 for m in updates)
    assert all(m["train/kl_ref"] >= 0 and 0 <= m["train/clip_fraction"] <= 1 for m in updates)


class _TwoActions:
    """A policy over two actions with one logit each, whatever the observation: log π(a) by hand."""

    kind = "test"
    device = torch.device("cpu")

    def __init__(self) -> None:
        self.theta = torch.nn.Parameter(torch.zeros(2))

    def parameters(self):
        return iter([self.theta])

    def train(self, mode: bool = True) -> None:
        pass

    def log_prob_with_mask(self, observations, actions):
        lp = torch.log_softmax(self.theta, 0)[torch.tensor(actions)]
        return lp, torch.ones(len(actions), dtype=torch.bool)


def test_the_first_clipped_step_is_the_policy_gradient_by_hand():
    """At π = π_old = π_ref the ratio is 1 and the KL's gradient 0: one SGD step (lr 1) moves θ by
    mean_i A_i ∇log π(a_i), with ∇_θ log softmax(θ)[a] = onehot(a) − π = ±(0.5, −0.5) at θ = 0.
    A step the reference cannot express (NaN) just has no KL term."""
    from digirl.algorithms.onpolicy import ClipOptions, PGSample, clipped_policy_update

    pol = _TwoActions()
    half = math.log(0.5)
    samples = [PGSample(None, 0, 1.0, 1.0, half, half), PGSample(None, 1, -1.0, 1.0, half, float("nan"))]  # type: ignore[arg-type]
    opts = ClipOptions(clip_eps=0.2, kl_coef=0.5, entropy_coef=0.0, steps=1, batch_size=2, grad_accum=1, max_grad_norm=100.0)
    idx = np.random.default_rng(0).integers(0, 2, size=2)  # the minibatch the update draws (with replacement)
    grad_lp = {0: np.array([0.5, -0.5]), 1: np.array([-0.5, 0.5])}
    want = np.mean([samples[i].advantage * grad_lp[samples[i].action] for i in idx], axis=0)  # type: ignore[index]
    m = clipped_policy_update(pol, torch.optim.SGD([pol.theta], lr=1.0), samples, opts, np.random.default_rng(0))  # type: ignore[arg-type]
    assert pol.theta.detach().numpy() == pytest.approx(want)
    assert m["train/clip_fraction"] == 0.0 and m["train/kl_ref"] == pytest.approx(0.0, abs=1e-7)
    assert m["train/policy_loss"] == pytest.approx(-np.mean([samples[i].advantage for i in idx]))


def test_a_resumed_run_keeps_the_reference_of_the_runs_start(tmp_path):
    """The reference is the starting policy, not the weights a resumed run loads: it and the success
    replay come back from the checkpoint."""
    from digirl.policies.registry import build_policy
    from digirl.testing.tiny_runs import TINY_ONLINE_DIGIRL
    from digirl.training.loop import train
    from digirl.training.run import Run

    # flat groups kept and an entropy bonus: the tiny run's policy moves even if no episode succeeds
    grpo = ["algo.name=grpo", "group_size=2", "algo.success_replay=2", "algo.zero_variance=keep", "algo.entropy_coef=0.1"]
    args = [*TINY_ONLINE_DIGIRL, *grpo, "eval.train_tasks=0"]
    train(load_config(TrainConfig, overrides=[*args, "iterations=1"]), tmp_path / "run")
    cfg = load_config(TrainConfig, overrides=[*args, "iterations=2"])
    start = build_policy(cfg.policy, seed=cfg.seed)  # the run's initial weights (same seed)
    run = Run.open(cfg, tmp_path / "run")
    try:
        algo = run.algo
        assert isinstance(algo, GRPO) and algo.reference is not None and run.state.iteration == 1
        trained = [p.detach() for p in run.policy.parameters()]
        assert all(torch.equal(r, p.detach()) for r, p in zip(algo.reference.params, start.parameters()))  # type: ignore[attr-defined]
        assert not all(torch.equal(r, p) for r, p in zip(algo.reference.params, trained))  # not the resumed weights
        wins = [t for t in run.buffer.trajectories() if t.success]
        assert sorted(i for ids in algo.replay.values() for i in ids) == sorted(t.traj_id for t in wins)
    finally:
        run.close()
