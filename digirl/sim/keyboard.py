"""The on-screen keyboard: one pre-rendered picture plus invisible hit areas for its keys.

Letter keys type their letter, ⌫ deletes, the action key (⏎ / search) submits the focused field;
the keyboard itself blocks taps from reaching the app below, as on a phone.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image, ImageDraw

from digirl.sim.icons import icon_patch
from digirl.sim.ui import BOTTOM, TEXT, SystemTap, View

if TYPE_CHECKING:
    from digirl.sim.render import Renderer

__all__ = ["KB_H", "KB_TOP", "keyboard_patch", "keyboard_view"]

KB_H = 232
KB_TOP = BOTTOM - KB_H
_ROW_H = 54
_BG = (232, 234, 237)
_KEY = (255, 255, 255)
_FN = (208, 212, 218)
_ACTION = (26, 115, 232)


def _layout() -> list[tuple[str, str, tuple[float, float, float, float]]]:
    """(label, code, rect relative to the keyboard's top-left) for every key."""
    keys: list[tuple[str, str, tuple[float, float, float, float]]] = []
    y = 8.0
    for row, x in (("qwertyuiop", 0.0), ("asdfghjkl", 18.0)):
        for ch in row:
            keys.append((ch, ch, (x, y, x + 36, y + _ROW_H)))
            x += 36
        y += _ROW_H
    keys.append(("⇧", "shift", (0, y, 54, y + _ROW_H)))
    x = 54.0
    for ch in "zxcvbnm":
        keys.append((ch, ch, (x, y, x + 36, y + _ROW_H)))
        x += 36
    keys.append(("⌫", "backspace", (306, y, 360, y + _ROW_H)))
    y += _ROW_H
    keys += [
        ("?123", "symbols", (0, y, 54, y + _ROW_H)),
        (",", ",", (54, y, 90, y + _ROW_H)),
        ("space", " ", (90, y, 252, y + _ROW_H)),
        (".", ".", (252, y, 288, y + _ROW_H)),
        ("⏎", "enter", (288, y, 360, y + _ROW_H)),
    ]
    return keys


_KEYS = _layout()


def keyboard_patch(name: str, w: int, h: int, r: Renderer) -> np.ndarray:
    """The keyboard picture at ``w``×``h`` pixels (``name`` is ``keyboard:<action icon>``)."""
    action = name.split(":", 1)[1] if ":" in name else "enter"
    im = Image.new("RGB", (w, h), _BG)
    d = ImageDraw.Draw(im)
    sx, sy = w / 360, h / KB_H
    for lab, code, (x0, y0, x1, y1) in _KEYS:
        box = (x0 * sx + 3, y0 * sy + 4, x1 * sx - 3, y1 * sy - 4)
        fill = _ACTION if code == "enter" else (_FN if len(lab) > 1 or code in ("backspace", "shift") else _KEY)
        d.rounded_rectangle(box, radius=max(2, round(6 * r.s)), fill=fill)
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        if code == "enter":
            side = max(8, round(20 * r.s))
            icon = Image.fromarray(icon_patch("search" if action == "search" else "check", side, (255, 255, 255), fill))
            im.paste(icon, (round(cx - side / 2), round(cy - side / 2)))
        elif code != " ":
            t = r.text_patch(lab, 18 if len(lab) == 1 and lab.isalpha() else 13, TEXT, fill)
            im.paste(Image.fromarray(t), (round(cx - t.shape[1] / 2), round(cy - t.shape[0] / 2)))
    out: np.ndarray = np.asarray(im).copy()
    return out


def keyboard_view(action: str, on_key: Callable[[str], None] | None = None) -> View:
    """The keyboard's view: a blocker showing the picture, with a hit area per key. Without
    ``on_key`` a key's tap is ``SystemTap("press_key", code)`` (the phone's keyboard, shared)."""
    kb = View(
        (0, KB_TOP, 360, BOTTOM),
        kind="keyboard",
        patch=f"keyboard:{action}",
        blocker=True,
        element=True,
        text="",
        placeholder="Keyboard",
    )
    kb.children = [
        View(
            rect,
            kind="key",
            ref=ref,
            on_tap=SystemTap("press_key", code) if on_key is None else partial(on_key, code),
            element=shown,
            placeholder=desc,
        )
        for code, rect, ref, shown, desc in _key_specs(action)
    ]
    return kb


@functools.cache
def _key_specs(action: str) -> tuple[tuple[str, tuple[float, float, float, float], str, bool, str], ...]:
    """(code, rect, ref, listed as an element, description) per key: a keyboard is built each
    time one opens, so what does not depend on the phone is worked out once."""
    names = {"enter": "Search" if action == "search" else "Enter", "backspace": "Delete"}
    return tuple(
        (code, (x0, KB_TOP + y0, x1, KB_TOP + y1), f"kb.{code}", code in ("enter", "backspace"), names.get(code, lab))
        for lab, code, (x0, y0, x1, y1) in _KEYS
    )
