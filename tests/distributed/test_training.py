"""Training on Ray: k = 0 is the synchronous loop with the process runner's trajectories; async survives dead actors."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter

import pytest

from digirl.config.core import load_config
from digirl.data.store import TrajectoryStore
from digirl.training.config import TrainConfig
from digirl.training.loop import train

pytestmark = pytest.mark.distributed

ARGS = [
    "mode=online",
    "env.id=digirl/toy-mixed-v0",
    "env.num_envs=2",
    "rollout_size=6",
    "eval.every=0",
    "eval.test_tasks=0",
    "eval.train_tasks=3",
    "algo.name=digirl",
    "algo.actor_steps=3",
    "algo.critic_steps=3",
    "algo.instruct_critic_steps=3",
    "algo.batch_size=8",
    "policy.default.dim=32",
    "algo.critic.dim=32",
    "policy.default.layers=1",
    "algo.critic.layers=1",
    "policy.default.heads=2",
    "algo.critic.heads=2",
    "log.tensorboard=false",
    "seed=5",
]
RAY = ["env.runner=ray", "env.ray.num_cpus_per_actor=0.25"]


def _stored(run):
    return TrajectoryStore(run / "data", create=False).load()


def test_k0_on_ray_stores_the_process_runners_trajectories(ray_session, tmp_path):
    base = [*ARGS, "iterations=2", "asynchronous.max_staleness=0"]
    a = train(load_config(TrainConfig, overrides=[*base, "env.runner=process"]), tmp_path / "process")
    b = train(load_config(TrainConfig, overrides=[*base, *RAY]), tmp_path / "ray")
    assert a["final"] == b["final"]
    pa, pb = _stored(tmp_path / "process"), _stored(tmp_path / "ray")
    assert len(pa) == len(pb) == 12
    for x, y in zip(pa, pb):
        assert (x.task, x.seed, x.policy_version, x.reward) == (y.task, y.seed, y.policy_version, y.reward)
        assert [s.action for s in x.steps] == [s.action for s in y.steps]
        assert [s.log_prob for s in x.steps] == [s.log_prob for s in y.steps]
    assert {t.metadata["worker_node"] for t in pb} and not any("worker_node" in t.metadata for t in pa)


def test_async_training_survives_an_actor_killed_mid_run(ray_session, tmp_path):
    run = tmp_path / "run"
    killed: list[int] = []

    def killer() -> None:  # once iteration 0 is stored, SIGKILL the process of an actor that collected it
        deadline = time.time() + 120
        while time.time() < deadline and not killed:
            try:
                trajs = TrajectoryStore(run / "data", create=False).load(load_images=False)
            except Exception:
                trajs = []
            if trajs:
                pid = int(trajs[0].metadata["worker_pid"])
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            time.sleep(0.02)

    t = threading.Thread(target=killer)
    t.start()
    args = [*ARGS, *RAY, "iterations=4", "asynchronous.max_staleness=1", "env.latency_s=[0.03,0.06]"]
    res = train(load_config(TrainConfig, overrides=args), run)
    t.join()
    assert killed and res["iterations"] == 4
    trajs = _stored(run)
    assert len({x.traj_id for x in trajs}) == len(trajs)
    assert Counter(int(x.metadata["iteration"]) for x in trajs) == {i: 6 for i in range(4)}  # none lost, none twice
    retried = [x for x in trajs if x.metadata["attempts"] > 1]
    assert retried and not any(x.env_failure for x in trajs)
    assert any("Ray actor died" in f for x in retried for f in x.metadata["failures"])


@pytest.mark.slow
def test_actors_acting_themselves_tag_versions_within_the_staleness_bound(ray_session, tmp_path):
    actor = [*RAY, "env.ray.inference=actor", "env.ray.steps_per_call=4", "env.latency_s=[0.01,0.03]"]
    sync = train(load_config(TrainConfig, overrides=[*ARGS, *actor, "iterations=2"]), tmp_path / "sync")
    assert sync["iterations"] == 2
    trajs = _stored(tmp_path / "sync")
    assert [t.policy_version for t in trajs] == [0] * 6 + [1] * 6  # each iteration acts with the weights it starts with
    res = train(
        load_config(TrainConfig, overrides=[*ARGS, *actor, "iterations=4", "asynchronous.max_staleness=1"]), tmp_path / "a"
    )
    assert res["iterations"] == 4
    trajs = _stored(tmp_path / "a")
    assert Counter(int(x.metadata["iteration"]) for x in trajs) == {i: 6 for i in range(4)}
    for x in trajs:  # iteration j is learned from at version j (no warm-up): at most 1 update stale
        assert x.policy_version is not None and int(x.metadata["iteration"]) - 1 <= x.policy_version <= int(
            x.metadata["iteration"]
        )
    assert not any(x.env_failure for x in trajs)
