"""The simulator's renderer and element extraction as they were before the speed work (frozen).

This is the exactness oracle for ``digirl.sim.render`` / ``digirl.sim.text`` /
``digirl.sim.env.tree_elements``: the optimised code must give the same pixels and elements for
any tree. It is a verbatim copy of the old code (commit ce8d287, names changed only); do not
optimise or restyle it. If the look of the simulator changes on purpose, change both.
"""

# ruff: noqa

from __future__ import annotations

import math
import unicodedata
from collections import OrderedDict
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from digirl.core.types import UIElement
from digirl.sim.icons import icon_patch
from digirl.sim.ui import BLUE, FAINT, SUBTLE, WHITE, Color, View, flatten
from digirl.sim.ui import H as LH
from digirl.sim.ui import W as LW

__all__ = ["ReferenceRenderer", "reference_elements"]

H, W = LH, LW

_ASCII_SUBST = {
    "—": "-",
    "–": "-",
    "‑": "-",
    "€": "E",
    "£": "L",
    "¥": "Y",
    "🙂": ":)",
    "’": "'",
    "‘": "'",
    "“": '"',
    "”": '"',
    "⏎": ">",
}
_SYMBOLS = set("★☆×÷⇧⌫✓↗⌃")


class TextRaster:
    """Glyph cache + string composer for one process (shared by renderers of any size)."""

    def __init__(self) -> None:
        self._fonts: dict[int, ImageFont.FreeTypeFont | ImageFont.ImageFont] = {}
        self._metrics: dict[int, tuple[int, int]] = {}
        self._glyphs: dict[tuple[str, int], tuple[np.ndarray, float]] = {}
        self._luts: dict[tuple[tuple[int, int, int], tuple[int, int, int]], np.ndarray] = {}
        self._words: dict[tuple[str, int], tuple[np.ndarray, float]] = {}
        self._pad = 2

    def font(self, px: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
        f = self._fonts.get(px)
        if f is None:
            f = ImageFont.load_default(size=px)
            self._fonts[px] = f
        return f

    def metrics(self, px: int) -> tuple[int, int]:
        """(ascent, descent) in pixels."""
        m = self._metrics.get(px)
        if m is None:
            m = self.font(px).getmetrics()  # type: ignore[union-attr]
            self._metrics[px] = m
        return m

    def _glyph(self, ch: str, px: int) -> tuple[np.ndarray, float]:
        key = (ch, px)
        g = self._glyphs.get(key)
        if g is not None:
            return g
        asc, desc = self.metrics(px)
        pad = self._pad
        adv: float
        if ch in _SYMBOLS:
            side = round(px * 0.9)
            adv = float(side)
            im = Image.new("L", (side + 2 * pad, asc + desc), 0)
            _draw_symbol(ImageDraw.Draw(im), ch, pad, asc, side)
        else:
            text = _ASCII_SUBST.get(ch, ch)
            font = self.font(px)
            if not text.isascii():  # a letter the font has no glyph for is drawn as its base letter
                box = Image.new("L", (4 * px, 2 * px), 0)
                ImageDraw.Draw(box).text((0, 0), "\U0010fffd", font=font, fill=255)
                mine = Image.new("L", (4 * px, 2 * px), 0)
                ImageDraw.Draw(mine).text((0, 0), text, font=font, fill=255)
                if mine.tobytes() == box.tobytes():
                    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode() or text
            adv = font.getlength(text)
            im = Image.new("L", (math.ceil(adv) + 2 * pad + 2, asc + desc), 0)
            ImageDraw.Draw(im).text((pad, 0), text, font=font, fill=255)
        g = (np.asarray(im).copy(), float(adv))
        self._glyphs[key] = g
        return g

    def width(self, text: str, px: int) -> int:
        words = text.split(" ")
        return math.ceil(sum(self._word(w, px)[1] for w in words) + self._glyph(" ", px)[1] * (len(words) - 1))

    def _compose(self, parts: list[tuple[np.ndarray, float]], px: int, gap: float = 0.0) -> tuple[np.ndarray, float]:
        """Place masks left to right at rounded advances; returns (canvas with a pad each side, advance)."""
        asc, desc = self.metrics(px)
        pad = self._pad
        total = float(sum(a for _, a in parts)) + gap * max(0, len(parts) - 1)
        canvas = np.zeros((asc + desc, math.ceil(total) + 2 * pad + 4), dtype=np.uint8)
        x = 0.0
        for m, adv in parts:
            xi = round(x)
            region = canvas[:, xi : xi + m.shape[1]]
            np.maximum(region, m[:, : region.shape[1]], out=region)
            x += adv + gap
        return canvas, total

    def _word(self, word: str, px: int) -> tuple[np.ndarray, float]:
        key = (word, px)
        w = self._words.get(key)
        if w is None:
            w = self._compose([self._glyph(ch, px) for ch in word], px)
            if len(self._words) > 100_000:
                self._words.clear()
            self._words[key] = w
        return w

    def mask(self, text: str, px: int, bold: bool = False) -> np.ndarray:
        """The string's alpha mask, shape (ascent + descent, width + 2). Words are cached: most text
        on a new page is made of words seen before."""
        pad = self._pad
        space = self._glyph(" ", px)[1]
        canvas, total = self._compose([self._word(w, px) for w in text.split(" ")], px, space)
        out = canvas[:, pad : pad + math.ceil(total) + 2]
        if bold:  # the built-in font has one weight: a one-pixel smear reads as bold
            out = out.copy()
            np.maximum(out[:, 1:], out[:, :-1], out=out[:, 1:])
        return out

    def patch(self, text: str, px: int, fg: tuple[int, int, int], bg: tuple[int, int, int], bold: bool = False) -> np.ndarray:
        """The string drawn in ``fg`` on ``bg`` as uint8 RGB."""
        lut = self._luts.get((fg, bg))
        if lut is None:
            a = np.arange(256, dtype=np.float32)[:, None] / 255.0
            lut = np.clip(np.round(np.array(bg) * (1 - a) + np.array(fg) * a), 0, 255).astype(np.uint8)
            self._luts[(fg, bg)] = lut
        out: np.ndarray = lut[self.mask(text, px, bold)]
        return out


def _draw_symbol(d: ImageDraw.ImageDraw, ch: str, x: int, asc: int, adv: int) -> None:
    """Symbols missing from the built-in font, drawn in an em box whose baseline is at ``asc``."""
    s = adv
    top = asc - s * 0.85
    cx, cy = x + s / 2, top + s * 0.45
    r = s * 0.45
    w = max(1, round(s / 9))
    if ch in "★☆":
        import math as _m

        pts = []
        for i in range(10):
            ang = -_m.pi / 2 + i * _m.pi / 5
            rr = r if i % 2 == 0 else r * 0.45
            pts.append((cx + rr * _m.cos(ang), cy + rr * _m.sin(ang)))
        if ch == "★":
            d.polygon(pts, fill=255)
        else:
            d.polygon(pts, outline=255, width=w)
    elif ch == "×":
        d.line((cx - r * 0.6, cy - r * 0.6, cx + r * 0.6, cy + r * 0.6), fill=255, width=w)
        d.line((cx - r * 0.6, cy + r * 0.6, cx + r * 0.6, cy - r * 0.6), fill=255, width=w)
    elif ch == "÷":
        d.line((cx - r * 0.7, cy, cx + r * 0.7, cy), fill=255, width=w)
        d.ellipse((cx - w, cy - r * 0.6 - w, cx + w, cy - r * 0.6 + w), fill=255)
        d.ellipse((cx - w, cy + r * 0.6 - w, cx + w, cy + r * 0.6 + w), fill=255)
    elif ch in "⇧⌃":
        d.polygon(
            [
                (cx, cy - r),
                (cx + r, cy),
                (cx + r * 0.4, cy),
                (cx + r * 0.4, cy + r),
                (cx - r * 0.4, cy + r),
                (cx - r * 0.4, cy),
                (cx - r, cy),
            ],
            outline=255,
            width=w,
        )
    elif ch == "⌫":
        d.polygon(
            [
                (cx - r, cy),
                (cx - r * 0.4, cy - r * 0.6),
                (cx + r, cy - r * 0.6),
                (cx + r, cy + r * 0.6),
                (cx - r * 0.4, cy + r * 0.6),
            ],
            outline=255,
            width=w,
        )
        d.line((cx - r * 0.1, cy - r * 0.3, cx + r * 0.5, cy + r * 0.3), fill=255, width=w)
        d.line((cx - r * 0.1, cy + r * 0.3, cx + r * 0.5, cy - r * 0.3), fill=255, width=w)
    elif ch == "✓":
        d.line((cx - r * 0.7, cy, cx - r * 0.2, cy + r * 0.6, cx + r * 0.7, cy - r * 0.6), fill=255, width=w)
    elif ch == "↗":
        d.line((cx - r * 0.6, cy + r * 0.6, cx + r * 0.6, cy - r * 0.6), fill=255, width=w)
        d.line((cx, cy - r * 0.6, cx + r * 0.6, cy - r * 0.6, cx + r * 0.6, cy), fill=255, width=w)


Op = tuple[Any, ...]
_TEXT = TextRaster()  # glyphs are shared by every renderer in the process
Clip = tuple[int, int, int, int] | None


class ReferenceRenderer:
    """Draws view trees at ``width``×``height`` pixels (logical 360×800 scaled)."""

    def __init__(self, width: int, height: int, *, frame_cache: int = 48, patch_cache: int = 20000) -> None:
        if width < 90 or height < 200:
            raise ValueError(f"screen must be at least 90x200 pixels, got {width}x{height}")
        self.width, self.height = width, height
        self.sx, self.sy = width / LW, height / LH
        self.s = min(self.sx, self.sy)
        self._patches: OrderedDict[tuple[Any, ...], np.ndarray] = OrderedDict()
        self._frames: OrderedDict[tuple[Op, ...], np.ndarray] = OrderedDict()
        self._fit: dict[tuple[str, int, int, int], tuple[str, ...]] = {}
        self._widths: dict[tuple[str, int], int] = {}
        self._rows: dict[Color, np.ndarray] = {}
        self._static: dict[tuple[int, Color], tuple[View, Op]] = {}
        self._frame_cache, self._patch_cache = frame_cache, patch_cache
        self.stats = {"frames": 0, "frame_hits": 0, "patches": 0}

    # ---------------------------------------------------------------- public
    def render(self, root: View) -> np.ndarray:
        """A fresh (caller-owned) screenshot of the tree."""
        out: np.ndarray = self.render_shared(root).copy()
        return out

    def render_shared(self, root: View) -> np.ndarray:
        """The screenshot as a read-only array shared with the frame cache (copy before writing)."""
        ops = tuple(self.compile(root))
        self.stats["frames"] += 1
        frame = self._frames.get(ops)
        if frame is not None:
            self._frames.move_to_end(ops)
            self.stats["frame_hits"] += 1
            return frame
        frame = np.empty((self.height, self.width, 3), dtype=np.uint8)
        flat = frame.reshape(self.height, self.width * 3)
        start = 0
        for i, op in enumerate(ops):  # everything before a full-screen fill is painted over
            if op[0] == "rect" and op[1] <= 0 and op[2] <= 0 and op[3] >= self.width and op[4] >= self.height and op[6] is None:
                start = i
        if not ops or ops[start][0] != "rect":
            flat[:] = 255
        for op in ops[start:]:
            self._exec(frame, flat, op)
        frame.flags.writeable = False
        self._frames[ops] = frame
        if len(self._frames) > self._frame_cache:
            self._frames.popitem(last=False)
        return frame

    def compile(self, root: View) -> list[Op]:
        """The draw ops for a tree (hashable tuples in paint order)."""
        ops: list[Op] = []
        self._compile(root, WHITE, ops)
        return ops

    # ---------------------------------------------------------------- compile
    def _px(self, r: tuple[float, float, float, float]) -> tuple[int, int, int, int]:
        return (round(r[0] * self.sx), round(r[1] * self.sy), round(r[2] * self.sx), round(r[3] * self.sy))

    def _compile(self, v: View, bg: Color, ops: list[Op]) -> None:
        if v.static and v.fill is not None and v.clip is None:
            ent = self._static.get((id(v), bg))
            if ent is None or ent[0] is not v:  # identity check: ids are reused after a view dies
                sub: list[Op] = []
                self._compile_view(v, bg, sub)
                ent = (v, ("layer", *self._px(v.rect), tuple(sub)))
                if len(self._static) > 256:
                    self._static.clear()
                self._static[(id(v), bg)] = ent
            ops.append(ent[1])
            return
        self._compile_view(v, bg, ops)

    def _compile_view(self, v: View, bg: Color, ops: list[Op]) -> None:
        if v.clip is not None and v.visible_rect() is None:
            return
        x0, y0, x1, y1 = self._px(v.rect)
        clip: Clip = self._px(v.clip) if v.clip is not None else None
        w, h = x1 - x0, y1 - y0
        if w <= 0 or h <= 0:
            return
        if v.patch:
            ops.append(("patch", v.patch, w, h, x0, y0, clip))
        if v.fill is not None or v.border is not None:
            fill = v.fill if v.fill is not None else bg
            if v.radius == 0 and v.border is None:
                ops.append(("rect", x0, y0, x1, y1, fill, clip))
            else:
                r = min(round(v.radius * self.s), w // 2, h // 2)
                ops.append(("shape", w, h, r, fill, v.border, bg, x0, y0, clip))
            bg = fill
        kind = v.kind
        if kind == "switch":
            self._switch(x0, y0, x1, y1, bool(v.checked), bg, clip, ops)
        elif kind == "input":
            self._input(v, x0, y0, x1, y1, bg, clip, ops)
        elif v.icon:
            self._icon_and_text(v, x0, y0, x1, y1, bg, clip, ops)
        elif v.text:
            self._text(v.text, v.size, v.fg, bg, v.bold, v.align, x0, y0, x1, y1, clip, ops, v.lines)
        for c in v.children:
            self._compile(c, bg, ops)

    def _icon_and_text(self, v: View, x0: int, y0: int, x1: int, y1: int, bg: Color, clip: Clip, ops: list[Op]) -> None:
        color = v.icon_color or v.fg
        if not v.text:
            full = v.on_tap is None and v.fill is None
            side = min(x1 - x0, y1 - y0)
            size = side if full else max(8, round(min(side * 0.62, 24 * self.s)))
            ops.append(("icon", v.icon, size, color, bg, x0 + (x1 - x0 - size) // 2, y0 + (y1 - y0 - size) // 2, clip))
            return
        size = max(8, round(min(y1 - y0, 40 * self.sy) * 0.5))
        if v.align == "center":
            tw = self._text_width(v.text, v.size)
            left = x0 + (x1 - x0 - tw - size - round(6 * self.s)) // 2
        else:
            left = x0 + round(12 * self.s)
        ops.append(("icon", v.icon, size, color, bg, left, y0 + (y1 - y0 - size) // 2, clip))
        tx = left + size + round(6 * self.s)
        self._text(v.text, v.size, v.fg, bg, v.bold, "left", tx, y0, x1, y1, clip, ops)

    def _input(self, v: View, x0: int, y0: int, x1: int, y1: int, bg: Color, clip: Clip, ops: list[Op]) -> None:
        pad = round(12 * self.s)
        tx = x0 + pad
        if v.icon:
            size = max(8, round(20 * self.s))
            ops.append(("icon", v.icon, size, SUBTLE, bg, tx, y0 + (y1 - y0 - size) // 2, clip))
            tx += size + round(8 * self.s)
        right = x1 - (round(36 * self.s) if v.text and v.children else pad)
        shown = v.text or v.placeholder
        color = v.fg if v.text else SUBTLE
        end = tx
        if shown:
            end = self._text(shown, v.size, color, bg, False, "left", tx, y0, right, y1, clip, ops)
        if v.focused:
            cx = end + 1 if v.text else tx
            ch = round(v.size * 1.3 * self.s)
            cy = y0 + (y1 - y0 - ch) // 2
            ops.append(("rect", cx, cy, cx + max(1, round(1.5 * self.s)), cy + ch, BLUE, clip))

    def _switch(self, x0: int, y0: int, x1: int, y1: int, on: bool, bg: Color, clip: Clip, ops: list[Op]) -> None:
        tw, th = round(36 * self.s), round(20 * self.s)
        tx, ty = x1 - tw - round(4 * self.s), y0 + (y1 - y0 - th) // 2
        track = (168, 199, 250) if on else (189, 193, 198)
        ops.append(("shape", tw, th, th // 2, track, None, bg, tx, ty, clip))
        k = th + round(4 * self.s)
        kx = tx + tw - k + round(2 * self.s) if on else tx - round(2 * self.s)
        ops.append(("shape", k, k, k // 2, BLUE if on else WHITE, None if on else FAINT, track, kx, ty - round(2 * self.s), clip))

    def _font(self, px: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
        return _TEXT.font(px)

    def _font_px(self, size: int) -> int:
        return max(7, round(size * self.s))

    def _text_width(self, text: str, size: int) -> int:
        return self._width(text, self._font_px(size))

    def _width(self, text: str, px: int) -> int:
        key = (text, px)
        w = self._widths.get(key)
        if w is None:
            if len(self._widths) > 50000:
                self._widths.clear()
            w = _TEXT.width(text, px)
            self._widths[key] = w
        return w

    def _fit_lines(self, text: str, px: int, width: int, lines: int) -> tuple[str, ...]:
        key = (text, px, width, lines)
        hit = self._fit.get(key)
        if hit is not None:
            return hit
        out: list[str] = []
        if lines == 1 and (len(text) <= 1 or self._width(text, px) <= width):  # a lone glyph may overhang
            self._fit[key] = (text,)
            return (text,)
        rest = text.split(" ")
        while rest and len(out) < lines:
            line = rest.pop(0)
            while rest and self._width(line + " " + rest[0], px) <= width:
                line += " " + rest.pop(0)
            if len(out) == lines - 1 and rest:
                line += " " + " ".join(rest)
                rest = []
            if self._width(line, px) > width:
                lo, hi = 0, len(line)
                while lo < hi:
                    mid = (lo + hi + 1) // 2
                    if _TEXT.width(line[:mid] + "…", px) <= width:
                        lo = mid
                    else:
                        hi = mid - 1
                line = line[:lo].rstrip() + "…"
            out.append(line)
        res = tuple(out)
        if len(self._fit) > 20000:
            self._fit.clear()
        self._fit[key] = res
        return res

    def _text(
        self,
        text: str,
        size: int,
        fg: Color,
        bg: Color,
        bold: bool,
        align: str,
        x0: int,
        y0: int,
        x1: int,
        y1: int,
        clip: Clip,
        ops: list[Op],
        lines: int = 1,
    ) -> int:
        """Append text ops; return the x where the (last) line ends."""
        px = self._font_px(size)
        width = max(1, x1 - x0)
        fitted = self._fit_lines(text, px, width, max(1, lines))
        asc, desc = _TEXT.metrics(px)
        lh = asc + desc
        step = round(lh * 1.2)
        total = lh + step * (len(fitted) - 1)
        y = y0 + (y1 - y0 - total) // 2
        end = x0
        for line in fitted:
            tw = self._width(line, px) + (1 if bold else 0)
            x = x0 if align == "left" else (x0 + (width - tw) // 2 if align == "center" else x1 - tw)
            ops.append(("text", line, px, fg, bg, bold, x, y, clip))
            end = x + tw
            y += step
        return end

    # ---------------------------------------------------------------- execute
    def _exec(self, frame: np.ndarray, flat: np.ndarray, op: Op, ox: int = 0, oy: int = 0) -> None:
        """Draw one op; (ox, oy) is the frame's origin on screen (non-zero for layer patches)."""
        kind = op[0]
        fh, fw = frame.shape[:2]
        if kind == "rect":
            _, x0, y0, x1, y1, color, clip = op
            x0, y0, x1, y1 = _clip_box(x0 - ox, y0 - oy, x1 - ox, y1 - oy, _shift(clip, ox, oy), fw, fh)
            if x1 > x0 and y1 > y0:
                row = self._rows.get(color)
                if row is None:  # a pre-tiled row: broadcasting a 3-vector over pixels is ~100x slower
                    row = np.tile(np.array(color, dtype=np.uint8), max(self.width, fw))
                    self._rows[color] = row
                flat[y0:y1, 3 * x0 : 3 * x1] = row[: 3 * (x1 - x0)]
            return
        if kind == "text":
            key: tuple[Any, ...] = ("t", *op[1:6])
            x, y, clip = op[6], op[7], op[8]
        elif kind == "icon":
            key = ("i", *op[1:5])
            x, y, clip = op[5], op[6], op[7]
        elif kind == "shape":
            key = ("s", *op[1:7])
            x, y, clip = op[7], op[8], op[9]
        elif kind == "layer":
            key = ("l", *op[1:])
            x, y, clip = op[1], op[2], None
        else:  # patch
            key = ("p", *op[1:4])
            x, y, clip = op[4], op[5], op[6]
        patch = self._patches.get(key)
        if patch is None:
            patch = self._patch(key)
        ph, pw = patch.shape[:2]
        x, y = x - ox, y - oy
        if clip is None and x >= 0 and y >= 0 and x + pw <= fw and y + ph <= fh:  # the common case
            frame[y : y + ph, x : x + pw] = patch
            return
        bx0, by0, bx1, by1 = _clip_box(x, y, x + pw, y + ph, _shift(clip, ox, oy), fw, fh)
        if bx1 > bx0 and by1 > by0:
            frame[by0:by1, bx0:bx1] = patch[by0 - y : by1 - y, bx0 - x : bx1 - x]

    def _patch(self, key: tuple[Any, ...]) -> np.ndarray:
        p = self._patches.get(key)
        if p is not None:
            return p
        kind = key[0]
        if kind == "t":
            _, text, px, fg, bg, bold = key
            p = _TEXT.patch(text, px, fg, bg, bold)
        elif kind == "i":
            _, name, size, color, bg = key
            p = icon_patch(name, size, color, bg)
        elif kind == "s":
            _, w, h, r, fill, border, bg = key
            p = _shape(w, h, r, fill, border, bg, max(1, round(self.s)))
        elif kind == "l":  # a static layer: run its ops on a scratch frame and keep its rectangle
            _, x0, y0, x1, y1, sub = key
            x0, y0 = max(0, x0), max(0, y0)
            p = np.full((max(1, y1 - y0), max(1, x1 - x0), 3), 255, dtype=np.uint8)
            flat = p.reshape(p.shape[0], p.shape[1] * 3)
            for op in sub:
                self._exec(p, flat, op, x0, y0)
        else:
            from digirl.sim.keyboard import keyboard_patch

            _, name, w, h = key
            p = keyboard_patch(name, w, h, self)
        p.flags.writeable = False
        self.stats["patches"] += 1
        self._patches[key] = p
        if len(self._patches) > self._patch_cache:
            self._patches.popitem(last=False)
        return p

    def text_patch(self, text: str, size: int, fg: Color, bg: Color) -> np.ndarray:
        """Text at logical ``size`` as an RGB array (used by pre-rendered pictures like the keyboard)."""
        return _TEXT.patch(text, self._font_px(size), fg, bg)


def _shift(clip: Clip, ox: int, oy: int) -> Clip:
    if clip is None or (ox == 0 and oy == 0):
        return clip
    return (clip[0] - ox, clip[1] - oy, clip[2] - ox, clip[3] - oy)


def _clip_box(x0: int, y0: int, x1: int, y1: int, clip: Clip, w: int, h: int) -> tuple[int, int, int, int]:
    if clip is not None:
        x0, y0, x1, y1 = max(x0, clip[0]), max(y0, clip[1]), min(x1, clip[2]), min(y1, clip[3])
    return max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)


def _shape(w: int, h: int, r: int, fill: Color, border: Color | None, bg: Color, bw: int) -> np.ndarray:
    """A rounded rectangle (``r`` = corner radius, pill/circle when r = h/2), anti-aliased 3×."""
    ss = 3
    im = Image.new("RGB", (w * ss, h * ss), bg)
    d = ImageDraw.Draw(im)
    box = (0, 0, w * ss - 1, h * ss - 1)
    if border is not None:
        d.rounded_rectangle(box, radius=r * ss, fill=border)
        inset = bw * ss
        d.rounded_rectangle((inset, inset, w * ss - 1 - inset, h * ss - 1 - inset), radius=max(0, (r - bw) * ss), fill=fill)
    else:
        d.rounded_rectangle(box, radius=r * ss, fill=fill)
    out: np.ndarray = np.asarray(im.resize((w, h), Image.Resampling.BOX)).copy()
    return out


_ELEMENT_KINDS = {"input", "switch", "button", "icon", "list_item", "tab", "app_icon", "key", "keyboard", "logo"}


def reference_elements(root: View) -> tuple[UIElement, ...]:
    """The visible UI elements of a view tree (normalized bounds), without those under an overlay."""
    out: list[UIElement] = []
    above: list[tuple[float, float, float, float]] = []  # opaque blockers painted after the node
    for v in reversed(list(flatten(root))):  # top-most first
        r = v.visible_rect()
        if r is None:
            continue
        if v.element is not False and (v.element or v.on_tap is not None or v.text or v.kind in _ELEMENT_KINDS):
            cx, cy = (r[0] + r[2]) / 2, (r[1] + r[3]) / 2
            covered = False
            for o in above:
                if o[0] <= cx <= o[2] and o[1] <= cy <= o[3]:
                    covered = True
                    break
            text = ("on" if v.checked else "off") if v.kind == "switch" else (v.text or v.placeholder)
            if not covered and (text or v.on_tap is not None):
                out.append(
                    UIElement(
                        (r[0] / W, r[1] / H, r[2] / W, r[3] / H),
                        text=text,
                        kind=v.kind,
                        clickable=v.on_tap is not None,
                        focused=v.focused,
                        ref=v.ref,
                    )
                )
        if v.blocker and (v.fill is not None or v.patch):
            above.append(r)
    out.reverse()  # paint order: background first, as the screen is read
    return tuple(out)
