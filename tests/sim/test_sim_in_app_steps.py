"""Compound steps that point at what the step before left (digirl.sim.tasks.in_app_steps) and the
everyday phrasings added with them (issue 42)."""

from __future__ import annotations

import pytest

from digirl.sim.coverage import run_expert_episode
from digirl.sim.env import SimEnv
from digirl.sim.intents import Intent
from digirl.sim.tasks.parser import explain_instruction
from digirl.sim.tasks.tasksets import task_from_instruction
from tests.sim.conftest import plan_steps


def _solved_with_last_step(text: str, last: dict[str, object], *, perturbation: int = 1, seed: int = 0) -> SimEnv:
    """Assert ``text``'s last step is ``last`` and the expert solves the task; the env after it."""
    assert plan_steps(text)[-1] == last
    env = SimEnv(taskset="phone", perturbation=perturbation)
    ok, _, reason = run_expert_episode(env, task_from_instruction(text, taskset="phone"), seed=seed)
    assert ok, reason
    return env


@pytest.mark.parametrize(
    ("text", "last"),
    [
        (
            'open messages, start a new conversation with Ines and say "lunch tomorrow?"',
            {"family": "send_message", "slots": {"body": "lunch tomorrow", "contact": "Ines"}},
        ),
        (
            'open my chat with Mum and send "landed safely"',
            {"family": "send_message", "slots": {"body": "landed safely", "contact": "Mum"}},
        ),
        (
            'send "happy new year!" to Wei and then to Anjali',
            {"family": "send_message", "slots": {"body": "happy new year", "contact": "Anjali"}},
        ),
        ("open gmail and check the inbox", {"family": "check_email", "slots": {}}),
        ("open calendar then show tomorrow", {"family": "calendar_day", "slots": {"date": "2024-06-05"}}),
        ("open the clock and add a world clock for Sydney", {"family": "add_world_clock", "slots": {"city": "Sydney"}}),
        ("read my last message and say thanks", {"family": "reply_latest", "slots": {"body": "thanks"}}),
        (
            "search amazon for batteries, add the first one to the cart and go to the cart",
            {"family": "shop_cart", "slots": {"site": "amazon.com"}},
        ),
    ],
)
def test_steps_after_the_one_before(text: str, last: dict[str, object]) -> None:
    _solved_with_last_step(text, last, perturbation=1, seed=0)


def test_asking_in_chrome_is_a_web_search() -> None:
    last = plan_steps("open chrome and ask how tall mount everest is")[-1]
    assert last["family"] == "web_search"


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("directions to 221B Baker Street", Intent("maps_directions", {"destination": "221B Baker Street"})),
        ("costco.com paper towels", Intent("shop_search", {"site": "costco.com", "query": "paper towels"})),
        ("whats my android version", Intent("settings_page", {"page": "about"})),
        ("who called me last", Intent("app_page", {"app": "phone", "page": "Recents"})),
        ("show missed calls", Intent("app_page", {"app": "phone", "page": "Recents"})),
        ("did Lena text me", Intent("open_thread", {"contact": "Lena"})),
        ("any new emails from amazon?", Intent("app_search", {"app": "gmail", "query": "amazon"})),
        ("am i free thursday afternoon?", Intent("calendar_day", {"date": "2024-06-06"})),
        ("show me my watch later list", Intent("app_page", {"app": "youtube", "page": "Library"})),
        (
            "add a new contact named Diego Ramirez, 555 201 8890",
            Intent("add_contact", {"name": "Diego Ramirez", "number": "5552018890"}),
        ),
        (
            "add meeting with Lars tomorrow at 3pm",
            Intent("create_event", {"title": "Meeting with Lars", "date": "2024-06-05", "time": "15:00"}),
        ),
        (
            'compose an email to lucia@example.com with subject "Dinner" and body "Are we still on for Saturday?"',
            Intent("send_email", {"to": "lucia@example.com", "subject": "Dinner", "body": "Are we still on for Saturday"}),
        ),
    ],
)
def test_everyday_phrasings_of_existing_families(text: str, intent: Intent) -> None:
    assert explain_instruction(text).intent == intent


@pytest.mark.parametrize("text", ["dial 212 555 0175 and put it on speaker", "add milk to my cart"])
def test_orders_the_phone_cannot_do_are_not_web_searches(text: str) -> None:
    found = explain_instruction(text)
    assert found.intent is None or found.intent.family != "web_search", found


def test_closing_an_app_goes_home_and_the_youtube_prefix_searches_there() -> None:
    assert plan_steps("close youtube and open spotify")[0] == {"family": "go_home", "slots": {}}
    first = plan_steps("youtube how to change a tire")[0]
    assert first["family"] == "youtube_video"


@pytest.mark.parametrize(
    ("text", "last"),
    [
        ("go to the Veritasium channel on youtube", {"family": "youtube_channel", "slots": {"channel": "Veritasium"}}),
        ("open mkbhd's channel", {"family": "youtube_channel", "slots": {"channel": "Mkbhd"}}),
        (
            "search youtube for Marques Brownlee and open his channel",
            {"family": "youtube_channel", "slots": {"channel": "Marques Brownlee"}},
        ),
        ("put my phone on silent", {"family": "set_volume", "slots": {"level": "0"}}),
    ],
)
@pytest.mark.parametrize("perturbation", [0, 2])
def test_youtube_channels_and_silent(text: str, last: dict[str, object], perturbation: int) -> None:
    _solved_with_last_step(text, last, perturbation=perturbation, seed=1)


@pytest.mark.parametrize(
    ("text", "last"),
    [
        ("remove candy crush", {"family": "uninstall_app", "slots": {"app": "Candy Crush"}}),
        ("open netflix then go back", {"family": "go_home", "slots": {}}),
        ("show my recent photos", {"family": "open_app", "slots": {"app": "Photos"}}),
    ],
)
def test_app_names_photos_and_going_back(text: str, last: dict[str, object]) -> None:
    _solved_with_last_step(text, last, perturbation=1, seed=0)


@pytest.mark.parametrize(
    "text", ["set an alarm for 3", "set an alarm for 12", "remove Bob from contacts", "delete history", "remove the alarm"]
)
def test_ambiguous_hours_and_things_that_are_not_apps_stay_unread(text: str) -> None:
    found = explain_instruction(text)
    assert found.intent is None or found.intent.family not in ("set_alarm", "uninstall_app"), found


@pytest.mark.parametrize(
    ("text", "family", "time"),
    [
        ("set an alarm for 7", "set_alarm", "07:00"),
        ("set alarm for 5:45", "set_alarm", "05:45"),
        ("Delete my 9 o'clock alarm.", "delete_alarm", "09:00"),
        ("wake me up at 6:15 tmrw", "set_alarm", "06:15"),
    ],
)
def test_a_bare_waking_hour_is_the_morning_for_an_alarm(text: str, family: str, time: str) -> None:
    found = explain_instruction(text).intent
    assert found is not None and (found.family, found.get("time")) == (family, time)


def test_a_system_app_cannot_be_removed() -> None:
    found = explain_instruction("remove chrome")
    assert found.intent is None and "system app" in found.reason


@pytest.mark.parametrize(
    ("text", "last"),
    [
        ("take a screenshot", {"family": "take_screenshot", "slots": {}}),
        ("take a screenshot and open it in photos", {"family": "view_photo", "slots": {"query": ""}}),
        ("take a screenshot then go home", {"family": "go_home", "slots": {}}),
    ],
)
@pytest.mark.parametrize("perturbation", [0, 2])
def test_a_screenshot_from_quick_settings(text: str, last: dict[str, object], perturbation: int) -> None:
    env = _solved_with_last_step(text, last, perturbation=perturbation, seed=0)
    assert "screenshot" in env.phone.gallery[0].tags


def test_the_screenshot_tile_is_only_on_the_newer_surfaces() -> None:
    env = SimEnv(taskset="phone", perturbation=0)
    env.reset(seed=0, options={"task": task_from_instruction("check my notifications", taskset="phone")})
    env.phone.open_shade()
    assert env.phone.find("shade.tile.screenshot") is None  # a shipped family: the pinned shade


@pytest.mark.parametrize(
    ("text", "last"),
    [
        ("show my favorite contacts", {"family": "app_page", "slots": {"app": "contacts", "page": "Favourites"}}),
        ("open contacts, go to favourites", {"family": "app_page", "slots": {"app": "contacts", "page": "Favourites"}}),
        ("add Giovanni to favourites", {"family": "favorite_contact", "slots": {"name": "Giovanni"}}),
        ("add my mom to favorites", {"family": "favorite_contact", "slots": {"name": "Mom"}}),
    ],
)
@pytest.mark.parametrize("perturbation", [0, 2])
def test_favourite_contacts(text: str, last: dict[str, object], perturbation: int) -> None:
    _solved_with_last_step(text, last, perturbation=perturbation, seed=0)


def test_favourites_need_a_persons_name_and_the_newer_surfaces() -> None:
    assert explain_instruction("add milk to favourites").intent is None
    env = SimEnv(taskset="phone", perturbation=0)
    env.reset(seed=0, options={"task": task_from_instruction("call Ana", taskset="phone")})
    env.phone.fg = "contacts"
    env.phone.invalidate()
    assert env.phone.find("contacts.tab.favourites") is None  # a shipped family: the pinned list


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("show me the eiffel tower on the map", Intent("maps_search", {"query": "eiffel tower", "key_terms": "eiffel tower"})),
        ("get whatsapp", Intent("install_app", {"app": "WhatsApp"})),
    ],
)
def test_map_and_install_phrasings(text: str, intent: Intent) -> None:
    assert explain_instruction(text).intent == intent


def test_redial_is_an_order_not_a_search() -> None:
    found = explain_instruction("redial")
    assert found.intent is None


@pytest.mark.parametrize("text", ["show trending on youtube", "Open youtube and go to trending", "Open YouTube's trending page"])
@pytest.mark.parametrize("perturbation", [0, 2])
def test_youtubes_explore_tab_shows_trending(text: str, perturbation: int) -> None:
    env = _solved_with_last_step(
        text, {"family": "app_page", "slots": {"app": "youtube", "page": "Explore"}}, perturbation=perturbation, seed=0
    )
    assert env.phone.find("yt.trending.0") is not None


@pytest.mark.parametrize(
    ("text", "last"),
    [
        ("is wifi on?", {"family": "settings_page", "slots": {"page": "network"}}),
        ("is bluetooth turned on", {"family": "settings_page", "slots": {"page": "bluetooth"}}),
        ("head to settings", {"family": "open_app", "slots": {"app": "Settings"}}),
        ("jump to the wifi settings", {"family": "settings_page", "slots": {"page": "network"}}),
        ("turn on bluetooth, once done open spotify", {"family": "open_app", "slots": {"app": "Spotify"}}),
        ("buy airpods on amazon", {"family": "shop_search", "slots": {"site": "amazon.com", "query": "airpods"}}),
    ],
)
def test_state_questions_go_to_synonyms_and_buying(text: str, last: dict[str, object]) -> None:
    _solved_with_last_step(text, last, perturbation=1, seed=0)


def test_watching_a_kind_of_video_plays_one_on_youtube() -> None:
    last = plan_steps("watch a cat video")[-1]
    assert last["family"] == "youtube_video"


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ('call Mom, then text Dad "calling mom now, will update you"', ["make_call", "send_message"]),
        ("uninstall Snapchat, Pinterest and Tumblr", ["uninstall_app", "uninstall_app", "uninstall_app"]),
        ('open gmail, compose an email to team@startup.io with subject "standup moved" and send it', ["open_app", "send_email"]),
        ('text 555-0178 "your order is ready for pickup" and then call that number', ["send_message", "make_call"]),
        ("set a 7am alarm, after that turn on do not disturb", ["set_alarm", "toggle_setting"]),
        ("show me today's calendar and after that check the weather", ["calendar_day", "web_search"]),
        (
            'open messages, start a new convo with 617-555-0112, and say "hey its Rosa"',
            ["open_app", "open_thread", "send_message"],
        ),
    ],
)
def test_quoted_messages_lists_and_finishing_steps(text: str, parts: list[str]) -> None:
    assert [p["family"] for p in plan_steps(text)] == parts
    env = SimEnv(taskset="phone", perturbation=1)
    ok, _, reason = run_expert_episode(env, task_from_instruction(text, taskset="phone"), seed=0)
    assert ok, reason


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("start my hotspot so my laptop can get online", Intent("toggle_setting", {"setting": "hotspot", "state": "on"})),
        ("check costco.com for paper towels", Intent("shop_search", {"site": "costco.com", "query": "paper towels"})),
        ("email bob@x.com saying hi and send it", Intent("send_email", {"to": "bob@x.com", "subject": "", "body": "hi"})),
    ],
)
def test_reasons_site_checks_and_a_sent_email(text: str, intent: Intent) -> None:
    assert explain_instruction(text).intent == intent
