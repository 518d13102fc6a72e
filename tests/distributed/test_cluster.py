"""A 2-node Ray cluster simulated on this machine: actors on both nodes, and a node lost mid-run."""

from __future__ import annotations

import functools

import pytest

from digirl.core.actions import Action
from digirl.distributed.config import RayConfig
from digirl.distributed.runner import RayRunner
from digirl.envs.vector import EpisodeJob
from digirl.policies.base import ActOutput
from digirl.testing.fake_envs import SlowEnv

pytestmark = [pytest.mark.slow, pytest.mark.distributed]


@pytest.fixture(scope="module")
def cluster():
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 2, "object_store_memory": 80 * 2**20})
    worker = c.add_node(num_cpus=1, object_store_memory=80 * 2**20)
    c.wait_for_nodes()
    ray.init(address=c.address)
    try:
        yield c, worker
    finally:
        ray.shutdown()
        c.shutdown()


def _back(observations):
    return [ActOutput(Action.back(), "back")] * len(observations)


def test_two_nodes_collect_and_a_lost_node_loses_no_episode(cluster):
    c, worker = cluster
    env_fn = functools.partial(SlowEnv, 0.05, mode="tap", horizon=5)
    # 4 actors at 0.5 CPU, spread: 2 per node; the head has room for the 2 replacements.
    opts = RayConfig(num_cpus_per_actor=0.5, address=c.address)
    with RayRunner(env_fn, 4, options=opts, step_timeout_s=20.0) as runner:
        first = list(runner.run(_back, [EpisodeJob(None, s) for s in range(8)]))
        nodes = {t.metadata["worker_node"] for t in first}
        assert len(nodes) == 2, nodes  # spread over both machines
        assert not any(t.env_failure for t in first)

        # Lose the worker node while its actors are mid-episode: their episodes restart on the head.
        calls = {"n": 0}

        def act(observations):
            calls["n"] += 1
            if calls["n"] == 3:
                c.remove_node(worker)
            return _back(observations)

        second = list(runner.run(act, [EpisodeJob(None, 100 + s) for s in range(8)]))
        stats = runner.stats
    assert sorted(t.seed for t in second) == [100 + s for s in range(8)]  # none lost, none twice
    assert not any(t.env_failure for t in second)
    assert stats.crashes >= 1 and stats.restarts >= 1
    assert {t.metadata["worker_node"] for t in second if t.metadata["attempts"] > 1} <= {c.head_node.node_id}
