"""The world clock's "Add city" (issue 42): the app, the ``add_world_clock`` family, its phrasings."""

from __future__ import annotations

import pytest

from digirl.sim.apps.clock import DEFAULT_CITIES, WORLD_CITIES, Clock, city_matches
from digirl.sim.coverage import run_expert_episode
from digirl.sim.env import SimEnv
from digirl.sim.intents import Intent
from digirl.sim.tasks.parser import explain_instruction
from digirl.sim.tasks.tasksets import task_from_instruction


def test_city_search_matches_name_starts_and_word_starts() -> None:
    assert city_matches("new") == ["New Delhi", "New York"]
    assert city_matches("york") == ["New York"]
    assert city_matches("") == sorted(WORLD_CITIES)
    assert city_matches("gotham") == []


def test_the_default_cities_keep_the_offsets_the_screen_always_showed() -> None:
    assert [WORLD_CITIES[c] for c in DEFAULT_CITIES] == [180, 480, 960]


@pytest.mark.parametrize(
    ("text", "cities"),
    [
        ("Add London to the world clock", ["London"]),
        ("put Dubai on my world clock", ["Dubai"]),
        ("add São Paulo to the world clock", ["Sao Paulo"]),
        ("add NYC to the world clock", ["New York"]),
        ("add Paris and New York to the world clock", ["Paris", "New York"]),
    ],
)
def test_add_city_phrasings(text: str, cities: list[str]) -> None:
    found = explain_instruction(text)
    assert found.intent is not None, found
    parts = [Intent("add_world_clock", {"city": c}) for c in cities]
    if len(parts) == 1:
        assert found.intent == parts[0]
    else:
        assert found.intent.family == "compound" and all(f'"city": "{c}"' in found.intent.get("plan") for c in cities)


def test_an_unknown_city_is_rejected_naming_it() -> None:
    found = explain_instruction("add Gotham to the world clock")
    assert found.intent is None and "'Gotham'" in found.reason


def test_add_a_city_after_opening_the_world_clock() -> None:
    found = explain_instruction("open the world clock and add Tokyo")
    assert found.intent is not None and found.intent.family == "compound"
    assert '"add_world_clock", "slots": {"city": "Tokyo"}' in found.intent.get("plan")


@pytest.mark.parametrize(
    "text", ["Add London to the world clock", "open the world clock and add Tokyo", "add Paris and Sydney to the world clock"]
)
@pytest.mark.parametrize("perturbation", [0, 2])
def test_the_expert_adds_the_city_and_a_default_city_starts_removed(text: str, perturbation: int) -> None:
    env = SimEnv(taskset="phone", perturbation=perturbation)
    task = task_from_instruction(text, taskset="phone")
    env.reset(seed=1, options={"task": task})
    named = [c for c in DEFAULT_CITIES if c in text]
    clock = env.phone.apps["clock"]
    assert isinstance(clock, Clock)
    assert not set(named) & set(clock.cities)  # else done before it starts
    ok, _, reason = run_expert_episode(env, task, seed=1)
    assert ok, reason


def test_back_closes_the_city_search_and_a_tap_adds_the_city() -> None:
    env = SimEnv(taskset="phone", perturbation=0)
    env.reset(seed=0, options={"task": task_from_instruction("add Paris to the world clock", taskset="phone")})
    clock = env.phone.apps["clock"]
    assert isinstance(clock, Clock)
    clock.open_city_search()
    assert clock.screen() == "add_city" and clock.focused == "city"
    assert clock.back() and clock.screen() != "add_city"
    clock.open_city_search()
    clock.type_text("Pari")
    clock.submit("city")  # enter picks the only match
    assert clock.cities[-1] == "Paris" and not clock.adding_city
