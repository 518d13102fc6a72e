"""Rollout metrics of the training loop, with exact numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from digirl.core.actions import Action
from digirl.core.types import Observation, Step, TaskSpec, Trajectory
from digirl.training.loop import rollout_metrics


def _traj(log_probs: list[float | None], success: bool, env_failure: bool = False, invalid: int = 0) -> Trajectory:
    obs = Observation(np.zeros((4, 4, 3), np.uint8), "x")
    steps = [
        Step(obs, Action.invalid("?") if i < invalid else Action.back(), "", 0.0, False, False, log_prob=lp)
        for i, lp in enumerate(log_probs)
    ]
    steps[-1].reward, steps[-1].terminated = float(success), True
    return Trajectory(TaskSpec("x"), steps, env_failure=env_failure)


def test_rollout_metrics_by_hand():
    trajs = [
        _traj([math.log(0.5), math.log(0.25)], True, invalid=1),
        _traj([math.log(1.0), None, math.log(0.5)], False),
        _traj([math.log(0.01)], True, env_failure=True),  # left out of every figure but the count
    ]
    m = rollout_metrics(trajs)
    assert m["rollout/success_rate"] == pytest.approx(0.5)
    assert m["rollout/episode_length"] == pytest.approx(2.5)
    assert m["rollout/env_failures"] == 1.0
    assert m["rollout/trajectories"] == 3.0
    assert m["rollout/invalid_action_rate"] == pytest.approx(1 / 5)
    # mean of -log p over the 4 steps whose log-probability is known: (ln2 + ln4 + 0 + ln2) / 4
    assert m["rollout/action_nll"] == pytest.approx(math.log(2) * 4 / 4)


def test_action_nll_absent_without_log_probs():
    m = rollout_metrics([_traj([None, None], True)], prefix="eval")
    assert "eval/action_nll" not in m and m["eval/success_rate"] == 1.0
