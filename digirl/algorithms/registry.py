"""Algorithm names → implementations and their config classes: ``algo.name=digirl`` builds
:class:`~digirl.algorithms.digirl.DigiRL` with a :class:`~digirl.algorithms.configs.DigiRLConfig`.

An entry point is ``"module:Class"``; the class is constructed as ``Class(policy, cfg, seed=seed)``
with ``cfg`` an instance of its config class (``config``, also ``"module:Class"``; the shared
:class:`~digirl.algorithms.configs.ActorConfig` when not given). :func:`make_algorithm` takes either
the ``algo`` section (:class:`~digirl.algorithms.configs.AlgoConfig`; the algorithm named by
``name`` gets its own options out of it) or an algorithm's own config (the algorithm registered with
that config class). The name table itself, and registering, are in :mod:`digirl.algorithms.catalog`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from digirl.algorithms.catalog import ALGORITHMS, algorithm_config_class, algorithm_names, load_entry_point, register_algorithm
from digirl.algorithms.configs import ActorConfig, AlgoConfig
from digirl.core.errors import ConfigError

if TYPE_CHECKING:
    from digirl.algorithms.base import Algorithm
    from digirl.policies.base import Policy

__all__ = ["algorithm_config_class", "algorithm_names", "make_algorithm", "register_algorithm"]


def _dispatch(cfg: ActorConfig) -> tuple[str, ActorConfig]:
    """(algorithm name, its own config): by ``cfg.name`` for the ``algo`` section, by type otherwise."""
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
    algo: Algorithm = load_entry_point(ALGORITHMS[name][0])(policy, own, seed=seed)
    return algo
