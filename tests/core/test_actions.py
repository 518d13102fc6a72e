"""The Action value: constructors, validation, the tap/swipe rule and derived properties."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from digirl.core.actions import (
    COORD_DECIMALS,
    MAX_TEXT_LEN,
    TAP_DISTANCE,
    Action,
    ActionType,
    SwipeDirection,
)


def test_constants() -> None:
    assert TAP_DISTANCE == 0.04  # AitW _SWIPE_DISTANCE_THRESHOLD
    assert COORD_DECIMALS == 4
    assert MAX_TEXT_LEN == 512


def test_aitw_ids() -> None:
    assert {t: t.aitw_id for t in ActionType} == {
        ActionType.DUAL_POINT: 4,
        ActionType.TYPE: 3,
        ActionType.PRESS_BACK: 5,
        ActionType.PRESS_HOME: 6,
        ActionType.PRESS_ENTER: 7,
        ActionType.STATUS_TASK_COMPLETE: 10,
        ActionType.STATUS_TASK_IMPOSSIBLE: 11,
        ActionType.INVALID: None,
    }


# ------------------------------------------------------------------------------------------ constructors
def test_tap_and_dual_point() -> None:
    a = Action.tap(0.25, 0.75)
    assert a.type is ActionType.DUAL_POINT
    assert a.touch == a.lift == (0.25, 0.75)
    assert a == Action.dual_point((0.25, 0.75), (0.25, 0.75)) == Action.swipe((0.25, 0.75), (0.25, 0.75))
    assert a.text == "" and a.error == ""


def test_coordinates_are_rounded_to_four_decimals() -> None:
    a = Action.tap(0.123456, 0.98765)
    assert a.touch == (0.1235, 0.9877)
    assert Action.tap(0.12345678, 0.5) == Action.tap(0.1235, 0.5)


def test_coordinates_are_normalized_to_float_tuples() -> None:
    a = Action.dual_point([0, 1], [1, 0])  # type: ignore[arg-type]
    assert a.touch == (0.0, 1.0) and a.lift == (1.0, 0.0)
    assert isinstance(a.touch, tuple) and all(type(v) is float for v in a.touch)
    b = Action.tap(-0.0, 0.5)
    assert b.touch is not None and math.copysign(1.0, b.touch[0]) == 1.0  # -0.0 becomes 0.0
    assert Action.tap(np.float64(0.5), 0.5) == Action.tap(0.5, 0.5)


def test_screen_corners_are_valid() -> None:
    assert Action.swipe((0.0, 0.0), (1.0, 1.0)).is_swipe


@pytest.mark.parametrize(
    ("direction", "touch", "lift"),
    [
        ("up", (0.5, 0.7), (0.5, 0.3)),
        ("down", (0.5, 0.3), (0.5, 0.7)),
        ("left", (0.7, 0.5), (0.3, 0.5)),
        ("right", (0.3, 0.5), (0.7, 0.5)),
    ],
)
def test_scroll(direction: str, touch: tuple[float, float], lift: tuple[float, float]) -> None:
    a = Action.scroll(direction)
    assert (a.touch, a.lift) == (touch, lift)
    assert a.swipe_direction is SwipeDirection(direction)
    assert Action.scroll(SwipeDirection(direction)) == a


def test_scroll_center_length_and_clamping() -> None:
    a = Action.scroll("down", center=(0.2, 0.4), length=0.2)
    assert (a.touch, a.lift) == ((0.2, 0.3), (0.2, 0.5))
    edge = Action.scroll("down", center=(0.5, 0.95))  # the lift is clamped to the screen
    assert edge.lift == (0.5, 1.0) and edge.swipe_direction is SwipeDirection.DOWN
    with pytest.raises(ValueError):
        Action.scroll("sideways")


def test_text_and_key_constructors() -> None:
    assert Action.type_text("hi") == Action(ActionType.TYPE, text="hi")
    assert Action.type_text(" ").text == " "  # whitespace is text
    assert Action.type_text("x" * MAX_TEXT_LEN).text == "x" * MAX_TEXT_LEN
    for ctor, t in [
        (Action.back, ActionType.PRESS_BACK),
        (Action.home, ActionType.PRESS_HOME),
        (Action.enter, ActionType.PRESS_ENTER),
        (Action.complete, ActionType.STATUS_TASK_COMPLETE),
        (Action.impossible, ActionType.STATUS_TASK_IMPOSSIBLE),
    ]:
        a = ctor()
        assert a.type is t and a.touch is None and a.lift is None and a.text == ""


def test_invalid() -> None:
    a = Action.invalid("blah", "no action_type")
    assert a.type is ActionType.INVALID and a.text == "blah" and a.error == "no action_type"
    assert not a.is_valid
    assert Action.invalid("x").error == "unparseable action"
    assert Action.invalid("x", "").error == "invalid"  # never an empty reason
    assert Action.invalid(None).text == "None"  # type: ignore[arg-type]
    assert Action.invalid("").text == ""


def test_type_accepts_enum_value_string() -> None:
    assert Action("PRESS_BACK") == Action.back()  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not a valid ActionType"):
        Action("TAP")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------ validation
@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Action(ActionType.DUAL_POINT), "needs touch and lift"),
        (lambda: Action(ActionType.DUAL_POINT, touch=(0.1, 0.1)), "needs touch and lift"),
        (lambda: Action.dual_point((0.1,), (0.1, 0.1)), "touch must be a pair"),  # type: ignore[arg-type]
        (lambda: Action.dual_point((0.1, 0.1), (0.1, 0.1, 0.1)), "lift must be a pair"),  # type: ignore[arg-type]
        (lambda: Action.dual_point("ab", (0.1, 0.1)), "touch must be a pair"),  # type: ignore[arg-type]
        (lambda: Action.tap("0.5", 0.5), "must be numbers"),  # type: ignore[arg-type]
        (lambda: Action.tap(True, 0.5), "must be numbers"),
        (lambda: Action.tap(None, 0.5), "must be numbers"),  # type: ignore[arg-type]
        (lambda: Action.tap(math.nan, 0.5), "non-finite"),
        (lambda: Action.tap(0.5, math.inf), "non-finite"),
        (lambda: Action.tap(1.0001, 0.5), "must lie in [0, 1]"),
        (lambda: Action.tap(0.5, -0.01), "must lie in [0, 1]"),
        (lambda: Action.swipe((0.1, 0.1), (2.0, 0.1)), "lift must lie in [0, 1]"),
        (lambda: Action(ActionType.DUAL_POINT, touch=(0, 0), lift=(0, 0), text="x"), "carries no text"),
        (lambda: Action(ActionType.TYPE, text="x", touch=(0.1, 0.1)), "TYPE carries no points"),
        (lambda: Action(ActionType.PRESS_BACK, lift=(0.1, 0.1)), "PRESS_BACK carries no points"),
        (lambda: Action(ActionType.INVALID, touch=(0.1, 0.1)), "INVALID carries no points"),
        (lambda: Action.type_text(""), "typed text is empty"),
        (lambda: Action.type_text("x" * (MAX_TEXT_LEN + 1)), "more than 512"),
        (lambda: Action.type_text(5), "must be a string"),  # type: ignore[arg-type]
        (lambda: Action(ActionType.PRESS_HOME, text="x"), "PRESS_HOME carries no text"),
        (lambda: Action(ActionType.STATUS_TASK_COMPLETE, text="done"), "carries no text"),
        (lambda: Action(ActionType.PRESS_BACK, error="oops"), "only INVALID actions carry an error"),
        (lambda: Action(ActionType.INVALID, text=3), "raw text as a string"),  # type: ignore[arg-type]
    ],
)
def test_validation_errors(build: object, message: str) -> None:
    with pytest.raises(ValueError) as ei:
        build()  # type: ignore[operator]
    assert message in str(ei.value)


def test_frozen_hashable_comparable() -> None:
    a = Action.tap(0.5, 0.5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.touch = (0.1, 0.1)  # type: ignore[misc]
    assert len({a, Action.tap(0.5, 0.5), Action.back(), Action.back()}) == 2
    assert Action.type_text("a") != Action.type_text("b")
    assert Action.invalid("x", "e1") != Action.invalid("x", "e2")


# ------------------------------------------------------------------------------------------ tap / swipe rule
@pytest.mark.parametrize(
    ("touch", "lift", "is_tap"),
    [
        ((0.5, 0.5), (0.5, 0.5), True),
        ((0.0, 0.0), (0.04, 0.0), True),  # exactly 0.04: a tap (AitW: distance <= threshold)
        ((0.0, 0.0), (0.0401, 0.0), False),
        ((0.5, 0.5), (0.52, 0.53), True),  # hypot(0.02, 0.03) = 0.036
        ((0.5, 0.5), (0.53, 0.53), False),  # 0.0424
    ],
)
def test_tap_swipe_rule(touch: tuple[float, float], lift: tuple[float, float], is_tap: bool) -> None:
    a = Action.dual_point(touch, lift)
    assert a.is_tap is is_tap
    assert a.is_swipe is (not is_tap)
    assert a.kind == ("tap" if is_tap else "swipe")
    assert a.gesture_length == pytest.approx(math.dist(touch, lift))


@pytest.mark.parametrize(
    ("lift", "direction"),
    [
        ((0.5, 0.1), SwipeDirection.UP),
        ((0.5, 0.9), SwipeDirection.DOWN),
        ((0.1, 0.5), SwipeDirection.LEFT),
        ((0.9, 0.5), SwipeDirection.RIGHT),
        ((0.8, 0.3), SwipeDirection.RIGHT),  # |dx| 0.3 > |dy| 0.2
        ((0.7, 0.7), SwipeDirection.DOWN),  # |dx| == |dy|: vertical wins
    ],
)
def test_swipe_direction(lift: tuple[float, float], direction: SwipeDirection) -> None:
    assert Action.swipe((0.5, 0.5), lift).swipe_direction is direction


def test_non_swipes_have_no_direction_or_length() -> None:
    assert Action.tap(0.5, 0.5).swipe_direction is None
    assert Action.back().swipe_direction is None
    assert Action.back().gesture_length == 0.0
    assert not Action.back().is_tap and not Action.back().is_swipe


def test_kinds_and_flags() -> None:
    kinds = {
        Action.tap(0.1, 0.1): "tap",
        Action.scroll("up"): "swipe",
        Action.type_text("a"): "type",
        Action.back(): "back",
        Action.home(): "home",
        Action.enter(): "enter",
        Action.complete(): "complete",
        Action.impossible(): "impossible",
        Action.invalid("?"): "invalid",
    }
    for a, kind in kinds.items():
        assert a.kind == kind
        assert a.ends_episode is (kind in ("complete", "impossible"))
        assert a.is_valid is (kind != "invalid")


def test_str() -> None:
    assert str(Action.tap(0.5, 0.25)) == "tap(0.5000, 0.2500)"
    assert str(Action.scroll("up")) == "swipe(0.5000, 0.7000 -> 0.5000, 0.3000)"
    assert str(Action.type_text("hi")) == "type('hi')"
    assert str(Action.back()) == "back"
    assert str(Action.impossible()) == "impossible"
    assert str(Action.invalid("x" * 50, "bad")) == f"invalid(bad: {'x' * 40!r})"


# ------------------------------------------------------------------------------- validation edge cases
def test_numpy_scalar_coordinates() -> None:
    assert Action.tap(np.float32(0.5), np.int64(0)) == Action.tap(0.5, 0.0)


def test_scroll_rejects_off_screen_center() -> None:
    with pytest.raises(ValueError):
        Action.scroll("up", center=(2.0, 2.0))


def test_scroll_rejects_tap_length() -> None:
    with pytest.raises(ValueError):
        Action.scroll("up", length=0.02)
