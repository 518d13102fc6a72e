"""UI regions detected from a screenshot's pixels alone: boxes the pixels-only policy can point at.

A phone or web UI is drawn as flat fills (cards, buttons, bars, keys) with text lines and icons on
them. The detector segments it the way a person scans it, with a recursive XY-cut over colour:

1. A region's background is its most common colour; its *ink* is every pixel that differs from it.
2. Rows without ink cut the region into bands, columns without ink (wider than a word gap) cut a
   band into pieces, and each piece is cut again until nothing splits (a text line stays one piece:
   the gap between its words is narrower than ``col_gap``).
3. A piece whose own most common colour is not the background and fills most of it is a *box* (a
   button, a search bar, a keyboard key, a card): it is kept and its inside is segmented against its
   own colour. Any other piece is a leaf (a text line, an icon) and is kept as it is.

It reads nothing but the pixel array (no element list, no accessibility tree), so a policy that points
at these regions is a screenshot-only policy. Pure numpy; a 270×600 simulator screen takes a few ms.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from threading import Lock

import numpy as np

from digirl.core.types import UIElement

__all__ = ["CROP_SIZE", "RegionDetector", "box_recall_precision", "detect_regions", "region_crops", "region_elements"]

#: (height, width) of the pixel crop each detected region is shown to the encoder as.
CROP_SIZE = (12, 32)

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class RegionDetector:
    """Settings of the detector, in pixels of a screen ``ref_width`` wide (scaled with the screenshot)."""

    #: A channel difference above this from the background is ink (anti-aliased text edges included).
    tolerance: int = 28
    #: Empty columns at least this wide separate two pieces (a word gap is narrower, an icon's margin wider).
    col_gap: int = 10
    #: Empty rows at least this tall separate two bands.
    row_gap: int = 1
    #: Pieces smaller than this on either side are noise (a cursor, a divider's end, a dot).
    min_side: int = 3
    #: A piece is a box when its own colour covers at least this share of it.
    box_fill: float = 0.5
    #: Recursion depth of boxes inside boxes.
    max_depth: int = 4
    ref_width: int = 270

    def __call__(self, shot: np.ndarray) -> list[Box]:
        return self.detect(shot)

    def detect(self, shot: np.ndarray) -> list[Box]:
        """Boxes ``(x0, y0, x1, y1)`` as fractions of the screen, top to bottom then left to right."""
        if shot.ndim != 3 or shot.shape[2] < 3 or shot.shape[0] < 2 or shot.shape[1] < 2:
            raise ValueError(f"a screenshot is an H×W×3 array, got shape {shot.shape}")
        img = np.ascontiguousarray(shot[..., :3], dtype=np.uint8)
        h, w = img.shape[:2]
        scale = w / self.ref_width
        gaps = (max(1, round(self.row_gap * scale)), max(1, round(self.col_gap * scale)), max(1, round(self.min_side * scale)))
        # One int per pixel (24-bit colour): the background tests and colour counts are on this.
        packed = (img[..., 0].astype(np.int32) << 16) | (img[..., 1].astype(np.int32) << 8) | img[..., 2].astype(np.int32)
        found: list[tuple[int, int, int, int]] = []
        self._segment(img, packed, (0, 0, w, h), 0, gaps, found)
        found.sort(key=lambda b: (b[1], b[0], b[3], b[2]))
        return [(x0 / w, y0 / h, x1 / w, y1 / h) for x0, y0, x1, y1 in found]

    def _segment(
        self,
        img: np.ndarray,
        packed: np.ndarray,
        box: tuple[int, int, int, int],
        depth: int,
        gaps: tuple[int, int, int],
        out: list[tuple[int, int, int, int]],
    ) -> None:
        x0, y0, x1, y1 = box
        bg = _mode(packed[y0:y1, x0:x1])
        bg_rgb = np.array([(bg >> 16) & 255, (bg >> 8) & 255, bg & 255], np.int16)
        ink = np.abs(img[y0:y1, x0:x1].astype(np.int16) - bg_rgb).max(-1) > self.tolerance
        row_gap, col_gap, min_side = gaps
        for px0, py0, px1, py1 in _xy_cut(ink, row_gap, col_gap):
            if px1 - px0 < min_side or py1 - py0 < min_side:
                continue
            piece = (x0 + px0, y0 + py0, x0 + px1, y0 + py1)
            if piece == box:
                continue  # the region is one ink blob against its own colour: nothing more inside
            out.append(piece)
            if depth < self.max_depth and _is_box(packed, piece, bg, self.box_fill):
                self._segment(img, packed, piece, depth + 1, gaps, out)


def _mode(packed: np.ndarray) -> int:
    """The most common colour of a region (ties: the smallest value)."""
    values, counts = np.unique(packed, return_counts=True)
    return int(values[int(counts.argmax())])


def _is_box(packed: np.ndarray, piece: tuple[int, int, int, int], outer_bg: int, fill: float) -> bool:
    """Whether a piece is a filled box: a colour other than the background covers ``fill`` of it."""
    x0, y0, x1, y1 = piece
    region = packed[y0:y1, x0:x1]
    own = _mode(region)
    return own != outer_bg and float((region == own).mean()) >= fill and min(x1 - x0, y1 - y0) >= 8


def _runs(has: np.ndarray, gap: int) -> list[tuple[int, int]]:
    """[start, end) runs of True in ``has``, merging runs separated by fewer than ``gap`` False entries."""
    idx = np.flatnonzero(has)
    if idx.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(idx) > gap)
    starts = np.concatenate([[idx[0]], idx[breaks + 1]])
    ends = np.concatenate([idx[breaks], [idx[-1]]]) + 1
    return list(zip(starts.tolist(), ends.tolist()))


def _xy_cut(ink: np.ndarray, row_gap: int, col_gap: int) -> list[tuple[int, int, int, int]]:
    """Pieces (x0, y0, x1, y1) of an ink mask that empty rows and columns separate, cut until none splits."""
    out: list[tuple[int, int, int, int]] = []
    stack = [(0, 0, ink.shape[1], ink.shape[0])]
    while stack:
        x0, y0, x1, y1 = stack.pop()
        sub = ink[y0:y1, x0:x1]
        rows = _runs(np.asarray(sub.any(1)), row_gap)
        if not rows:
            continue
        if len(rows) > 1:
            stack.extend((x0, y0 + a, x1, y0 + b) for a, b in rows)
            continue
        ra, rb = rows[0]
        cols = _runs(np.asarray(sub[ra:rb].any(0)), col_gap)
        if len(cols) > 1:
            stack.extend((x0 + a, y0 + ra, x0 + b, y0 + rb) for a, b in cols)
            continue
        ca, cb = cols[0]
        out.append((x0 + ca, y0 + ra, x0 + cb, y0 + rb))
    return out


_DEFAULT = RegionDetector()
_CACHE: OrderedDict[tuple[tuple[int, ...], bytes], list[Box]] = OrderedDict()
_CACHE_LOCK = Lock()
_CACHE_SIZE = 4096


def detect_regions(shot: np.ndarray, detector: RegionDetector = _DEFAULT) -> list[Box]:
    """:meth:`RegionDetector.detect` with a cache of recent screens (collection and training revisit them).

    Keyed on a digest of the pixels, never on the array's identity, so a mutated array is detected again.
    """
    if detector is not _DEFAULT:
        return detector.detect(shot)
    key = (tuple(shot.shape), hashlib.blake2b(np.ascontiguousarray(shot).tobytes(), digest_size=16).digest())
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            return hit
    boxes = detector.detect(shot)
    with _CACHE_LOCK:
        _CACHE[key] = boxes
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return boxes


def region_elements(shot: np.ndarray, limit: int) -> tuple[UIElement, ...]:
    """The first ``limit`` detected regions as tappable elements without text (kind ``region``), so the
    policy's pointer, tap encoding (:func:`digirl.policies.features.element_under`) and decoding
    (:func:`digirl.policies.features.tap_point`) treat them exactly as they treat UI elements."""
    return tuple(UIElement(b, "", "region", True) for b in detect_regions(shot)[:limit])


def region_crops(shot: np.ndarray, elements: tuple[UIElement, ...], size: tuple[int, int] = CROP_SIZE) -> np.ndarray:
    """[n, 3, h, w] uint8: each element's box cut from the screenshot and sampled to ``size`` (nearest pixel)."""
    ch, cw = size
    out = np.zeros((len(elements), 3, ch, cw), np.uint8)
    if not elements:
        return out
    h, w = shot.shape[:2]
    b = np.array([e.bounds for e in elements], np.float64)
    fy = (np.arange(ch) + 0.5) / ch
    fx = (np.arange(cw) + 0.5) / cw
    ys = np.clip((b[:, 1:2] + fy * (b[:, 3:4] - b[:, 1:2])) * h, 0, h - 1).astype(np.int64)  # [n, ch]
    xs = np.clip((b[:, 0:1] + fx * (b[:, 2:3] - b[:, 0:1])) * w, 0, w - 1).astype(np.int64)  # [n, cw]
    patches = shot[ys[:, :, None], xs[:, None, :], :3]  # [n, ch, cw, 3]
    out[:] = patches.transpose(0, 3, 1, 2)
    return out


def box_recall_precision(detected: list[Box], reference: list[Box], *, min_cover: float = 0.5) -> tuple[float, float]:
    """(recall, precision) of detected boxes against reference boxes (e.g. the simulator's element list).

    A reference box is recalled when a tap at some detected box's centre lands in it and that box lies
    mostly inside it (``min_cover`` of its area): the policy can act on the reference by pointing at the
    detection. A detected box is precise when it lies mostly inside some reference box (a piece of a
    real element, not a phantom).
    """

    def inside(d: Box, r: Box) -> float:
        w = min(d[2], r[2]) - max(d[0], r[0])
        h = min(d[3], r[3]) - max(d[1], r[1])
        return max(0.0, w) * max(0.0, h) / max(1e-12, (d[2] - d[0]) * (d[3] - d[1]))

    def hits(d: Box, r: Box) -> bool:
        cx, cy = (d[0] + d[2]) / 2, (d[1] + d[3]) / 2
        return r[0] <= cx <= r[2] and r[1] <= cy <= r[3] and inside(d, r) >= min_cover

    recall = sum(any(hits(d, r) for d in detected) for r in reference) / max(1, len(reference))
    precision = sum(any(inside(d, r) >= min_cover for r in reference) for d in detected) / max(1, len(detected))
    return recall, precision
