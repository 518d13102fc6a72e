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
    sizes = {"a": 64, "b": 4}
    assert family_weights("family", ["a", "b"], sizes=sizes, power=0.5) == {"a": 8.0, "b": 2.0}
    assert family_weights("family", ["a", "b"], sizes=sizes, power=1.0) == {"a": 64.0, "b": 4.0}
    with pytest.raises(ValueError, match="sizes"):
        family_weights("family", ["a"], power=0.5)
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


def test_training_loop_collects_by_family_share(tmp_path):
    """task_sampling=family with task_family_power: the loop draws a family by n_f^power, then a task."""
    from digirl.config.core import load_config
    from digirl.core.errors import ConfigError
    from digirl.data.store import TrajectoryStore
    from digirl.training.config import TrainConfig
    from digirl.training.loop import train

    searches = [f"What is the price of a {w} on ebay?" for w in ("lamp", "sofa", "kettle", "drill")] * 4
    task_file = tmp_path / "tasks.txt"
    task_file.write_text("\n".join([*searches, "Set an alarm for 6:45pm"]) + "\n")
    args = [
        "env.id=digirl/sim-general-v0",
        "env.runner=inline",
        "env.num_envs=1",
        f"env.task_file={task_file}",
        "mode=online",
        "iterations=1",
        "warmup_iterations=1",  # collect only
        "rollout_size=40",
        "eval.every=0",
        "eval.test_tasks=0",
        "eval.train_tasks=0",
        "algo.name=filtered_bc",
        "policy.device=cpu",
        "policy.default.dim=32",
        "policy.default.layers=1",
        "policy.default.heads=2",
        "log.tensorboard=false",
        "task_sampling=family",
        "task_family_power=0.5",  # 16 searches : 1 alarm -> shares 4 : 1
    ]
    train(load_config(TrainConfig, overrides=args), tmp_path / "run")
    trajs = TrajectoryStore(tmp_path / "run" / "data", create=False).load(load_images=False)
    families = Counter(t.task.family for t in trajs)
    assert sum(families.values()) == 40 and set(families) == {"web_search", "set_alarm"}
    assert 3 <= families["set_alarm"] <= 16  # expected 8 of 40 (uniform over tasks: 2.4)
    with pytest.raises(ConfigError, match="task_family_power"):
        load_config(TrainConfig, overrides=[*args, "task_family_power=2"])
