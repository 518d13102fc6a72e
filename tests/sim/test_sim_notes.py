"""A notes app (issue 42, session 24): ``create_note`` parsed from everyday phrasings and solved by the
expert; the predicate wants a new note with the asked title and the body's words; the notes screens
only with the newer surfaces."""

from __future__ import annotations

from typing import Any

import pytest

from digirl.core.actions import Action
from digirl.core.errors import UnsupportedInstructionError
from digirl.sim.env import SimEnv
from digirl.sim.intents import Intent
from digirl.sim.phone import Phone
from digirl.sim.samples import spec_for
from tests.sim.conftest import assert_expert_solves, plan_steps


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        (
            "make a note: buy batteries, tape, and lightbulbs",
            [("create_note", {"app": "", "title": "", "body": "buy batteries, tape, and lightbulbs"})],
        ),
        ("create a new note called Packing List", [("create_note", {"app": "", "title": "Packing List", "body": ""})]),
        (
            "take a note saying call the bank tomorrow",
            [("create_note", {"app": "", "title": "", "body": "call the bank tomorrow"})],
        ),
        ("note: dentist is on the 3rd", [("create_note", {"app": "", "title": "", "body": "dentist is on the 3rd"})]),
        ("add a note to bring a jacket", [("create_note", {"app": "", "title": "", "body": "bring a jacket"})]),
        (
            "make a note in keep: pick up the dry cleaning",
            [("create_note", {"app": "Keep Notes", "title": "", "body": "pick up the dry cleaning"})],
        ),
        ("open my notes", [("open_app", {"app": "Notes"})]),
        (
            "open keep, make a new list called Groceries with eggs, milk, spinach and rice",
            [
                ("open_app", {"app": "Keep Notes"}),
                ("create_note", {"app": "Keep Notes", "title": "Groceries", "body": "eggs, milk, spinach and rice"}),
            ],
        ),
    ],
)
def test_notes_phrasings_parse_and_the_expert_solves_them(text: str, steps: list[tuple[str, dict[str, str]]]) -> None:
    assert plan_steps(text) == [{"family": f, "slots": s} for f, s in steps]
    assert_expert_solves(text)


def _env(intent: Intent) -> SimEnv:
    env = SimEnv(taskset="phone", perturbation=0)
    env.reset(seed=0, options={"task": spec_for("t", intent, task_id="t")})
    return env


def _notes(env: SimEnv) -> Any:
    return env.phone.apps["x.keepnotes"].notes


def _write(env: SimEnv, title: str, body: str) -> float:
    """Keep Notes' editor open with the fields written, then the back key; the step's reward."""
    env.phone.launch("x.keepnotes")
    app: Any = env.phone.apps["x.keepnotes"]
    app.notes.open_editor(app)
    app.fields["title"], app.fields["body"] = title, body
    app.blur()  # the keyboard down: the back key reaches the editor
    _, reward, *_ = env.step(Action.back())
    return float(reward)


def test_a_note_counts_only_new_with_the_title_and_every_word_of_the_body() -> None:
    want = Intent("create_note", {"app": "", "title": "Packing List", "body": "passport, charger"})
    env = _env(want)
    assert [t for t, _ in _notes(env).notes][:1] == ["Wi-Fi at the cabin"]  # the seeded notes, none of them the task's
    assert _write(env, "Packing list", "passport") == 0.0  # a word of the body missing
    env = _env(want)
    assert _write(env, "Packing", "passport, charger") == 0.0  # another title
    env = _env(want)
    assert _write(env, "packing list!", "Passport, phone charger") > 0  # case and punctuation aside, extra words allowed


def test_back_keeps_a_written_note_and_drops_an_empty_one() -> None:
    env = _env(Intent("create_note", {"app": "", "title": "", "body": "bring a jacket"}))
    n = len(_notes(env).notes)
    _write(env, "", "")
    assert len(_notes(env).notes) == n and not _notes(env).editing
    _write(env, "", "bring a jacket")
    assert _notes(env).notes[0] == ("", "bring a jacket")


def test_notes_screens_only_with_the_newer_surfaces_and_only_for_notes_apps() -> None:
    phone = Phone()
    phone.install("Keep Notes")
    app: Any = phone.apps["x.keepnotes"]
    assert not app.is_notes() and app.screen() == "main"  # the pinned phone: the generic welcome screen
    phone.surfaces = True
    assert app.is_notes() and app.screen() == "notes"
    with pytest.raises(UnsupportedInstructionError, match="not a notes app"):
        _env(Intent("create_note", {"app": "Spotify", "title": "x", "body": ""}))
