"""The shipped toy env: its tasks, rewards, expert and registry ids."""

from __future__ import annotations

import pytest

from digirl.core.actions import Action
from digirl.core.errors import UnsupportedInstructionError
from digirl.envs.registry import make
from digirl.envs.toy import ToyEnv


@pytest.mark.parametrize(("env_id", "n"), [("digirl/toy-tap-v0", 4), ("digirl/toy-type-v0", 4), ("digirl/toy-mixed-v0", 8)])
def test_registered_and_expert_solves_every_task(env_id: str, n: int) -> None:
    env = make(env_id)
    tasks = env.tasks()
    assert len(tasks) == n and len({t.task_id for t in tasks}) == n
    for seed, task in enumerate(tasks):
        obs, info = env.reset(seed=seed, options={"task": task})
        assert obs.instruction == task.instruction and info["task"]["task_id"] == task.task_id
        total, done = 0.0, False
        while not done:
            _, r, term, trunc, _ = env.step(env.cheat())
            total, done = total + r, term or trunc
        assert total == 1.0


def test_wrong_answers_get_zero() -> None:
    env = ToyEnv("tap")
    env.reset(seed=0, options={"task": "Tap the red button"})
    wrong = next(e for e in (env._elements() or ()) if e.text != "red")
    _, r, term, _, info = env.step(Action.tap(*wrong.center))
    assert (r, term, info["tapped"]) == (0.0, True, wrong.text)
    env = ToyEnv("type")
    env.reset(seed=0, options={"task": "toy-type-hello"})
    env.step(Action.type_text("hellp"))
    assert env.cheat() == Action.back()  # the expert clears a wrong word
    assert env.step(Action.enter())[1:3] == (0.0, True)


def test_task_lookup_and_bad_input() -> None:
    env = ToyEnv("mixed")
    obs, _ = env.reset(seed=3, options={"task": "toy-type-agent"})
    assert obs.instruction == "Type the word agent and press enter" and obs.elements and obs.elements[0].focused
    with pytest.raises(UnsupportedInstructionError, match="does not know"):
        env.reset(seed=0, options={"task": "Book a flight"})
    with pytest.raises(ValueError, match="mode must be"):
        ToyEnv("draw")
    # Same seed, same layout; the shuffled slots differ across seeds.
    layouts = set()
    for seed in range(6):
        a = ToyEnv("tap").reset(seed=seed, options={"task": "toy-tap-red"})[0].screenshot
        b = ToyEnv("tap").reset(seed=seed, options={"task": "toy-tap-red"})[0].screenshot
        assert (a == b).all()
        layouts.add(a.tobytes())
    assert len(layouts) > 1
