"""Deterministic mode: the same command on the same machine gives the same numbers, bit for bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from safetensors.torch import load_file

from digirl.config.core import load_config
from digirl.data.store import TrajectoryStore
from digirl.training.config import TrainConfig
from digirl.training.loop import train

ARGS = [
    "env.id=digirl/sim-general-v0",
    "env.runner=process",
    "env.num_envs=3",  # several workers: completion order varies from run to run
    "mode=online",
    "iterations=2",
    "rollout_size=6",
    "eval.every=0",
    "eval.test_tasks=3",
    "eval.train_tasks=0",
    "algo.name=digirl",
    "algo.actor_steps=3",
    "algo.critic_steps=3",
    "algo.instruct_critic_steps=3",
    "algo.batch_size=8",
    "policy.device=cpu",
    "policy.default.dim=32",
    "policy.default.layers=1",
    "policy.default.heads=2",
    "algo.critic.dim=32",
    "algo.critic.layers=1",
    "algo.critic.heads=2",
    "log.tensorboard=false",
    "seed=3",
]


def _run(path: Path) -> tuple[list, dict, dict]:
    res = train(load_config(TrainConfig, overrides=ARGS), path)
    trajs = TrajectoryStore(path / "data", create=False).load()
    weights = load_file(str(path / "policy" / "model.safetensors"))
    return trajs, weights, res["final"][0]


@pytest.mark.slow
def test_same_command_same_trajectories_weights_and_scores(tmp_path):
    a_trajs, a_w, a_eval = _run(tmp_path / "a")
    b_trajs, b_w, b_eval = _run(tmp_path / "b")
    assert len(a_trajs) == len(b_trajs) == 12
    for a, b in zip(a_trajs, b_trajs):
        assert (a.task, a.seed, a.policy_version, a.reward) == (b.task, b.seed, b.policy_version, b.reward)
        assert [s.action for s in a.steps] == [s.action for s in b.steps]
        assert [s.log_prob for s in a.steps] == [s.log_prob for s in b.steps]
        for sa, sb in zip(a.steps, b.steps):
            np.testing.assert_array_equal(sa.observation.screenshot, sb.observation.screenshot)
    assert a_w.keys() == b_w.keys()
    for k in a_w:
        assert a_w[k].equal(b_w[k]), k
    assert a_eval == b_eval
