"""Collection-side task sampling: uniform (the paper), family-balanced, uncertainty-weighted."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from digirl.core.actions import Action
from digirl.core.types import Step, TaskSpec, Trajectory
from digirl.training.task_sampling import FLOOR, family_outcomes, family_weights, sample_tasks


def _traj(family: str, success: bool, env_failure: bool = False) -> Trajectory:
    obs = np.zeros((4, 4, 3), np.uint8)
    from digirl.core.types import Observation

    step = Step(Observation(obs, "x"), Action.complete(), "", float(success), True, False)
    return Trajectory(TaskSpec("x", family=family), [step], env_failure=env_failure)


def test_outcomes_and_weights_by_hand():
    trajs = [_traj("a", True), _traj("a", False), _traj("a", True), _traj("b", False), _traj("b", True, env_failure=True)]
    assert family_outcomes(trajs) == {"a": (2, 3), "b": (0, 1)}
    w = family_weights("uncertainty", ["a", "b", "c"], family_outcomes(trajs))
    assert w is not None
    assert w["a"] == pytest.approx(math.sqrt(0.6 * 0.4))  # p = (2+1)/(3+2)
    assert w["b"] == pytest.approx(math.sqrt((1 / 3) * (2 / 3)))  # p = (0+1)/(1+2)
    assert w["c"] == pytest.approx(0.5)  # unseen: the largest share
    many_failures = family_weights("uncertainty", ["d"], {"d": (0, 10_000)})
    assert many_failures == {"d": FLOOR}
    assert family_weights("family", ["a", "b"]) == {"a": 1.0, "b": 1.0}
    assert family_weights("uniform", ["a"]) is None
    with pytest.raises(ValueError):
        family_weights("nope", ["a"])  # type: ignore[arg-type]


def test_sampling_follows_the_weights():
    pool = [TaskSpec(f"w{i}", family="web") for i in range(90)] + [TaskSpec(f"i{i}", family="install") for i in range(10)]
    rng = np.random.default_rng(0)
    uniform = Counter(t.family for t in sample_tasks(pool, 4000, rng))
    assert 0.07 < uniform["install"] / 4000 < 0.13
    balanced = Counter(t.family for t in sample_tasks(pool, 4000, rng, {"web": 1.0, "install": 1.0}))
    assert 0.45 < balanced["install"] / 4000 < 0.55
    only = sample_tasks(pool, 50, rng, {"web": 0.0, "install": 1.0})
    assert {t.family for t in only} == {"install"} and len({t.instruction for t in only}) > 5
    with pytest.raises(ValueError, match="all zero"):
        sample_tasks(pool, 1, rng, {"web": 0.0})
