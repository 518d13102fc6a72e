"""Package attributes that import their module on first access (PEP 562), so importing a package stays
cheap: ``__getattr__ = lazy_attributes(__name__, {"Name": "pkg.module", ...})``."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``name`` is read from the module ``exports[name]``
    names (imported then, once, by Python's import cache); any other name is an AttributeError."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return __getattr__
