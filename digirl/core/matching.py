"""The Android-in-the-Wild action-matching metric, for offline (step-wise) action accuracy.

This re-implements the rules of AitW's ``action_matching.py`` (google-research
``android_in_the_wild``, vendored by Auto-UI in cooelf/Auto-GUI) on :class:`Action` values:

* a tap and a swipe never match; "tap" means touch and lift within 0.04 (``Action.is_tap``);
* two taps match when their touch points lie within ``tap_distance`` (0.14, "14% of the screen")
  Euclidean distance in normalized coordinates, **or** both fall inside the same UI element box
  after the box is enlarged by ``box_augment`` (1.4) about its centre;
* two swipes match when they move along the same primary axis (AitW) — by default here, when
  they also move the same way (see ``swipe_rule``);
* any other pair matches when the action types are equal; for TYPE the typed texts must also be
  equal after :func:`normalize_typed_text` (see ``match_typed_text``);
* INVALID never matches anything, not even another INVALID.

Two defaults are stricter than AitW's own check, which compares only action types for TYPE and
only the axis for swipes; ``match_typed_text=False, swipe_rule="axis"`` reproduces AitW exactly.
This metric is *not* the online task success that DigiRL reports; the two are not comparable.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from digirl.core.actions import Action, ActionType
from digirl.core.types import UIElement

__all__ = [
    "BOX_AUGMENT",
    "TAP_MATCH_DISTANCE",
    "action_match_accuracy",
    "actions_match",
    "enlarged_bounds",
    "normalize_typed_text",
]

#: AitW ``_TAP_DISTANCE_THRESHOLD``: taps this close (normalized Euclidean distance) match.
TAP_MATCH_DISTANCE = 0.14
#: AitW ``ANNOTATION_{WIDTH,HEIGHT}_AUGMENT_FRACTION``: boxes grow by this fraction of their size.
BOX_AUGMENT = 1.4

SwipeRule = Literal["direction", "axis"]
StepTriple = tuple[Action, Action, Sequence[UIElement] | None]
StepPair = tuple[Action, Action]


def normalize_typed_text(text: str) -> str:
    """Lower-case, collapse runs of whitespace to one space, strip, then strip trailing punctuation.

    Punctuation is any Unicode ``P*`` character (``.,!?;:'"`` and the like); whitespace left in
    front of it is stripped too, so ``"Hello  World !"`` and ``"hello world"`` are equal.
    """
    t = " ".join(text.lower().split())
    end = len(t)
    while end > 0 and (t[end - 1] == " " or unicodedata.category(t[end - 1]).startswith("P")):
        end -= 1
    return t[:end]


def enlarged_bounds(element: UIElement, augment: float = BOX_AUGMENT) -> tuple[float, float, float, float]:
    """``element.bounds`` grown by ``augment`` × its width and height, about its centre, clipped to [0, 1].

    This follows AitW's ``_resize_annotation_bounding_boxes``: ``augment = 1.4`` adds 140% of the
    width and of the height ("240% total" in AitW's words). AitW clips the top-left corner at 0
    without shrinking the box, which shifts clipped boxes slightly; here each side is clipped.
    """
    x0, y0, x1, y1 = element.bounds
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    hw = (x1 - x0) * (1.0 + augment) / 2
    hh = (y1 - y0) * (1.0 + augment) / 2
    return (max(0.0, cx - hw), max(0.0, cy - hh), min(1.0, cx + hw), min(1.0, cy + hh))


def _in_box(x: float, y: float, box: tuple[float, float, float, float]) -> bool:
    return box[0] <= x <= box[2] and box[1] <= y <= box[3]  # inclusive edges, as AitW


def actions_match(
    pred: Action,
    gold: Action,
    *,
    elements: Sequence[UIElement] | None = None,
    tap_distance: float = TAP_MATCH_DISTANCE,
    box_augment: float = BOX_AUGMENT,
    match_typed_text: bool = True,
    swipe_rule: SwipeRule = "direction",
) -> bool:
    """Whether ``pred`` counts as the same action as ``gold`` under the AitW matching rules.

    Args:
        pred: The predicted action (often parsed model output; INVALID never matches).
        gold: The reference action.
        elements: UI elements of the gold screen; taps inside the same enlarged box match.
        tap_distance: Taps match within this Euclidean distance in normalized coordinates. AitW
            measures it on normalized ``(y, x)`` points; the Euclidean distance is the same in
            ``(x, y)`` order. On a non-square screen "14%" is of each side, not of pixels.
        box_augment: Fraction of an element's width/height added to it (AitW: 1.4 → 240% size).
        match_typed_text: TYPE actions must also agree on :func:`normalize_typed_text`.
        swipe_rule: ``"direction"`` (default): swipes match when ``Action.swipe_direction`` is
            equal. ``"axis"``: when the primary axis is equal (AitW; up matches down).
    """
    if not isinstance(pred, Action) or not isinstance(gold, Action):
        got = f"{type(pred).__name__} and {type(gold).__name__}"
        raise TypeError(f"actions_match takes two Actions, got {got}")
    if not (math.isfinite(tap_distance) and tap_distance >= 0):
        raise ValueError(f"tap_distance must be a finite number >= 0, got {tap_distance}")
    if not (math.isfinite(box_augment) and box_augment >= 0):
        raise ValueError(f"box_augment must be a finite number >= 0, got {box_augment}")
    if swipe_rule not in ("direction", "axis"):
        raise ValueError(f"swipe_rule must be 'direction' or 'axis', got {swipe_rule!r}")

    if not pred.is_valid or not gold.is_valid:
        return False
    if pred.type is not ActionType.DUAL_POINT or gold.type is not ActionType.DUAL_POINT:
        if pred.type is not gold.type:
            return False
        if pred.type is ActionType.TYPE and match_typed_text:
            return normalize_typed_text(pred.text) == normalize_typed_text(gold.text)
        return True
    if pred.is_tap != gold.is_tap:
        return False
    if pred.is_tap:
        assert pred.touch is not None and gold.touch is not None
        (px, py), (gx, gy) = pred.touch, gold.touch
        if math.hypot(px - gx, py - gy) <= tap_distance:
            return True
        for el in elements or ():
            box = enlarged_bounds(el, box_augment)
            if _in_box(px, py, box) and _in_box(gx, gy, box):
                return True
        return False
    pd, gd = pred.swipe_direction, gold.swipe_direction
    assert pd is not None and gd is not None
    if swipe_rule == "direction":
        return pd is gd
    vertical = ("up", "down")
    return (pd.value in vertical) == (gd.value in vertical)


def action_match_accuracy(
    episodes: Iterable[Sequence[StepTriple | StepPair]],
    *,
    tap_distance: float = TAP_MATCH_DISTANCE,
    box_augment: float = BOX_AUGMENT,
    match_typed_text: bool = True,
    swipe_rule: SwipeRule = "direction",
) -> dict[str, Any]:
    """Step and episode accuracy over episodes of ``(pred, gold, elements)`` (or ``(pred, gold)``) steps.

    Returns a JSON-ready dict:

    * ``partial_match``: correct steps / all steps (pooled over episodes, as Auto-UI reports);
    * ``partial_match_episode_mean``: the mean over episodes of each episode's fraction correct;
    * ``complete_match``: fraction of episodes whose every step matches;
    * ``type_match``: fraction of steps whose action types are equal (Auto-UI's "type accuracy");
    * ``invalid_rate``: fraction of predictions that are INVALID;
    * ``episodes``, ``steps``, ``correct_steps``, ``complete_episodes``;
    * ``by_gold_kind``: ``{kind: {"steps", "correct", "accuracy"}}`` keyed by ``gold.kind``.

    Raises ``ValueError`` for no episodes, an empty episode or a malformed step.
    """
    n_eps = n_steps = n_correct = n_complete = n_type = n_invalid = 0
    frac_sum = 0.0
    by_kind: dict[str, list[int]] = {}
    for ei, episode in enumerate(episodes):
        if len(episode) == 0:
            raise ValueError(f"episode {ei} has no steps")
        ep_correct = 0
        for si, step in enumerate(episode):
            if not isinstance(step, tuple) or len(step) not in (2, 3):
                shown = repr(step)[:80]
                raise ValueError(f"episode {ei} step {si}: expected (pred, gold[, elements]), got {shown}")
            pred, gold = step[0], step[1]
            elements = step[2] if len(step) == 3 else None
            ok = actions_match(
                pred,
                gold,
                elements=elements,
                tap_distance=tap_distance,
                box_augment=box_augment,
                match_typed_text=match_typed_text,
                swipe_rule=swipe_rule,
            )
            ep_correct += ok
            n_type += pred.type is gold.type
            n_invalid += not pred.is_valid
            counts = by_kind.setdefault(gold.kind, [0, 0])
            counts[0] += 1
            counts[1] += ok
        n_eps += 1
        n_steps += len(episode)
        n_correct += ep_correct
        n_complete += ep_correct == len(episode)
        frac_sum += ep_correct / len(episode)
    if n_eps == 0:
        raise ValueError("action_match_accuracy needs at least one episode")
    return {
        "partial_match": n_correct / n_steps,
        "partial_match_episode_mean": frac_sum / n_eps,
        "complete_match": n_complete / n_eps,
        "type_match": n_type / n_steps,
        "invalid_rate": n_invalid / n_steps,
        "episodes": n_eps,
        "steps": n_steps,
        "correct_steps": n_correct,
        "complete_episodes": n_complete,
        "by_gold_kind": {k: {"steps": s, "correct": c, "accuracy": c / s} for k, (s, c) in sorted(by_kind.items())},
    }
