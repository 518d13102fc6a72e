"""Acting on the actors (env.ray.inference=actor), without Ray: the actor class plays episodes in this process."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from digirl.distributed.acting import ExpertActing, PolicyActing, PolicySnapshot
from digirl.distributed.actor import EnvActor
from digirl.distributed.config import RayConfig
from digirl.envs._vector_worker import unpack_elements
from digirl.envs.vector import EpisodeJob, VectorRunner, env_factory
from digirl.policies.config import EncoderConfig
from digirl.policies.default import DefaultPolicy
from digirl.testing.fake_envs import FlakyEnv
from digirl.training.common import policy_act_fn


def _play(actor: EnvActor, seed: int, acting, per_call: int):
    """Every step of one episode, asking for ``per_call`` steps at a time as the runner does."""
    (status, out), _ = actor.play((seed, None, 1, acting.key, acting), per_call)
    assert status == "ok", out
    first, (_, packed), task, steps, end, meta, frames = out
    assert frames is None  # no shared-memory block given: the frames are in the reply
    obs, records = unpack_elements(first, packed), []
    while True:
        for act, reward, terminated, truncated, _info, nxt, (dedup, packed) in steps:
            unpack_elements(nxt, packed)
            if dedup:
                nxt.previous_screenshot = obs.screenshot
            records.append((obs, act, reward, terminated, truncated))
            obs = nxt
        if end != "running":
            return task, records, obs, end, meta
        (status, out), _ = actor.play(None, per_call)
        assert status == "ok", out
        _, _, _, steps, end, meta, _ = out


def test_the_actors_expert_plays_the_runners_expert_episodes():
    env_fn = env_factory("digirl/toy-mixed-v0")
    jobs = [EpisodeJob(None, s) for s in range(6)]
    with VectorRunner(env_fn, 2, mode="inline") as runner:
        want = sorted(runner.run(None, jobs, expert=True, expert_eps=0.3, expert_seed=7), key=lambda t: t.seed)
    actor = EnvActor(env_fn)
    acting = ExpertActing(eps=0.3, seed=7)
    for per_call, traj in zip([1, 2, 3, 100, 1, 5], want):
        task, records, final, end, meta = _play(actor, traj.seed, acting, per_call)
        assert end == "done" and task == traj.task and meta["noisy_steps"] == traj.metadata["noisy_steps"]
        assert [a.action for _, a, *_ in records] == [s.action for s in traj.steps]
        assert [a.text for _, a, *_ in records] == [s.action_text for s in traj.steps]
        assert [r for _, _, r, *_ in records] == [s.reward for s in traj.steps]
        for (obs, *_), step in zip(records, traj.steps):
            np.testing.assert_array_equal(obs.screenshot, step.observation.screenshot)
            assert obs.elements == step.observation.elements
        np.testing.assert_array_equal(final.screenshot, traj.final_observation.screenshot)


def test_env_errors_are_faults_and_a_continuation_without_an_episode_is_one():
    actor = EnvActor(functools.partial(FlakyEnv, "raise", at_step=0, mode="tap"))
    (status, fault), where = actor.play((0, None, 1, "e", ExpertActing()), 10)
    assert status == "err" and fault.kind == "env" and fault.type_name == "SimulatedFault" and where["pid"]
    (status, fault), _ = actor.play(None, 10)  # the failed episode is gone
    assert status == "err" and "without an episode" in fault.message
    broken = EnvActor(functools.partial(FlakyEnv, "build"))
    (status, fault), _ = broken.play((0, None, 1, "e", ExpertActing()), 10)
    assert status == "err" and fault.kind == "build"


def test_a_policy_snapshot_acts_as_the_policy_and_samples_per_episode_seed():
    policy = DefaultPolicy(EncoderConfig(dim=32, layers=1, heads=2), seed=0)
    act = policy_act_fn(policy, greedy=True, temperature=1.0)
    first = act.actor_acting(EpisodeJob(None, 0))
    assert act.actor_acting(EpisodeJob(None, 1)) is first  # one snapshot per version
    act.version += 1
    second = act.actor_acting(EpisodeJob(None, 2))
    assert second is not first and second.key != first.key
    env_fn = env_factory("digirl/toy-mixed-v0")
    jobs = [EpisodeJob(None, s) for s in range(4)]
    with VectorRunner(env_fn, 2, mode="inline") as runner:
        want = sorted(runner.run(act, jobs), key=lambda t: t.seed)
    actor = EnvActor(env_fn)
    for traj in want:  # greedy: the snapshot acts exactly as the learner's policy
        _, records, _, end, _ = _play(actor, traj.seed, second, 3)
        assert end == "done" and [a.action for _, a, *_ in records] == [s.action for s in traj.steps]
        assert [a.log_prob for _, a, *_ in records] == pytest.approx([s.log_prob for s in traj.steps])
    sampling = PolicyActing(PolicySnapshot.of(policy), greedy=False, temperature=1.0)
    a = [_play(EnvActor(env_fn), s, sampling, 4)[1] for s in (3, 4, 3)]
    assert [x.action for _, x, *_ in a[0]] == [x.action for _, x, *_ in a[2]]  # the episode's seed, not the actor, decides


def test_inference_and_steps_per_call_are_checked():
    assert RayConfig().inference == "learner"
    with pytest.raises(ValueError, match="inference"):
        RayConfig(inference="gpu")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="steps_per_call"):
        RayConfig(steps_per_call=0)
