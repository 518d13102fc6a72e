"""More of the phone (issue 42): the calculator with its expression checked, tabs inside apps,
search inside Contacts and the Play Store, going home; and the shipped sets keep their meaning."""

from __future__ import annotations

from typing import Any

import pytest

from digirl.core.actions import Action
from digirl.sim.coverage import run_expert_episode
from digirl.sim.env import SimEnv
from digirl.sim.families.surface import APP_PAGE_KINDS, calc_expression, calc_intent
from digirl.sim.intents import EXTRA_FAMILIES, Intent
from digirl.sim.predicates import check
from digirl.sim.samples import spec_for
from digirl.sim.tasks.parser import explain_instruction
from digirl.sim.tasks.tasksets import TASKSET_DIR, task_from_instruction


@pytest.mark.parametrize(
    ("text", "expr"),
    [
        ("23 times 17", "23×17"),
        ("what's 145 plus 380?", "145+380"),
        ("64 divided by 8", "64÷8"),
        ("add 250 and 175", "250+175"),
        ("subtract 40 from 100", "100-40"),
        ("multiply 12 by 8", "12×8"),
        ("3.5 minus 1.25 times 2", "3.5-1.25×2"),
        ("1,200 / 4", "1200÷4"),
        ("the meaning of life", None),
        ("12", None),
        ("12 plus", None),
    ],
)
def test_arithmetic_requests_become_calculator_expressions(text: str, expr: str | None) -> None:
    assert calc_expression(text) == expr


def test_calculate_intent_carries_the_value_the_calculator_shows() -> None:
    assert calc_intent("3.5 minus 1.25 times 2") == Intent("calculate", {"expr": "3.5-1.25×2", "value": "1"})
    assert calc_intent("5 divided by 0") is None  # the calculator cannot show it


@pytest.mark.parametrize(
    ("text", "family", "slots"),
    [
        ("Use the calculator to work out 64 divided by 8", "calculate", {"expr": "64÷8", "value": "8"}),
        ("Calculate 3.5 plus 2 on the calculator", "calculate", {"expr": "3.5+2", "value": "5.5"}),
        ("Open the timer tab in the clock", "app_page", {"app": "clock", "page": "Timer"}),
        ("Go to the alarm tab", "app_page", {"app": "clock", "page": "Alarm"}),
        ("Show me the world clock", "app_page", {"app": "clock", "page": "Clock"}),
        ("Open the dial pad", "app_page", {"app": "phone", "page": "Keypad"}),
        ("Show my recent calls", "app_page", {"app": "phone", "page": "Recents"}),
        ("Switch the camera to video mode", "app_page", {"app": "camera", "page": "Video"}),
        ("Show June in my calendar", "app_page", {"app": "calendar", "page": "2024-06"}),
        ("Show me my calendar for March", "app_page", {"app": "calendar", "page": "2025-03"}),
        ("Show the images folder", "app_page", {"app": "files", "page": "Images"}),
        ("Open downloads in the files app", "app_page", {"app": "files", "page": "Downloads"}),
        ("search my contacts for Emma", "app_search", {"app": "contacts", "query": "Emma"}),
        ("Search the Play Store for a weather app", "app_search", {"app": "playstore", "query": "a weather app"}),
        ("Go to the home screen", "go_home", {}),
        ("Add the first desk lamp on target.com to the cart", "add_to_cart", {"site": "target.com", "query": "desk lamp"}),
    ],
)
def test_phrasings_of_the_new_families(text: str, family: str, slots: dict[str, str]) -> None:
    found = explain_instruction(text)
    assert found.intent == Intent(family, slots), found


@pytest.mark.parametrize("text", ["Calculate 23 times 17", "what is 23 times 17", "compute 23 * 17", "whats 23 x 17"])
def test_arithmetic_is_worked_out_on_the_calculator_however_it_is_asked(text: str) -> None:
    # One rule (issue 42): a request that is only arithmetic goes to the calculator.
    found = explain_instruction(text)
    assert found.intent == Intent("calculate", {"expr": "23×17", "value": "391"}), found


def test_a_percentage_stays_a_web_search() -> None:
    found = explain_instruction("what is 15% of 80")
    assert found.intent is not None and found.intent.family == "web_search"


@pytest.mark.parametrize(
    "text",
    [
        "Use the calculator to work out 64 divided by 8",
        "Open the calculator and add 250 and 175",
        "Open the timer tab in the clock",
        "Show me the world clock",
        "Open the dial pad",
        "Show my recent calls",
        "search my contacts for Emma",
        "Open contacts and search for Mike",
        "Search the Play Store for a weather app",
        "Open WhatsApp and then go back home",
        "Open the clock and go to the stopwatch tab",
        "Open the camera and switch to portrait mode",
        "Open the calendar and go to next month",
        "Show September 2025 in the calendar",
        "Open files and show downloads",
        "Open the Files app and go to documents",
    ],
)
@pytest.mark.parametrize("level", [0, 2])
def test_the_expert_solves_the_new_families(text: str, level: int) -> None:
    env = SimEnv("phone", perturbation=level)
    for seed in (0, 1):
        ok, _, why = run_expert_episode(env, task_from_instruction(text), seed)
        assert ok, (text, seed, why)


def _env(intent: Intent, seed: int = 0) -> SimEnv:
    env = SimEnv("phone", perturbation=0)
    env.reset(seed=seed, options={"task": spec_for("t", intent, task_id="t")})
    return env


def test_the_calculator_task_checks_the_expression_not_only_the_number() -> None:
    env = _env(Intent("calculate", {"expr": "23×17", "value": "391"}))
    env.step(env.cheat() or Action.home())
    while env.phone.fg != "calculator":
        env.step(env.cheat() or Action.home())
    calc: Any = env.phone.apps["calculator"]
    for k in "391=":
        calc.press(k)
    assert calc.result == "391" and not check(env.phone, env.ctx)  # the number typed, not the sum
    calc.press("AC")
    for k in "23×17=":
        calc.press(k)
    assert check(env.phone, env.ctx)


@pytest.mark.parametrize(
    ("app", "page"),
    [
        ("clock", "Alarm"),
        ("clock", "Stopwatch"),
        ("phone", "Keypad"),
        ("phone", "Recents"),
        ("camera", "Photo"),
        ("calendar", "2024-06"),
    ],
)
def test_a_tab_task_starts_on_another_tab(app: str, page: str) -> None:
    for seed in range(4):
        env = _env(Intent("app_page", {"app": app, "page": page}), seed)
        assert APP_PAGE_KINDS[app]["current"](env.phone.apps[app]) != page


def test_a_tab_task_rejects_an_unknown_tab() -> None:
    from digirl.core.errors import UnsupportedInstructionError

    with pytest.raises(UnsupportedInstructionError, match="no page"):
        _env(Intent("app_page", {"app": "clock", "page": "Bedtime"}))


def test_shipped_lines_never_parse_to_the_new_families() -> None:
    for path in sorted(TASKSET_DIR.glob("*.txt")):
        for text in path.read_text(encoding="utf-8").splitlines():
            found = explain_instruction(text)
            assert found.intent is not None and found.intent.family not in EXTRA_FAMILIES, (path.name, text)


def test_a_far_calendar_month_gets_the_steps_it_needs() -> None:
    env = _env(Intent("app_page", {"app": "calendar", "page": "2025-09"}))
    assert env.horizon == 15 + 15


@pytest.mark.parametrize(
    ("text", "family", "slots"),
    [
        ("Turn wifi back on", "toggle_setting", {"setting": "wifi", "state": "on"}),
        ("Lower the brightness to 10 percent", "set_brightness", {"level": "10"}),
        ("Raise the volume to 80%", "set_volume", {"level": "80"}),
        ("Open the browser", "open_app", {"app": "Chrome"}),
        ("Show my inbox", "check_email", {}),
        ("Open notification settings for Instagram", "app_settings", {"app": "Instagram"}),
        ("Check my notifications", "show_notifications", {}),
        ("Send Sarah a message saying thanks", "send_message", {"contact": "Sarah", "body": "thanks"}),
    ],
)
def test_everyday_wordings_of_shipped_families(text: str, family: str, slots: dict[str, str]) -> None:
    assert explain_instruction(text).intent == Intent(family, slots)


def test_politeness_at_the_end_is_dropped_but_not_a_message() -> None:
    polite = explain_instruction("Text Bob that I'm late, thanks")
    assert polite.intent is not None and polite.intent.get("body") == "I'm late"
    said = explain_instruction("Text Mom saying thank you")
    assert said.intent is not None and said.intent.get("body") == "thank you"


def test_files_folders_list_their_files_and_go_back() -> None:
    env = _env(Intent("app_page", {"app": "files", "page": "Videos"}))
    files: Any = env.phone.apps["files"]
    assert files.folder is None and not check(env.phone, env.ctx)
    for _ in range(6):
        if env.success:
            break
        env.step(env.cheat() or Action.home())
    assert env.success and files.screen() == "videos"
    row = env.phone.find("files.file.0")
    assert row is not None and any(c.text.endswith(".mp4") for c in row.children)
    env.phone.apply(Action.back())  # the episode ended on success; the app itself still goes back
    assert files.folder is None and env.phone.find("files.0") is not None


@pytest.mark.parametrize(
    ("text", "app", "page"),
    [
        ("show my downloads", "files", "Downloads"),
        ("open my downloads", "files", "Downloads"),
        ("show me my recent files", "files", "Recent"),
        ("open the recent folder in files", "files", "Recent"),
        ("show my apps in the play store", "playstore", "Manage"),
        ("check app updates in the play store", "playstore", "Manage"),
    ],
)
def test_pages_of_files_and_the_play_store(text: str, app: str, page: str) -> None:
    found = explain_instruction(text)
    assert found.intent == Intent("app_page", {"app": app, "page": page}), found
    env = SimEnv(taskset="phone", perturbation=1)
    task = task_from_instruction(text, taskset="phone")
    ok, _, reason = run_expert_episode(env, task, seed=0)
    assert ok, reason


def test_the_recent_folder_mixes_kinds_of_files() -> None:
    from digirl.sim.apps.simple import folder_files

    kinds = {name.rsplit(".", 1)[1] for name, _ in folder_files("Recent")}
    assert len(kinds) >= 2


def test_my_apps_after_opening_the_play_store_is_its_manage_page() -> None:
    found = explain_instruction("open the play store and go to my apps")
    assert found.intent is not None and found.intent.family == "compound"
    assert '{"family": "app_page", "slots": {"app": "playstore", "page": "Manage"}}' in found.intent.get("plan")


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("wake me up at 7", Intent("set_alarm", {"time": "07:00"})),
        ("show my photos", Intent("open_app", {"app": "Photos"})),
        (
            "check the weather in Tokyo",
            Intent("web_search", {"query": "weather in Tokyo", "key_terms": "weather tokyo", "answer": "generic"}),
        ),
    ],
)
def test_everyday_wordings_added_in_session_22(text: str, intent: Intent) -> None:
    assert explain_instruction(text).intent == intent


def test_waking_at_twelve_is_ambiguous_and_rejected() -> None:
    assert explain_instruction("wake me up at 12").intent is None


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("remove tiktok", Intent("uninstall_app", {"app": "TikTok"})),
        ("create contact Nia 555 8888", Intent("add_contact", {"name": "Nia", "number": "5558888"})),
        ("go to next month in calendar", Intent("app_page", {"app": "calendar", "page": "2024-07"})),
        ("stop the stopwatch", Intent("stop_stopwatch")),
    ],
)
def test_more_everyday_wordings(text: str, intent: Intent) -> None:
    assert explain_instruction(text).intent == intent
    env = SimEnv(taskset="phone", perturbation=2)
    ok, _, reason = run_expert_episode(env, task_from_instruction(text, taskset="phone"), seed=0)
    assert ok, reason


def test_remove_names_an_app_the_phone_knows_or_is_not_an_uninstall() -> None:
    found = explain_instruction("remove the alarm")
    assert found.intent is None or found.intent.family != "uninstall_app"


def test_starting_then_stopping_the_stopwatch_is_one_plan_whose_stop_supersedes_the_start() -> None:
    text = "start the stopwatch then stop it"
    found = explain_instruction(text)
    assert found.intent is not None and found.intent.family == "compound"
    env = SimEnv(taskset="phone", perturbation=0)
    ok, _, reason = run_expert_episode(env, task_from_instruction(text, taskset="phone"), seed=0)
    assert ok, reason


def test_an_event_months_away_gets_a_step_per_month() -> None:
    env = _env(Intent("create_event", {"title": "Dentist", "date": "2025-03-03", "time": "09:00"}))
    assert env.horizon == 15 + 9


@pytest.mark.parametrize(
    ("text", "last"),
    [
        ("switch to selfie mode", {"family": "camera_lens", "slots": {"lens": "front"}}),
        ("flip the camera to rear", {"family": "camera_lens", "slots": {"lens": "back"}}),
        ("open the camera, switch to selfie mode and take a picture", {"family": "take_photo", "slots": {"mode": "selfie"}}),
        ("open the notification shade and clear everything", {"family": "clear_notifications", "slots": {}}),
    ],
)
def test_camera_lens_and_clearing_the_shade(text: str, last: dict[str, object]) -> None:
    import json

    intent = explain_instruction(text).intent
    assert intent is not None
    parts = json.loads(intent.get("plan")) if intent.family == "compound" else [{"family": intent.family, "slots": intent.slots}]
    assert parts[-1] == last
    env = SimEnv(taskset="phone", perturbation=1)
    ok, _, reason = run_expert_episode(env, task_from_instruction(text, taskset="phone"), seed=0)
    assert ok, reason


@pytest.mark.parametrize("text", ["show recent apps", "clear app cache for chrome", "force stop facebook"])
def test_device_orders_are_not_turned_into_web_searches(text: str) -> None:
    found = explain_instruction(text)
    assert found.intent is None or found.intent.family != "web_search", found


def test_data_usage_is_the_network_page() -> None:
    assert explain_instruction("show me how much data i used").intent == Intent("settings_page", {"page": "network"})


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("open insta", Intent("open_app", {"app": "Instagram"})),
        ("send an emial to tom@mail.com saying hi", Intent("send_email", {"to": "tom@mail.com", "subject": "", "body": "hi"})),
        ("remind me to buy milk at 5pm", Intent("create_event", {"title": "Buy milk", "date": "", "time": "17:00"})),
    ],
)
def test_nicknames_typos_and_reminders(text: str, intent: Intent) -> None:
    assert explain_instruction(text).intent == intent


def test_a_reminder_without_a_time_is_not_an_event() -> None:
    found = explain_instruction("remind me to call mom")
    assert found.intent is None or found.intent.family != "create_event"


def test_needing_directions_is_asking_for_them() -> None:
    assert explain_instruction("i need directions to the nearest hospital").intent == Intent(
        "maps_directions", {"destination": "hospital"}
    )
