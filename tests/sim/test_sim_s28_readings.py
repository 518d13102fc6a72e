"""Casual phrasings read after the blind set s28 was measured (issue 42, session 25; s28 is a dev set
from then on): each was refused, and is now said plainly on the second pass and solved."""

from __future__ import annotations

import pytest

from tests.sim.conftest import assert_expert_solves, plan_steps


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        ("set brightness to around 40%", [("set_brightness", {"level": "40"})]),
        ("Can you lower the brightness to like 30%", [("set_brightness", {"level": "30"})]),
        ("mute the media volume", [("set_volume", {"level": "0"})]),
        ("dim the screen a bit", [("set_brightness", {"level": "down"})]),
        ("get rid of dark mode", [("toggle_setting", {"setting": "dark_mode", "state": "off"})]),
        ("open the app info page for Spotify", [("app_settings", {"app": "Spotify"})]),
        ("open today's agenda in calendar", [("calendar_day", {"date": "2024-06-04"})]),
        ("check costco for paper towels", [("shop_search", {"site": "costco.com", "query": "paper towels"})]),
        ("back to home screen pls", [("go_home", {})]),
    ],
)
def test_casual_phrasings_after_s28_parse_and_the_expert_solves_them(text: str, steps: list[tuple[str, dict[str, str]]]) -> None:
    assert plan_steps(text) == [{"family": f, "slots": s} for f, s in steps]
    assert_expert_solves(text)
