"""Algorithm names → implementations: ``algo.name=digirl`` builds :class:`~digirl.algorithms.digirl.DigiRL`.

An entry point is ``"module:Class"``; the class is constructed as ``Class(policy, cfg, seed=seed)``
with the run's :class:`~digirl.algorithms.base.AlgoConfig` (an algorithm with options of its own
keeps them in a sub-config of ``AlgoConfig``, e.g. ``algo.critic``). Registering imports nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from digirl.core.errors import ConfigError

if TYPE_CHECKING:
    from digirl.algorithms.base import AlgoConfig, Algorithm
    from digirl.policies.base import Policy

__all__ = ["algorithm_names", "make_algorithm", "register_algorithm"]

_ALGORITHMS: dict[str, str] = {
    "filtered_bc": "digirl.algorithms.filtered_bc:FilteredBC",
    "digirl": "digirl.algorithms.digirl:DigiRL",
    "digiq": "digirl.algorithms.digiq.algorithm:DigiQ",
}


def register_algorithm(name: str, entry_point: str) -> None:
    """Register (or replace) an algorithm; ``entry_point`` is ``"module:Class"``."""
    if ":" not in entry_point:
        raise ValueError(f"entry_point must be 'module:Class', got {entry_point!r}")
    _ALGORITHMS[name] = entry_point


def algorithm_names() -> list[str]:
    return sorted(_ALGORITHMS)


def make_algorithm(policy: Policy, cfg: AlgoConfig, *, seed: int = 0) -> Algorithm:
    """The algorithm ``cfg.name`` for ``policy`` (which must be trainable)."""
    from digirl.policies.base import is_trainable

    if cfg.name not in _ALGORITHMS:
        raise ConfigError(f"unknown algorithm {cfg.name!r}; known: {', '.join(algorithm_names())}")
    if not is_trainable(policy):
        kind = getattr(policy, "kind", type(policy).__name__)
        raise ConfigError(f"policy kind {kind!r} cannot be trained (it only acts); use it with collect or eval")
    mod_name, _, attr = _ALGORITHMS[cfg.name].partition(":")
    algo: Algorithm = getattr(importlib.import_module(mod_name), attr)(policy, cfg, seed=seed)
    return algo
