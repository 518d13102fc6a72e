"""The collector seam: every backend satisfies one protocol; the env's registration picks one."""

from __future__ import annotations

import dataclasses

import pytest

from digirl.envs.collector import Collector, CollectorSpec, collector_names, make_collector, register_collector
from digirl.envs.vector import EpisodeJob, VectorRunner


def test_auto_picks_the_process_runner_for_plain_envs_and_inline_on_request():
    with make_collector("digirl/toy-tap-v0", num_envs=2) as c:
        assert isinstance(c, VectorRunner) and isinstance(c, Collector) and c.mode == "process" and c.num_envs == 2
    with make_collector("digirl/toy-tap-v0", runner="inline") as c:
        trajs = list(c.run(None, [EpisodeJob(None, s) for s in range(3)], expert=True))
        assert len(trajs) == 3 and all(t.success for t in trajs)
        assert c.stats.episodes == 3


def test_browser_envs_ask_for_the_browser_collector():
    from digirl.envs.registry import spec

    assert spec("digirl/miniwob.click-test-v0").metadata["collector"] == "browser"
    assert spec("digirl/miniwob.click-test-v0").metadata["seeded_tasks"] is True
    assert "browser" in collector_names()


def test_unknown_ids_runners_and_options_fail_before_any_worker_starts():
    with pytest.raises(KeyError, match="unknown env id"):
        make_collector("digirl/nope-v0")
    with pytest.raises(ValueError, match=r"unknown env\.runner 'warp'"):
        make_collector("digirl/toy-tap-v0", runner="warp")
    with pytest.raises(ValueError, match="takes no options"):
        make_collector("digirl/toy-tap-v0", runner="inline", options={"address": "x"})


def test_a_registered_backend_is_built_with_the_common_arguments():
    seen = {}

    def fake(spec: CollectorSpec) -> VectorRunner:  # the one factory signature
        seen.update(dataclasses.asdict(spec))
        return VectorRunner(lambda: None, 1, mode="inline")

    import sys
    import types

    mod = types.ModuleType("digirl_test_fake_collector")
    mod.fake = fake  # type: ignore[attr-defined]
    sys.modules[mod.__name__] = mod
    register_collector("fake", "digirl_test_fake_collector:fake")
    try:
        make_collector("digirl/toy-tap-v0", runner="fake", num_envs=3, options={"k": 1}).close()
    finally:
        from digirl.envs import collector

        collector._COLLECTORS.pop("fake")
        del sys.modules[mod.__name__]
    assert seen == {
        "env_id": "digirl/toy-tap-v0",
        "runner": "fake",
        "num_envs": 3,
        "env_kwargs": {},
        "step_timeout_s": 30.0,
        "max_episode_retries": 2,
        "deterministic": False,
        "options": {"k": 1},
    }
