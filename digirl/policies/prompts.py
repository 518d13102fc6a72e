"""Prompts of text-generating policies: Auto-UI's input text and the API policy's chat templates.

Pure string building (no torch), shared by ``kind=autoui`` and ``kind=api``. Actions in a prompt are
written by the same codecs that parse the answers (:mod:`digirl.core.codecs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from digirl.core.actions import Action, ActionType
from digirl.core.codecs import format_action

__all__ = ["TEMPLATES", "ChatTemplate", "autoui_decision", "autoui_prompt", "history_text", "template_for"]

_DECISION = "Action Decision: "


def autoui_decision(action: Action) -> str:
    """The ``"action_type": ..., "typed_text": ...`` part of an action's Auto-UI text (no plan)."""
    text = format_action(action, "autoui")
    return text[text.index(_DECISION) + len(_DECISION) :]


def autoui_prompt(instruction: str, history: Sequence[Action], history_len: int) -> str:
    """Auto-UI's input text: ``Previous Actions: <decision> <decision> Goal: <instruction></s>``.

    The last ``history_len`` valid actions, oldest first, each followed by a space, as DigiRL writes
    its Auto-UI prompts (DigiRL keeps one); INVALID actions are left out (the model never saw them).
    The trailing ``</s>`` is part of the text in DigiRL's prompts, so it is kept here too.
    """
    valid = [a for a in history if a.type is not ActionType.INVALID]
    shown = valid[-history_len:] if history_len > 0 else []
    return "Previous Actions: " + "".join(f"{autoui_decision(a)} " for a in shown) + f"Goal: {instruction}</s>"


def history_text(history: Sequence[Action], history_len: int, codec: str) -> str:
    """The last ``history_len`` actions, oldest first, one per line in ``codec``'s text ('none' when empty).

    INVALID actions are written as ``INVALID`` so a model sees that its answer could not be read.
    """
    shown = list(history)[-history_len:] if history_len > 0 else []
    if not shown:
        return "none"
    lines = []
    for i, a in enumerate(shown, start=len(history) - len(shown) + 1):
        lines.append(
            f"{i}. " + ("INVALID (the answer could not be parsed)" if a.type is ActionType.INVALID else format_action(a, codec))
        )
    return "\n".join(lines)


@dataclass(frozen=True)
class ChatTemplate:
    """A system message ('' = none) and a user text with ``{instruction}``, ``{history}``, ``{step}``."""

    system: str
    user: str


_JSON_SYSTEM = """You operate an Android phone to complete the user's task, one action at a time, from screenshots.
Coordinates are normalized to [0, 1]: x grows to the right, y grows downwards; (0, 0) is the top-left corner.
Answer with exactly one JSON object and nothing else, one of:
{"type": "DUAL_POINT", "touch": [x, y], "lift": [x, y]}   a tap (touch == lift) or a swipe from touch to lift
{"type": "TYPE", "text": "..."}                           type text into the focused field
{"type": "PRESS_BACK"}   {"type": "PRESS_HOME"}   {"type": "PRESS_ENTER"}
{"type": "STATUS_TASK_COMPLETE"}                          the task is done
{"type": "STATUS_TASK_IMPOSSIBLE"}                        the task cannot be done"""

_JSON_USER = """Task: {instruction}
Previous actions:
{history}
This is step {step}; the screenshot shows the current screen. What is the next action?"""

#: Built-in templates. ``autoui`` sends Auto-UI's own input text; ``cogagent`` sends the grounding
#: question DigiRL sends to CogAgent (no history, as DigiRL does).
TEMPLATES: dict[str, ChatTemplate] = {
    "json": ChatTemplate(_JSON_SYSTEM, _JSON_USER),
    "autoui": ChatTemplate("", "{autoui_prompt}"),
    "cogagent": ChatTemplate("", 'What steps do I need to take to "{instruction}"?(with grounding)'),
}


def template_for(name: str, codec: str) -> ChatTemplate:
    """The built-in template ``name`` (``auto``: the one for ``codec``)."""
    key = codec if name == "auto" else name
    try:
        return TEMPLATES[key]
    except KeyError:
        raise ValueError(f"unknown prompt template {name!r}; built-in: auto, {', '.join(TEMPLATES)}") from None
