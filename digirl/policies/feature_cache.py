"""Featurized observations kept by a stable key, so a learner featurizes each observation once.

DigiRL's step critic scores every observation of the replay buffer at every update (and trains on
minibatches drawn from it). Featurizing, the screenshot's resize above all, costs about a
millisecond per observation on a CPU core, at every update, for every observation of a buffer that
holds up to 2,000 trajectories. The buffer's observations never change once collected, so their
arrays can be kept, keyed by (trajectory id, step).

Exact: a batch built from the cache equals :func:`featurize` of the same observations, array for
array (the screenshot is kept as the uint8 it was shrunk from and divided by 255 again, the same
float32 operation). ``tests/policies/test_feature_cache.py`` checks it.

Memory: about 19 KB per observation at the default feature size (a 104×48 screenshot), under 4% of
the 270×600 screenshot the buffer already holds for it. :meth:`FeatureCache.retain` drops the rows
of trajectories that left the buffer.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from digirl.core.types import Observation, UIElement
from digirl.policies.features import Batch, FeatureSpec, featurize

__all__ = ["FeatureCache"]


@dataclass(frozen=True)
class _Row:
    """One observation's arrays (the image as uint8: a quarter of its float32 size)."""

    image: np.ndarray  # [3*frame_stack, H, W] uint8
    instr: np.ndarray
    elem_words: np.ndarray
    elem_num: np.ndarray
    elem_kind: np.ndarray
    elem_mask: np.ndarray
    history: np.ndarray
    instr_words: list[str]
    elements: tuple[UIElement, ...]
    elem_pixels: np.ndarray | None  # [K, 3, h, w] uint8 (pixel regions only)
    source: tuple[str, int, tuple[int, ...]]  # _source() of the observation it was made from


def _source(obs: Observation) -> tuple[str, int, tuple[int, ...]]:
    """A cheap check that a key still names the observation its row was made from."""
    return (obs.instruction, obs.step, obs.screenshot.shape)


def _to_uint8(image: np.ndarray) -> np.ndarray:
    """The uint8 values a float32 image in [0, 1] was made from (``u8 / 255.0``), exactly."""
    out: np.ndarray = np.rint(image * np.float32(255.0)).astype(np.uint8)
    return out


def _to_float(image: np.ndarray) -> np.ndarray:
    """The float32 image, by the same operation :func:`digirl.policies.screens.resize_screen` uses."""
    out: np.ndarray = image.astype(np.float32) / 255.0
    return out


def _stack_crops(crops: list[np.ndarray | None]) -> np.ndarray | None:
    """The batch's region crops (``None`` unless the spec detects pixel regions: then every row has them)."""
    present = [c for c in crops if c is not None]
    return np.stack(present) if present else None


class FeatureCache:
    """:func:`featurize` with memory: rows are computed for keys not seen before and reused after.

    A key names one observation for as long as the cache lives (DigiRL uses ``(traj_id, step)``);
    the caller promises that a key's observation does not change. A row whose observation has
    another instruction, step or screen size than the one asked for (two trajectories sharing an
    id, say) is made again rather than reused.
    """

    def __init__(self, spec: FeatureSpec) -> None:
        self.spec = spec
        self._rows: dict[Hashable, _Row] = {}
        self.stats = {"hits": 0, "misses": 0}

    def __len__(self) -> int:
        return len(self._rows)

    def batch(self, keys: Sequence[Hashable], observations: Sequence[Observation]) -> Batch:
        """The batch :func:`featurize` would give for ``observations`` (``keys[i]`` names ``observations[i]``)."""
        if len(keys) != len(observations):
            raise ValueError(f"{len(keys)} keys for {len(observations)} observations")
        missing: dict[Hashable, int] = {}  # key -> its first position (a minibatch may repeat a key)
        for i, k in enumerate(keys):
            row = self._rows.get(k)
            if (row is None or row.source != _source(observations[i])) and k not in missing:
                missing[k] = i
        if missing:
            new = featurize([observations[i] for i in missing.values()], self.spec)
            for j, (k, i) in enumerate(missing.items()):
                self._rows[k] = _Row(
                    _to_uint8(new.image[j]),
                    new.instr[j],
                    new.elem_words[j],
                    new.elem_num[j],
                    new.elem_kind[j],
                    new.elem_mask[j],
                    new.history[j],
                    new.instr_words[j],
                    new.elements[j],
                    None if new.elem_pixels is None else new.elem_pixels[j],
                    _source(observations[i]),
                )
        self.stats["misses"] += len(missing)
        self.stats["hits"] += len(keys) - len(missing)
        if not keys:
            return featurize([], self.spec)
        rows = [self._rows[k] for k in keys]
        return Batch(
            _to_float(np.stack([r.image for r in rows])),
            np.stack([r.instr for r in rows]),
            np.stack([r.elem_words for r in rows]),
            np.stack([r.elem_num for r in rows]),
            np.stack([r.elem_kind for r in rows]),
            np.stack([r.elem_mask for r in rows]),
            np.stack([r.history for r in rows]),
            [list(r.instr_words) for r in rows],
            [r.elements for r in rows],
            _stack_crops([r.elem_pixels for r in rows]),
        )

    def retain(self, keys: Iterable[Hashable]) -> None:
        """Keep only the rows of ``keys`` (the observations still in use)."""
        keep = set(keys)
        for k in [k for k in self._rows if k not in keep]:
            del self._rows[k]
