"""Compound instructions (issue 42): parsing into ordered plans, ordered success with lasting
sub-goals, the expert through the plan, horizons, the compound task set and its generator, and
what the shipped sets keep."""

from __future__ import annotations

import json
from typing import Any

import pytest

from digirl.core.actions import Action
from digirl.sim.coverage import coverage_report, coverage_report_file, run_expert_episode
from digirl.sim.device import get_setting, set_setting
from digirl.sim.env import SimEnv
from digirl.sim.expert import expert_action
from digirl.sim.families import TaskFamily, register_family
from digirl.sim.families.compound import MAX_HORIZON, compound_intent, plan_horizon, plan_parts
from digirl.sim.intents import Intent
from digirl.sim.predicates import TaskContext
from digirl.sim.samples import spec_for
from digirl.sim.tasks.compose import (
    COMPOUND_SIZES,
    generate_compound,
    load_compound_lines,
    register_compound_source,
    unregister_compound_source,
)
from digirl.sim.tasks.parser import explain_instruction
from digirl.sim.tasks.tasksets import TASKSET_DIR
from tests.sim.conftest import DATA


def _plan(text: str) -> list[tuple[str, dict[str, str]]]:
    found = explain_instruction(text)
    assert found.intent is not None and found.how == "compound", (text, found)
    return [(p.family, p.slots) for p in plan_parts(found.intent)]


@pytest.mark.parametrize(
    ("text", "plan"),
    [
        (
            "Open YouTube and search for lofi music",
            [
                ("open_app", {"app": "YouTube"}),
                ("youtube_video", {"query": "lofi music", "key_terms": "lofi music", "action": "search"}),
            ],
        ),
        (
            "Go to bestbuy.com, look up gaming laptops, open the first result",
            [
                ("shop_goto", {"site": "bestbuy.com"}),
                ("shop_search", {"site": "bestbuy.com", "query": "gaming laptops"}),
                ("shop_select", {"site": "bestbuy.com", "query": "gaming laptops"}),
            ],
        ),
        (
            "open settings, then wifi, then turn it off",
            [
                ("open_app", {"app": "Settings"}),
                ("settings_page", {"page": "network"}),
                ("toggle_setting", {"setting": "wifi", "state": "off"}),
            ],
        ),
        (
            "Turn off bluetooth, then wifi, then mobile data",
            [
                ("toggle_setting", {"setting": "bluetooth", "state": "off"}),
                ("toggle_setting", {"setting": "wifi", "state": "off"}),
                ("toggle_setting", {"setting": "mobile_data", "state": "off"}),
            ],
        ),
        ("Install Duolingo and open it", [("install_app", {"app": "Duolingo"}), ("open_app", {"app": "Duolingo"})]),
        (
            "Call Mom and then text her that I'm on my way",
            [("make_call", {"contact": "Mom"}), ("send_message", {"contact": "Mom", "body": "I'm on my way"})],
        ),
        (
            "Search for a blender on target.com and add it to the cart",
            [
                ("shop_search", {"site": "target.com", "query": "blender"}),
                ("add_to_cart", {"site": "target.com", "query": "blender"}),
            ],
        ),
        ("Open Spotify and Instagram", [("open_app", {"app": "Spotify"}), ("open_app", {"app": "Instagram"})]),
        (
            "Set an alarm for 6am, then set another one for 6:15am",
            [("set_alarm", {"time": "06:00"}), ("set_alarm", {"time": "06:15"})],
        ),
        ("Open WhatsApp and then go back home", [("open_app", {"app": "WhatsApp"}), ("go_home", {})]),
        (
            "Open settings, then apps, then Spotify, then turn off notifications",
            [
                ("open_app", {"app": "Settings"}),
                ("settings_page", {"page": "apps"}),
                ("app_settings", {"app": "Spotify"}),
                ("app_notifications", {"app": "Spotify", "state": "off"}),
            ],
        ),
        (
            "Open the contacts app and add Nora with number 555 112 2334",
            [("open_app", {"app": "Contacts"}), ("add_contact", {"name": "Nora", "number": "5551122334"})],
        ),
        (
            "Open wikipedia.org and bookmark the page",
            [("open_site", {"site": "wikipedia.org"}), ("bookmark_site", {"site": "wikipedia.org"})],
        ),
        (
            "Open the Play Store, search for Candy Crush and install it",
            [
                ("open_app", {"app": "Play Store"}),
                ("app_search", {"app": "playstore", "query": "Candy Crush"}),
                ("install_app", {"app": "Candy Crush"}),
            ],
        ),
    ],
)
def test_compound_instructions_parse_to_ordered_plans(text: str, plan: list[tuple[str, dict[str, str]]]) -> None:
    assert _plan(text) == plan


@pytest.mark.parametrize(
    ("text", "families"),
    [
        (
            "First, open settings, next go to display, and finally turn on dark mode",
            ["open_app", "settings_page", "toggle_setting"],
        ),
        ("Open Spotify & YouTube", ["open_app", "open_app"]),
        ("Turn on wifi and also open YouTube", ["toggle_setting", "open_app"]),
        ("Open Chrome, go to reddit.com, afterwards open YouTube", ["open_app", "open_site", "open_app"]),
        ("Open the calendar and add Team dinner on Friday at 8pm", ["open_app", "create_event"]),
    ],
)
def test_more_connectives_and_in_app_steps(text: str, families: list[str]) -> None:
    assert [f for f, _ in _plan(text)] == families


def test_connective_words_inside_a_step_stay_there() -> None:
    said = explain_instruction("Text Mom saying next time bring snacks")
    assert said.intent is not None and said.intent.get("body") == "next time bring snacks"
    att = explain_instruction("Search for AT&T deals")
    assert att.intent is not None and att.intent.family == "web_search"


def test_web_shopping_phrasings_keep_their_aitw_meaning() -> None:
    # "Go to S, search for Q and select the first entry" is one Web Shopping task (its predicate
    # implies the search), as in the shipped set: not a compound.
    found = explain_instruction("go to bestbuy.com, search for a laptop and open the first result")
    assert found.intent is not None and found.intent.family == "shop_select" and found.how == "rule"


def test_a_message_body_keeps_its_commas_and_a_search_its_and() -> None:
    found = explain_instruction("Text Mom saying hi, how are you")
    assert found.intent is not None and found.intent.family == "send_message"
    assert found.intent.get("body") == "hi, how are you"
    salt = explain_instruction("Search for salt and pepper shakers")
    assert salt.intent is not None and salt.intent.family == "web_search" and "pepper" in salt.intent.get("query")


def test_a_swallowed_request_no_family_does_is_rejected_with_the_step() -> None:
    # (Gmail's search became a surface in round 3's last pass: a store app's search is still not one.)
    found = explain_instruction("Open Spotify and search for invoices")
    assert found.intent is None
    assert "'search for invoices'" in found.reason
    # Nor does the question fallback turn two requests into one search.
    both = explain_instruction("Show me the news and subscribe to the newsletter")
    assert both.intent is None and "'subscribe to the newsletter'" in both.reason
    # (Showing the notifications and clearing them all became a plan in session 22.)
    shade = explain_instruction("Show me the notifications and clear them all")
    assert shade.intent is not None and shade.intent.family == "compound"
    one = explain_instruction("Search for restaurants and bars in Austin")
    assert one.intent is not None and one.intent.family == "web_search"


def test_compound_intents_validate_their_plan() -> None:
    with pytest.raises(ValueError, match="at least two"):
        compound_intent([Intent("go_home")])
    inner = compound_intent([Intent("go_home"), Intent("check_email")])
    with pytest.raises(ValueError, match="cannot be compound"):
        compound_intent([inner, Intent("go_home")])
    with pytest.raises(ValueError, match="not JSON"):
        plan_parts(Intent("compound", {"plan": "[oops"}))


def _env(parts: list[Intent], seed: int = 0) -> SimEnv:
    env = SimEnv("phone", perturbation=0)
    env.reset(seed=seed, options={"task": spec_for("compound", compound_intent(parts), task_id="t")})
    return env


def _drive(env: SimEnv, intent: Intent, limit: int = 20) -> None:
    """Do ``intent`` alone with the expert (as an agent would, whatever the compound task asks)."""
    ctx = TaskContext(intent, initial=dict(getattr(env.ctx, "initial", {})))
    for _ in range(limit):
        a = expert_action(env.phone, ctx)
        if a.ends_episode:
            return
        env.step(a)


def test_screen_goals_count_only_in_their_order() -> None:
    env = _env([Intent("open_app", {"app": "YouTube"}), Intent("open_app", {"app": "Settings"})])
    _drive(env, Intent("open_app", {"app": "Settings"}))
    _drive(env, Intent("open_app", {"app": "YouTube"}))
    assert not env.success and env.ctx.initial["reached"] == 1  # YouTube reached; Settings came too early
    _drive(env, Intent("open_app", {"app": "Settings"}))
    assert env.success


def test_lasting_goals_must_still_hold_at_the_end() -> None:
    env = _env([Intent("toggle_setting", {"setting": "wifi", "state": "on"}), Intent("open_app", {"app": "YouTube"})])
    assert not get_setting(env.phone, "wifi")
    set_setting(env.phone, "wifi", True)
    env.step(Action.home())
    assert env.ctx.initial["reached"] == 1
    set_setting(env.phone, "wifi", False)  # undone before the last sub-goal
    _drive(env, Intent("open_app", {"app": "YouTube"}))
    assert not env.success
    for _ in range(15):  # the compound expert puts it back and comes back to YouTube
        if env.success:
            break
        env.step(env.cheat() or Action.home())
    assert env.success and get_setting(env.phone, "wifi")


def test_a_later_goal_on_the_same_thing_supersedes_an_earlier_one() -> None:
    parts = [
        Intent("toggle_setting", {"setting": "flashlight", "state": "on"}),
        Intent("toggle_setting", {"setting": "flashlight", "state": "off"}),
    ]
    env = _env(parts)
    ok, _steps, why = run_expert_episode(env, spec_for("x", compound_intent(parts), task_id="t"), 0)
    assert ok, why
    assert not get_setting(env.phone, "flashlight")


def test_setups_let_the_earlier_goal_win() -> None:
    env = _env([Intent("install_app", {"app": "Duolingo"}), Intent("open_app", {"app": "Duolingo"})])
    assert not env.phone.is_installed("Duolingo")


def test_horizon_scales_with_the_plan() -> None:
    two = compound_intent([Intent("go_home"), Intent("check_email")])
    assert plan_horizon(two) == 15 + 10
    env = SimEnv("phone")
    env.reset(seed=0, options={"task": spec_for("x", two, task_id="t")})
    assert env.horizon == 25
    six = compound_intent([Intent("shop_goto", {"site": "ebay.com"})] * 6)
    assert plan_horizon(six) == MAX_HORIZON


@pytest.mark.parametrize(
    "text",
    [
        "Go to walmart.com, search for a bike, open the first result and add it to the cart",
        "Open settings, go to apps, then open Instagram",
        "Open YouTube, search for yoga and play the first video",
        "Open Google Maps, search for pizza, then get directions to the first result",
        "Turn on wifi, open chrome and go to google.com",
        "Open the Play Store, search for TikTok and install it",
    ],
)
@pytest.mark.parametrize("level", [0, 2])
def test_the_expert_plans_through_compound_tasks(text: str, level: int) -> None:
    from digirl.sim.tasks.tasksets import task_from_instruction

    task = task_from_instruction(text)
    env = SimEnv("phone", perturbation=level)
    for seed in (0, 1):
        ok, _steps, why = run_expert_episode(env, task, seed)
        assert ok, (text, seed, why)


def test_the_cart_records_items_and_shows_a_badge() -> None:
    env = _env(
        [
            Intent("shop_search", {"site": "target.com", "query": "lamp"}),
            Intent("add_to_cart", {"site": "target.com", "query": "lamp"}),
        ]
    )
    for _ in range(25):
        if env.success:
            break
        env.step(env.cheat() or Action.home())
    b: Any = env.phone.apps["chrome"]
    assert env.success and b.cart and b.cart[0][0] == "target.com" and b.cart[0][3] == 0
    assert env.phone.find("target.com.cart.count") is not None
    assert env.phone.find("product.add_to_cart").text == "Added to cart"


# ---------------------------------------------------------------- shipped sets and the compound set
def test_shipped_lines_never_parse_as_compounds() -> None:
    for path in sorted(TASKSET_DIR.glob("*.txt")):
        for text in path.read_text(encoding="utf-8").splitlines():
            assert explain_instruction(text).how != "compound", (path.name, text)


@pytest.mark.parametrize("split", ["train", "validation", "test"])
def test_compound_set_lines_parse_to_compounds_of_several_families(split: str) -> None:
    lines = load_compound_lines(split)
    assert len(lines) == COMPOUND_SIZES[split] and len(set(lines)) == len(lines)
    families: set[str] = set()
    for text in lines:
        found = explain_instruction(text)
        assert found.intent is not None and found.intent.family == "compound", text
        families |= {p.family for p in plan_parts(found.intent)}
    assert len(families) >= 25


def test_compound_splits_name_disjoint_lines() -> None:
    train, val, test = (set(load_compound_lines(s)) for s in ("train", "validation", "test"))
    assert not (train & test) and not (train & val) and not (val & test)


@pytest.mark.slow
def test_shipped_compound_files_match_the_generator() -> None:
    for split in ("train", "validation", "test"):
        assert load_compound_lines(split) == generate_compound(split)


def test_compound_env_runs_its_task_set() -> None:
    from digirl.envs import registry

    env = registry.make("digirl/sim-compound-test-v0", perturbation=1)
    tasks = env.tasks()
    assert len(tasks) == COMPOUND_SIZES["test"] and tasks[0].task_id == "compound-test-0000"
    for task in tasks[:20]:
        ok, _, why = run_expert_episode(env, task, 0)
        assert ok, (task.instruction, why)
        assert task.horizon == env.horizon


def test_a_user_family_composes_with_the_rest() -> None:
    def on(phone: Any, intent: Intent, ctx: TaskContext) -> bool:
        return bool(phone.settings.__dict__.get("data_saver_demo"))

    def plan(e: Any) -> Action:
        e.phone.settings.__dict__["data_saver_demo"] = True  # a demo family: its plan flips a flag
        return e.wait()

    register_family(TaskFamily("data_saver_demo", on, plan, taskset="phone"), phrasings=["turn on data saver"], replace=True)
    try:
        assert _plan("Turn on data saver and open YouTube") == [("data_saver_demo", {}), ("open_app", {"app": "YouTube"})]
        register_compound_source("data_saver_demo", {"test": ["Turn on data saver"]})
        lines = generate_compound("test", n=200)
        mine = [x for x in lines if x.lower().startswith("turn on data saver") or "turn on data saver" in x.lower()]
        assert mine, "the user family was never composed"
    finally:
        unregister_compound_source("data_saver_demo")


# ---------------------------------------------------------------- coverage says why a line fails
def test_coverage_says_why_each_line_fails() -> None:
    r = coverage_report(
        [
            "Open YouTube and search for lofi music",
            "Open the weather",
            "Flibber the jabberwock",
            "Open Spotify",
        ]
    )
    status = {x["text"]: (x["status"], x["reason"]) for x in r["per_line"]}
    assert status["Open YouTube and search for lofi music"] == ("solved", "")
    assert status["Open the weather"][0] == "unsupported_app" and "'weather'" in status["Open the weather"][1]
    assert status["Flibber the jabberwock"][0] == "parse"
    assert status["Open Spotify"][0] == "solved"
    assert r["status_counts"] == {"solved": 2, "unsupported_app": 1, "parse": 1}
    assert r["how"]["compound"] == 1 and r["unsupported"][0]["text"] == "Open the weather"
    none = coverage_report(["Open Spotify"], run_expert=False)
    assert none["per_line"][0]["status"] == "not_run"


def test_heldout_everyday_set_parse_and_solve_rate() -> None:
    """The held-out everyday/compound set written before the compound parser (its .md has the baseline)."""
    r = coverage_report_file(DATA / "heldout_everyday.txt", perturbation=1, seeds=(0,))
    assert r["lines"] == 318
    assert r["failures"] == []  # every line that parses is solved
    assert r["solved"] / r["lines"] >= 0.94, [x for x in r["per_line"] if x["status"] != "solved"]


def test_final_check_set_parse_and_solve_rate() -> None:
    """The final-check set, written after the compound parser (77 / 80 when first measured)."""
    r = coverage_report_file(DATA / "heldout_everyday_final.txt", perturbation=1, seeds=(0,))
    assert r["lines"] == 80 and r["failures"] == []
    assert r["solved"] >= 77, [x for x in r["per_line"] if x["status"] != "solved"]


@pytest.mark.parametrize(
    ("name", "floor"),
    [
        ("s19", 296),
        ("s20", 100),
        ("s22", 298),
        ("s23", 292),
        ("s24", 268),
        ("s25", 205),
        ("s26", 223),
        ("s27", 219),
        ("s28", 233),
    ],
)
def test_the_later_everyday_sets_do_not_lose_lines(name: str, floor: int) -> None:
    """The held-out sets of round 3's later sessions (each .md has its one blind measurement): parsed and
    solved lines at the count of session 24's last code, so that no later change loses one silently.
    Session 24 lowered them on purpose (s19 298, s22 296, s23 296, s24 274, s25 206 before): the lines
    it no longer counts were misreadings "solved" by the simulator (a search query holding a second step
    such as "… and sort by price", a web search for "where are my screenshots"), now refused
    (tests/sim/test_sim_asked.py). Session 25 raised them to its own counts (shops' sort and checkout)
    and added s27, whose count also fell on purpose where misreadings became refusals (204 blind); s24's
    "Schedule "Team standup" every weekday at 9:15." is refused now (events do not repeat), not misread.
    Session 26 lowered s22 and s28 by one each: "navigate to Mumbai airport and avoid tolls" and "get driving
    directions to O'Hare airport and avoid tolls" had "and avoid tolls" inside the destination; they are
    refused now (Maps has no route options); s24 and s28 one more each: an unquoted message or email body that
    ran on past "then" + a request ("… the sink is leaking, then text him the same") and an album Photos does
    not have ('show me the album "Lisbon 2023"', a web search before) are refused."""
    r = coverage_report_file(DATA / f"heldout_everyday_{name}.txt", perturbation=1, seeds=(0,))
    assert r["solved"] >= floor, [x for x in r["per_line"] if x["status"] != "solved"]


def test_training_lists_every_split_of_the_compound_set() -> None:
    from digirl.training.common import task_pool
    from digirl.training.config import EnvConfig

    for split in ("train", "validation", "test"):
        pool = task_pool(EnvConfig(id="digirl/sim-compound-v0"), split)
        assert len(pool) == COMPOUND_SIZES[split]
        assert all(t is not None and t.split == split and t.family == "compound" for t in pool)
    env = SimEnv("compound")
    assert [t.instruction for t in env.tasks(split="test")] == load_compound_lines("test")
    with pytest.raises(ValueError, match="split must be"):
        env.tasks(split="dev")


def test_the_compound_env_takes_an_instruction() -> None:
    env = SimEnv("compound")
    env.reset(seed=0, options={"task": "Open settings, then wifi, then turn it off"})
    assert env.intent.family == "compound" and env.horizon == 40


def test_subscribing_to_the_first_channel_after_a_search_takes_the_searched_channel() -> None:
    found = explain_instruction("search youtube for mkbhd and subscribe to the first channel")
    assert found.intent is not None and found.intent.family == "compound"
    assert '{"family": "youtube_subscribe", "slots": {"channel": "Mkbhd"}}' in found.intent.get("plan")


@pytest.mark.parametrize("text", ["subscribe to the first channel", "subscribe to the top one"])
def test_a_channel_pointed_at_but_not_named_is_rejected(text: str) -> None:
    found = explain_instruction(text)
    assert found.intent is None and "without naming one" in found.reason


def test_a_channel_whose_name_starts_with_first_is_still_a_name() -> None:
    assert explain_instruction("Follow First We Feast on YouTube").intent == Intent(
        "youtube_subscribe", {"channel": "First We Feast"}
    )


def test_sloppy_n_joins_two_requests() -> None:
    found = explain_instruction("pls open settings n turn of wifi")
    assert found.how == "compound" and found.intent is not None
    assert '"setting": "wifi", "state": "off"' in found.intent.get("plan")


@pytest.mark.parametrize(
    ("text", "last"),
    [
        ("open the clock, go to the timer tab and set it for 5 minutes", {"family": "start_timer", "slots": {"seconds": "300"}}),
        ("open the clock, go to alarms and set one for 6am", {"family": "set_alarm", "slots": {"time": "06:00"}}),
        ("open messages then start a new message to Ken", {"family": "open_thread", "slots": {"contact": "Ken"}}),
    ],
)
def test_steps_inside_the_clock_and_messages(text: str, last: dict[str, object]) -> None:
    found = explain_instruction(text)
    assert found.intent is not None and found.intent.family == "compound", found
    assert json.loads(found.intent.get("plan"))[-1] == last
