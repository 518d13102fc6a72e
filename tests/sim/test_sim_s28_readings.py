"""Casual phrasings read after the blind set s28 was measured (issue 42, session 25; s28 is a dev set
from then on): each was refused, and is now said plainly on the second pass and solved; and two of its
misreadings fixed in session 26 (a relation before a name, a route option inside a destination)."""

from __future__ import annotations

import pytest

from digirl.sim.tasks.app_rules import contact_name
from tests.sim.conftest import assert_expert_solves, assert_refused, plan_steps


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


@pytest.mark.parametrize(
    ("said", "contact"),
    [
        ("my sister Ana", "Ana"),
        ("my best friend jo", "Jo"),
        ("our neighbor Tom Lee", "Tom Lee"),
        ("my mom", "Mom"),  # no name follows: the relation is the contact
        ("my sister", "Sister"),
        ("Sister Act", "Sister Act"),  # no "my": a name that starts like a relation stays whole
    ],
)
def test_a_relation_before_a_name_is_not_part_of_the_contact(said: str, contact: str) -> None:
    assert contact_name(said) == contact


def test_text_my_sister_ana_texts_ana() -> None:
    text = (
        "create a calendar event for Mom's surgery on 4/9 at 7am, then text my sister Ana \"Put Mom's surgery on your calendar\""
    )
    steps = plan_steps(text)
    assert steps[1] == {"family": "send_message", "slots": {"body": "Put Mom's surgery on your calendar", "contact": "Ana"}}
    assert_expert_solves(text)


@pytest.mark.parametrize(
    "text",
    [
        "get driving directions to O'Hare airport and avoid tolls",
        "navigate to Mumbai airport and avoid tolls",
        "navigate to the airport avoiding highways",
    ],
)
def test_a_route_option_is_refused_not_put_in_the_destination(text: str) -> None:
    assert_refused(text, "route options")
    assert plan_steps("get directions to Avoid Creek") == [{"family": "maps_directions", "slots": {"destination": "Avoid Creek"}}]


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        (
            'open youtube music and play my "Chill Vibes" playlist on shuffle',
            [("play_music", {"app": "Youtube Music", "query": '"Chill Vibes"'}),
             ("music_control", {"action": "shuffle", "app": "Youtube Music"})],
        ),
        (
            "play my liked songs on shuffle",
            [("play_music", {"app": "Music", "query": "liked"}), ("music_control", {"action": "shuffle", "app": "Music"})],
        ),
        (
            "play jazz on spotify and shuffle it",
            [("play_music", {"app": "Spotify", "query": "jazz"}), ("music_control", {"action": "shuffle", "app": "Spotify"})],
        ),
        ("shuffle it", [("music_control", {"app": "", "action": "shuffle"})]),
        ("yo throw on some lo-fi beats", [("play_music", {"app": "Music", "query": "lo-fi beats"})]),
        (
            "new note: grocery list - eggs, oat milk, spinach, coffee",
            [("create_note", {"app": "", "title": "", "body": "grocery list - eggs, oat milk, spinach, coffee"})],
        ),
        (
            "text mike im running late then open maps",
            [("send_message", {"body": "im running late", "contact": "Mike"}), ("open_app", {"app": "Maps"})],
        ),
        ("text mom see you then", [("send_message", {"contact": "Mom", "body": "see you then"})]),
    ],
)  # fmt: skip
def test_s28_misreadings_read_as_said(text: str, steps: list[tuple[str, dict[str, str]]]) -> None:
    """Each was read as something else in session 25 ("on shuffle" inside the query, "shuffle it" as a song called
    "it", a web search for "new note: …" or "yo throw on …", a message that ran on past "then open maps")."""
    assert plan_steps(text) == [{"family": f, "slots": s} for f, s in steps]
    assert_expert_solves(text)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('show me the album "Lisbon 2023"', "the Photos app's albums are"),
        ("yo text mike im runnin late then pull up directions home", "'pull up directions home'"),
        ("Send an email to landlord@rentmail.com saying the kitchen sink is leaking, then text him the same.", "text him"),
    ],
)
def test_s28_misreadings_now_refused(text: str, said: str) -> None:
    assert_refused(text, said)
