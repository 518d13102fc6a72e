"""``latest_thread`` and ``open_mail`` (issue 42): reading what arrived, alone or after a Gmail search."""

from __future__ import annotations

import json
from typing import Any

import pytest

from digirl.sim.coverage import run_expert_episode
from digirl.sim.env import SimEnv
from digirl.sim.intents import Intent
from digirl.sim.predicates import check
from digirl.sim.samples import spec_for
from digirl.sim.tasks.parser import explain_instruction
from digirl.sim.tasks.tasksets import task_from_instruction


@pytest.mark.parametrize(
    ("text", "last"),
    [
        ("read my latest text", {"family": "latest_thread", "slots": {}}),
        ("open my newest message", {"family": "latest_thread", "slots": {}}),
        ("read my last email", {"family": "open_mail", "slots": {}}),
        ('search gmail for "password reset" and open it', {"family": "open_mail", "slots": {"query": "password reset"}}),
        ("search my email for invoice and open the first one", {"family": "open_mail", "slots": {"query": "invoice"}}),
    ],
)
@pytest.mark.parametrize("perturbation", [0, 2])
def test_phrasings_parse_and_the_expert_solves_them(text: str, last: dict[str, object], perturbation: int) -> None:
    intent = explain_instruction(text).intent
    assert intent is not None
    parts = json.loads(intent.get("plan")) if intent.family == "compound" else [{"family": intent.family, "slots": intent.slots}]
    assert parts[-1] == last
    env = SimEnv(taskset="phone", perturbation=perturbation)
    ok, _, reason = run_expert_episode(env, task_from_instruction(text, taskset="phone"), seed=1)
    assert ok, reason


def test_a_searched_mail_arrives_when_none_matches_and_only_the_first_result_counts() -> None:
    env = SimEnv(taskset="phone", perturbation=0)
    env.reset(seed=0, options={"task": spec_for("t", Intent("open_mail", {"query": "zebra permit"}), task_id="t")})
    g: Any = env.phone.apps["gmail"]
    assert g.received and "Zebra Permit" in g.received[0][1]
    env.phone.fg = "gmail"
    g.search = ("results", "zebra permit")
    g.open_mail = 1
    assert not check(env.phone, env.ctx)
    g.open_mail = 0
    assert check(env.phone, env.ctx)


def test_the_latest_thread_is_the_one_on_top_at_the_start() -> None:
    env = SimEnv(taskset="phone", perturbation=0)
    env.reset(seed=0, options={"task": spec_for("t", Intent("latest_thread"), task_id="t")})
    m: Any = env.phone.apps["messages"]
    env.phone.fg = "messages"
    m.open_thread(m.order[1])
    assert not check(env.phone, env.ctx)
    m.page = "list"
    m.open_thread(env.ctx.initial["latest"])
    assert check(env.phone, env.ctx)


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("what do i have on friday", "2024-06-07"),
        ("show me my calendar for tomorrow", "2024-06-05"),
        ("what's on my calendar today", "2024-06-04"),
        ("what's on my schedule for july 2", "2024-07-02"),
    ],
)
def test_a_days_agenda(text: str, day: str) -> None:
    assert explain_instruction(text).intent == Intent("calendar_day", {"date": day})
    env = SimEnv(taskset="phone", perturbation=2)
    ok, _, reason = run_expert_episode(env, task_from_instruction(text, taskset="phone"), seed=0)
    assert ok, reason


def test_a_filler_step_is_dropped() -> None:
    found = explain_instruction("turn on airplane mode, wait, turn it off")
    assert found.intent is not None and found.intent.family == "compound"
    assert [p["slots"]["state"] for p in json.loads(found.intent.get("plan"))] == ["on", "off"]


@pytest.mark.parametrize(
    ("text", "body"),
    [
        ("read my last message and reply ok", "ok"),
        ("reply to my last text saying on my way", "on my way"),
        ("reply yes to my latest message", "yes"),
    ],
)
def test_replying_in_the_newest_conversation(text: str, body: str) -> None:
    intent = explain_instruction(text).intent
    assert intent is not None
    parts = json.loads(intent.get("plan")) if intent.family == "compound" else [{"family": intent.family, "slots": intent.slots}]
    assert parts[-1] == {"family": "reply_latest", "slots": {"body": body}}
    env = SimEnv(taskset="phone", perturbation=1)
    ok, _, reason = run_expert_episode(env, task_from_instruction(text, taskset="phone"), seed=2)
    assert ok, reason
