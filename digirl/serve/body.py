"""Request bodies under bounds: JSON decoded only when its size, nesting and number of values are
sane, and a memory budget shared by every request in flight.

Python's JSON decoder recurses once per nesting level (a deeply nested body raises
``RecursionError``), accepts ``NaN``/``Infinity`` and turns ``1e999`` into ``inf``, and a body of
many tiny values (``[{},{},…]``) costs many times its size in objects. :func:`decode_json` refuses
all of these with a :class:`~digirl.serve.protocol.RequestError` before (or while) decoding.
:class:`ByteBudget` bounds what all requests in flight may hold (bodies, decoded images), so the
server's memory stays bounded however many clients send large requests at once; past the budget a
request gets 503 with ``Retry-After``.
"""

from __future__ import annotations

import json
import math
import re
import threading
from typing import Any

from digirl.serve.protocol import Limits, RequestError

__all__ = ["BODY_COST", "ByteBudget", "Reservation", "decode_json", "json_depth"]

#: Bytes of memory a request body of one byte may cost while it is parsed: the raw bytes, the decoded
#: JSON strings (the base64 image text, the same length) and the decoded image bytes (3/4 of it).
BODY_COST = 3
#: A JSON string (skipped whole, escapes included) or one bracket.
_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
_OPEN = (ord("["), ord("{"))
_QUOTE = ord('"')


def json_depth(raw: bytes, limit: int) -> int:
    """How deeply ``raw``'s arrays and objects nest (brackets inside strings do not count); stops
    counting once ``limit`` is passed (returns ``limit + 1``). Works on invalid JSON too."""
    depth = deepest = 0
    for m in _TOKENS.finditer(raw):
        c = raw[m.start()]  # the first byte only: a match may be a multi-megabyte string
        if c == _QUOTE:
            continue
        if c in _OPEN:
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        else:
            depth -= 1
    return deepest


def _finite_float(text: str) -> float:
    v = float(text)
    if not math.isfinite(v):
        raise RequestError(400, f"the number {text[:40]} is out of range (every number must be finite)", code="invalid_number")
    return v


def _no_constant(name: str) -> Any:
    raise RequestError(400, f"{name} is not a JSON number (every number must be finite)", code="invalid_number")


def decode_json(raw: bytes, limits: Limits) -> Any:
    """The JSON value in ``raw``, or a 400 naming what is wrong: not JSON, nested deeper than
    ``limits.max_json_depth``, more than ``limits.max_json_values`` values, a non-finite number."""
    # Commas and opening brackets bound the number of values from above (those inside strings count
    # too, which only over-estimates); bytes.count runs at memory speed.
    values = raw.count(b",") + raw.count(b"[") + raw.count(b"{") + 1
    if values > limits.max_json_values:
        raise RequestError(
            400, f"the body holds about {values} JSON values, more than {limits.max_json_values}", code="too_many_values"
        )
    depth = json_depth(raw, limits.max_json_depth)
    if depth > limits.max_json_depth:
        raise RequestError(400, f"the JSON body nests more than {limits.max_json_depth} levels deep", code="too_deep")
    try:
        return json.loads(raw, parse_float=_finite_float, parse_constant=_no_constant)
    except RequestError:
        raise
    except RecursionError:  # not reached under the depth check; kept as a guard
        raise RequestError(400, "the JSON body nests too deeply", code="too_deep") from None
    except (UnicodeDecodeError, ValueError) as e:
        raise RequestError(400, f"the body is not valid JSON ({e})", code="invalid_json") from None


class ByteBudget:
    """Bytes that all requests in flight may hold at once; thread-safe."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"the in-flight byte budget must be >= 1, got {capacity}")
        self.capacity = capacity
        self._used = 0
        self._peak = 0
        self._refused = 0
        self._lock = threading.Lock()

    @property
    def used(self) -> int:
        return self._used

    @property
    def peak(self) -> int:
        return self._peak

    @property
    def refused(self) -> int:
        return self._refused

    def try_take(self, n: int) -> bool:
        with self._lock:
            if self._used + n > self.capacity:
                self._refused += 1
                return False
            self._used += n
            self._peak = max(self._peak, self._used)
            return True

    def give(self, n: int) -> None:
        with self._lock:
            self._used -= n

    def reservation(self) -> Reservation:
        return Reservation(self)


class Reservation:
    """One request's share of a :class:`ByteBudget`: :meth:`take` more as the request grows (503
    while others hold the budget; 413 if it needs more than the whole budget), :meth:`release` it
    all when the response is out."""

    def __init__(self, budget: ByteBudget) -> None:
        self.budget = budget
        self.held = 0

    def take(self, n: int) -> None:
        if self.held + n > self.budget.capacity:  # would not fit even alone: waiting cannot help
            raise RequestError(
                413,
                f"the request needs {self.held + n} bytes in memory, more than the server's whole in-flight budget "
                f"({self.budget.capacity}); send a smaller body or screenshot",
                code="request_too_large",
            )
        if not self.budget.try_take(n):
            raise RequestError(
                503,
                "the server holds as many request bytes as it may; retry shortly",
                code="server_busy",
                retry_after=1,
            )
        self.held += n

    def release(self) -> None:
        if self.held:
            self.budget.give(self.held)
            self.held = 0
