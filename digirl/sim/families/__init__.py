"""Task families: what a task of the family asks (a predicate on the phone's state), how the
scripted expert does it (a closed-loop plan) and the initial state it needs (a setup).

One registry (:mod:`digirl.sim.family_registry`) holds them all: the AitW General / Web Shopping
families (:mod:`.aitw`), the phone families (:mod:`.device`, :mod:`.clock`, :mod:`.comms`,
:mod:`.media`, :mod:`.web`) and any family a user adds (:func:`register_family`, or a YAML spec:
:mod:`.spec`, docs/tasks.md). Importing this package registers every built-in family.

A predicate reads state only (settings, alarms, sent messages, the page shown, ...), never the
actions taken, so an agent succeeds by doing the task however it likes. :func:`~digirl.sim.predicates.check`
adds one rule for every family: nothing succeeds while the screen shows "Loading…".
"""

from __future__ import annotations

import importlib
from typing import Any

from digirl.sim.family_registry import (
    Plan,
    Predicate,
    Setup,
    TaskFamily,
    builtin_family,
    family_names,
    family_source,
    get_family,
    register_family,
    unregister_family,
)

# isort: off
# Every built-in family registers as its module loads, in this order (``family_names`` lists them so).
from digirl.sim.families import aitw, device, clock, comms, media, web, compound, surface, insearch, reading, files, notes, shop  # noqa: F401

# isort: on

__all__ = [
    "Plan",
    "Predicate",
    "Setup",
    "TaskFamily",
    "builtin_family",
    "ensure_family",
    "family_names",
    "family_source",
    "get_family",
    "register_family",
    "unregister_family",
]


def ensure_family(name: str, source: dict[str, Any] | None) -> None:
    """Make user family ``name`` available in this process from its ``source`` (see :func:`family_source`)."""
    if name in family_names() or not source:
        return
    if "spec" in source:
        from digirl.sim.families.spec import register_spec

        register_spec(source["spec"], source="task parameters")
    elif "module" in source:
        importlib.import_module(str(source["module"]))
