"""Actions drawn on screenshots: a dot for a tap, an arrow for a swipe, a banner for typed text and
a badge for keys, status and invalid output; candidate actions coloured by their Q-value; a caption.

Every function takes a screenshot (uint8 H×W×3 array or PIL image) and returns a new RGB PIL image;
the input is never modified. Small screens (MiniWoB's 160×210) are enlarged first by an integer
factor with nearest-neighbour sampling, so overlays stay legible and pixels stay exact.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from digirl.core.actions import Action, ActionType

__all__ = [
    "Candidate",
    "add_caption",
    "as_image",
    "draw_action",
    "draw_candidates",
    "enlarge",
    "q_color",
    "step_picture",
]

Color = tuple[int, int, int]

TAP_COLOR: Color = (230, 30, 60)
SWIPE_COLOR: Color = (255, 140, 0)
KEY_COLOR: Color = (40, 90, 200)
INVALID_COLOR: Color = (200, 0, 0)
WHITE: Color = (255, 255, 255)
BLACK: Color = (0, 0, 0)

_BADGES = {
    ActionType.PRESS_BACK: "BACK",
    ActionType.PRESS_HOME: "HOME",
    ActionType.PRESS_ENTER: "ENTER",
    ActionType.STATUS_TASK_COMPLETE: "COMPLETE",
    ActionType.STATUS_TASK_IMPOSSIBLE: "IMPOSSIBLE",
}


@dataclass(frozen=True)
class Candidate:
    """One candidate action of a step, its Q-value (``None``: unknown), whether it was the one taken, and
    whether it is the critic's pick (Digi-Q's best-of-N choice)."""

    action: Action
    q: float | None = None
    chosen: bool = False
    best: bool = False


@lru_cache(maxsize=16)
def _font(px: int) -> Any:
    try:
        return ImageFont.load_default(size=px)
    except TypeError:  # Pillow < 10.1 has one fixed-size bitmap font
        return ImageFont.load_default()


def as_image(screenshot: np.ndarray | Image.Image) -> Image.Image:
    """An RGB PIL copy of a uint8 H×W×3 array or a PIL image."""
    if isinstance(screenshot, Image.Image):
        return screenshot.convert("RGB")
    arr = np.asarray(screenshot)
    if arr.dtype != np.uint8 or arr.ndim != 3 or arr.shape[2] != 3 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"a screenshot must be a non-empty uint8 (H, W, 3) array, got {arr.dtype} {arr.shape}")
    return Image.fromarray(np.ascontiguousarray(arr))


def enlarge(img: Image.Image, min_side: int = 420, max_factor: int = 6) -> Image.Image:
    """``img`` scaled up by the integer factor that brings its longer side to at least ``min_side``."""
    factor = max(1, min(max_factor, math.ceil(min_side / max(1, max(img.size)))))
    if factor == 1:
        return img
    return img.resize((img.width * factor, img.height * factor), Image.Resampling.NEAREST)


def _unit(img: Image.Image) -> int:
    """Base stroke size: about 1.6% of the shorter side."""
    return max(2, round(min(img.size) / 60))


def _px(img: Image.Image, p: tuple[float, float]) -> tuple[float, float]:
    return (p[0] * (img.width - 1), p[1] * (img.height - 1))


def _text_box(
    d: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, font: Any, fg: Color, bg: Color, *, anchor_right: bool = False
) -> tuple[float, float, float, float]:
    """Text on a filled rectangle whose top-left (or top-right) corner is ``xy``; returns the box."""
    left, top, right, bottom = d.textbbox((0, 0), text, font=font)
    pad = max(2, (bottom - top) // 4)
    w, h = right - left + 2 * pad, bottom - top + 2 * pad
    x, y = (xy[0] - w, xy[1]) if anchor_right else xy
    box = (x, y, x + w, y + h)
    d.rectangle(box, fill=bg, outline=WHITE)
    if fg == WHITE and 0.299 * bg[0] + 0.587 * bg[1] + 0.114 * bg[2] > 160:  # light background: dark text
        fg = BLACK
    d.text((x + pad - left, y + pad - top), text, font=font, fill=fg)
    return box


def _dot(d: ImageDraw.ImageDraw, c: tuple[float, float], r: float, color: Color, ring: int) -> None:
    d.ellipse((c[0] - r - ring, c[1] - r - ring, c[0] + r + ring, c[1] + r + ring), fill=WHITE)
    d.ellipse((c[0] - r, c[1] - r, c[0] + r, c[1] + r), fill=color)


def _arrow(d: ImageDraw.ImageDraw, a: tuple[float, float], b: tuple[float, float], color: Color, width: int) -> None:
    ang = math.atan2(b[1] - a[1], b[0] - a[0])
    head = 4 * width
    left = (b[0] - head * math.cos(ang - 0.45), b[1] - head * math.sin(ang - 0.45))
    right = (b[0] - head * math.cos(ang + 0.45), b[1] - head * math.sin(ang + 0.45))
    d.line([a, b], fill=WHITE, width=width + 2)
    d.line([a, b], fill=color, width=width)
    d.polygon([b, left, right], fill=color, outline=WHITE)
    _dot(d, a, width * 0.9, color, 1)


def _short(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _draw_one(
    img: Image.Image, d: ImageDraw.ImageDraw, action: Action, color: Color | None, label: str | None, badge_y: float
) -> float:
    """Draw ``action``; non-point actions stack badges at the top right from ``badge_y``. Returns the next badge_y."""
    u = _unit(img)
    font = _font(max(10, 3 * u))
    if action.type is ActionType.DUAL_POINT:
        assert action.touch is not None and action.lift is not None
        a, b = _px(img, action.touch), _px(img, action.lift)
        if action.is_tap:  # a ring leaves what was tapped visible; the centre dot marks the point
            c, r = color or TAP_COLOR, 3 * u
            d.ellipse((a[0] - r - 1, a[1] - r - 1, a[0] + r + 1, a[1] + r + 1), outline=WHITE, width=u + 2)
            d.ellipse((a[0] - r, a[1] - r, a[0] + r, a[1] + r), outline=c, width=u)
            _dot(d, a, max(1.5, u * 0.6), c, 1)
        else:
            _arrow(d, a, b, color or SWIPE_COLOR, u)
        if label:
            end = b if action.is_swipe else a
            x = end[0] + 2.5 * u
            anchor_right = x + float(d.textlength(label, font=font)) + 2 * u > img.width  # keep the label on screen
            _text_box(
                d,
                (end[0] - 2.5 * u if anchor_right else x, end[1] - 2 * u),
                label,
                font,
                WHITE,
                color or TAP_COLOR,
                anchor_right=anchor_right,
            )
        return badge_y
    if action.type is ActionType.TYPE:
        text = f'type "{_short(action.text, 48)}"'
    elif action.type is ActionType.INVALID:
        text = f"INVALID: {_short(action.error or 'unparseable', 40)}"
    else:
        text = _BADGES[action.type]
    if label:
        text = f"{text}  {label}"
    bg = color or (INVALID_COLOR if action.type is ActionType.INVALID else KEY_COLOR)
    box = _text_box(d, (img.width - u, badge_y), text, font, WHITE, bg, anchor_right=True)
    return box[3] + u // 2


def draw_action(
    screenshot: np.ndarray | Image.Image,
    action: Action,
    *,
    label: str | None = None,
    color: Color | None = None,
    min_side: int = 420,
) -> Image.Image:
    """The screenshot (enlarged to ``min_side``) with ``action`` drawn on it, and an optional ``label``."""
    img = enlarge(as_image(screenshot), min_side)
    d = ImageDraw.Draw(img)
    _draw_one(img, d, action, color, label, _unit(img))
    return img


def q_color(q: float, lo: float, hi: float) -> Color:
    """Blue (lowest Q) through yellow to red (highest Q) on the range ``[lo, hi]``."""
    t = 0.5 if hi - lo < 1e-12 else min(1.0, max(0.0, (q - lo) / (hi - lo)))
    if t < 0.5:
        s = t / 0.5
        return (round(40 + s * (240 - 40)), round(90 + s * (200 - 90)), round(220 - s * 200))
    s = (t - 0.5) / 0.5
    return (240, round(200 - s * 170), round(20 + s * 20))


def draw_candidates(screenshot: np.ndarray | Image.Image, candidates: Sequence[Candidate], *, min_side: int = 420) -> Image.Image:
    """Every candidate drawn and labelled with its Q-value, coloured from low (blue) to high (red).

    The taken action (``chosen``) is drawn last, on top, with a star in its label; the critic's pick
    (``best``) has a plus.
    """
    img = enlarge(as_image(screenshot), min_side)
    d = ImageDraw.Draw(img)
    qs = [c.q for c in candidates if c.q is not None and math.isfinite(c.q)]
    lo, hi = (min(qs), max(qs)) if qs else (0.0, 1.0)
    badge_y = float(_unit(img))
    for i, c in sorted(enumerate(candidates), key=lambda ic: (ic[1].chosen, ic[1].q if ic[1].q is not None else -math.inf)):
        q = c.q
        color = q_color(q, lo, hi) if q is not None and math.isfinite(q) else (150, 150, 150)
        label = f"{'*' if c.chosen else ''}{'+' if c.best else ''}#{i} Q={'?' if q is None else f'{q:.2f}'}"
        badge_y = _draw_one(img, d, c.action, color, label, badge_y)
    return img


def add_caption(img: Image.Image, text: str, *, max_lines: int = 3) -> Image.Image:
    """``img`` with ``text`` (newlines kept) wrapped in a dark band above it, at most ``max_lines`` lines."""
    u = _unit(img)
    font = _font(max(11, round(2.6 * u)))
    avg = max(1.0, float(ImageDraw.Draw(img).textlength("abcdefghij", font=font)) / 10)
    width_chars = max(8, int((img.width - 2 * u) / avg))
    lines = [line for para in text.split("\n") for line in (textwrap.wrap(" ".join(para.split()), width_chars) or [""])]
    if len(lines) > max_lines:
        lines = [*lines[: max_lines - 1], _short(" ".join(lines[max_lines - 1 :]), width_chars)]
    left, top, _, bottom = ImageDraw.Draw(img).textbbox((0, 0), "Ag", font=font)
    line_h = math.ceil(bottom - top) + u // 2
    band = len(lines) * line_h + 2 * u
    out = Image.new("RGB", (img.width, img.height + band), (25, 25, 30))
    out.paste(img, (0, band))
    d = ImageDraw.Draw(out)
    for i, line in enumerate(lines):
        d.text((u - left, u + i * line_h - top), line, font=font, fill=WHITE)
    return out


def step_picture(
    screenshot: np.ndarray | Image.Image,
    action: Action | None,
    *,
    caption: str | None = None,
    label: str | None = None,
    min_side: int = 420,
) -> Image.Image:
    """A video frame or report picture: the screenshot, the action on it (if any), the caption above."""
    img = (
        draw_action(screenshot, action, label=label, min_side=min_side)
        if action is not None
        else enlarge(as_image(screenshot), min_side)
    )
    return add_caption(img, caption) if caption else img
