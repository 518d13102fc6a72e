"""Make digirl's env ids known to Gymnasium without importing it (stdlib only; run by ``import digirl``).

Importing Gymnasium costs ~0.1 s, ten times ``import digirl``, and most runs never use it. So: if
Gymnasium is already imported, register now; otherwise watch for its import (a one-shot finder at
the front of ``sys.meta_path``) and register right after it has loaded. Either way
``gymnasium.make("digirl/sim-general-v0")`` works after ``import digirl``, whatever the import order.
Registration stores entry-point strings only; no env backend is imported until ``make``.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import logging
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

__all__ = ["install"]

log = logging.getLogger(__name__)


def _register() -> None:
    try:
        from digirl.envs.registry import register_gymnasium

        register_gymnasium()
    except Exception as e:
        log.warning("could not register digirl envs with Gymnasium: %s", e)


class _RegisteringLoader(importlib.abc.Loader):
    """Gymnasium's own loader, plus the registration once its package has run."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        _register()

    def __getattr__(self, name: str) -> Any:  # resource readers, get_source, ...: the real loader's
        return getattr(self._loader, name)


class _GymnasiumFinder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "gymnasium":
            return None
        _uninstall()  # one shot; also lets find_spec below see the real finders only
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _RegisteringLoader(spec.loader)
        return spec


def _uninstall() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _GymnasiumFinder)]


def install() -> None:
    """Register with Gymnasium now if it is loaded, else as soon as it is (idempotent)."""
    if "gymnasium" in sys.modules:
        _register()
    elif not any(isinstance(f, _GymnasiumFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _GymnasiumFinder())
