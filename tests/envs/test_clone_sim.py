"""State cloning is exact on the simulator: a clone continues as the original would, on every family.

For each task family (which between them open every app) on the hostile phone (``perturbation=2``:
pop-ups, ads, slow loads, shuffled results, all drawn from the episode's random streams), one episode
is played without clones (the reference). The same episode is played again, cloned at several steps;
each clone first plays *other* actions for a few steps (which must not change the original), then a
second clone made at the same step replays the reference's actions and must give the same
screenshots (bytes), elements, rewards, ends and infos. The original, continued, must still match the
reference to the end.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from digirl.core.actions import Action
from digirl.core.types import TaskSpec
from digirl.envs.base import DeviceEnv
from digirl.envs.clone import CloneUnsupportedError
from digirl.envs.registry import env_has, list_envs, make
from digirl.sim.env import SimEnv


def _first_task_per_family() -> dict[str, tuple[str, TaskSpec]]:
    from digirl.sim.tasks.compose import compound_tasks
    from digirl.sim.tasks.tasksets import load_taskset

    out: dict[str, tuple[str, TaskSpec]] = {}
    for ts in ("general", "webshop", "phone"):
        for t in load_taskset(ts, "train"):
            out.setdefault(t.family, (ts, t))
    out["compound"] = ("compound", compound_tasks("train")[0])
    return out


TASKS = _first_task_per_family()


def _actions(env: SimEnv, rng: np.random.Generator, n: int) -> list[Action]:
    """The reference episode's actions: the expert's, each replaced by a random one with probability 0.3
    (wrong taps open other apps and pages, so clones are taken in many states)."""
    env2 = env.clone()  # plan on a clone: planning must not disturb env
    out: list[Action] = []
    for _ in range(n):
        a = env2.cheat() if rng.random() > 0.3 else env2.action_space.sample(rng)
        if a is None or a.ends_episode:
            a = Action.back()
        out.append(a)
        *_, term, trunc, _ = env2.step(a)
        if term or trunc:
            break
    return out


def _record(env: DeviceEnv, actions: list[Action]) -> list[tuple[Any, ...]]:
    rows = []
    for a in actions:
        obs, r, term, trunc, info = env.step(a)
        rows.append((obs.screenshot.tobytes(), obs.elements, obs.step, obs.history, r, term, trunc, info))
        if term or trunc:
            break
    return rows


def _rng_states(env: SimEnv) -> tuple[Any, ...]:
    return (env.np_random.bit_generator.state, env.phone.dyn.rng.bit_generator.state)


@pytest.mark.parametrize("family", sorted(TASKS))
def test_a_clone_continues_exactly_as_the_original(family: str) -> None:
    taskset, task = TASKS[family]
    world = sum(map(ord, family)) % 3  # spread world versions over the families
    env = SimEnv(taskset=taskset, perturbation=2, world_version=world)
    seed = 11
    env.reset(seed=seed, options={"task": task})
    actions = _actions(env, np.random.default_rng(5), env.horizon)
    reference = _record(env, actions)
    assert len(reference) == len(actions)

    env.reset(seed=seed, options={"task": task})
    cut_points = sorted({0, len(actions) // 2, len(actions) - 1})
    junk = np.random.default_rng(99)
    done = 0
    for h in range(len(actions)):
        if h in cut_points:
            before = _rng_states(env)
            noisy, exact = env.clone(), env.clone()
            assert _rng_states(noisy) == before and _rng_states(exact) == before
            _record(noisy, [noisy.action_space.sample(junk) for _ in range(3)])  # other actions, on a clone
            assert _rng_states(env) == before, "stepping a clone moved the original's random streams"
            assert _record(exact, actions[h:]) == reference[h:], f"a clone made at step {h} diverged"
            done += 1
        env.step(actions[h])
    assert done == len(cut_points)
    # the original, cloned and stepped beside its clones, is still the reference episode
    env.reset(seed=seed, options={"task": task})
    shadow = env.clone()
    assert _record(env, actions) == reference
    assert _record(shadow, actions) == reference


def test_a_clone_of_a_clone_and_after_the_end() -> None:
    env = SimEnv(taskset="general", perturbation=2)
    env.reset(seed=3)
    env.step(Action.tap(0.5, 0.5))
    a = env.clone()
    b = a.clone()
    acts = [Action.swipe((0.5, 0.8), (0.5, 0.2)), Action.back(), Action.tap(0.3, 0.4)]
    assert _record(a, acts) == _record(b, acts) == _record(env, acts)
    env.step(Action.complete())
    ended = env.clone()
    with pytest.raises(RuntimeError, match="after the episode ended"):
        ended.step(Action.back())
    # a reset of the original releases its phone; the clone keeps its own
    env.reset(seed=4)
    assert ended.phone is not env.phone and ended.phone.summary()


def test_clone_is_a_registry_capability() -> None:
    sims = [s.id for s in list_envs() if s.backend == "sim"]
    assert sims and all(env_has(i, "state_clone") for i in sims)
    assert all(env_has(i, "state_replay") for i in sims)
    assert env_has("digirl/toy-type-v0", "state_clone")
    for s in list_envs():
        if s.backend in ("browser", "android"):
            assert s.metadata.get("state_clone") is False, f"{s.id} must declare that it cannot clone"


def test_envs_that_cannot_clone_say_so() -> None:
    class Plain(DeviceEnv):
        def _reset(self, task, rng):  # type: ignore[no-untyped-def]
            return TaskSpec(instruction="x")

        def _step(self, action):  # type: ignore[no-untyped-def]
            raise AssertionError

        def _screenshot(self):  # type: ignore[no-untyped-def]
            return np.zeros((4, 4, 3), np.uint8)

    with pytest.raises(CloneUnsupportedError, match="Plain cannot clone"):
        Plain(width=4, height=4).clone()


def test_wrappers_clone_around_the_inner_clone() -> None:
    from digirl.envs.wrappers import MaxSteps

    env = MaxSteps(make("digirl/sim-phone-v0", perturbation=1), max_steps=3)
    env.reset(seed=2)
    env.step(Action.tap(0.5, 0.5))
    c = env.clone()
    assert isinstance(c, MaxSteps) and c.env is not env.env and c.elapsed_steps == 1
    acts = [Action.back(), Action.home()]
    rows = _record(c, acts)
    assert rows == _record(env, acts) and rows[-1][6] is True  # truncated by the wrapper at its 3rd step
