"""``benchmarks/studies/exploration_probe.py`` on a tiny fresh policy: exact where the answer is known, seeded."""

from __future__ import annotations

import json
import math

import numpy as np

from benchmarks.studies.exploration_probe import first_target_mass, main, prefix_success
from digirl.policies.config import EncoderConfig
from digirl.policies.default import DefaultPolicy
from digirl.sim.env import SimEnv


def _setup(n: int = 3) -> tuple[DefaultPolicy, SimEnv, list, list[int]]:
    policy = DefaultPolicy(EncoderConfig(dim=16, layers=1, heads=2), seed=0)
    env = SimEnv(taskset="general", split="train")
    tasks = [t for t in env.tasks() if t.family == "web_search"][:n]
    return policy, env, tasks, [11, 12, 13][:n]


def test_prefix_of_the_whole_episode_always_succeeds_and_probabilities_are_probabilities():
    policy, env, tasks, seeds = _setup()
    assert prefix_success(policy, env, tasks, seeds, k=100) == 1.0  # the expert plays everything
    assert prefix_success(policy, env, tasks, seeds, k=0) == 0.0  # an untrained policy does not search
    mass = first_target_mass(policy, env, tasks, seeds)
    assert len(mass) == 3 and all(0.0 < m < 1.0 for m in mass)  # web search starts with a tap on the search bar


def test_same_command_same_numbers(tmp_path, monkeypatch):
    policy, *_ = _setup()
    policy.save(tmp_path / "policy")
    outs = []
    for name in ("a.json", "b.json"):
        args = [str(tmp_path / "policy"), "--episodes", "3", "--max-prefix", "1", "--out", str(tmp_path / name)]
        assert main(args) == 0
        outs.append(json.loads((tmp_path / name).read_text()))
    for o in outs:
        o.pop("wall_s")
        o.pop("command")
    assert outs[0] == outs[1]
    assert set(outs[0]["prefix_success"]) == {"0", "1"} and outs[0]["episodes"] == 3
    assert not math.isnan(outs[0]["first_target_mass_mean"]) and np.isfinite(outs[0]["first_target_mass_median"])
