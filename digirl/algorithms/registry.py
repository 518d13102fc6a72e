"""Algorithm names → implementations and their config classes: ``algo.name=digirl`` builds
:class:`~digirl.algorithms.digirl.DigiRL` with a :class:`~digirl.algorithms.configs.DigiRLConfig`.

An entry point is ``"module:Class"``; the class is constructed as ``Class(policy, cfg, seed=seed)``
with ``cfg`` an instance of its config class (``config``, also ``"module:Class"``; the shared
:class:`~digirl.algorithms.configs.ActorConfig` when not given). :func:`make_algorithm` takes either
the ``algo`` section (:class:`~digirl.algorithms.configs.AlgoConfig`; the algorithm named by
``name`` gets its own options out of it) or an algorithm's own config (the algorithm registered with
that config class). Registering imports nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from digirl.core.errors import ConfigError

if TYPE_CHECKING:
    from digirl.algorithms.base import Algorithm
    from digirl.algorithms.configs import ActorConfig
    from digirl.policies.base import Policy

__all__ = ["algorithm_config_class", "algorithm_names", "make_algorithm", "register_algorithm"]

_ACTOR_CONFIG = "digirl.algorithms.configs:ActorConfig"

#: name → (algorithm entry point, config class entry point)
_ALGORITHMS: dict[str, tuple[str, str]] = {
    "filtered_bc": ("digirl.algorithms.filtered_bc:FilteredBC", "digirl.algorithms.configs:FilteredBCConfig"),
    "digirl": ("digirl.algorithms.digirl:DigiRL", "digirl.algorithms.configs:DigiRLConfig"),
    "digiq": ("digirl.algorithms.digiq.algorithm:DigiQ", "digirl.algorithms.configs:DigiQAlgoConfig"),
    "branch": ("digirl.algorithms.branch:BranchAlgorithm", "digirl.algorithms.configs:BranchConfig"),
    "grpo": ("digirl.algorithms.grpo:GRPO", "digirl.algorithms.configs:GRPOConfig"),
    "ppo": ("digirl.algorithms.ppo:PPO", "digirl.algorithms.configs:PPOConfig"),
}


def _load(entry_point: str) -> Any:
    mod_name, _, attr = entry_point.partition(":")
    return getattr(importlib.import_module(mod_name), attr)


def register_algorithm(name: str, entry_point: str, config: str = _ACTOR_CONFIG) -> None:
    """Register (or replace) an algorithm; ``entry_point`` and ``config`` are ``"module:Class"``.

    ``config`` is the algorithm's own config class (an :class:`~digirl.algorithms.configs.ActorConfig`
    subclass); the ``algo`` section fills it, so its fields must be keys of that section."""
    for what, ep in (("entry_point", entry_point), ("config", config)):
        if ":" not in ep:
            raise ValueError(f"{what} must be 'module:Class', got {ep!r}")
    _ALGORITHMS[name] = (entry_point, config)


def algorithm_names() -> list[str]:
    return sorted(_ALGORITHMS)


def algorithm_config_class(name: str) -> type[ActorConfig]:
    """The config class algorithm ``name`` is built with."""
    if name not in _ALGORITHMS:
        raise ConfigError(f"unknown algorithm {name!r}; known: {', '.join(algorithm_names())}")
    cls: type[ActorConfig] = _load(_ALGORITHMS[name][1])
    return cls


def _dispatch(cfg: ActorConfig) -> tuple[str, ActorConfig]:
    """(algorithm name, its own config): by ``cfg.name`` for the ``algo`` section, by type otherwise."""
    from digirl.algorithms.configs import AlgoConfig

    if isinstance(cfg, AlgoConfig):
        return cfg.name, algorithm_config_class(cfg.name).of(cfg)
    owners = [n for n in algorithm_names() if type(cfg) is algorithm_config_class(n)]
    if len(owners) != 1:
        found = "no algorithm" if not owners else f"several algorithms ({', '.join(owners)})"
        raise ConfigError(f"{type(cfg).__name__} is the config of {found}; pass the algo section (AlgoConfig) with its name")
    return owners[0], cfg


def make_algorithm(policy: Policy, cfg: ActorConfig, *, seed: int = 0) -> Algorithm:
    """The algorithm ``cfg`` configures, for ``policy`` (which must be trainable)."""
    from digirl.policies.base import is_trainable

    name, own = _dispatch(cfg)
    if not is_trainable(policy):
        kind = getattr(policy, "kind", type(policy).__name__)
        raise ConfigError(f"policy kind {kind!r} cannot be trained (it only acts); use it with collect or eval")
    algo: Algorithm = _load(_ALGORITHMS[name][0])(policy, own, seed=seed)
    return algo
