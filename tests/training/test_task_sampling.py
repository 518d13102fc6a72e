"""Collection-side task sampling: uniform (the paper), family-balanced, uncertainty-weighted."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from digirl.core.actions import Action
from digirl.core.types import Step, TaskSpec, Trajectory
from digirl.training.task_sampling import FLOOR, family_outcomes, family_weights, sample_tasks, stratified_tasks


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


def test_stratified_draws_leave_no_family_out():
    pool = (
        [TaskSpec(f"w{i}", family="web") for i in range(90)]
        + [TaskSpec(f"i{i}", family="install") for i in range(10)]
        + [TaskSpec("alarm", family="alarm")]
    )
    for seed in range(20):
        rng = np.random.default_rng(seed)
        got = stratified_tasks(pool, 7, rng)
        counts = Counter(t.family for t in got)
        assert sum(counts.values()) == 7 and sorted(counts.values()) == [2, 2, 3]  # 7 = 3·2 + 1
    rng = np.random.default_rng(0)
    two = Counter(t.family for t in stratified_tasks(pool, 2, rng))
    assert sorted(two.values()) == [1, 1]  # fewer draws than families: distinct families
    # Within a family the task is uniform: 3000 draws over 3 families put ~1000 on web's 90 tasks.
    many = stratified_tasks(pool, 3000, np.random.default_rng(1))
    web = Counter(t.instruction for t in many if t.family == "web")
    assert sum(web.values()) == 1000 and len(web) == 90
    # Same seed, same draws (and in a shuffled order, not grouped by family).
    a, b = stratified_tasks(pool, 9, np.random.default_rng(3)), stratified_tasks(pool, 9, np.random.default_rng(3))
    assert [t.instruction for t in a] == [t.instruction for t in b]
    assert [t.family for t in a] != sorted(t.family for t in a)
    with pytest.raises(ValueError, match="non-empty"):
        stratified_tasks([], 3, rng)


def test_sft_demos_stratified_cover_every_train_family():
    """The General set has 12 train families; 12 stratified demos are one of each (i.i.d. family
    draws of 24 demos left web search, 68% of the test tasks, out for one Table 1 seed)."""
    from digirl.config.core import load_config
    from digirl.sim.env import SimEnv
    from digirl.training.config import SFTRunConfig
    from digirl.training.sft import demos

    families = {t.family for t in SimEnv(taskset="general", split="train").tasks()}
    assert len(families) == 12
    overrides = ["env.id=digirl/sim-general-v0", "env.runner=inline", "env.num_envs=1", "sft.demos=12"]
    cfg = load_config(SFTRunConfig, overrides=[*overrides, "sft.demo_sampling=stratified"])
    got = demos(cfg)
    assert sorted(t.task.family for t in got) == sorted(families)
    assert all(t.success for t in got)
    # The Table 1 bench passes the same choice on to its SFT runs, and rejects a typo before starting.
    from digirl.core.errors import ConfigError
    from digirl.experiments.table1 import Table1Config

    assert load_config(Table1Config, overrides=["demo_sampling=stratified"]).demo_sampling == "stratified"
    with pytest.raises(ConfigError, match="demo_sampling"):
        load_config(Table1Config, overrides=["demo_sampling=stratifed"])


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
