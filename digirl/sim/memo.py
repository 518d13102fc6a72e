"""A cache for pure content generators that return lists (see :mod:`digirl.sim.content`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

__all__ = ["memo_list"]

_P = ParamSpec("_P")
_T = TypeVar("_T")


def memo_list(fn: Callable[_P, list[_T]]) -> Callable[_P, list[_T]]:
    """Cache a pure generator (content depends only on its arguments; tasks repeat queries across
    episodes and pages are rebuilt on every step). Callers get a fresh list of frozen items."""
    cached = functools.lru_cache(maxsize=1024)(fn)  # a task set has ~500 queries per split

    @functools.wraps(fn)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> list[_T]:
        return list(cached(*args, **kwargs))  # type: ignore[arg-type]

    return wrapper
