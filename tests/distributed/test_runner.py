"""env.runner=ray: same episodes as the process runner, and the same failure semantics."""

from __future__ import annotations

import dataclasses
import functools
import os
import signal
import threading
import time
from collections.abc import Sequence

import numpy as np
import pytest

from digirl.core.errors import EnvFailure
from digirl.core.types import Observation
from digirl.distributed.config import RayConfig
from digirl.distributed.runner import RayRunner
from digirl.envs.collector import make_collector
from digirl.envs.vector import EpisodeJob, VectorRunner, env_factory
from digirl.policies.base import ActOutput
from digirl.policies.config import EncoderConfig
from digirl.policies.default import DefaultPolicy
from digirl.testing.fake_envs import FlakyEnv, SlowEnv

pytestmark = pytest.mark.distributed

LIGHT = RayConfig(num_cpus_per_actor=0.25)


def _policy() -> DefaultPolicy:
    return DefaultPolicy(EncoderConfig(dim=32, layers=1, heads=2), seed=0)


def _episodes(runner, jobs):
    policy = _policy()
    act = functools.partial(policy.act, greedy=False, temperature=1.0)
    order = {j.job_id: i for i, j in enumerate(jobs)}
    return sorted(runner.run(act, jobs), key=lambda t: order[t.metadata["job_id"]])


def _assert_same_episode(a, b) -> None:
    """``b`` (from Ray) repeats ``a`` (from the process runner) step for step, screens included."""
    assert (a.seed, a.task, a.reward, a.env_failure) == (b.seed, b.task, b.reward, b.env_failure)
    assert [s.action for s in a.steps] == [s.action for s in b.steps]
    for sa, sb in zip(a.steps, b.steps):
        np.testing.assert_array_equal(sa.observation.screenshot, sb.observation.screenshot)
        assert sb.observation.screenshot.flags.writeable  # copied out of the object store
    assert b.metadata["worker_node"] and b.metadata["worker_pid"]


def test_ray_gives_the_process_runners_trajectories(ray_session):
    jobs = [EpisodeJob(None, s) for s in range(8)]
    with VectorRunner(env_factory("digirl/toy-mixed-v0"), 3, reset_batch_wait_s=float("inf")) as proc:
        want = _episodes(proc, jobs)
    ray_runner = make_collector("digirl/toy-mixed-v0", runner="ray", num_envs=3, deterministic=True, options=LIGHT.to_options())
    try:
        assert isinstance(ray_runner, RayRunner) and ray_runner.num_envs == 3
        got = _episodes(ray_runner, [EpisodeJob(None, s) for s in range(8)])
        assert ray_runner.stats.episodes == 8 and ray_runner.stats.restarts == 0
    finally:
        ray_runner.close()
    for a, b in zip(want, got):
        _assert_same_episode(a, b)
        assert [s.log_prob for s in a.steps] == [s.log_prob for s in b.steps]


def test_an_actor_killed_mid_episode_is_replaced_and_its_episode_retried(ray_session):
    runner = RayRunner(functools.partial(SlowEnv, 0.02, mode="tap", horizon=6), 2, options=LIGHT)
    calls = {"n": 0, "killed": None}

    def act(observations: Sequence[Observation]) -> list[ActOutput]:
        calls["n"] += 1
        if calls["n"] == 3:  # both actors are mid-episode: SIGKILL one of their processes
            pid = runner.spawned_pids[0]
            os.kill(pid, signal.SIGKILL)
            calls["killed"] = pid
        return [ActOutput(o.history[-1] if o.history else _back(), "x") for o in observations]

    try:
        trajs = list(runner.run(act, [EpisodeJob(None, s) for s in range(4)]))
        stats = runner.stats
    finally:
        runner.close()
    assert sorted(t.seed for t in trajs) == [0, 1, 2, 3]  # every job once: none lost, none twice
    assert not any(t.env_failure for t in trajs)
    retried = [t for t in trajs if t.metadata["attempts"] == 2]
    assert len(retried) == 1 and "Ray actor died" in retried[0].metadata["failures"][0]
    assert retried[0].metadata["worker_pid"] != calls["killed"]
    assert stats.crashes == 1 and stats.retries == 1 and stats.restarts == 1


def _back():
    from digirl.core.actions import Action

    return Action.back()


def test_env_errors_retry_then_mark_an_env_failure_and_a_broken_factory_raises(ray_session):
    # FlakyEnv raises in its first step: on attempt 1 only for seed 0 (retried, fine), on every attempt for seed 1.
    transient = functools.partial(FlakyEnv, "raise", at_step=0, seeds=[0], faulty_attempts=1, mode="tap")
    with RayRunner(transient, 2, options=LIGHT, max_episode_retries=1) as runner:
        trajs = {t.seed: t for t in runner.run(None, [EpisodeJob(None, s) for s in range(3)], expert=True)}
        assert not any(t.env_failure for t in trajs.values()) and trajs[0].metadata["attempts"] == 2
    persistent = functools.partial(FlakyEnv, "raise", at_step=0, seeds=[1], mode="tap")
    with RayRunner(persistent, 2, options=LIGHT, max_episode_retries=1) as runner:
        trajs = {t.seed: t for t in runner.run(None, [EpisodeJob(None, s) for s in range(3)], expert=True)}
    assert trajs[1].env_failure and "SimulatedFault" in trajs[1].failure_reason and "(2 attempts)" in trajs[1].failure_reason
    assert not trajs[0].env_failure and not trajs[2].env_failure
    with (
        pytest.raises(EnvFailure, match="could not build"),
        RayRunner(functools.partial(FlakyEnv, "build"), 1, options=LIGHT) as r,
    ):
        list(r.run(None, [EpisodeJob(None, 0)], expert=True))


def test_a_hung_step_times_out_and_actors_that_cannot_fit_fail_before_running(ray_session):
    hang = functools.partial(SlowEnv, 30.0, mode="tap")  # a step that never comes back in time
    with RayRunner(hang, 1, options=LIGHT, step_timeout_s=1.0, max_episode_retries=0) as runner:
        (t,) = runner.run(lambda obs: [ActOutput(_back(), "back")] * len(obs), [EpisodeJob(None, 0)])
    assert t.env_failure and t.failure_reason.startswith("hang: step exceeded 1.0s")
    with pytest.raises(ValueError, match="do not fit the Ray cluster"):
        make_collector("digirl/toy-tap-v0", runner="ray", num_envs=50, options=LIGHT.to_options())
    with pytest.raises(ValueError, match="no Ray node has 1 gpu_farm"):
        make_collector("digirl/toy-tap-v0", runner="ray", options={**LIGHT.to_options(), "resources": {"gpu_farm": 1}})
    with pytest.raises(ValueError, match=r"unknown env\.ray option"):
        make_collector("digirl/toy-tap-v0", runner="ray", options={"adress": "auto"})


ACTOR = RayConfig(num_cpus_per_actor=0.25, inference="actor", steps_per_call=2)


def test_actors_acting_themselves_give_the_process_runners_trajectories(ray_session):
    from digirl.training.common import policy_act_fn

    jobs = [EpisodeJob(None, s) for s in range(8)]
    greedy = policy_act_fn(_policy(), greedy=True, temperature=1.0)
    with VectorRunner(env_factory("digirl/toy-mixed-v0"), 3) as proc:
        want = {
            "expert": sorted(proc.run(None, jobs, expert=True, expert_eps=0.3, expert_seed=3), key=lambda t: t.seed),
            "policy": sorted(proc.run(greedy, [EpisodeJob(None, s) for s in range(8)]), key=lambda t: t.seed),
        }
    with RayRunner(env_factory("digirl/toy-mixed-v0"), 3, options=ACTOR) as runner:
        got = {
            "expert": sorted(
                runner.run(None, [EpisodeJob(None, s) for s in range(8)], expert=True, expert_eps=0.3, expert_seed=3),
                key=lambda t: t.seed,
            ),
            "policy": sorted(runner.run(greedy, [EpisodeJob(None, s) for s in range(8)]), key=lambda t: t.seed),
        }
        assert runner.stats.policy_calls == 0  # nothing acted here
    for kind in ("expert", "policy"):
        for a, b in zip(want[kind], got[kind]):
            _assert_same_episode(a, b)
            assert [s.action_text for s in a.steps] == [s.action_text for s in b.steps]
            np.testing.assert_array_equal(a.final_observation.screenshot, b.final_observation.screenshot)
    assert [t.metadata["noisy_steps"] for t in want["expert"]] == [t.metadata["noisy_steps"] for t in got["expert"]]


@pytest.mark.slow
def test_actors_acting_themselves_keep_the_failure_semantics(ray_session):
    from digirl.training.common import policy_act_fn

    slow = functools.partial(SlowEnv, 0.2, reset_delay_s=0.2, mode="mixed", horizon=6)
    act = policy_act_fn(_policy(), greedy=True, temperature=1.0)
    killed: list[int] = []
    with RayRunner(slow, 2, options=ACTOR) as runner:

        def killer() -> None:  # SIGKILL an actor's process while it plays
            deadline = time.monotonic() + 60
            while len(runner.spawned_pids) < 2 and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.5)
            killed.append(runner.spawned_pids[0])
            os.kill(killed[0], signal.SIGKILL)

        t = threading.Thread(target=killer)
        t.start()
        trajs = {x.seed: x for x in runner.run(act, [EpisodeJob(None, s) for s in range(4)])}
        t.join()
        assert runner.stats.crashes == 1 and runner.stats.restarts == 1
    assert sorted(trajs) == [0, 1, 2, 3] and not any(x.env_failure for x in trajs.values())  # none lost, none twice
    (retried,) = [x for x in trajs.values() if x.metadata["attempts"] == 2]
    assert "Ray actor died" in retried.metadata["failures"][0] and retried.metadata["worker_pid"] != killed[0]
    persistent = functools.partial(FlakyEnv, "raise", at_step=0, seeds=[1], mode="tap")
    with RayRunner(persistent, 2, options=ACTOR, max_episode_retries=1) as runner:
        trajs = {t.seed: t for t in runner.run(None, [EpisodeJob(None, s) for s in range(3)], expert=True)}
    assert trajs[1].env_failure and "(2 attempts)" in trajs[1].failure_reason
    assert not trajs[0].env_failure and not trajs[2].env_failure
    hang = functools.partial(SlowEnv, 30.0, mode="tap")
    one = RayConfig(num_cpus_per_actor=0.25, inference="actor", steps_per_call=1)
    with RayRunner(hang, 1, options=one, step_timeout_s=1.0, reset_timeout_s=1.0, max_episode_retries=0) as runner:
        (t,) = runner.run(None, [EpisodeJob(None, 0)], expert=True)
    assert t.env_failure and t.failure_reason.startswith("hang: play exceeded 2.0s")


def test_a_private_local_rays_actors_run_at_this_processs_priority(ray_session):
    # Ray's default worker niceness (15) starves env actors next to a busy learner.
    with RayRunner(functools.partial(SlowEnv, 0.0, mode="tap"), 1, options=LIGHT) as runner:
        list(runner.run(None, [EpisodeJob(None, 0)], expert=True))
        (pid,) = runner.spawned_pids
        assert os.getpriority(os.PRIO_PROCESS, pid) == os.getpriority(os.PRIO_PROCESS, 0)


def test_an_act_function_that_cannot_act_on_the_actors_acts_in_the_learner(ray_session, caplog):
    with RayRunner(env_factory("digirl/toy-tap-v0"), 2, options=ACTOR) as runner:
        trajs = list(runner.run(lambda obs: [ActOutput(_back(), "back")] * len(obs), [EpisodeJob(None, s) for s in range(3)]))
        assert runner.stats.policy_calls > 0 and len(trajs) == 3 and not any(t.env_failure for t in trajs)
    assert "has no actor_acting" in caplog.text


@pytest.mark.parametrize("prestart", [True, False])
def test_actors_start_when_the_collector_is_built_unless_told_to_wait(ray_session, prestart):
    opts = dataclasses.replace(LIGHT, prestart=prestart)
    with RayRunner(env_factory("digirl/toy-tap-v0"), 2, options=opts) as runner:
        handles = runner._handles
        assert [h.actor is not None for h in handles] == [prestart, prestart]
        got = _episodes(runner, [EpisodeJob(None, s) for s in range(4)])
        assert len(got) == 4 and not any(t.env_failure for t in got)
        # the actors started ahead are the ones that played: none started twice, no restart counted
        assert [h.starts for h in handles] == [1, 1] and runner.stats.restarts == 0
