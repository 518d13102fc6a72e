"""Action-aware inputs of Digi-Q's Q head (``algo.digiq.action_features``): what an action does, relative
to the instruction, as a few numbers the critic does not have to learn from a screen encoder.

The diagnosis in docs/digiq.md: the critic orders states but barely the candidates within one. The
candidates of a state share z_V(s); all that tells them apart is type(a), the typed text and f(s, a),
the encoder's view of a red ring drawn on the screenshot. Whether the tapped element *says what the
instruction asks for* is exactly what a small encoder trained on a few hundred labelled pairs misses.

Two levels, so a row can say what it reads:

- ``action``: from the action and the instruction only (no element list): tap position, whether the
  action types, and how much of the typed text the instruction contains.
- ``element``: also the element list (``Observation.elements``): the target element (the one
  :func:`~digirl.policies.features.element_under` picks, or the focused field when typing), its
  position, size, clickability, the overlap of its text with the instruction's words, whether it is
  the element that overlaps the instruction most, and its words (a second bag of hashed words).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from digirl.core.actions import Action, ActionType
from digirl.core.types import Observation, UIElement
from digirl.policies.features import element_texts, element_under, words

__all__ = ["ACTION_WIDTH", "ELEMENT_WIDTH", "ActionFeatureLevel", "action_aware", "aware_width", "content_words"]

ActionFeatureLevel = Literal["off", "action", "element"]

#: Numbers of the ``action`` level: tap, x, y, swipe, type, typed ∩ instruction / typed, typed ∩ instruction / instruction.
ACTION_WIDTH = 7
#: Numbers the ``element`` level adds: has target, clickable, focused, x, y, width, height, target's
#: words in the instruction (share), instruction covered (share), text inside the instruction (0/1),
#: the most-overlapping element (0/1), no text (0/1).
ELEMENT_WIDTH = 12

# Words that carry no target: an overlap on "the" or "to" says nothing about the element.
_STOP = frozenset(
    "a an and any are as at be by for from go in into is it me my of on open or please set show some the then this "
    "to turn up what with you your".split()
)


def content_words(text: str) -> set[str]:
    """Lower-cased words of ``text`` without function words."""
    return {w.lower() for w in words(text)} - _STOP


def aware_width(level: ActionFeatureLevel) -> int:
    """How many numbers :func:`action_aware` returns at ``level``."""
    return {"off": 0, "action": ACTION_WIDTH, "element": ACTION_WIDTH + ELEMENT_WIDTH}[level]


def _overlap(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a) if a else 0.0


def _target(action: Action, elements: Sequence[UIElement]) -> int | None:
    if action.type is ActionType.DUAL_POINT and not action.is_swipe and action.touch is not None:
        return element_under(elements, *action.touch)
    if action.type is ActionType.TYPE:  # typing goes to the focused field
        return next((i for i, el in enumerate(elements) if el.focused), None)
    return None


def action_aware(obs: Observation, action: Action, level: ActionFeatureLevel) -> tuple[np.ndarray, str]:
    """(numbers [aware_width(level)] in [0, 1], the target element's text — "" below ``element``)."""
    if level == "off":
        return np.zeros(0, dtype=np.float32), ""
    instr = content_words(obs.instruction)
    tap = action.type is ActionType.DUAL_POINT and not action.is_swipe and action.touch is not None
    x, y = action.touch if tap and action.touch is not None else (0.0, 0.0)
    typed = content_words(action.text) if action.type is ActionType.TYPE else set()
    out = [
        float(tap),
        x,
        y,
        float(action.type is ActionType.DUAL_POINT and action.is_swipe),
        float(action.type is ActionType.TYPE),
        _overlap(typed, instr),
        _overlap(instr, typed),
    ]
    text = ""
    if level == "element":
        els = obs.elements or ()
        texts = element_texts(els)
        i = _target(action, els)
        if i is None:
            out += [0.0] * ELEMENT_WIDTH
        else:
            el, text = els[i], texts[i]
            x0, y0, x1, y1 = el.bounds
            mine = content_words(text)
            share = _overlap(mine, instr)
            best = max((_overlap(content_words(t), instr) for t in texts), default=0.0)
            inside = bool(text.strip()) and " ".join(words(text)).lower() in " ".join(words(obs.instruction)).lower()
            out += [
                1.0,
                float(el.clickable),
                float(el.focused),
                (x0 + x1) / 2,
                (y0 + y1) / 2,
                x1 - x0,
                y1 - y0,
                share,
                _overlap(instr, mine),
                float(inside),
                float(share > 0 and share >= best),
                float(not mine),
            ]
    return np.clip(np.asarray(out, dtype=np.float32), 0.0, 1.0), text
