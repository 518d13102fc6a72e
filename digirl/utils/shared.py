"""Process-wide, reference-counted instances by key (one browser per config, one file server per
folder): the first :meth:`SharedInstances.acquire` of a key makes the instance, the last
:meth:`SharedInstances.release` of it tells its owner to close it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, Protocol, TypeVar

__all__ = ["SharedInstances"]


class _Closable(Protocol):
    @property
    def closed(self) -> bool: ...


K = TypeVar("K", bound=Hashable)
T = TypeVar("T", bound=_Closable)


class SharedInstances(Generic[K, T]):
    """The live instance of each key and how many holders each instance has. An instance closed some
    other way is replaced on the next acquire; releasing it still counts down its own holders."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: dict[K, T] = {}
        self._refs: dict[int, int] = {}  # id(instance) -> holders

    def acquire(self, key: K, make: Callable[[K], T]) -> T:
        """The live instance for ``key`` (``make(key)`` when there is none, or it was closed), with one holder more."""
        with self._lock:
            item = self._live.get(key)
            if item is None or item.closed:
                item = self._live[key] = make(key)
            self._refs[id(item)] = self._refs.get(id(item), 0) + 1
            return item

    def release(self, key: K, item: T) -> bool:
        """One holder of ``item`` fewer; ``True`` when none is left (``key`` then forgets it, and the
        caller closes it). Also ``True`` for an instance never acquired: its owner closes it."""
        with self._lock:
            left = self._refs.pop(id(item), 0) - 1
            if left > 0:
                self._refs[id(item)] = left
                return False
            if self._live.get(key) is item:
                del self._live[key]
            return True
