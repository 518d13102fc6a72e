"""Trajectory data: the on-disk store, the in-memory replay buffer and the Hugging Face export.

Attributes load lazily so that ``import digirl.data.replay`` does not pull in pyarrow.
"""

from __future__ import annotations

from typing import Any

_LAZY = {
    "TrajectoryStore": "digirl.data.store",
    "ReplayBuffer": "digirl.data.replay",
    "export_hf": "digirl.data.hf",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'digirl.data' has no attribute {name!r}")


__all__ = sorted(_LAZY)
