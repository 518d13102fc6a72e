"""The simulator's task layer: instruction parser, shipped task sets, task-file loading.

See docs/tasks.md. ``parse_instruction`` turns text into an :class:`~digirl.sim.intents.Intent`
(``explain_instruction`` also says how, or why not); ``load_taskset`` / ``load_task_file`` /
``task_from_instruction`` build ``TaskSpec`` lists.
Names are imported on first use, so ``python -m digirl.sim.tasks.tasksets`` runs cleanly.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "parse_instruction": "parser",
    "explain_instruction": "parser",
    "key_terms_match": "parser",
    "TASKSETS": "tasksets",
    "generate_taskset": "tasksets",
    "load_task_file": "tasksets",
    "load_taskset": "tasksets",
    "task_from_instruction": "tasksets",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{mod}"), name)
