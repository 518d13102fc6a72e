"""PPO (issue 45): GAE on hand-computed numbers, the efficiency-shaped rewards, the update on real
rollouts (value network, advantages, checkpoint), and a CPU run that learns."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from digirl.algorithms.configs import CriticEncoderConfig, PPOConfig
from digirl.algorithms.policy_gradient import gae
from digirl.algorithms.ppo import PPO, shaped_rewards
from digirl.algorithms.registry import make_algorithm
from digirl.config.core import load_config
from digirl.core.errors import ConfigError
from digirl.core.types import Trajectory
from digirl.envs.vector import EpisodeJob, VectorRunner, env_factory
from digirl.policies.default import DefaultPolicy, PolicyNetConfig
from digirl.training.config import TrainConfig
from tests.algorithms.onpolicy_learning import learning_run


# --------------------------------------------------------------------------- pure functions
def test_gae_by_hand():
    # rewards [0, 0, 1], V = [0.5, 0.6, 0.8], terminal (bootstrap 0), gamma 0.9, lambda 0.5:
    # delta = [0.9*0.6 - 0.5, 0.9*0.8 - 0.6, 1 - 0.8] = [0.04, 0.12, 0.2]
    # A_2 = 0.2, A_1 = 0.12 + 0.45*0.2 = 0.21, A_0 = 0.04 + 0.45*0.21 = 0.1345
    out = gae([0, 0, 1], [0.5, 0.6, 0.8], 0.0, gamma=0.9, lam=0.5)
    assert out.advantages == pytest.approx([0.1345, 0.21, 0.2])
    assert out.returns == pytest.approx([0.6345, 0.81, 1.0])  # A + V: the lambda-return targets
    # lambda = 1: the Monte-Carlo return [0.81, 0.9, 1] minus V; lambda = 0: the TD errors
    assert gae([0, 0, 1], [0.5, 0.6, 0.8], 0.0, gamma=0.9, lam=1.0).advantages == pytest.approx([0.31, 0.3, 0.2])
    assert gae([0, 0, 1], [0.5, 0.6, 0.8], 0.0, gamma=0.9, lam=0.0).advantages == pytest.approx([0.04, 0.12, 0.2])
    # a truncated episode bootstraps from V(s_H): 0 + 0.9*0.7 - 0.5
    assert gae([0.0], [0.5], 0.7, gamma=0.9, lam=0.95).advantages == pytest.approx([0.13])
    with pytest.raises(ValueError, match="one value per reward"):
        gae([0, 1], [0.5], 0.0, gamma=0.9, lam=0.5)
    with pytest.raises(ValueError, match="gamma"):
        gae([0], [0.5], 0.0, gamma=1.5, lam=0.5)


# --------------------------------------------------------------------------- the update
@pytest.fixture(scope="module")
def rollouts() -> tuple[PolicyNetConfig, list[Trajectory]]:
    net = PolicyNetConfig(dim=32, layers=1)
    torch.manual_seed(0)
    pol = DefaultPolicy(net, seed=0)
    with VectorRunner(env_factory("digirl/toy-tap-v0"), 1, mode="inline") as runner:
        trajs = sorted(runner.run(lambda obs: pol.act(obs), [EpisodeJob(None, s) for s in range(12)]), key=lambda t: t.seed or 0)
    for t in trajs:
        t.policy_version = 2
    assert 0 < sum(t.success for t in trajs) < len(trajs)
    return net, trajs


def _ppo(net: PolicyNetConfig, **kw) -> tuple[DefaultPolicy, PPO]:
    torch.manual_seed(0)
    pol = DefaultPolicy(net, seed=0)
    cfg = PPOConfig(batch_size=16, actor_steps=2, lr=1e-2, critic=CriticEncoderConfig(dim=32, layers=1), **kw)
    return pol, PPO(pol, cfg, seed=0)


def test_shaped_rewards_put_the_efficiency_charge_on_a_successs_last_step(rollouts):
    _, trajs = rollouts
    win = next(t for t in trajs if t.success)
    lose = next(t for t in trajs if not t.success)
    r = shaped_rewards(win, 0.5)
    assert r[:-1].tolist() == [s.reward for s in win.steps[:-1]]
    assert r[-1] == pytest.approx(win.steps[-1].reward - 0.5 * win.length / win.task.horizon)
    assert shaped_rewards(lose, 0.5).tolist() == [s.reward for s in lose.steps]  # failures are not charged
    assert shaped_rewards(win, 0.0).tolist() == [s.reward for s in win.steps]


def test_advantages_are_gae_on_the_value_networks_values(rollouts):
    net, trajs = rollouts
    _, algo = _ppo(net, gae_lambda=0.8, gamma=0.9)
    values = algo.values(trajs)
    assert [len(v) for v in values] == [t.length + 1 for t in trajs]
    advs, targets = algo.advantages(trajs, values)
    for t, v, a, g in zip(trajs, values, advs, targets):
        boot = 0.0 if t.terminated else v[-1]
        want = gae([s.reward for s in t.steps], v[:-1], boot, gamma=0.9, lam=0.8)
        np.testing.assert_allclose(a, want.advantages)
        np.testing.assert_allclose(g, want.returns)


def test_update_trains_policy_and_value_on_the_newest_rollouts(rollouts):
    net, trajs = rollouts
    old = [dataclasses.replace(t, traj_id=f"old-{i}", policy_version=1) for i, t in enumerate(trajs)]
    pol, algo = _ppo(net)
    before = [p.detach().clone() for p in pol.parameters()]
    v_before = algo.values(trajs)
    m = algo.update([*old, *trajs], "online")
    assert m["train/actor_steps"] == 2 and m["critic/value_steps"] == 2
    assert math.isfinite(m["train/policy_loss"]) and math.isfinite(m["critic/value_loss"])
    assert m["train/batch_success_rate"] == pytest.approx(np.mean([t.success for t in trajs]))
    assert any(not torch.equal(a, b) for a, b in zip(before, pol.parameters()))
    assert not np.allclose(np.concatenate(v_before), np.concatenate(algo.values(trajs)))  # the value network learned
    notes = algo.annotations()
    assert {n.traj_id for n in notes} == {t.traj_id for t in trajs}  # the older iteration is not trained on
    adv = np.array([n.advantage for n in notes])
    assert adv.mean() == pytest.approx(0.0, abs=1e-6) and adv.std() == pytest.approx(1.0, abs=1e-4)  # normalised
    assert all(n.value is not None for n in notes)


def test_checkpoint_restores_value_network_and_optimizers(rollouts):
    net, trajs = rollouts
    _, algo = _ppo(net)
    algo.update(trajs, "online")
    state = algo.state_dict()
    _, again = _ppo(net)
    again.load_state_dict(state)
    np.testing.assert_allclose(np.concatenate(again.values(trajs)), np.concatenate(algo.values(trajs)))
    assert again.rng.bit_generator.state == algo.rng.bit_generator.state


def test_ppo_is_online_only_registered_and_checks_its_options(rollouts):
    net, trajs = rollouts
    pol, algo = _ppo(net)
    with pytest.raises(ConfigError, match="on-policy"):
        algo.update(trajs, "offline")
    section = load_config(TrainConfig, overrides=["algo.name=ppo", "algo.gae_lambda=0.9", "algo.critic.dim=32"]).algo
    built = make_algorithm(pol, section)
    assert isinstance(built, PPO) and type(built.cfg) is PPOConfig and built.cfg.gae_lambda == 0.9
    for bad, msg in (
        ({"gae_lambda": 1.5}, "gae_lambda"),
        ({"clip_eps": 0.0}, "clip_eps"),
        ({"efficiency_coef": 1.0}, "efficiency"),
    ):
        with pytest.raises(ValueError, match=msg):
            PPOConfig(**bad)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- learning
@pytest.mark.slow
@pytest.mark.learning
@pytest.mark.timeout(1800)  # about a minute of CPU alone; 12 minutes beside other runs on a shared 2-core machine
def test_ppo_learns_on_simulator_tasks(tmp_path):
    history, metrics = learning_run(tmp_path, "ppo")
    before, after = history[0]["eval/train_success_rate"], history[-1]["eval/train_success_rate"]
    assert history[0]["online_trajectories"] == 0 and history[-1]["online_trajectories"] == 120
    assert before <= 0.25 and after >= before + 0.5, f"ppo did not learn: {before:.2f} -> {after:.2f}"
    updates = [m for m in metrics if "train/policy_loss" in m]
    assert len(updates) == 5 and all(math.isfinite(m["critic/value_loss"]) for m in updates)
