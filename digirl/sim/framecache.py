"""The renderer's cache of whole frames, with a frequency-guarded admission (W-TinyLFU-like).

A frame drawn for the second time (sightings are counted by key hash) enters a small LRU
*window*; a frame leaving the window moves to the *main* LRU if it has room or if the frame has
been shown more often lately than the main LRU frame it would evict. Counts halve every
``20 × size`` sightings, so screens that stopped recurring are forgotten.

Why: most screens of an expert episode are shown once, and many of those that recur do so once
or twice and long after. Admitting every frame on its second sighting straight into one LRU (the
previous policy) evicted the ones that recur most (home screens, apps' first pages); the window
still catches screens repeated in a burst (taps that change nothing, random actions).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

import numpy as np

__all__ = ["FrameCache"]


class FrameCache:
    """Up to ``size`` frames (read-only arrays) by hashable key."""

    def __init__(self, size: int) -> None:
        self._window_size = min(size, max(1, size // 12))
        self._main_size = size - self._window_size
        self._window: OrderedDict[Hashable, np.ndarray] = OrderedDict()
        self._main: OrderedDict[Hashable, np.ndarray] = OrderedDict()
        self._freq: dict[int, int] = {}  # key hash -> sightings lately (ints only: not GC-tracked)
        self._ticks = 0
        self._period = 20 * max(1, size)

    def __len__(self) -> int:
        return len(self._window) + len(self._main)

    def get(self, key: Hashable) -> np.ndarray | None:
        """The cached frame for ``key``, or None; counts one sighting of ``key`` either way."""
        h = hash(key)
        freq = self._freq
        freq[h] = freq.get(h, 0) + 1
        self._ticks += 1
        if self._ticks >= self._period:
            self._freq = {k: v // 2 for k, v in freq.items() if v > 1}
            self._ticks = 0
        frame = self._main.get(key)
        if frame is not None:
            self._main.move_to_end(key)
            return frame
        frame = self._window.get(key)
        if frame is not None:
            self._window.move_to_end(key)
        return frame

    def wants(self, key: Hashable) -> bool:
        """Whether a frame just drawn for ``key`` (after :meth:`get` missed) should be :meth:`put`."""
        return self._window_size > 0 and self._freq.get(hash(key), 0) >= 2

    def put(self, key: Hashable, frame: np.ndarray) -> None:
        """Keep ``frame`` (the cache's own copy; made read-only) in the window."""
        frame.flags.writeable = False
        window = self._window
        window[key] = frame
        if len(window) <= self._window_size:
            return
        old, pic = window.popitem(last=False)
        main = self._main
        if len(main) < self._main_size:
            main[old] = pic
        elif main and self._freq.get(hash(old), 0) > self._freq.get(hash(next(iter(main))), 0):
            main.popitem(last=False)
            main[old] = pic
