"""A note in a notes app (newer surfaces): ``create_note`` (``app`` the notes app as said, default
Keep Notes; ``title``; ``body``, either may be empty but not both): the app holds a new note whose
title is the one asked (ignoring case and punctuation) and whose text has the body's words."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from digirl.core.actions import Action
from digirl.sim.content import words
from digirl.sim.family_registry import builtin_family
from digirl.sim.goals import TaskContext
from digirl.sim.intents import Intent
from digirl.sim.plans import ExpertStep

if TYPE_CHECKING:
    import numpy as np

    from digirl.sim.phone import Phone

__all__ = ["DEFAULT_NOTES_APP"]

#: The notes app a request that names none uses.
DEFAULT_NOTES_APP = "Keep Notes"


def _key(intent: Intent) -> str:
    from digirl.sim.apps import resolve_app

    return resolve_app(intent.get("app") or DEFAULT_NOTES_APP)


def _notes(phone: Phone, intent: Intent) -> Any:
    app: Any = phone.apps[_key(intent)]  # a GenericApp of a notes app
    return app.notes


def _install(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    from digirl.sim.apps.notes import NOTES_APPS

    if _key(intent) not in NOTES_APPS:
        raise ValueError(f"{intent.get('app')!r} is not a notes app of the simulated phone")
    if not (intent.get("title") or intent.get("body")):
        raise ValueError("a note needs a title or a text")
    phone.install(intent.get("app") or DEFAULT_NOTES_APP)
    ctx.initial["notes"] = len(_notes(phone, intent).notes)


def _same(a: str, b: str) -> bool:
    return words(a) == words(b)


def _noted(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    """A note was added whose title is the one asked and whose text has every word of the body."""
    notes = _notes(phone, intent).notes
    new = notes[: len(notes) - int(ctx.initial.get("notes", len(notes)))]
    want = set(words(intent.get("body")))
    return any(_same(t, intent.get("title")) and want <= set(words(b)) for t, b in new)


@builtin_family("create_note", "phone", predicate=_noted, setup=_install, doc="the notes app holds the new note")
def _note_plan(e: ExpertStep) -> Action:
    key = _key(e.intent)
    step = e.open_app(key)
    if step is not None:
        return step
    app: Any = e.phone.apps[key]  # a GenericApp with its notes (NotesState)
    if not app.notes.editing:
        return e.goto(f"{key}.new") or Action.back()
    title, body = e.intent.get("title"), e.intent.get("body")
    if not _same(app.fields.get("title", ""), title):
        return e.type_into(app, "title", f"{key}.edit.title", title, submit=False)
    if not _same(app.fields.get("body", ""), body):
        return e.type_into(app, "body", f"{key}.edit.body", body, submit=False)
    return e.goto(f"{key}.edit.save") or Action.back()
