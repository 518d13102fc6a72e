"""Advantage estimators in a registry: the built-in ones are the paper's functions, and a new one needs no branch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from digirl.algorithms.configs import CriticEncoderConfig, DigiRLConfig
from digirl.algorithms.digirl import DigiRL
from digirl.algorithms.estimators import (
    AdvantageEstimator,
    EstimatorOptions,
    advantage_estimator,
    advantage_estimator_names,
    register_advantage_estimator,
)
from digirl.algorithms.functional import doubly_robust_advantage, released_code_advantage
from digirl.config.core import load_config
from digirl.policies.default import DefaultPolicy, PolicyNetConfig
from digirl.training.config import TrainConfig


@pytest.fixture(autouse=True)
def _trajfactory_path(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "data"))


def _traj(n: int = 3, success: bool = True):
    from trajfactory import build_traj  # tests/data helper

    return build_traj(n, success=success)


def test_the_built_in_estimators_are_the_papers_functions():
    assert advantage_estimator_names() == ["dr", "mc", "released"]
    t = _traj(3)
    values = np.array([0.2, 0.4, 0.7, 0.9])  # V(s_0..s_2) and V(s_3)
    opts = EstimatorOptions(gamma=0.9, lam=0.5)
    rewards = [s.reward for s in t.steps]
    nv = values[1:].copy()
    if t.terminated:
        nv[-1] = 0.0
    dr = advantage_estimator("dr").estimate(t, values, opts)
    np.testing.assert_array_equal(dr, doubly_robust_advantage(rewards, values[:-1], nv, t.reward, 0.5))
    rel = advantage_estimator("released").estimate(t, values, opts)
    np.testing.assert_array_equal(rel, released_code_advantage(rewards, t.mc_returns(0.9), values[:-1], nv))
    mc = advantage_estimator("mc").estimate(t, None, opts)
    np.testing.assert_array_equal(mc, np.asarray(t.mc_returns(0.9)))
    # what each needs and the hard filter's default cut: 1/H for dr and mc, 0 for the released code's variant
    assert [advantage_estimator(n).needs_values for n in ("dr", "released", "mc")] == [True, True, False]
    assert advantage_estimator("dr").threshold(t) == advantage_estimator("mc").threshold(t) == pytest.approx(1 / 3)
    assert advantage_estimator("released").threshold(t) == 0.0
    with pytest.raises(KeyError, match="unknown advantage estimator 'gae'"):
        advantage_estimator("gae")


def test_a_registered_estimator_drives_digirl_without_a_branch():
    calls: list[int] = []

    def steps_left(t, values, o):  # no critic: the remaining steps, discounted
        calls.append(len(t.steps))
        return np.array([o.gamma ** (len(t.steps) - 1 - h) for h in range(len(t.steps))])

    register_advantage_estimator("test_steps_left", AdvantageEstimator(steps_left, needs_values=False, threshold=lambda t: 0.5))
    try:
        cfg = load_config(TrainConfig, overrides=["algo.advantage=test_steps_left", "algo.gamma=0.5"]).algo
        assert cfg.advantage == "test_steps_left"
        torch.manual_seed(0)
        algo = DigiRL(DefaultPolicy(PolicyNetConfig(dim=32, layers=1)), DigiRLConfig.of(cfg), seed=0)
        algo.step_values = None  # type: ignore[assignment,method-assign]  # needs_values=False: never asked
        t = _traj(3)
        (adv,) = algo.advantages([t])
        np.testing.assert_array_equal(adv, [0.25, 0.5, 1.0])
        assert calls == [3]
        assert algo._estimator.threshold(t) == 0.5
    finally:
        from digirl.algorithms import estimators

        estimators._ESTIMATORS.pop("test_steps_left")


def test_digirl_asks_the_registry_for_values_only_when_the_estimator_needs_them():
    cfg = DigiRLConfig(critic=CriticEncoderConfig(dim=32, layers=1), advantage="mc", gamma=0.5)
    torch.manual_seed(0)
    algo = DigiRL(DefaultPolicy(PolicyNetConfig(dim=32, layers=1)), cfg, seed=0)
    algo.step_values = None  # type: ignore[assignment,method-assign]
    t = _traj(2)
    (adv,) = algo.advantages([t])
    np.testing.assert_array_equal(adv, np.asarray(t.mc_returns(0.5)))
