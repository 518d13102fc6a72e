"""The table of algorithm names: each name's implementation and config class, as ``"module:Class"``.

It sits below :mod:`digirl.algorithms.configs` (which checks ``algo.name`` against it) and
:mod:`digirl.algorithms.registry` (which builds algorithms from it), so neither imports the other
back. Registering imports nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from digirl.core.errors import ConfigError

if TYPE_CHECKING:
    from digirl.algorithms.configs import ActorConfig

__all__ = ["algorithm_config_class", "algorithm_names", "load_entry_point", "register_algorithm"]

_ACTOR_CONFIG = "digirl.algorithms.configs:ActorConfig"

#: name → (algorithm entry point, config class entry point)
ALGORITHMS: dict[str, tuple[str, str]] = {
    "filtered_bc": ("digirl.algorithms.filtered_bc:FilteredBC", "digirl.algorithms.configs:FilteredBCConfig"),
    "digirl": ("digirl.algorithms.digirl:DigiRL", "digirl.algorithms.configs:DigiRLConfig"),
    "digiq": ("digirl.algorithms.digiq.algorithm:DigiQ", "digirl.algorithms.configs:DigiQAlgoConfig"),
    "branch": ("digirl.algorithms.branch:BranchAlgorithm", "digirl.algorithms.configs:BranchConfig"),
    "grpo": ("digirl.algorithms.grpo:GRPO", "digirl.algorithms.configs:GRPOConfig"),
    "ppo": ("digirl.algorithms.ppo:PPO", "digirl.algorithms.configs:PPOConfig"),
}


def load_entry_point(entry_point: str) -> Any:
    """The object a ``"module:Class"`` string names (its module imported on first use)."""
    mod_name, _, attr = entry_point.partition(":")
    return getattr(importlib.import_module(mod_name), attr)


def register_algorithm(name: str, entry_point: str, config: str = _ACTOR_CONFIG) -> None:
    """Register (or replace) an algorithm; ``entry_point`` and ``config`` are ``"module:Class"``.

    ``config`` is the algorithm's own config class (an :class:`~digirl.algorithms.configs.ActorConfig`
    subclass); the ``algo`` section fills it, so its fields must be keys of that section."""
    for what, ep in (("entry_point", entry_point), ("config", config)):
        if ":" not in ep:
            raise ValueError(f"{what} must be 'module:Class', got {ep!r}")
    ALGORITHMS[name] = (entry_point, config)


def algorithm_names() -> list[str]:
    return sorted(ALGORITHMS)


def algorithm_config_class(name: str) -> type[ActorConfig]:
    """The config class algorithm ``name`` is built with."""
    if name not in ALGORITHMS:
        raise ConfigError(f"unknown algorithm {name!r}; known: {', '.join(algorithm_names())}")
    cls: type[ActorConfig] = load_entry_point(ALGORITHMS[name][1])
    return cls
