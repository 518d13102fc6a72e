"""The device action space of Android-in-the-Wild / DigiRL as one immutable value.

Coordinates are normalized to [0, 1] and stored as ``(x, y)``: x grows to the right, y grows
downwards. (Auto-UI text writes points as ``[y, x]``; its codec swaps them at the boundary.)
Coordinates are rounded to :data:`COORD_DECIMALS` places on construction so that every text
format that writes that many decimals round-trips exactly.

Constructors validate and raise :class:`ValueError`; code that turns *model output* into an
action must use a codec (``digirl.core.codecs``), which never raises and returns
:meth:`Action.invalid` instead.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from enum import Enum
from typing import Any

__all__ = [
    "COORD_DECIMALS",
    "MAX_TEXT_LEN",
    "TAP_DISTANCE",
    "Action",
    "ActionType",
    "Point",
    "SwipeDirection",
]

#: Touch and lift within this Euclidean distance make a tap, otherwise a swipe (AitW's value).
TAP_DISTANCE = 0.04
#: Decimal places kept for normalized coordinates (Auto-UI writes four).
COORD_DECIMALS = 4
#: Longest typed text accepted; longer model output becomes an invalid action.
MAX_TEXT_LEN = 512

Point = tuple[float, float]
# Coordinates are rounded to 1e-4, so float error must not decide tap vs swipe at exactly 0.04.
_EPS = 1e-9


def _clamp01(v: float) -> float:
    return min(1.0, max(0.0, v))


class ActionType(str, Enum):
    """Action types. Values are the AitW names; ``INVALID`` marks unparseable model output."""

    DUAL_POINT = "DUAL_POINT"
    TYPE = "TYPE"
    PRESS_BACK = "PRESS_BACK"
    PRESS_HOME = "PRESS_HOME"
    PRESS_ENTER = "PRESS_ENTER"
    STATUS_TASK_COMPLETE = "STATUS_TASK_COMPLETE"
    STATUS_TASK_IMPOSSIBLE = "STATUS_TASK_IMPOSSIBLE"
    INVALID = "INVALID"

    @property
    def aitw_id(self) -> int | None:
        """The integer id of this type in the AitW dataset (``None`` for INVALID)."""
        return _AITW_IDS.get(self)


_AITW_IDS = {
    ActionType.TYPE: 3,
    ActionType.DUAL_POINT: 4,
    ActionType.PRESS_BACK: 5,
    ActionType.PRESS_HOME: 6,
    ActionType.PRESS_ENTER: 7,
    ActionType.STATUS_TASK_COMPLETE: 10,
    ActionType.STATUS_TASK_IMPOSSIBLE: 11,
}


class SwipeDirection(str, Enum):
    """Direction a finger moves. Swiping *up* scrolls content down (reveals what is below)."""

    UP = "up"
    DOWN = "down"
    LEFT = "left"
    RIGHT = "right"


def _check_point(name: str, p: Any) -> Point:
    if not isinstance(p, (tuple, list)) or len(p) != 2:
        raise ValueError(f"{name} must be a pair (x, y), got {p!r}")
    out = []
    for v in p:
        if isinstance(v, bool) or not isinstance(v, numbers.Real):  # numpy/torch scalars are Real too
            raise ValueError(f"{name} coordinates must be numbers, got {p!r}")
        fv = float(v)
        if not math.isfinite(fv):
            raise ValueError(f"{name} has a non-finite coordinate: {p!r}")
        if fv < 0.0 or fv > 1.0:
            raise ValueError(f"{name} must lie in [0, 1] (normalized), got {p!r}")
        out.append(round(fv, COORD_DECIMALS) + 0.0)  # + 0.0 turns -0.0 into 0.0
    return (out[0], out[1])


def _check_text(text: Any) -> str:
    if not isinstance(text, str):
        raise ValueError(f"typed text must be a string, got {type(text).__name__}")
    if text == "":
        raise ValueError("typed text is empty")
    if len(text) > MAX_TEXT_LEN:
        raise ValueError(f"typed text has {len(text)} characters, more than {MAX_TEXT_LEN}")
    return text


@dataclass(frozen=True, slots=True)
class Action:
    """One device action. Build it with the classmethods (``Action.tap(0.5, 0.3)``)."""

    type: ActionType
    touch: Point | None = None
    lift: Point | None = None
    text: str = ""
    #: For INVALID: why the text could not be parsed.
    error: str = ""

    def __post_init__(self) -> None:
        t = self.type
        if not isinstance(t, ActionType):
            object.__setattr__(self, "type", ActionType(t))
            t = self.type
        if t is ActionType.DUAL_POINT:
            if self.touch is None or self.lift is None:
                raise ValueError("DUAL_POINT needs touch and lift points")
            object.__setattr__(self, "touch", _check_point("touch", self.touch))
            object.__setattr__(self, "lift", _check_point("lift", self.lift))
            if self.text:
                raise ValueError("DUAL_POINT carries no text")
        else:
            if self.touch is not None or self.lift is not None:
                raise ValueError(f"{t.value} carries no points")
            if t is ActionType.TYPE:
                object.__setattr__(self, "text", _check_text(self.text))
            elif t is ActionType.INVALID:
                if not isinstance(self.text, str):
                    raise ValueError("INVALID keeps the raw text as a string")
                if not self.error:
                    object.__setattr__(self, "error", "invalid")
            elif self.text:
                raise ValueError(f"{t.value} carries no text")
        if self.error and t is not ActionType.INVALID:
            raise ValueError("only INVALID actions carry an error")

    # ----------------------------------------------------------------- constructors
    @classmethod
    def dual_point(cls, touch: Point, lift: Point) -> Action:
        return cls(ActionType.DUAL_POINT, touch=touch, lift=lift)

    @classmethod
    def tap(cls, x: float, y: float) -> Action:
        return cls(ActionType.DUAL_POINT, touch=(x, y), lift=(x, y))

    @classmethod
    def swipe(cls, start: Point, end: Point) -> Action:
        return cls(ActionType.DUAL_POINT, touch=start, lift=end)

    @classmethod
    def scroll(cls, direction: SwipeDirection | str, *, center: Point = (0.5, 0.5), length: float = 0.4) -> Action:
        """A swipe of ``length`` through ``center`` whose *finger* moves in ``direction``.

        The gesture is clamped to the screen; it must stay longer than a tap.
        """
        d = SwipeDirection(direction)
        cx, cy = _check_point("center", center)
        if not (isinstance(length, numbers.Real) and TAP_DISTANCE < float(length) <= 1.0):
            raise ValueError(f"scroll length must be in ({TAP_DISTANCE}, 1], got {length!r}")
        h = float(length) / 2
        dx, dy = {
            SwipeDirection.UP: (0.0, -h),
            SwipeDirection.DOWN: (0.0, h),
            SwipeDirection.LEFT: (-h, 0.0),
            SwipeDirection.RIGHT: (h, 0.0),
        }[d]
        start = (_clamp01(cx - dx), _clamp01(cy - dy))
        end = (_clamp01(cx + dx), _clamp01(cy + dy))
        action = cls.swipe(start, end)
        if not action.is_swipe:
            raise ValueError(f"scroll through {center} is shorter than a tap once clamped to the screen")
        return action

    @classmethod
    def type_text(cls, text: str) -> Action:
        return cls(ActionType.TYPE, text=text)

    @classmethod
    def back(cls) -> Action:
        return cls(ActionType.PRESS_BACK)

    @classmethod
    def home(cls) -> Action:
        return cls(ActionType.PRESS_HOME)

    @classmethod
    def enter(cls) -> Action:
        return cls(ActionType.PRESS_ENTER)

    @classmethod
    def complete(cls) -> Action:
        return cls(ActionType.STATUS_TASK_COMPLETE)

    @classmethod
    def impossible(cls) -> Action:
        return cls(ActionType.STATUS_TASK_IMPOSSIBLE)

    @classmethod
    def invalid(cls, raw: str, error: str = "unparseable action") -> Action:
        """An action that could not be parsed; ``raw`` keeps the model text it came from."""
        return cls(ActionType.INVALID, text=raw if isinstance(raw, str) else repr(raw), error=error or "invalid")

    # ----------------------------------------------------------------- properties
    @property
    def is_valid(self) -> bool:
        return self.type is not ActionType.INVALID

    @property
    def is_tap(self) -> bool:
        return self.type is ActionType.DUAL_POINT and self.gesture_length <= TAP_DISTANCE + _EPS

    @property
    def is_swipe(self) -> bool:
        return self.type is ActionType.DUAL_POINT and self.gesture_length > TAP_DISTANCE + _EPS

    @property
    def ends_episode(self) -> bool:
        return self.type in (ActionType.STATUS_TASK_COMPLETE, ActionType.STATUS_TASK_IMPOSSIBLE)

    @property
    def gesture_length(self) -> float:
        if self.touch is None or self.lift is None:
            return 0.0
        return math.hypot(self.lift[0] - self.touch[0], self.lift[1] - self.touch[1])

    @property
    def swipe_direction(self) -> SwipeDirection | None:
        """Direction the finger moved along its primary axis, or ``None`` for a non-swipe."""
        if not self.is_swipe:
            return None
        assert self.touch is not None and self.lift is not None
        dx = self.lift[0] - self.touch[0]
        dy = self.lift[1] - self.touch[1]
        if abs(dx) > abs(dy):
            return SwipeDirection.RIGHT if dx > 0 else SwipeDirection.LEFT
        return SwipeDirection.DOWN if dy > 0 else SwipeDirection.UP

    @property
    def kind(self) -> str:
        """A short name used in metrics: tap, swipe, type, back, home, enter, complete, impossible, invalid."""
        if self.type is ActionType.DUAL_POINT:
            return "tap" if self.is_tap else "swipe"
        return _KIND[self.type]

    def __str__(self) -> str:
        if self.type is ActionType.DUAL_POINT:
            assert self.touch is not None and self.lift is not None
            if self.is_tap:
                return f"tap({self.touch[0]:.4f}, {self.touch[1]:.4f})"
            return f"swipe({self.touch[0]:.4f}, {self.touch[1]:.4f} -> {self.lift[0]:.4f}, {self.lift[1]:.4f})"
        if self.type is ActionType.TYPE:
            return f"type({self.text!r})"
        if self.type is ActionType.INVALID:
            return f"invalid({self.error}: {self.text[:40]!r})"
        return self.kind


_KIND = {
    ActionType.TYPE: "type",
    ActionType.PRESS_BACK: "back",
    ActionType.PRESS_HOME: "home",
    ActionType.PRESS_ENTER: "enter",
    ActionType.STATUS_TASK_COMPLETE: "complete",
    ActionType.STATUS_TASK_IMPOSSIBLE: "impossible",
    ActionType.INVALID: "invalid",
}
