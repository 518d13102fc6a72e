"""digirl: train device-control agents with autonomous reinforcement learning.

Importing ``digirl`` is cheap: torch and optional backends load only when used.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "Action": "digirl.core.actions",
    "ActionType": "digirl.core.actions",
    "Observation": "digirl.core.types",
    "Step": "digirl.core.types",
    "Trajectory": "digirl.core.types",
    "TaskSpec": "digirl.core.types",
    "UIElement": "digirl.core.types",
    "make": "digirl.envs.registry",
    "register": "digirl.envs.registry",
    "list_envs": "digirl.envs.registry",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'digirl' has no attribute {name!r}")


__all__ = ["__version__", *sorted(_LAZY)]
