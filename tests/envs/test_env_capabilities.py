"""Env capabilities are registry metadata (env_has), not id prefixes."""

from __future__ import annotations

from digirl.envs.registry import env_has, register, spec
from digirl.training.common import task_pool
from digirl.training.config import EnvConfig


def test_the_simulator_declares_its_capabilities_and_other_envs_do_not():
    for env_id in ("digirl/sim-general-v0", "digirl/sim-webshop-test-v0", "digirl/sim-compound-v0"):
        assert env_has(env_id, "world_options") and env_has(env_id, "state_replay") and env_has(env_id, "simulator")
    assert not env_has("digirl/toy-tap-v0", "world_options")
    assert not env_has("digirl/sim-nope-v0", "world_options")  # unknown ids have none (no error)
    assert not env_has("digirl/sim-general-v0", "flying")


def test_world_options_follow_the_metadata_not_the_id():
    sim = EnvConfig(id="digirl/sim-general-v0", perturbation=2, world_version=1)
    assert sim.env_kwargs() == {"perturbation": 2, "world_version": 1}
    assert EnvConfig(id="digirl/toy-tap-v0").env_kwargs() == {}
    # an env of another name that declares the capability gets the keywords; the sim's kwargs come from its spec
    register("digirl/test-world-v0", spec("digirl/sim-general-v0").entry_point, metadata={"world_options": True})
    try:
        assert EnvConfig(id="digirl/test-world-v0", perturbation=1).env_kwargs() == {"perturbation": 1, "world_version": 0}
    finally:
        from digirl.envs import registry

        registry._REGISTRY.pop("digirl/test-world-v0")


def test_a_simulator_task_pool_is_its_registered_task_set():
    from digirl.sim.tasks.tasksets import load_taskset

    pool = task_pool(EnvConfig(id="digirl/sim-webshop-test-v0"), "test")
    assert pool == list(load_taskset("webshop", "test")) and len(pool) > 0
