"""MaxSteps (TimeLimit semantics on top of the env's horizon) and RecordEpisode."""

from __future__ import annotations

import pytest

from digirl.core.actions import Action
from digirl.envs.toy import ToyEnv
from digirl.envs.vector import EpisodeJob, VectorRunner
from digirl.envs.wrappers import EnvWrapper, MaxSteps, RecordEpisode
from digirl.policies.base import ActOutput


def test_max_steps_truncates_before_the_env_horizon() -> None:
    env = MaxSteps(ToyEnv("type", horizon=10), 3)
    assert env.horizon == 3
    env.reset(seed=0)
    flags = [env.step(Action.back())[2:4] for _ in range(3)]
    assert flags == [(False, False), (False, False), (False, True)] and env.elapsed_steps == 3
    with pytest.raises(RuntimeError, match="after the episode ended"):
        env.step(Action.back())
    env.reset(seed=0)  # the count restarts
    assert env.elapsed_steps == 0 and env.step(Action.back())[3] is False


def test_max_steps_keeps_env_horizon_and_termination() -> None:
    env = MaxSteps(ToyEnv("type", horizon=2), 5)
    assert env.horizon == 2
    env.reset(seed=0)
    env.step(Action.back())
    _, _, term, trunc, info = env.step(Action.back())
    assert (term, trunc) == (False, True) and "max_steps_truncated" not in info  # the env's own horizon
    env = MaxSteps(ToyEnv("type", horizon=10), 2)
    env.reset(seed=0, options={"task": "toy-type-hello"})
    env.step(Action.type_text("hello"))
    _, reward, term, trunc, _ = env.step(Action.enter())  # terminates on the last allowed step
    assert (reward, term, trunc) == (1.0, True, False)


def test_max_steps_validates_and_forwards() -> None:
    inner = ToyEnv("tap")
    with pytest.raises(ValueError, match="max_steps"):
        MaxSteps(inner, 0)
    with pytest.raises(TypeError, match="DeviceEnv"):
        EnvWrapper("not an env")  # type: ignore[arg-type]
    env = RecordEpisode(MaxSteps(inner, 2))
    assert env.unwrapped is inner and env.mode == "tap" and len(env.tasks()) == 4  # attribute forwarding
    obs, _ = env.reset(seed=1, options={"task": "toy-tap-blue"})
    assert env.task is inner.task and env.task is not None and env.task.task_id == "toy-tap-blue"
    assert env.cheat() == inner.cheat() and env.observation_space is inner.observation_space
    assert env.render().shape == obs.screenshot.shape


def test_record_episode_collects_trajectories() -> None:
    env = RecordEpisode(ToyEnv("type", horizon=4), keep=2)
    for seed in range(3):
        env.reset(seed=seed, options={"task": "toy-type-world"})
        env.step('{"action_type": "TYPE", "text": "world"}')
        env.step("garbage")
        env.step(Action.enter())
    assert len(env.episodes) == 2  # keep=2
    t = env.episodes[-1]
    assert t.seed == 2 and t.task.task_id == "toy-type-world" and t.length == 3 and t.success
    assert t.steps[0].action == Action.type_text("world") and t.steps[0].action_text.startswith("{")
    assert not t.steps[1].action.is_valid and t.steps[1].action_text == "garbage" and t.steps[1].info["invalid_action"]
    assert [s.observation.step for s in t.steps] == [0, 1, 2]
    assert t.final_observation is not None and t.final_observation.step == 3
    with pytest.raises(RuntimeError, match="before reset"):
        RecordEpisode(ToyEnv()).step(Action.back())


def _capped_toy() -> MaxSteps:
    return MaxSteps(ToyEnv("type", horizon=10), 2)


def test_wrapped_env_in_the_runner() -> None:
    with VectorRunner(_capped_toy, 2, mode="inline") as runner:
        jobs = [EpisodeJob(None, s) for s in range(3)]
        out = list(runner.run(lambda obs: [ActOutput(Action.back(), "back") for _ in obs], jobs))
    assert [t.length for t in out] == [2, 2, 2] and all(t.truncated and t.steps[-1].info["max_steps_truncated"] for t in out)


def test_latency_waits_in_every_reset_and_step_repeatably_and_make_applies_it() -> None:
    from digirl.envs.registry import make
    from digirl.envs.wrappers import Latency

    waits: list[float] = []
    env = Latency(ToyEnv("type", horizon=3), 0.5, 2.0, sleep=waits.append)
    env.reset(seed=7)
    env.step(Action.back())
    env.step(Action.back())
    assert len(waits) == 3 and all(0.5 <= w <= 2.0 for w in waits) and env.waited_s == sum(waits)
    again: list[float] = []
    env2 = Latency(ToyEnv("type", horizon=3), 0.5, 2.0, sleep=again.append)
    env2.reset(seed=7)
    env2.step(Action.back())
    env2.step(Action.back())
    assert again == waits  # drawn from the reset seed: a run repeats them
    fixed: list[float] = []
    Latency(ToyEnv("tap"), 0.25, sleep=fixed.append).reset(seed=0)
    assert fixed == [0.25]
    with pytest.raises(ValueError, match="low <= high"):
        Latency(ToyEnv("tap"), 2.0, 1.0)
    wrapped = make("digirl/toy-tap-v0", latency_s=[0.0, 0.001])
    assert isinstance(wrapped, Latency) and wrapped.unwrapped.mode == "tap" and wrapped.high == 0.001
    with pytest.raises(ValueError, match="one number of seconds or"):
        make("digirl/toy-tap-v0", latency_s=[1.0, 2.0, 3.0])
