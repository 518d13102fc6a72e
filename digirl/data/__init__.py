"""Trajectory data: the on-disk store, the in-memory replay buffer and the Hugging Face export.

Attributes load lazily so that ``import digirl.data.replay`` does not pull in pyarrow.
"""

from __future__ import annotations

from digirl.utils.lazy import lazy_attributes

_LAZY = {
    "TrajectoryStore": "digirl.data.store",
    "ReplayBuffer": "digirl.data.replay",
    "export_hf": "digirl.data.hf",
}


__getattr__ = lazy_attributes(__name__, _LAZY)


__all__ = sorted(_LAZY)
