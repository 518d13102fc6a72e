"""Screenshots shrunk for the policy's CNN: a BILINEAR resize, cached and updated in place.

A resize of a 270×600 screenshot costs ~0.5-1 ms and dominated acting. Collection mostly shows
screens seen before (the same home screen in many episodes, a tap that changed nothing) or a
screen that differs from the previous one in a band of rows (a typed character, a toggled
switch). So a small cache keeps recent frames with their shrunk form and, for a frame it has not
seen, reuses the rows that did not change.

Exact: the resize is :func:`digirl.utils.images.resize`, two separable passes each rounded to
uint8, the horizontal one first under every Pillow version. Row y of the horizontal pass depends on
input row y only, so rows equal to those of a cached frame reuse its horizontal pass and changed
bands are resized on their own; the vertical pass then runs on the whole. Frames are compared with
the cached frame's own copy, never by identity, so a caller that mutates its arrays cannot get a
stale result. ``tests/policies/test_screens.py`` checks every path against :func:`resize_screen`.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from PIL import Image

from digirl.utils.images import resize

__all__ = ["ScreenCache", "resize_screen", "shrink", "shrink_many"]

_BILINEAR = Image.Resampling.BILINEAR


def resize_screen(shot: np.ndarray, width: int, height: int) -> np.ndarray:
    """The reference: ``shot`` (H×W×3 uint8) resized to float32 [3, height, width] in [0, 1]."""
    img = resize(Image.fromarray(shot), (width, height), _BILINEAR)
    out: np.ndarray = np.asarray(img, dtype=np.float32).transpose(2, 0, 1) / 255.0
    return out


@dataclass
class _Entry:
    frame: np.ndarray  # private copy of the screenshot (compared against, never the caller's array)
    rows: np.ndarray  # its horizontal pass: [H, width, 3] uint8
    out: np.ndarray  # the result: [3, height, width] float32, read-only


class ScreenCache:
    """Shrinks screenshots to ``width``×``height`` exactly as :func:`resize_screen`, reusing work.

    Holds up to ``size`` recent frames (a private copy each). Thread-safe.
    """

    def __init__(self, width: int, height: int, size: int = 64) -> None:
        self.width, self.height, self.size = width, height, size
        self._entries: OrderedDict[tuple[tuple[int, ...], int], _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self.stats = {"hits": 0, "partial": 0, "full": 0, "rows_resized": 0}

    def get(self, shot: np.ndarray, previous: np.ndarray | None = None) -> np.ndarray:
        """The shrunk ``shot`` (read-only); ``previous`` (the frame before, if known) is where
        unchanged rows are most likely to be found."""
        if shot.ndim != 3 or shot.shape[2] != 3 or shot.dtype != np.uint8:
            return resize_screen(shot, self.width, self.height)  # not a screenshot this cache knows
        key = _key(shot)
        with self._lock:
            hit = self._entries.get(key)
            base = hit
            if previous is not None and previous.shape == shot.shape and previous.dtype == np.uint8:
                base = self._entries.get(_key(previous)) or base
        if hit is not None and _same(hit.frame, shot):
            with self._lock:
                if key in self._entries:
                    self._entries.move_to_end(key)
                self.stats["hits"] += 1
            return hit.out
        ent, rows_resized = self._make(shot, base)
        with self._lock:
            self.stats["partial" if rows_resized < shot.shape[0] else "full"] += 1
            self.stats["rows_resized"] += rows_resized
            self._entries[key] = ent
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return ent.out

    def _make(self, shot: np.ndarray, base: _Entry | None) -> tuple[_Entry, int]:
        """A new entry (and how many input rows went through the horizontal pass)."""
        bands = [(0, shot.shape[0])] if base is None else _bands(_changed_rows(shot, base.frame))
        if base is not None and bands == [(0, shot.shape[0])]:
            base = None
        if base is None:
            rows = _horizontal(shot, self.width)
        else:
            rows = base.rows.copy()
            for y0, y1 in bands:
                rows[y0:y1] = _horizontal(shot[y0:y1], self.width)
        img = Image.fromarray(rows).resize((self.width, self.height), _BILINEAR)  # vertical pass only
        out = np.asarray(img, dtype=np.float32).transpose(2, 0, 1) / 255.0
        out.flags.writeable = False
        frame = shot.copy()
        frame.flags.writeable = False
        return _Entry(frame, rows, out), sum(y1 - y0 for y0, y1 in bands)


def _key(shot: np.ndarray) -> tuple[tuple[int, ...], int]:
    """A cheap fingerprint (every 16th row); equality is always checked on the whole frame."""
    return (shot.shape, hash(shot[::16].tobytes()))


def _horizontal(rows: np.ndarray, width: int) -> np.ndarray:
    """The horizontal pass alone: a resize that keeps the height."""
    return np.asarray(Image.fromarray(rows).resize((width, rows.shape[0]), _BILINEAR))


def _words(a: np.ndarray, rows: int) -> np.ndarray:
    """``a`` as ``rows`` rows of the widest unsigned words that divide a row (faster compares)."""
    row_bytes = a.nbytes // rows if rows else 0
    word = next(w for w in (np.uint64, np.uint32, np.uint16, np.uint8) if row_bytes % np.dtype(w).itemsize == 0)
    return np.ascontiguousarray(a).reshape(rows, -1).view(word)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two frames are equal, byte for byte (the shape and dtype included)."""
    return a.shape == b.shape and a.dtype == b.dtype and bool((_words(a, 1) == _words(b, 1)).all())


def _changed_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Which rows of two equally shaped frames differ."""
    out: np.ndarray = (_words(a, a.shape[0]) != _words(b, b.shape[0])).any(axis=1)
    return out


def _bands(changed: np.ndarray) -> list[tuple[int, int]]:
    """Runs of True as (start, end) row ranges."""
    if not changed.any():
        return []
    d = np.diff(np.concatenate(([0], changed.view(np.int8), [0])))
    starts, ends = np.flatnonzero(d == 1), np.flatnonzero(d == -1)
    return [(int(s), int(e)) for s, e in zip(starts, ends)]


_CACHES: dict[tuple[int, int], ScreenCache] = {}
_CACHES_LOCK = threading.Lock()


def shrink(shot: np.ndarray, width: int, height: int, previous: np.ndarray | None = None) -> np.ndarray:
    """:func:`resize_screen` through this process's cache for that size (read-only result)."""
    cache = _CACHES.get((width, height))
    if cache is None:
        with _CACHES_LOCK:
            cache = _CACHES.setdefault((width, height), ScreenCache(width, height))
    return cache.get(shot, previous)


_POOL: ThreadPoolExecutor | None = None


def shrink_many(frames: Sequence[tuple[np.ndarray, np.ndarray | None]], width: int, height: int) -> list[np.ndarray]:
    """:func:`shrink` of each ``(shot, previous)``, in order, on a few threads: Pillow and numpy
    release the GIL while they work, and during a policy step the env workers' cores are idle."""
    global _POOL
    if len(frames) < 2:
        return [shrink(s, width, height, p) for s, p in frames]
    if _POOL is None:
        with _CACHES_LOCK:
            if _POOL is None:
                _POOL = ThreadPoolExecutor(min(8, os.cpu_count() or 1), thread_name_prefix="digirl-shrink")
    return list(_POOL.map(lambda sp: shrink(sp[0], width, height, sp[1]), frames))
