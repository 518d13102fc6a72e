"""AitW action matching: hand-computed thresholds, box enlargement, swipes, text normalization."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from digirl.core.actions import Action
from digirl.core.matching import (
    BOX_AUGMENT,
    TAP_MATCH_DISTANCE,
    action_match_accuracy,
    actions_match,
    enlarged_bounds,
    normalize_typed_text,
)
from digirl.core.types import UIElement


def test_constants_are_aitw_values() -> None:
    assert TAP_MATCH_DISTANCE == 0.14
    assert BOX_AUGMENT == 1.4


# ------------------------------------------------------------------------------------------ taps
@pytest.mark.parametrize(
    ("pred", "expected"),
    [
        (Action.tap(0.5, 0.639), True),  # 0.139 straight down
        (Action.tap(0.5, 0.641), False),  # 0.141
        (Action.tap(0.361, 0.5), True),  # 0.139 to the left
        (Action.tap(0.359, 0.5), False),  # 0.141
        (Action.tap(0.5983, 0.5983), True),  # diagonal: 0.0983·√2 = 0.13902
        (Action.tap(0.5997, 0.5997), False),  # diagonal: 0.0997·√2 = 0.14100 (> 0.14 by 4e-6)
        (Action.tap(0.5, 0.5), True),
    ],
)
def test_tap_distance_threshold(pred: Action, expected: bool) -> None:
    gold = Action.tap(0.5, 0.5)
    assert actions_match(pred, gold) is expected
    assert actions_match(gold, pred) is expected  # symmetric


def test_tap_distance_is_a_parameter() -> None:
    gold, pred = Action.tap(0.5, 0.5), Action.tap(0.5, 0.65)  # 0.15 apart
    assert not actions_match(pred, gold)
    assert actions_match(pred, gold, tap_distance=0.2)
    assert not actions_match(Action.tap(0.5, 0.51), gold, tap_distance=0.0)


# A 0.10 × 0.05 button centred at (0.45, 0.425). Enlarged by 1.4 (to 240%): half-sizes
# 0.10·2.4/2 = 0.12 and 0.05·2.4/2 = 0.06, so x ∈ [0.33, 0.57] and y ∈ [0.365, 0.485].
BUTTON = UIElement(bounds=(0.4, 0.4, 0.5, 0.45), text="OK", kind="button")


def test_enlarged_bounds_follows_aitw() -> None:
    assert enlarged_bounds(BUTTON) == pytest.approx((0.33, 0.365, 0.57, 0.485))
    assert enlarged_bounds(BUTTON, 0.0) == pytest.approx(BUTTON.bounds)
    # clipped to the screen at the corner
    corner = UIElement(bounds=(0.0, 0.0, 0.1, 0.1))
    assert enlarged_bounds(corner) == pytest.approx((0.0, 0.0, 0.17, 0.17))


def test_taps_in_the_same_enlarged_box_match() -> None:
    gold = Action.tap(0.34, 0.37)
    pred = Action.tap(0.56, 0.48)  # hypot(0.22, 0.11) = 0.246 apart: too far by distance alone
    assert not actions_match(pred, gold)
    assert actions_match(pred, gold, elements=[BUTTON])
    assert actions_match(gold, pred, elements=(BUTTON,))
    # 0.01 outside the enlarged box in x
    assert not actions_match(Action.tap(0.58, 0.48), gold, elements=[BUTTON])
    # the raw (un-enlarged) box does not contain gold
    assert not actions_match(pred, gold, elements=[BUTTON], box_augment=0.0)


def test_box_enlargement_is_aitw_fraction_not_total_factor() -> None:
    # x = 0.55 is outside a box scaled 1.4× in total (x ∈ [0.38, 0.52]) but inside AitW's 240% box.
    gold, pred = Action.tap(0.41, 0.42), Action.tap(0.55, 0.42)  # 0.14 + float error apart
    assert not actions_match(pred, gold, tap_distance=0.13)
    assert actions_match(pred, gold, elements=[BUTTON], tap_distance=0.13)
    assert not actions_match(pred, gold, elements=[BUTTON], tap_distance=0.13, box_augment=0.4)


def test_taps_in_different_boxes_do_not_match() -> None:
    left = UIElement(bounds=(0.0, 0.9, 0.1, 1.0))
    right = UIElement(bounds=(0.9, 0.9, 1.0, 1.0))
    assert not actions_match(Action.tap(0.05, 0.95), Action.tap(0.95, 0.95), elements=[left, right])


def test_box_edges_are_inclusive() -> None:
    box = UIElement(bounds=(0.25, 0.25, 0.75, 0.75))
    # enlarged with augment 0 it is the box itself; both taps sit exactly on opposite edges
    assert actions_match(Action.tap(0.25, 0.5), Action.tap(0.75, 0.5), elements=[box], box_augment=0.0)


# ------------------------------------------------------------------------------------------ tap vs swipe
def test_tap_never_matches_swipe() -> None:
    tap = Action.tap(0.5, 0.5)
    swipe = Action.swipe((0.5, 0.5), (0.5, 0.56))  # same touch point, length 0.06 > 0.04
    assert swipe.is_swipe
    assert not actions_match(swipe, tap)
    assert not actions_match(tap, swipe)
    assert not actions_match(swipe, tap, elements=[UIElement(bounds=(0.0, 0.0, 1.0, 1.0))])


def test_short_gesture_is_a_tap() -> None:
    jitter = Action.dual_point((0.5, 0.5), (0.52, 0.5))  # 0.02 < 0.04: a tap
    assert actions_match(jitter, Action.tap(0.6, 0.5))  # touch points 0.1 apart


# ------------------------------------------------------------------------------------------ swipes
UP = Action.swipe((0.5, 0.8), (0.5, 0.2))
UP_SHORT = Action.swipe((0.1, 0.5), (0.12, 0.4))  # dx 0.02, dy -0.1
DOWN = Action.swipe((0.5, 0.2), (0.5, 0.8))
LEFT = Action.swipe((0.8, 0.5), (0.2, 0.55))
RIGHT = Action.swipe((0.2, 0.5), (0.9, 0.3))  # dx 0.7 > |dy| 0.2


@pytest.mark.parametrize(
    ("pred", "gold", "direction", "axis"),
    [
        (UP, UP_SHORT, True, True),
        (UP, DOWN, False, True),
        (UP, LEFT, False, False),
        (LEFT, RIGHT, False, True),
        (RIGHT, RIGHT, True, True),
        (DOWN, RIGHT, False, False),
    ],
)
def test_swipes(pred: Action, gold: Action, direction: bool, axis: bool) -> None:
    assert actions_match(pred, gold) is direction
    assert actions_match(pred, gold, swipe_rule="direction") is direction
    assert actions_match(pred, gold, swipe_rule="axis") is axis


def test_diagonal_swipe_counts_as_vertical() -> None:
    diag = Action.swipe((0.2, 0.2), (0.5, 0.5))  # |dx| == |dy|: vertical, as AitW's argmax over (y, x)
    assert actions_match(diag, DOWN)
    assert not actions_match(diag, RIGHT)


# ------------------------------------------------------------------------------------------ other types
@pytest.mark.parametrize(
    ("pred", "gold", "expected"),
    [
        (Action.back(), Action.back(), True),
        (Action.home(), Action.home(), True),
        (Action.enter(), Action.enter(), True),
        (Action.complete(), Action.complete(), True),
        (Action.impossible(), Action.impossible(), True),
        (Action.back(), Action.home(), False),
        (Action.complete(), Action.impossible(), False),
        (Action.back(), Action.tap(0.5, 0.5), False),
        (Action.tap(0.5, 0.5), Action.enter(), False),
        (Action.type_text("a"), Action.enter(), False),
    ],
)
def test_non_dual_point_types(pred: Action, gold: Action, expected: bool) -> None:
    assert actions_match(pred, gold) is expected


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("Best Buy!!!", "best buy"),
        ("  A\tB\n C  ", "a b c"),
        ("hello world .", "hello world"),
        ("what's up?", "what's up"),
        ("¿Qué tal?", "¿qué tal"),  # leading punctuation is kept
        ("a, b", "a, b"),  # inner punctuation is kept
        ("?!", ""),
    ],
)
def test_normalize_typed_text(raw: str, normalized: str) -> None:
    assert normalize_typed_text(raw) == normalized


@pytest.mark.parametrize(
    ("pred", "gold", "expected"),
    [
        ("Hello  World!", "hello world", True),
        (" hello world . ", "hello world", True),
        ("hello, world", "hello world", False),
        ("hello", "help", False),
    ],
)
def test_typed_text_must_match(pred: str, gold: str, expected: bool) -> None:
    assert actions_match(Action.type_text(pred), Action.type_text(gold)) is expected
    # AitW compares only the action type
    assert actions_match(Action.type_text(pred), Action.type_text(gold), match_typed_text=False)


# ------------------------------------------------------------------------------------------ invalid
def test_invalid_never_matches() -> None:
    bad = Action.invalid("garbage", "no action_type")
    assert not actions_match(bad, bad)
    assert not actions_match(bad, Action.back())
    assert not actions_match(Action.back(), bad)
    assert not actions_match(bad, Action.tap(0.5, 0.5), elements=[UIElement(bounds=(0.0, 0.0, 1.0, 1.0))])


def test_bad_arguments() -> None:
    with pytest.raises(TypeError, match="takes two Actions"):
        actions_match("tap", Action.back())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tap_distance"):
        actions_match(Action.back(), Action.back(), tap_distance=-0.1)
    with pytest.raises(ValueError, match="tap_distance"):
        actions_match(Action.back(), Action.back(), tap_distance=math.nan)
    with pytest.raises(ValueError, match="box_augment"):
        actions_match(Action.back(), Action.back(), box_augment=math.inf)
    with pytest.raises(ValueError, match="swipe_rule"):
        actions_match(Action.back(), Action.back(), swipe_rule="angle")  # type: ignore[arg-type]


coord = st.floats(0.0, 1.0, allow_nan=False)
valid_actions = st.one_of(
    st.builds(lambda t, lift: Action.dual_point(t, lift), st.tuples(coord, coord), st.tuples(coord, coord)),
    st.builds(Action.type_text, st.text(min_size=1, max_size=20)),
    st.sampled_from([Action.back(), Action.home(), Action.enter(), Action.complete(), Action.impossible()]),
)


@settings(max_examples=200, deadline=None)
@given(a=valid_actions, b=valid_actions, rule=st.sampled_from(["direction", "axis"]))
def test_reflexive_and_symmetric(a: Action, b: Action, rule: str) -> None:
    assert actions_match(a, a, swipe_rule=rule)  # type: ignore[arg-type]
    assert actions_match(a, b, swipe_rule=rule) == actions_match(b, a, swipe_rule=rule)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------ accuracy
def test_action_match_accuracy_hand_computed() -> None:
    ep1 = [  # 3/3 correct
        (Action.tap(0.5, 0.5), Action.tap(0.5, 0.6), None),
        (Action.type_text("Shoes"), Action.type_text("shoes"), None),
        (Action.enter(), Action.enter(), None),
    ]
    # 1/2 correct: the swipe goes the wrong way
    ep2: list[tuple[Action, Action, list[UIElement]] | tuple[Action, Action]] = [
        (Action.tap(0.34, 0.37), Action.tap(0.56, 0.48), [BUTTON]),
        (UP, DOWN),
    ]
    ep3: list[tuple[Action, Action]] = [(Action.invalid("??", "no action"), Action.complete())]  # 0/1
    out = action_match_accuracy([ep1, ep2, ep3])
    assert out["episodes"] == 3
    assert out["steps"] == 6
    assert out["correct_steps"] == 4
    assert out["complete_episodes"] == 1
    assert out["partial_match"] == pytest.approx(4 / 6)
    assert out["partial_match_episode_mean"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert out["complete_match"] == pytest.approx(1 / 3)
    assert out["type_match"] == pytest.approx(5 / 6)  # all but the INVALID step
    assert out["invalid_rate"] == pytest.approx(1 / 6)
    assert out["by_gold_kind"] == {
        "complete": {"steps": 1, "correct": 0, "accuracy": 0.0},
        "enter": {"steps": 1, "correct": 1, "accuracy": 1.0},
        "swipe": {"steps": 1, "correct": 0, "accuracy": 0.0},
        "tap": {"steps": 2, "correct": 2, "accuracy": 1.0},
        "type": {"steps": 1, "correct": 1, "accuracy": 1.0},
    }
    # AitW's own rules: the swipe (same axis) now matches
    aitw = action_match_accuracy([ep1, ep2, ep3], swipe_rule="axis", match_typed_text=False)
    assert aitw["correct_steps"] == 5
    assert aitw["complete_match"] == pytest.approx(2 / 3)


def test_action_match_accuracy_bad_input() -> None:
    with pytest.raises(ValueError, match="at least one episode"):
        action_match_accuracy([])
    with pytest.raises(ValueError, match="episode 1 has no steps"):
        action_match_accuracy([[(Action.back(), Action.back())], []])
    with pytest.raises(ValueError, match=r"episode 0 step 0: expected \(pred, gold"):
        action_match_accuracy([[Action.back()]])  # type: ignore[list-item]
