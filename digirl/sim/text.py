"""Fast text rasterization from cached glyphs of Pillow's built-in font.

FreeType renders a 30-character string in ~0.3 ms; composing it from cached per-glyph alpha
masks with numpy takes a few tens of µs. Glyphs are placed at rounded advance positions (no
kerning), which is indistinguishable at phone-UI sizes. Symbols the built-in font lacks
(★, ☆, ×, ⇧, ⌫, …) are drawn from primitives so no "tofu" boxes appear.
"""

from __future__ import annotations

import math
import unicodedata

import numpy as np
from PIL import Image, ImageDraw, ImageFont

__all__ = ["TextRaster"]

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


#: A mask reduced to its inked columns: (columns, offset of the first one, advance).
_Part = tuple[np.ndarray, int, float]


def _ink(m: np.ndarray) -> tuple[np.ndarray, int]:
    """The inked columns of a mask and the offset of the first (an empty slice when blank)."""
    cols = np.flatnonzero(m.any(axis=0))
    if cols.size == 0:
        return m[:, :0], 0
    a = int(cols[0])
    return m[:, a : int(cols[-1]) + 1], a


class TextRaster:
    """Glyph cache + string composer for one process (shared by renderers of any size)."""

    def __init__(self) -> None:
        self._fonts: dict[int, ImageFont.FreeTypeFont | ImageFont.ImageFont] = {}
        self._metrics: dict[int, tuple[int, int]] = {}
        self._glyphs: dict[tuple[str, int], tuple[np.ndarray, float]] = {}
        self._luts: dict[tuple[tuple[int, int, int], tuple[int, int, int]], np.ndarray] = {}
        self._glyph_parts: dict[tuple[str, int], _Part] = {}
        self._words: dict[tuple[str, int], _Part] = {}
        self._advances: dict[tuple[str, int], float] = {}
        self._boxes: dict[int, bytes] = {}  # per size, how the font draws a code point it has no glyph for
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
            if not text.isascii() and self._missing(text, px):  # no "tofu": "ñ" as "n", "é" as "e"
                text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode() or text
            adv = font.getlength(text)
            im = Image.new("L", (math.ceil(adv) + 2 * pad + 2, asc + desc), 0)
            ImageDraw.Draw(im).text((pad, 0), text, font=font, fill=255)
        g = (np.asarray(im).copy(), float(adv))
        self._glyphs[key] = g
        return g

    def _missing(self, ch: str, px: int) -> bool:
        """Whether the built-in font has no glyph for ``ch`` (it draws the same box as for a
        code point no font has)."""

        box = self._boxes.get(px)
        if box is None:
            box = self._boxes[px] = self._drawn("\U0010fffd", px)
        return self._drawn(ch, px) == box

    def _drawn(self, text: str, px: int) -> bytes:
        im = Image.new("L", (4 * px, 2 * px), 0)
        ImageDraw.Draw(im).text((0, 0), text, font=self.font(px), fill=255)
        return im.tobytes()

    def width(self, text: str, px: int) -> int:
        words = text.split(" ")
        # = sum(self._advance(w, px) for w in words): the same additions from int 0, in a loop with
        # the advance cache read inline (every new string on a screen is measured once or twice).
        advances = self._advances
        run: float = 0
        for w in words:
            a = advances.get((w, px))
            run += a if a is not None else self._advance(w, px)
        return math.ceil(run + self._glyph(" ", px)[1] * (len(words) - 1))

    def fill_line(self, words: list[str], px: int, width: int) -> str:
        """Pop the first word of ``words`` and then each next one while ``width(line + " " + next)``
        fits, and return the line: the widths come from a running sum of the words' advances (the
        same float additions, in the same order, as :meth:`width` on each candidate), not from
        measuring each longer candidate string again."""
        line = words.pop(0)
        run: float = 0  # as sum() starts
        run += self._advance(line, px)
        space, n = self._glyph(" ", px)[1], 1
        while words:
            nxt = self._advance(words[0], px)
            if math.ceil((run + nxt) + space * n) > width:
                break
            line += " " + words.pop(0)
            run += nxt
            n += 1
        return line

    def fit_prefix(self, line: str, px: int, width: int) -> int:
        """The longest ``n`` with ``width(line[:n] + "…", px) <= width`` (0 if none), as found by a
        binary search over ``n``, without building the candidate strings: a candidate's width is
        the same float sums in the same order (whole words' advances, then the cut word's glyphs
        and "…", then the spaces), from prefix sums."""
        words = line.split(" ")
        adv = [self._advance(w, px) for w in words]
        sums = [0.0] * len(words)  # sums[k]: sum(adv[:k]) as sum() adds them, from 0
        run: float = 0
        for k, a in enumerate(adv):
            sums[k] = run
            run += a
        starts = [0] * len(words)
        for k in range(1, len(words)):
            starts[k] = starts[k - 1] + len(words[k - 1]) + 1
        space, ell = self._glyph(" ", px)[1], self._glyph("…", px)[1]
        glyph_sums: dict[int, list[float]] = {}

        def fits(n: int) -> bool:
            k = line.count(" ", 0, n)  # the cut word's index
            j = n - starts[k]
            g = glyph_sums.get(k)
            if g is None:
                g = [0.0]
                r: float = 0  # from int 0, as sum() starts
                for ch in words[k]:
                    r += self._glyph(ch, px)[1]
                    g.append(r)
                glyph_sums[k] = g
            last = float((g[j] if j else 0) + ell)
            return math.ceil((sums[k] if k else 0) + last + space * k) <= width

        lo, hi = 0, len(line)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if fits(mid):
                lo = mid
            else:
                hi = mid - 1
        return lo

    def _advance(self, word: str, px: int) -> float:
        """A word's advance, the same sum as in ``_compose`` but without drawing it (text fitting
        measures many strings, e.g. truncated prefixes, that are never drawn)."""
        key = (word, px)
        a = self._advances.get(key)
        if a is None:
            w = self._words.get(key)
            a = w[2] if w is not None else float(sum(self._glyph(ch, px)[1] for ch in word))
            if len(self._advances) > 100_000:
                self._advances.clear()
            self._advances[key] = a
        return a

    def _compose(self, parts: list[_Part], px: int, gap: float = 0.0) -> tuple[np.ndarray, float]:
        """Place masks left to right at rounded advances, keeping the maximum where they overlap;
        returns (canvas with a pad each side, advance). Parts carry only their inked columns, so
        most are pasted with one assignment (the canvas is still empty there)."""
        asc, desc = self.metrics(px)
        pad = self._pad
        total = float(sum(p[2] for p in parts)) + gap * max(0, len(parts) - 1)
        width = math.ceil(total) + 2 * pad + 4
        canvas = np.zeros((asc + desc, width), dtype=np.uint8)
        x = 0.0
        end = 0  # the canvas is blank from here on
        for ink, left, adv in parts:
            lo = round(x) + left
            hi = min(lo + ink.shape[1], width)
            if hi > lo:
                if lo >= end:
                    canvas[:, lo:hi] = ink[:, : hi - lo]
                else:
                    region = canvas[:, lo:hi]
                    np.maximum(region, ink[:, : hi - lo], out=region)
                end = max(end, hi)
            x += adv + gap
        return canvas, total

    def _glyph_part(self, ch: str, px: int) -> _Part:
        key = (ch, px)
        g = self._glyph_parts.get(key)
        if g is None:
            m, adv = self._glyph(ch, px)
            g = (*_ink(m), adv)
            self._glyph_parts[key] = g
        return g

    def _word(self, word: str, px: int) -> _Part:
        key = (word, px)
        w = self._words.get(key)
        if w is None:
            canvas, total = self._compose([self._glyph_part(ch, px) for ch in word], px)
            w = (*_ink(canvas), total)
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
        return np.take(lut, self.mask(text, px, bold), axis=0)  # = lut[mask], ~3x faster


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
