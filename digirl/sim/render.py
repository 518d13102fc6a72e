"""Render a :class:`~digirl.sim.ui.View` tree to a uint8 H×W×3 numpy screenshot.

Speed comes from caches at three levels: (1) every text run, icon and rounded shape is drawn once
with Pillow onto its known background colour and kept as a small RGB *patch*, so drawing a frame
is only numpy slice assignments; (2) a tree is compiled to a tuple of hashable draw ops, and the
ops of each text/icon/input/switch view are cached by what they depend on (text fitting and
measuring runs once per distinct label and place); (3) whole frames are cached by their ops (from a
frame's second sighting, guarded by how often frames recur: :mod:`digirl.sim.framecache`; the
status bar is pasted over the cached frame), so a screen seen before costs one array copy.
Static subtrees (status bar, keyboard, home screen) are one pre-rendered layer. Profiles show the
cost per frame is Python work per view and per op, not pixels (a full-screen fill is ~6 µs), so
the code keeps both loops flat and allocation-free.
Text uses Pillow's built-in scalable font (``ImageFont.load_default(size=N)``), no system fonts.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from digirl.sim.framecache import FrameCache
from digirl.sim.icons import icon_patch
from digirl.sim.text import TextRaster
from digirl.sim.ui import BLUE, FAINT, SUBTLE, WHITE, Color, View
from digirl.sim.ui import H as LH
from digirl.sim.ui import W as LW
from digirl.utils.images import resize

__all__ = ["FrameKey", "Renderer"]

_T = TypeVar("_T")

#: A draw op: ``("r", x0, y0, x1, y1, colour)`` fills a box (already cut to its clip rectangle);
#: ``("p", key, x, y, clip)`` pastes the cached patch ``key`` with its top-left at (x, y).
Op = tuple[Any, ...]
_TEXT = TextRaster()  # glyphs are shared by every renderer in the process
Clip = tuple[int, int, int, int] | None
_LEAF_KINDS = ("switch", "input")


class Renderer:
    """Draws view trees at ``width``×``height`` pixels (logical 360×800 scaled)."""

    def __init__(self, width: int, height: int, *, frame_cache: int = 48, patch_cache: int = 20000) -> None:
        if width < 90 or height < 200:
            raise ValueError(f"screen must be at least 90x200 pixels, got {width}x{height}")
        self.width, self.height = width, height
        self.sx, self.sy = width / LW, height / LH
        self.s = min(self.sx, self.sy)
        self._patches: OrderedDict[tuple[Any, ...], np.ndarray] = OrderedDict()
        self._frames = FrameCache(frame_cache)
        self._fit: dict[tuple[str, int, int, int], tuple[str, ...]] = {}
        self._widths: dict[tuple[str, int], int] = {}
        self._rows: dict[Color, np.ndarray] = {}
        # Static subtrees by identity (the system views every phone shares: status bars, navigation
        # bar, keyboards). An entry keeps its view alive; those views hold no phone.
        self._static: OrderedDict[tuple[int, Color], tuple[View, Op]] = OrderedDict()
        self._inlined: OrderedDict[tuple[int, Color], tuple[View, tuple[Op, ...]]] = OrderedDict()
        self._leaf: dict[tuple[Any, ...], tuple[Op, ...]] = {}
        # A leaf's ops at the origin, unclipped, by what they depend on but place (see _leaf_moved).
        self._leaf_rel: dict[tuple[Any, ...], tuple[Op, ...]] = {}
        self._pxr: dict[tuple[float, float, float, float], tuple[int, int, int, int]] = {}
        self._patch_cache = patch_cache
        self.stats = {"frames": 0, "frame_hits": 0, "patches": 0}

    # ---------------------------------------------------------------- public
    def render(self, root: View) -> np.ndarray:
        """A fresh (caller-owned) screenshot of the tree."""
        return self.render_key(self.frame_key(root))

    def frame_key(self, root: View) -> FrameKey:
        """What a screenshot of the tree depends on (its draw ops): equal keys and ``top``, equal
        pictures; equal keys alone, equal pictures but for the rows of ``top``."""
        ops = self.compile(root)
        # The status bar: a full-width layer at the top, then only layers below its rows (the
        # navigation bar). Each op is an opaque rectangle, so painting it last changes nothing.
        n = len(ops)
        for i in range(n - 1, max(n - 3, -1), -1):
            op = ops[i]
            if op[0] != "p" or op[1][0] != "l" or op[4] is not None:
                break
            k = op[1]
            if k[1] == 0 and k[2] == 0 and k[3] >= self.width and op[2] == 0 and op[3] == 0:
                bottom = k[4]
                if all(o[0] == "p" and o[1][0] == "l" and o[4] is None and o[3] == o[1][2] >= bottom for o in ops[i + 1 :]):
                    return FrameKey((*ops[:i], *ops[i + 1 :]), op, i)
                break
        return FrameKey(tuple(ops))

    def render_key(self, key: FrameKey) -> np.ndarray:
        """A fresh (caller-owned) screenshot for a :meth:`frame_key`. A frame the cache does not
        take (:mod:`digirl.sim.framecache`: most screens of an expert episode are seen once) is
        handed over as drawn, with no copy."""
        self.stats["frames"] += 1
        frame = self._frames.get(key)
        if frame is not None:
            self.stats["frame_hits"] += 1
            out: np.ndarray = frame.copy()
            if key.top is not None:
                h, w = self.height, self.width
                self._run(out, out.reshape(h, w * 3), (key.top,), 0, 0)
            return out
        out = self._draw(key)
        if self._frames.wants(key):
            self._frames.put(key, out.copy())
        return out

    def render_shared(self, root: View) -> np.ndarray:
        """The screenshot as a read-only array (kept for callers of the old API; = :meth:`render`)."""
        frame = self.render(root)
        frame.flags.writeable = False
        return frame

    def _draw(self, key: FrameKey) -> np.ndarray:
        w, h = self.width, self.height
        frame = np.empty((h, w, 3), dtype=np.uint8)
        flat = frame.reshape(h, w * 3)
        shown, covered = self._visible(key.all_ops())
        if not covered:
            flat[:] = 255
        self._run(frame, flat, shown, 0, 0)
        return frame

    def _visible(self, ops: tuple[Op, ...]) -> tuple[tuple[Op, ...], bool]:
        """The ops not painted over, and whether they cover every pixel. Every op is an opaque
        rectangle, so a fill whose rows are all overwritten by later full-width ops (the app's
        background under its content box and system bars, a list behind its rows) is skipped;
        so is everything under the last full-screen op. Only fills are tested (their rows are in
        the op); full-width fills and system layers are the occluders."""
        w, h = self.width, self.height
        bands: list[tuple[int, int]] = []  # merged rows covered by full-width ops after the current one
        hidden: list[int] = []
        for i in range(len(ops) - 1, -1, -1):
            op = ops[i]
            if op[0] == "r":
                y0, y1 = op[2], op[4]
                if y0 < 0:
                    y0 = 0
                if y1 > h:
                    y1 = h
                if y1 <= y0:
                    continue
                for a, b in bands:  # loops, not any(genexpr): this runs for every op of a new frame
                    if a <= y0 and y1 <= b:
                        break
                else:
                    if not (op[1] <= 0 and op[3] >= w):
                        continue
                    bands = _merge(bands, y0, y1)
                    if bands[0][0] <= 0 and bands[0][1] >= h:  # all rows: nothing before this op shows
                        return _without(ops[i:], [j - i for j in hidden]), True
                    continue
                hidden.append(i)
                continue
            key = op[1]
            if key[0] != "l" or op[4] is not None:
                continue
            # A layer's patch spans its rect from the clamped origin and is pasted at the op's (x, y).
            x0, y0 = op[2], max(op[3], 0)
            x1 = x0 + max(1, key[3] - max(0, key[1]))
            y1 = min(op[3] + max(1, key[4] - max(0, key[2])), h)
            if not (x0 <= 0 and x1 >= w) or y1 <= y0:
                continue
            bands = _merge(bands, y0, y1)
            if bands[0][0] <= 0 and bands[0][1] >= h:
                return _without(ops[i:], [j - i for j in hidden]), True
        return _without(ops, hidden), False

    def compile(self, root: View) -> list[Op]:
        """The draw ops for a tree (hashable tuples in paint order)."""
        ops: list[Op] = []
        self._compile(root, WHITE, ops)
        return ops

    # ---------------------------------------------------------------- compile
    def _px(self, r: tuple[float, float, float, float]) -> tuple[int, int, int, int]:
        return (round(r[0] * self.sx), round(r[1] * self.sy), round(r[2] * self.sx), round(r[3] * self.sy))

    def _px_new(self, r: tuple[float, float, float, float]) -> tuple[int, int, int, int]:
        """:meth:`_px`, kept in ``_pxr`` (equal rects, e.g. ``0`` and ``0.0``, give equal pixels)."""
        p = self._px(r)
        if len(self._pxr) > 50000:
            self._pxr.clear()
        self._pxr[r] = p
        return p

    def _compile(self, root: View, bg: Color, ops: list[Op], layer: View | None = None) -> None:
        """Pre-order walk with an explicit stack (children inherit the fill below them as ``bg``);
        ``layer`` is the static view whose own ops are being compiled (not drawn as a layer)."""
        s = self.s
        append = ops.append
        px = self._pxr
        # Two stacks, views and the fill below each: no (view, bg) tuple per child.
        views: list[View] = [root]
        bgs: list[Color] = [bg]
        pop, pop_bg, extend, extend_bg = views.pop, bgs.pop, views.extend, bgs.extend
        while views:
            v = pop()
            bg = pop_bg()
            rc = v.clip
            if v.static and rc is None and v is not layer and (v.fill is not None or not v.picture):
                if v.picture:
                    append(self._layer(v, bg))
                else:
                    ops.extend(self._inline(v, bg))
                continue
            r = v.rect
            if rc is not None:
                # = min(r[2], rc[2]) > max(r[0], rc[0]) and ..., without four builtin calls
                if not (
                    (r[2] if r[2] < rc[2] else rc[2]) > (r[0] if r[0] > rc[0] else rc[0])
                    and (r[3] if r[3] < rc[3] else rc[3]) > (r[1] if r[1] > rc[1] else rc[1])
                ):
                    continue  # clipped away entirely (children included)
                clip: Clip = px.get(rc) or self._px_new(rc)
            else:
                clip = None
            # Pixel rects by logical rect: layouts repeat, and a lookup is ~5x cheaper than 4 round()s.
            x0, y0, x1, y1 = px.get(r) or self._px_new(r)
            w, h = x1 - x0, y1 - y0
            if w <= 0 or h <= 0:
                continue
            if v.patch:
                append(("p", ("p", v.patch, w, h), x0, y0, clip))
            fill = v.fill
            if fill is not None or v.border is not None:
                if fill is None:
                    fill = bg
                if v.radius == 0 and v.border is None:
                    if clip is None:  # = _rect_op(...), inlined
                        append(("r", x0, y0, x1, y1, fill))
                    else:
                        op = _rect_op(x0, y0, x1, y1, fill, clip)
                        if op is not None:
                            append(op)
                else:
                    rad = min(round(v.radius * s), w // 2, h // 2)
                    append(("p", ("s", w, h, rad, fill, v.border, bg), x0, y0, clip))
                bg = fill
            kind = v.kind
            if kind in _LEAF_KINDS or v.icon or v.text:
                ops.extend(self._leaf_cached(v, bg, x0, y0, x1, y1, clip))
            children = v.children
            if children:
                if len(children) == 1:
                    views.append(children[0])
                    bgs.append(bg)
                else:
                    extend(reversed(children))
                    extend_bg([bg] * len(children))

    def _leaf_cached(self, v: View, bg: Color, x0: int, y0: int, x1: int, y1: int, clip: Clip) -> tuple[Op, ...]:
        """A leaf's ops (text, icon, control) at this place, from the cache or :meth:`_leaf_moved`."""
        # Everything a leaf's ops depend on; the tuple is also the cache key.
        key = (
            v.kind,
            v.text,
            v.icon,
            v.icon_color,
            v.fg,
            v.size,
            v.bold,
            v.align,
            v.lines,
            v.placeholder,
            v.focused,
            v.checked,
            v.on_tap is None and v.fill is None,
            bool(v.children),
            bg,
            x0,
            y0,
            x1,
            y1,
            clip,
        )
        leaf_cache = self._leaf
        leaf = leaf_cache.get(key)
        if leaf is None:
            leaf = self._leaf_moved(v, key, x0, y0, x1, y1, bg, clip)
            if len(leaf_cache) > 50000:
                leaf_cache.clear()
            leaf_cache[key] = leaf
        return leaf

    def _layer(self, v: View, bg: Color) -> Op:
        """The op of a static subtree: one patch drawn from the subtree's own ops."""
        return self._by_view(self._static, 64, v, bg, self._layer_op)

    def _layer_op(self, v: View, sub: tuple[Op, ...]) -> Op:
        x0, y0, x1, y1 = self._px(v.rect)
        return ("p", ("l", x0, y0, x1, y1, FrameKey(sub)), x0, y0, None)

    def _inline(self, v: View, bg: Color) -> tuple[Op, ...]:
        """The ops of a static subtree drawn op by op (``picture`` False), compiled once per view."""
        return self._by_view(self._inlined, 512, v, bg, lambda _v, ops: ops)

    def _by_view(
        self,
        store: OrderedDict[tuple[int, Color], tuple[View, _T]],
        bound: int,
        v: View,
        bg: Color,
        make: Callable[[View, tuple[Op, ...]], _T],
    ) -> _T:
        """``make(v, ops of v's subtree)``, kept per (view, fill below) in an LRU of ``bound`` entries."""
        key = (id(v), bg)
        ent = store.get(key)
        if ent is not None and ent[0] is v:  # identity check: ids are reused after a view dies
            store.move_to_end(key)
            return ent[1]
        sub: list[Op] = []
        self._compile(v, bg, sub, layer=v)
        val = make(v, tuple(sub))
        store[key] = (v, val)
        if len(store) > bound:
            store.popitem(last=False)
        return val

    def _leaf_moved(
        self, v: View, key: tuple[Any, ...], x0: int, y0: int, x1: int, y1: int, bg: Color, clip: Clip
    ) -> tuple[Op, ...]:
        """:meth:`_leaf_ops` of a leaf not seen at this place, moved from its ops at the origin.

        Most leaves missing the place-keyed cache were laid out before at another place (a result
        row that moved with the page's shuffle, ad or scroll): fitting and measuring their text is
        the cost, and it does not depend on the place. Leaf layout is integer arithmetic on pixel
        offsets from (x0, y0), so moving the ops is exact; ``clip`` is applied after the move as
        :meth:`_leaf_ops` applies it (carried by patches, cut into fills)."""
        rel_key = (*key[:15], x1 - x0, y1 - y0)  # key without x0, y0, x1, y1, clip (see _compile)
        rel = self._leaf_rel.get(rel_key)
        if rel is None:
            rel = self._leaf_ops(v, 0, 0, x1 - x0, y1 - y0, bg, None)
            if len(self._leaf_rel) > 20000:
                self._leaf_rel.clear()
            self._leaf_rel[rel_key] = rel
        out: list[Op] = []
        for op in rel:
            if op[0] == "p":
                out.append(("p", op[1], op[2] + x0, op[3] + y0, clip))
            else:
                r = _rect_op(op[1] + x0, op[2] + y0, op[3] + x0, op[4] + y0, op[5], clip)
                if r is not None:
                    out.append(r)
        return tuple(out)

    def _leaf_ops(self, v: View, x0: int, y0: int, x1: int, y1: int, bg: Color, clip: Clip) -> tuple[Op, ...]:
        ops: list[Op] = []
        kind = v.kind
        if kind == "switch":
            self._switch(x0, y0, x1, y1, bool(v.checked), bg, clip, ops)
        elif kind == "input":
            self._input(v, x0, y0, x1, y1, bg, clip, ops)
        elif v.icon:
            self._icon_and_text(v, x0, y0, x1, y1, bg, clip, ops)
        elif v.text:
            self._text(v.text, v.size, v.fg, bg, v.bold, v.align, x0, y0, x1, y1, clip, ops, v.lines)
        return tuple(ops)

    def _icon_and_text(self, v: View, x0: int, y0: int, x1: int, y1: int, bg: Color, clip: Clip, ops: list[Op]) -> None:
        color = v.icon_color or v.fg
        if not v.text:
            full = v.on_tap is None and v.fill is None
            side = min(x1 - x0, y1 - y0)
            size = side if full else max(8, round(min(side * 0.62, 24 * self.s)))
            ops.append(("p", ("i", v.icon, size, color, bg), x0 + (x1 - x0 - size) // 2, y0 + (y1 - y0 - size) // 2, clip))
            return
        size = max(8, round(min(y1 - y0, 40 * self.sy) * 0.5))
        if v.align == "center":
            tw = self._text_width(v.text, v.size)
            left = x0 + (x1 - x0 - tw - size - round(6 * self.s)) // 2
        else:
            left = x0 + round(12 * self.s)
        ops.append(("p", ("i", v.icon, size, color, bg), left, y0 + (y1 - y0 - size) // 2, clip))
        tx = left + size + round(6 * self.s)
        self._text(v.text, v.size, v.fg, bg, v.bold, "left", tx, y0, x1, y1, clip, ops)

    def _input(self, v: View, x0: int, y0: int, x1: int, y1: int, bg: Color, clip: Clip, ops: list[Op]) -> None:
        pad = round(12 * self.s)
        tx = x0 + pad
        if v.icon:
            size = max(8, round(20 * self.s))
            ops.append(("p", ("i", v.icon, size, SUBTLE, bg), tx, y0 + (y1 - y0 - size) // 2, clip))
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
            op = _rect_op(cx, cy, cx + max(1, round(1.5 * self.s)), cy + ch, BLUE, clip)
            if op is not None:
                ops.append(op)

    def _switch(self, x0: int, y0: int, x1: int, y1: int, on: bool, bg: Color, clip: Clip, ops: list[Op]) -> None:
        tw, th = round(36 * self.s), round(20 * self.s)
        tx, ty = x1 - tw - round(4 * self.s), y0 + (y1 - y0 - th) // 2
        track = (168, 199, 250) if on else (189, 193, 198)
        ops.append(("p", ("s", tw, th, th // 2, track, None, bg), tx, ty, clip))
        k = th + round(4 * self.s)
        kx = tx + tw - k + round(2 * self.s) if on else tx - round(2 * self.s)
        knob = ("s", k, k, k // 2, BLUE if on else WHITE, None if on else FAINT, track)
        ops.append(("p", knob, kx, ty - round(2 * self.s), clip))

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
            line = _TEXT.fill_line(rest, px, width)  # = add words while _width(line + " " + word) fits
            if len(out) == lines - 1 and rest:
                line += " " + " ".join(rest)
                rest = []
            if self._width(line, px) > width:
                lo = _TEXT.fit_prefix(line, px, width)  # = a binary search on _TEXT.width(line[:n] + "…")
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
            ops.append(("p", ("t", line, px, fg, bg, bold), x, y, clip))
            end = x + tw
            y += step
        return end

    # ---------------------------------------------------------------- execute
    def _run(self, frame: np.ndarray, flat: np.ndarray, ops: tuple[Op, ...], ox: int, oy: int) -> None:
        """Draw ops in order; (ox, oy) is the frame's origin on screen (non-zero for layer patches).
        Bounds are cut with conditionals, not max()/min() (builtin calls cost ~0.1 us each, and a
        drawn frame runs ~30 ops), and a patch whose clip rectangle holds it whole is pasted as is."""
        fh, fw = frame.shape[:2]
        patches, rows = self._patches, self._rows
        for op in ops:
            if op[0] == "r":
                _, x0, y0, x1, y1, color = op
                x0 -= ox
                y0 -= oy
                x1 -= ox
                y1 -= oy
                if x0 < 0:
                    x0 = 0
                if y0 < 0:
                    y0 = 0
                if x1 > fw:
                    x1 = fw
                if y1 > fh:
                    y1 = fh
                if x1 > x0 and y1 > y0:
                    row = rows.get(color)
                    if row is None:  # a pre-tiled row: broadcasting a 3-vector over pixels is ~100x slower
                        row = np.tile(np.array(color, dtype=np.uint8), max(self.width, fw))
                        rows[color] = row
                    flat[y0:y1, 3 * x0 : 3 * x1] = row[: 3 * (x1 - x0)]
                continue
            _, key, x, y, clip = op
            patch = patches.get(key)
            if patch is None:
                patch = self._patch(key)
            ph, pw, _ = patch.shape
            x -= ox
            y -= oy
            bx0, by0, bx1, by1 = x, y, x + pw, y + ph
            if clip is not None:
                cx0, cy0, cx1, cy1 = clip[0] - ox, clip[1] - oy, clip[2] - ox, clip[3] - oy
                if bx0 < cx0:
                    bx0 = cx0
                if by0 < cy0:
                    by0 = cy0
                if bx1 > cx1:
                    bx1 = cx1
                if by1 > cy1:
                    by1 = cy1
            if bx0 < 0:
                bx0 = 0
            if by0 < 0:
                by0 = 0
            if bx1 > fw:
                bx1 = fw
            if by1 > fh:
                by1 = fh
            if bx0 == x and by0 == y and bx1 == x + pw and by1 == y + ph:  # the common case: all of it shows
                frame[y:by1, x:bx1] = patch
            elif bx1 > bx0 and by1 > by0:
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
            self._run(p, p.reshape(p.shape[0], p.shape[1] * 3), sub.ops, x0, y0)
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


class FrameKey:
    """A frame's (or layer's) ops as a dict key, hashed once (hashing nested op tuples costs about
    as much as drawing a few ops, and a key is looked up and stored).

    ``top`` is an op painted last over whole rows that nothing else covers (the status bar, whose
    clock and battery vary between episodes); it is left out of the key (``ops``) and pasted over
    a cached frame, so a screen seen before with another status bar is still a cache hit.
    ``ops`` then holds the others in order, and ``top`` goes at index ``at`` to draw it whole."""

    __slots__ = ("_hash", "at", "ops", "top")

    def __init__(self, ops: tuple[Op, ...], top: Op | None = None, at: int = 0) -> None:
        self.ops, self.top, self.at = ops, top, at
        self._hash = hash(ops)

    def all_ops(self) -> tuple[Op, ...]:
        """Every op in paint order."""
        if self.top is None:
            return self.ops
        return (*self.ops[: self.at], self.top, *self.ops[self.at :])

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, FrameKey) and self._hash == other._hash and self.ops == other.ops)


def _merge(bands: list[tuple[int, int]], a: int, b: int) -> list[tuple[int, int]]:
    """Row intervals ``bands`` (sorted, disjoint) with ``[a, b)`` added."""
    out: list[tuple[int, int]] = []
    for lo, hi in bands:
        if hi < a or lo > b:
            out.append((lo, hi))
        else:
            a, b = min(a, lo), max(b, hi)
    out.append((a, b))
    out.sort()
    return out


def _without(ops: tuple[Op, ...], drop: list[int]) -> tuple[Op, ...]:
    if not drop:
        return ops
    gone = set(drop)
    return tuple(op for i, op in enumerate(ops) if i not in gone)


def _rect_op(x0: int, y0: int, x1: int, y1: int, color: Color, clip: Clip) -> Op | None:
    """A fill op cut to its clip rectangle, or None when nothing of it is visible."""
    if clip is not None:
        x0, y0, x1, y1 = max(x0, clip[0]), max(y0, clip[1]), min(x1, clip[2]), min(y1, clip[3])
        if x1 <= x0 or y1 <= y0:
            return None
    return ("r", x0, y0, x1, y1, color)


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
    out: np.ndarray = np.asarray(resize(im, (w, h), Image.Resampling.BOX)).copy()
    return out
