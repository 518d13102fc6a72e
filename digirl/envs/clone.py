"""Copying a pure-Python env's whole state mid-episode: what :meth:`DeviceEnv.clone` is built on.

:func:`copy_state` is :func:`copy.deepcopy` with one difference: functions that capture objects
(closures, lambdas with defaults) are copied with what they capture. ``copy`` treats every function
as atomic, so a copied button whose callback closes over the phone would still act on the *original*
phone: the copy would leak steps into its source. Bound methods are already copied with their
``self`` by ``copy`` itself.

Copying the whole object graph, not a list of fields, is deliberate: state a backend adds later (a
new app, a new random stream, a device variation) is covered without touching the clone.
Objects that are pure caches or immutable tables (a renderer, a task list) are passed in ``share``:
the copy then uses the same object instead of duplicating it.
"""

from __future__ import annotations

import copy
import threading
import types
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

__all__ = ["CloneUnsupportedError", "copy_state"]

T = TypeVar("T")

# copy's dispatch table is process-wide: swapping the function copier is serialised, and only for the
# duration of one copy_state call.
_LOCK = threading.RLock()


class CloneUnsupportedError(NotImplementedError):
    """This env cannot copy its state (a real device, a browser page); see ``env_has(id, "state_clone")``."""


def _has_contents(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 (an empty cell raises ValueError)
    except ValueError:
        return False
    return True


def _copy_function(f: types.FunctionType, memo: dict[int, Any]) -> types.FunctionType:
    """A function with its closure cells and defaults deep-copied; module-level functions stay shared."""
    if not (f.__closure__ or f.__defaults__ or f.__kwdefaults__):
        return f
    cells: tuple[types.CellType, ...] | None = None
    if f.__closure__:
        cells = tuple(
            types.CellType(copy.deepcopy(c.cell_contents, memo)) if _has_contents(c) else types.CellType() for c in f.__closure__
        )
    g = types.FunctionType(f.__code__, f.__globals__, f.__name__, copy.deepcopy(f.__defaults__, memo), cells)
    g.__kwdefaults__ = copy.deepcopy(f.__kwdefaults__, memo)
    g.__qualname__ = f.__qualname__
    g.__dict__.update(f.__dict__)
    memo[id(f)] = g
    return g


def copy_state(obj: T, *, share: Iterable[Any] = (), replace: Mapping[int, Any] | None = None) -> T:
    """A deep copy of ``obj`` whose closures are copied too (see the module docstring).

    ``share``: objects the copy refers to as they are (caches, read-only tables). ``replace``:
    ``id(original) → object`` to put in the copy instead of a copy of the original (e.g. a wrapper's
    inner env → that env's own clone, or a derived cache → ``None`` so the copy rebuilds it).
    """
    memo: dict[int, Any] = {}
    for s in share:
        if s is not None:
            memo[id(s)] = s
    memo.update(replace or {})
    table = copy._deepcopy_dispatch  # type: ignore[attr-defined]
    with _LOCK:
        before = table.get(types.FunctionType)
        table[types.FunctionType] = _copy_function
        try:
            return copy.deepcopy(obj, memo)
        finally:
            if before is None:
                del table[types.FunctionType]
            else:
                table[types.FunctionType] = before
