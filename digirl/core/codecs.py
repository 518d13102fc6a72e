"""Text codecs for the action space: model text ⇄ :class:`~digirl.core.actions.Action`.

A codec is a ``parse``/``format`` pair. ``parse`` is where model output crosses into the typed
world, so it **never raises**: anything it cannot turn into a valid action (garbage, an unknown
action type, a NaN or off-screen coordinate, empty or overlong typed text, a non-string) becomes
``Action.invalid(raw_text, reason)``. ``format`` writes one canonical string per action and raises
:class:`ValueError` for INVALID actions, which have no text form but their raw text.

Three codecs ship (``CODECS``):

``autoui``
    The Auto-UI / DigiRL output format. Points are written ``[y, x]`` (Auto-UI's order) with four
    decimals; ``parse(format(a)) == a`` for every valid action.
``cogagent``
    CogAgent's ``Grounded Operation:`` format on a 0–1000 integer grid. Lossy: ``format`` rounds
    coordinates to the 0.001 grid, so the round trip is exact only for on-grid actions.
``json``
    One compact JSON object with a fixed key order; exact round trip. Also the shape of
    :func:`action_to_dict`, which the trajectory store uses.

The ``autoui`` and ``json`` codecs take an optional :class:`CoordFrame`: the units a model writes
points in when they are not the screen's own fractions (integer pixels of a resized image, a
0–1000 grid, an image padded beyond the screen). Parsing maps the written numbers back to the
screen in the same single pass.

See ``docs/actions.md`` for the exact strings.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from digirl.core.actions import Action, ActionType, Point, SwipeDirection

__all__ = [
    "CODECS",
    "MAX_INPUT_LEN",
    "ActionCodec",
    "AutoUICodec",
    "CogAgentCodec",
    "CoordFrame",
    "JSONCodec",
    "action_from_dict",
    "action_to_dict",
    "format_action",
    "get_codec",
    "parse_action",
]

logger = logging.getLogger(__name__)

#: Longest model output a codec reads; longer text becomes INVALID (bounds parsing time).
MAX_INPUT_LEN = 65_536


@runtime_checkable
class ActionCodec(Protocol):
    """A text format for actions: ``parse`` never raises, ``format`` inverts it."""

    name: str

    def parse(self, text: str) -> Action:
        """Model text → action; unparseable text → ``Action.invalid(text, reason)``. Never raises."""
        ...

    def format(self, action: Action) -> str:
        """Action → canonical text. Raises ``ValueError`` for INVALID actions."""
        ...


class _Reject(Exception):
    """Internal: the text cannot become an action; the message is the reason."""


# ------------------------------------------------------------------------------------ shared helpers
_TYPE_ALIASES = {
    "TASK_COMPLETE": ActionType.STATUS_TASK_COMPLETE,
    "TASK_IMPOSSIBLE": ActionType.STATUS_TASK_IMPOSSIBLE,
}
_BY_AITW_ID = {t.aitw_id: t for t in ActionType if t.aitw_id is not None}
_VALID_TYPE_NAMES = ", ".join(t.value for t in ActionType if t is not ActionType.INVALID)

# Escapes written inside quoted typed text; the set JSON also uses, so the text stays readable.
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNESCAPES = {"\\": "\\", '"': '"', "'": "'", "n": "\n", "r": "\r", "t": "\t"}
_ESCAPE_RE = re.compile(r'[\\"\n\r\t]')


def _escape(text: str) -> str:
    return _ESCAPE_RE.sub(lambda m: _ESCAPES[m.group(0)], text)


def _read_quoted(s: str, i: int) -> tuple[str, int] | None:
    """Read the quoted string opening at ``s[i]``; ``(value, index after the closing quote)``.

    Unknown escapes are kept as written (backslash included). ``None`` if the quote never closes.
    """
    quote = s[i]
    out: list[str] = []
    j = i + 1
    n = len(s)
    while j < n:
        c = s[j]
        if c == "\\" and j + 1 < n:
            nxt = s[j + 1]
            out.append(_UNESCAPES.get(nxt, "\\" + nxt))
            j += 2
            continue
        if c == quote:
            return "".join(out), j + 1
        out.append(c)
        j += 1
    return None


def _read_text_value(s: str, i: int, what: str, stop: re.Pattern[str] | None = None) -> str:
    """Read typed text starting at ``s[i]`` (a quote), tolerating unescaped inner quotes.

    A well-formed escaped string is used when only whitespace, ``}`` or the next field (``stop``)
    follows it. Otherwise the model probably wrote raw quotes inside the text (``"say "hi""``), so
    the text runs to the last quote of the same kind.
    """
    got = _read_quoted(s, i)
    if got is not None:
        value, end = got
        rest = s[end:]
        if not rest.strip(" \t\r\n}") or (stop is not None and stop.match(rest)):
            return value
    last = s.rfind(s[i])
    if last <= i:
        raise _Reject(f"{what} opens a quote that never closes")
    return s[i + 1 : last]


def _number(token: str, what: str) -> float:
    try:
        v = float(token)
    except ValueError:
        raise _Reject(f"{what}: {token!r} is not a number") from None
    if not math.isfinite(v):
        raise _Reject(f"{what} has a non-finite coordinate ({token})")
    return v


def _on_screen(x: float, y: float, what: str) -> Point:
    if not (0.0 <= x <= 1.0 and 0.0 <= y <= 1.0):
        raise _Reject(f"{what} (x={x}, y={y}) lies outside the screen; coordinates must be in [0, 1]")
    return (x, y)


@dataclass(frozen=True, slots=True)
class CoordFrame:
    """The units a model writes points in: ``written = scale * screen + offset`` on each axis.

    ``screen`` is the action's normalized coordinate in [0, 1]. The default is the identity (the
    codecs' native form). A model that names integer pixels of a 952×448 resized screenshot uses
    ``CoordFrame(952, 448, integer=True)``; padding the screenshot before resizing adds offsets.
    With ``integer`` the written numbers are rounded to whole units, so a round trip moves a point
    by at most half a unit.
    """

    scale_x: float = 1.0
    scale_y: float = 1.0
    offset_x: float = 0.0
    offset_y: float = 0.0
    integer: bool = False

    def __post_init__(self) -> None:
        vals = (self.scale_x, self.scale_y, self.offset_x, self.offset_y)
        if not all(math.isfinite(v) for v in vals) or self.scale_x <= 0 or self.scale_y <= 0:
            raise ValueError(f"a coordinate frame needs finite offsets and positive scales, got {vals}")

    @property
    def is_identity(self) -> bool:
        return (self.scale_x, self.scale_y, self.offset_x, self.offset_y, self.integer) == (1.0, 1.0, 0.0, 0.0, False)

    def to_written(self, p: Point) -> tuple[float, float]:
        """Screen point → the numbers a model writes (rounded to whole units for ``integer`` frames)."""
        x = self.scale_x * p[0] + self.offset_x
        y = self.scale_y * p[1] + self.offset_y
        if self.integer:
            return (float(round(x)), float(round(y)))
        return (round(x, 4) + 0.0, round(y, 4) + 0.0)

    def to_screen(self, x: float, y: float) -> tuple[float, float]:
        """Written numbers → the screen's normalized point (not range-checked)."""
        return ((x - self.offset_x) / self.scale_x, (y - self.offset_y) / self.scale_y)

    def number(self, v: float) -> str:
        """One written coordinate as text."""
        return str(int(v)) if self.integer else f"{v:.4f}"


_IDENTITY = CoordFrame()


def _from_frame(frame: CoordFrame, x: float, y: float, what: str) -> Point:
    if frame.is_identity:
        return _on_screen(x, y, what)
    sx, sy = frame.to_screen(x, y)
    if not (0.0 <= sx <= 1.0 and 0.0 <= sy <= 1.0):
        raise _Reject(f"{what} ({x:g}, {y:g}) lies outside the screen in the model's coordinate frame")
    return (sx, sy)


def _check_not_invalid(action: Action, codec: str) -> None:
    if not isinstance(action, Action):
        raise ValueError(f"{codec} codec formats Action values, got {type(action).__name__}")
    if action.type is ActionType.INVALID:
        raise ValueError(f"an INVALID action has no {codec} text form (its raw text is in .text, its reason in .error)")


class _CodecBase:
    """The never-raising ``parse`` shell; subclasses implement ``_parse`` and may raise ``_Reject``."""

    name = ""

    def parse(self, text: str) -> Action:
        if not isinstance(text, str):
            return Action.invalid(repr(text), f"expected model text (str), got {type(text).__name__}")
        if len(text) > MAX_INPUT_LEN:
            return Action.invalid(text, f"model output has {len(text)} characters, more than {MAX_INPUT_LEN}")
        if not text.strip():
            return Action.invalid(text, "empty model output")
        try:
            return self._parse(text)
        except _Reject as e:
            return Action.invalid(text, str(e))
        except ValueError as e:  # the Action constructor's own validation (text length, ...)
            return Action.invalid(text, str(e))
        except Exception as e:  # a parser bug must not crash a rollout; log it loudly instead
            logger.warning("%s codec failed on %r", self.name, text[:200], exc_info=True)
            return Action.invalid(text, f"{self.name} parser error: {type(e).__name__}: {e}")

    def _parse(self, text: str) -> Action:
        raise NotImplementedError


# ------------------------------------------------------------------------------------ Auto-UI
_AUTOUI_KEY_RE = re.compile(r"""(?<!\w)(["']?)(action_type|touch_point|lift_point|typed_text)\1\s*:\s*""", re.I)
_AUTOUI_NEXT_FIELD_RE = re.compile(r"""\s*,\s*["']?\w+["']?\s*:""")
_DECISION_RE = re.compile(r"action\s*decision\s*:", re.I)
_BARE_TOKEN_RE = re.compile(r"[A-Za-z0-9_]+")
_NO_POINT = '"[-1.0, -1.0]"'


class AutoUICodec(_CodecBase):
    """Auto-UI / DigiRL text: ``Action Plan: [...] ; Action Decision: "action_type": ..., ...``.

    Canonical form (the plan lists only the action's own type; points are ``[y, x]``)::

        Action Plan: [DUAL_POINT] ; Action Decision: "action_type": "DUAL_POINT", \
"touch_point": "[0.3100, 0.5200]", "lift_point": "[0.3100, 0.5200]", "typed_text": ""

    Non-point actions write ``"[-1.0, -1.0]"`` for both points, as Auto-UI does. Typed text escapes
    backslash, double quote, newline, carriage return and tab. ``parse`` tolerates a missing plan
    or ``Action Decision:`` prefix, any key order, extra whitespace, single quotes, bare (unquoted)
    values, points with any number of decimals, ``TASK_COMPLETE``/``TASK_IMPOSSIBLE`` without the
    ``STATUS_`` prefix, AitW integer type ids and raw (unescaped) quotes inside typed text.
    """

    name = "autoui"

    def __init__(self, frame: CoordFrame | None = None) -> None:
        #: The units points are written in (see :class:`CoordFrame`); the identity by default.
        self.frame = frame or _IDENTITY

    def format(self, action: Action) -> str:
        _check_not_invalid(action, self.name)
        t = action.type.value
        if action.type is ActionType.DUAL_POINT:
            assert action.touch is not None and action.lift is not None
            touch, lift = self._written(action.touch), self._written(action.lift)
        else:
            touch = lift = _NO_POINT
        return (
            f'Action Plan: [{t}] ; Action Decision: "action_type": "{t}", "touch_point": {touch}, '
            f'"lift_point": {lift}, "typed_text": "{_escape(action.text)}"'
        )

    def _parse(self, text: str) -> Action:
        m = _DECISION_RE.search(text)
        body = text[m.end() :] if m else text
        fields: dict[str, int] = {}
        for km in _AUTOUI_KEY_RE.finditer(body):
            fields.setdefault(km.group(2).lower(), km.end())  # first occurrence wins
        if "action_type" not in fields:
            raise _Reject('no "action_type" field found')
        atype = self._action_type(self._raw_value(body, fields["action_type"], "action_type"))
        if atype is ActionType.DUAL_POINT:
            for key in ("touch_point", "lift_point"):
                if key not in fields:
                    raise _Reject(f'DUAL_POINT without a "{key}" field')
            touch = self._point(self._raw_value(body, fields["touch_point"], "touch_point"), "touch_point")
            lift = self._point(self._raw_value(body, fields["lift_point"], "lift_point"), "lift_point")
            return Action.dual_point(touch, lift)
        if atype is ActionType.TYPE:
            if "typed_text" not in fields:
                raise _Reject('TYPE without a "typed_text" field')
            return Action.type_text(self._typed_text(body, fields["typed_text"]))
        return Action(atype)

    def _written(self, p: Point) -> str:
        if self.frame.is_identity:
            return f'"[{p[1]:.4f}, {p[0]:.4f}]"'
        x, y = self.frame.to_written(p)
        return f'"[{self.frame.number(y)}, {self.frame.number(x)}]"'

    @staticmethod
    def _raw_value(body: str, i: int, key: str) -> str:
        if i < len(body) and body[i] in "\"'":
            got = _read_quoted(body, i)
            if got is None:
                raise _Reject(f'"{key}" opens a quote that never closes')
            return got[0]
        if i < len(body) and body[i] == "[":
            end = body.find("]", i)
            if end < 0:
                raise _Reject(f'"{key}" opens a bracket that never closes')
            return body[i : end + 1]
        tm = _BARE_TOKEN_RE.match(body, i)
        if tm is None:
            raise _Reject(f'"{key}" has no value')
        return tm.group(0)

    @staticmethod
    def _action_type(raw: str) -> ActionType:
        name = re.sub(r"[\s\-]+", "_", raw.strip()).upper()
        if name.isdigit() and int(name) in _BY_AITW_ID:
            return _BY_AITW_ID[int(name)]
        if name in _TYPE_ALIASES:
            return _TYPE_ALIASES[name]
        if name in ActionType.__members__ and name != "INVALID":
            return ActionType[name]
        raise _Reject(f"unknown action_type {raw!r} (expected one of {_VALID_TYPE_NAMES})")

    def _point(self, raw: str, what: str) -> Point:
        # Split by hand rather than with one regex: nested optional whitespace backtracks badly.
        s = raw.strip()
        if s[:1] in ("[", "("):
            s = s[1:]
        if s[-1:] in ("]", ")"):
            s = s[:-1]
        parts = s.split(",")
        if len(parts) != 2:
            raise _Reject(f"{what} {raw[:60]!r} is not a pair [y, x]")
        y = _number(parts[0].strip(), what)
        x = _number(parts[1].strip(), what)
        return _from_frame(self.frame, x, y, what)

    @staticmethod
    def _typed_text(body: str, i: int) -> str:
        if i >= len(body):
            raise _Reject('"typed_text" has no value')
        if body[i] in "\"'":
            return _read_text_value(body, i, "typed_text", _AUTOUI_NEXT_FIELD_RE)
        return body[i:].strip().rstrip("}").rstrip()


# ------------------------------------------------------------------------------------ CogAgent
_GROUNDED_RE = re.compile(r"grounded\s*operation\s*:", re.I)
_VERB_RE = re.compile(r"\s*([A-Za-z_]+)")
_BRACKET_GROUP_RE = re.compile(r"\[([^\[\]]*)\]")
_GRID_NUM_RE = re.compile(r"^\s*([-+]?\d+(?:\.\d*)?)\s*$")
_DIRECTION_RE = re.compile(r"\s*(up|down|left|right)\b", re.I)
_KEY_RE = re.compile(r"\s*(back|home|enter)\b", re.I)
_TASK_RE = re.compile(r"(?:status[\s_]+)?task[\s_]+(complete|completed|impossible)\b", re.I)
_OPPOSITE = {
    SwipeDirection.UP: SwipeDirection.DOWN,
    SwipeDirection.DOWN: SwipeDirection.UP,
    SwipeDirection.LEFT: SwipeDirection.RIGHT,
    SwipeDirection.RIGHT: SwipeDirection.LEFT,
}
_GRID = 1000


class CogAgentCodec(_CodecBase):
    """CogAgent's ``Grounded Operation:`` text on a 0–1000 integer grid (x first, as CogAgent writes).

    Canonical forms (``format`` writes these, always with the ``Grounded Operation: `` prefix)::

        Grounded Operation: tap [[520,310]]
        Grounded Operation: swipe [[500,700],[500,300]]
        Grounded Operation: type "hello \\"world\\""
        Grounded Operation: press back | press home | press enter
        Grounded Operation: task complete | task impossible

    ``tap`` is written only when touch == lift; any other dual point is a two-point ``swipe`` so
    that short (tap-like) gestures keep both points. The codec is **lossy**: coordinates are
    rounded to the nearest 0.001, so ``parse(format(a)) == a`` holds for on-grid actions only.

    ``parse`` also accepts: text before ``Grounded Operation:`` (CogAgent's plan and next-action
    lines; the first marker counts) or no marker at all, any letter case, ``tap`` on a box
    ``[[x0,y0,x1,y1]]`` (its centre), ``click`` for ``tap``, ``scroll``/``drag`` with two points,
    the direction forms ``swipe up|down|left|right`` (the *finger* moves that way) and
    ``scroll up|down|left|right`` (the *content* moves that way, so ``scroll down`` is a finger
    swipe up) — both become ``Action.scroll``: a 0.4-long swipe through the screen centre —,
    ``type`` with single quotes or no quotes, ``press_back``-style underscores and
    ``status task complete``. This is the vocabulary of DigiRL's ``cogagent_translate_action``
    (DigiRL-agent/digirl) plus the two-point swipe; CogAgent-9B's newer ``CLICK(box=...)`` API
    format is not supported.
    """

    name = "cogagent"

    def format(self, action: Action) -> str:
        _check_not_invalid(action, self.name)
        prefix = "Grounded Operation: "
        t = action.type
        if t is ActionType.DUAL_POINT:
            assert action.touch is not None and action.lift is not None
            if action.touch == action.lift:
                return f"{prefix}tap [[{self._grid(action.touch)}]]"
            return f"{prefix}swipe [[{self._grid(action.touch)}],[{self._grid(action.lift)}]]"
        if t is ActionType.TYPE:
            return f'{prefix}type "{_escape(action.text)}"'
        return (
            prefix
            + {
                ActionType.PRESS_BACK: "press back",
                ActionType.PRESS_HOME: "press home",
                ActionType.PRESS_ENTER: "press enter",
                ActionType.STATUS_TASK_COMPLETE: "task complete",
                ActionType.STATUS_TASK_IMPOSSIBLE: "task impossible",
            }[t]
        )

    @staticmethod
    def _grid(p: Point) -> str:
        return f"{round(p[0] * _GRID)},{round(p[1] * _GRID)}"

    def _parse(self, text: str) -> Action:
        # The first marker: a later one may sit inside the typed text of this very operation.
        marker = _GROUNDED_RE.search(text)
        op = (text[marker.end() :] if marker else text).strip()
        if op.startswith("[") and "->" in op:  # "[button] Play -> tap [[x,y]]": keep the operation
            op = op.split("->", 1)[1].strip()
        tm = _TASK_RE.match(op)
        if tm is not None:
            done = tm.group(1).lower() in ("complete", "completed")
            return Action.complete() if done else Action.impossible()
        vm = _VERB_RE.match(op)
        if vm is None:
            raise _Reject("no operation found (expected tap, swipe, type, press or task ...)")
        verb = vm.group(1).lower()
        rest = op[vm.end() :]
        if verb in ("tap", "click"):
            return self._tap(rest)
        if verb in ("swipe", "scroll", "drag"):
            return self._swipe(verb, rest)
        if verb == "type":
            return Action.type_text(self._type_text(rest))
        if verb.startswith("press"):
            key = verb[len("press") :].lstrip("_")
            km = _KEY_RE.match(key) if key else _KEY_RE.match(rest)
            if km is None:
                raise _Reject(f"unknown key in {op[:60]!r} (expected press back, home or enter)")
            return {"back": Action.back, "home": Action.home, "enter": Action.enter}[km.group(1).lower()]()
        raise _Reject(f"unknown operation {verb!r} (expected tap, swipe, type, press or task ...)")

    @staticmethod
    def _groups(rest: str) -> list[list[float]]:
        """The numbers of each ``[...]`` group, scaled from the 0–1000 grid to [0, 1]."""
        out: list[list[float]] = []
        for g in _BRACKET_GROUP_RE.finditer(rest.split("\n", 1)[0]):
            nums: list[float] = []
            for tok in g.group(1).split(","):
                m = _GRID_NUM_RE.match(tok)
                if m is None:
                    raise _Reject(f"grid coordinate {tok.strip()!r} is not a number in 0..{_GRID}")
                v = float(m.group(1))
                if not 0 <= v <= _GRID:
                    raise _Reject(f"grid coordinate {m.group(1)} lies outside 0..{_GRID}")
                nums.append(v / _GRID)
            out.append(nums)
        return out

    def _tap(self, rest: str) -> Action:
        groups = self._groups(rest)
        if len(groups) == 1 and len(groups[0]) == 2:
            x, y = groups[0]
            return Action.tap(x, y)
        if len(groups) == 1 and len(groups[0]) == 4:  # a box [[x0,y0,x1,y1]]: tap its centre
            x0, y0, x1, y1 = groups[0]
            return Action.tap((x0 + x1) / 2, (y0 + y1) / 2)
        raise _Reject("tap needs one point [[x,y]] (or a box [[x0,y0,x1,y1]]) on the 0-1000 grid")

    def _swipe(self, verb: str, rest: str) -> Action:
        dm = _DIRECTION_RE.match(rest)
        if dm is not None:
            d = SwipeDirection(dm.group(1).lower())
            return Action.scroll(_OPPOSITE[d] if verb == "scroll" else d)
        groups = self._groups(rest)
        if len(groups) == 2 and all(len(g) == 2 for g in groups):
            return Action.swipe((groups[0][0], groups[0][1]), (groups[1][0], groups[1][1]))
        raise _Reject(f"{verb} needs two points [[x1,y1],[x2,y2]] or a direction (up, down, left, right)")

    @staticmethod
    def _type_text(rest: str) -> str:
        s = rest.strip()
        if not s:
            raise _Reject("type without text")
        if s[0] in "\"'":
            return _read_text_value(s, 0, "type text")
        return s.split("\n", 1)[0].strip()


# ------------------------------------------------------------------------------------ JSON
_JSON_DECODER = json.JSONDecoder()
_MAX_JSON_STARTS = 64


def action_to_dict(action: Action) -> dict[str, Any]:
    """A JSON-ready dict: ``{"type": ...}`` plus ``touch``/``lift`` (``[x, y]``) or ``text``.

    INVALID keeps its raw text and reason: ``{"type": "INVALID", "text": raw, "error": reason}``.
    """
    if not isinstance(action, Action):
        raise ValueError(f"action_to_dict takes an Action, got {type(action).__name__}")
    d: dict[str, Any] = {"type": action.type.value}
    if action.type is ActionType.DUAL_POINT:
        assert action.touch is not None and action.lift is not None
        d["touch"] = [action.touch[0], action.touch[1]]
        d["lift"] = [action.lift[0], action.lift[1]]
    elif action.type is ActionType.TYPE:
        d["text"] = action.text
    elif action.type is ActionType.INVALID:
        d["text"] = action.text
        d["error"] = action.error
    return d


_DICT_KEYS = {
    ActionType.DUAL_POINT: ({"touch", "lift"}, set()),
    ActionType.TYPE: ({"text"}, set()),
    ActionType.INVALID: ({"text"}, {"error"}),
}


def action_from_dict(d: Mapping[str, Any]) -> Action:
    """Inverse of :func:`action_to_dict`. Raises ``ValueError`` naming the problem on bad data."""
    if not isinstance(d, Mapping):
        raise ValueError(f"an action dict must be a mapping, got {type(d).__name__}")
    raw_type = d.get("type")
    if not isinstance(raw_type, str) or raw_type not in ActionType.__members__:
        names = list(ActionType.__members__)
        raise ValueError(f"action dict has no valid 'type' (got {raw_type!r}; expected one of {names})")
    atype = ActionType[raw_type]
    required, optional = _DICT_KEYS.get(atype, (set(), set()))
    missing = required - set(d)
    if missing:
        raise ValueError(f"{atype.value} action dict lacks {sorted(missing)}")
    extra = set(d) - required - optional - {"type"}
    if extra:
        raise ValueError(f"{atype.value} action dict has unexpected keys {sorted(extra)}")
    try:
        if atype is ActionType.DUAL_POINT:
            return Action.dual_point(_dict_point(d["touch"], "touch"), _dict_point(d["lift"], "lift"))
        if atype is ActionType.INVALID:
            text, error = d["text"], d.get("error", "")
            if not isinstance(text, str) or not isinstance(error, str):
                raise ValueError("INVALID 'text' and 'error' must be strings")
            return Action(ActionType.INVALID, text=text, error=error)
        return Action(atype, text=d.get("text", ""))
    except (TypeError, ValueError) as e:
        raise ValueError(f"bad {atype.value} action dict: {e}") from None


def _dict_point(p: Any, name: str) -> Point:
    if not isinstance(p, (list, tuple)) or len(p) != 2:
        raise ValueError(f"{name} must be a list [x, y], got {p!r}")
    return (p[0], p[1])


class JSONCodec(_CodecBase):
    """One JSON object per action, keys in a fixed order, e.g.
    ``{"type": "DUAL_POINT", "touch": [0.52, 0.31], "lift": [0.52, 0.31]}``,
    ``{"type": "TYPE", "text": "hello"}``, ``{"type": "PRESS_BACK"}``.

    Floats use Python's shortest round-tripping repr, so the round trip is exact. Non-ASCII text
    is written as is. ``parse`` reads the first JSON object in the text (prose or code fences
    around it are ignored), accepts type names in any case and ``action_type``/``typed_text``/
    ``touch_point``/``lift_point`` as key aliases, and ignores unknown keys.
    """

    name = "json"

    def __init__(self, frame: CoordFrame | None = None) -> None:
        #: The units points are written in (see :class:`CoordFrame`); the identity by default.
        self.frame = frame or _IDENTITY

    def format(self, action: Action) -> str:
        _check_not_invalid(action, self.name)
        d = action_to_dict(action)
        if not self.frame.is_identity and action.type is ActionType.DUAL_POINT:
            for key in ("touch", "lift"):
                x, y = self.frame.to_written((d[key][0], d[key][1]))
                d[key] = [int(x), int(y)] if self.frame.integer else [x, y]
        return json.dumps(d, ensure_ascii=False)

    def _parse(self, text: str) -> Action:
        obj = self._first_object(text)
        raw_type = obj.get("type", obj.get("action_type"))
        if not isinstance(raw_type, str):
            raise _Reject('JSON action has no string "type"')
        name = raw_type.strip().upper()
        atype = _TYPE_ALIASES.get(name) or ActionType.__members__.get(name)
        if atype is None or atype is ActionType.INVALID:
            raise _Reject(f"unknown action type {raw_type!r} (expected one of {_VALID_TYPE_NAMES})")
        if atype is ActionType.DUAL_POINT:
            touch = self._point(obj.get("touch", obj.get("touch_point")), "touch")
            lift = self._point(obj.get("lift", obj.get("lift_point")), "lift")
            return Action.dual_point(touch, lift)
        if atype is ActionType.TYPE:
            t = obj.get("text", obj.get("typed_text"))
            if not isinstance(t, str):
                raise _Reject('TYPE needs a string "text"')
            return Action.type_text(t)
        return Action(atype)

    @staticmethod
    def _first_object(text: str) -> dict[str, Any]:
        i = text.find("{")
        # A bounded number of starts keeps pathological text ("{{{{...") from taking quadratic time.
        for _ in range(_MAX_JSON_STARTS):
            if i < 0:
                break
            try:
                obj, _ = _JSON_DECODER.raw_decode(text, i)
            except (json.JSONDecodeError, RecursionError):
                obj = None
            if isinstance(obj, dict):
                return obj
            i = text.find("{", i + 1)
        raise _Reject("no JSON object found")

    def _point(self, p: Any, what: str) -> Point:
        if p is None:
            raise _Reject(f'DUAL_POINT needs "{what}": [x, y]')
        if not isinstance(p, list) or len(p) != 2:
            raise _Reject(f"{what} must be [x, y], got {json.dumps(p)[:60]}")
        vals = []
        for v in p:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise _Reject(f"{what} coordinates must be numbers, got {json.dumps(p)[:60]}")
            try:
                fv = float(v)
            except OverflowError:
                raise _Reject(f"{what} has a coordinate too large for a float") from None
            if not math.isfinite(fv):
                raise _Reject(f"{what} has a non-finite coordinate")
            vals.append(fv)
        return _from_frame(self.frame, vals[0], vals[1], what)


# ------------------------------------------------------------------------------------ registry
CODECS: Mapping[str, ActionCodec] = {c.name: c for c in (AutoUICodec(), CogAgentCodec(), JSONCodec())}


_FRAMED: Mapping[str, type[AutoUICodec] | type[JSONCodec]] = {"autoui": AutoUICodec, "json": JSONCodec}


def get_codec(name: str, frame: CoordFrame | None = None) -> ActionCodec:
    """The codec called ``name`` (``autoui``, ``cogagent``, ``json``). Unknown names: ``ValueError``.

    ``frame``: the units the model writes points in (``autoui`` and ``json`` only; ``cogagent``
    has its own 0–1000 grid).
    """
    codec = CODECS.get(name) if isinstance(name, str) else None
    if codec is None:
        raise ValueError(f"unknown action codec {name!r}; available: {', '.join(sorted(CODECS))}")
    if frame is None or frame.is_identity:
        return codec
    if name not in _FRAMED:
        raise ValueError(f"the {name} codec writes its own coordinate grid; a coordinate frame needs autoui or json")
    return _FRAMED[name](frame)


def parse_action(text: str, codec: str = "json") -> Action:
    """Parse model text with the named codec. Never raises for bad *text* (only for a bad codec name)."""
    return get_codec(codec).parse(text)


def format_action(action: Action, codec: str = "json") -> str:
    """Write ``action`` in the named codec's canonical form. ``ValueError`` for INVALID actions."""
    return get_codec(codec).format(action)
