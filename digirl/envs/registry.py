"""Env ids a user types (``digirl/sim-general-v0``) → factories. Nothing else is registered.

Entry points are ``"module:attr"`` strings so registering an env never imports its backend;
``make`` imports it on first use. When Gymnasium is installed, every id is available to
``gymnasium.make`` as well after ``import digirl`` (see :func:`register_gymnasium`).
"""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

__all__ = ["BACKENDS", "EnvSpec", "env_has", "list_envs", "make", "register", "register_gymnasium", "spec"]


@dataclass(frozen=True)
class EnvSpec:
    id: str
    entry_point: str | Callable[..., Any]
    kwargs: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    #: Extra needed (``browser``, ``android``) or ``""`` when the core install suffices.
    requires: str = ""
    #: Free-form facts shown by ``digirl envs list`` (e.g. whether the action space can express it).
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def backend(self) -> str:
        """What runs the env: ``sim``, ``browser``, ``android``, ``toy``, or ``custom`` (a user's env)."""
        ep = self.entry_point
        mod = ep.partition(":")[0] if isinstance(ep, str) else getattr(ep, "__module__", "")
        parts = mod.split(".")
        if parts[0] != "digirl" or len(parts) < 2:
            return "custom"
        if parts[1] == "envs":  # digirl.envs.toy and friends: the test envs
            return parts[2] if len(parts) > 2 and parts[2] == "toy" else "custom"
        return parts[1] if parts[1] in BACKENDS else "custom"


#: The backends :attr:`EnvSpec.backend` names (``digirl envs list --backend``).
BACKENDS = ("sim", "browser", "android", "toy", "custom")

_REGISTRY: dict[str, EnvSpec] = {}
_BUILTINS_LOADED = False
#: Whether ids have been handed to Gymnasium (then :func:`register` forwards new ones too).
_GYM_REGISTERED = False


def register(
    id: str,
    entry_point: str | Callable[..., Any],
    *,
    description: str = "",
    requires: str = "",
    metadata: dict[str, Any] | None = None,
    **kwargs: Any,
) -> None:
    if not id.startswith("digirl/"):
        raise ValueError(f"env ids live under 'digirl/', got {id!r}")
    _REGISTRY[id] = EnvSpec(id, entry_point, dict(kwargs), description, requires, dict(metadata or {}))
    if _GYM_REGISTERED and "gymnasium" in sys.modules:
        _register_one_gymnasium(sys.modules["gymnasium"], _REGISTRY[id])


def _load_builtins() -> None:
    """Import the modules that register the built-in envs (cheap: they register strings only)."""
    global _BUILTINS_LOADED
    if _BUILTINS_LOADED:
        return
    _BUILTINS_LOADED = True
    for mod in ("digirl.envs.toy", "digirl.sim.register", "digirl.browser.register", "digirl.android.register"):
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as e:  # a backend package not present in this build
            if e.name is None or not mod.startswith(e.name):
                raise


def spec(env_id: str) -> EnvSpec:
    _load_builtins()
    try:
        return _REGISTRY[env_id]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)[:12])
        raise KeyError(f"unknown env id {env_id!r}; known ids include: {known} (see `digirl envs list`)") from None


def env_has(env_id: str, capability: str) -> bool:
    """Whether ``env_id``'s registration declares ``capability`` (a truthy ``metadata`` entry), e.g.
    ``world_options`` (takes ``perturbation`` / ``world_version``) or ``state_replay`` (a state can be
    rebuilt from its task, seed and actions). An unknown id has none."""
    _load_builtins()
    found = _REGISTRY.get(env_id)
    return found is not None and bool(found.metadata.get(capability))


def make(env_id: str, *, latency_s: float | Sequence[float] | None = None, **kwargs: Any) -> Any:
    """Build the env registered as ``env_id``; ``kwargs`` override the registered ones.

    ``latency_s`` (seconds, or ``[low, high]``) wraps the env in :class:`~digirl.envs.wrappers.Latency`,
    as ``gymnasium.make(max_episode_steps=...)`` adds its wrapper: every reset and step then takes as
    long as on a real device.
    """
    if latency_s is not None:
        from digirl.envs.wrappers import Latency, latency_range

        low, high = latency_range(latency_s)
        return Latency(make(env_id, **kwargs), low, high)
    s = spec(env_id)
    ep = s.entry_point
    if isinstance(ep, str):
        mod_name, _, attr = ep.partition(":")
        try:
            ep = getattr(importlib.import_module(mod_name), attr)
        except ModuleNotFoundError as e:
            hint = f" (install the extra: pip install 'digirl[{s.requires}]')" if s.requires else ""
            raise ModuleNotFoundError(f"{env_id} needs module {e.name!r}{hint}") from e
    assert callable(ep)
    return ep(**{**s.kwargs, **kwargs})


def list_envs() -> list[EnvSpec]:
    _load_builtins()
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


def register_gymnasium() -> int:
    """Register every digirl id with Gymnasium (if installed). Returns how many were added.

    ``import digirl`` calls this as soon as Gymnasium is imported (:mod:`digirl._gymnasium_hook`), and
    :func:`register` forwards later ids, so users never need to. Each id's entry point is the string
    ``"digirl.envs.gym:GymnasiumEnv"``: registering imports no backend, and ``gymnasium.make(id, **kw)``
    builds :class:`~digirl.envs.gym.GymnasiumEnv` around ``digirl.make(id, **kw)``.
    """
    global _GYM_REGISTERED
    try:
        import gymnasium
    except ModuleNotFoundError:
        return 0
    _GYM_REGISTERED = True
    return sum(_register_one_gymnasium(gymnasium, s) for s in list_envs())


def _register_one_gymnasium(gymnasium: Any, s: EnvSpec) -> bool:
    if s.id in gymnasium.envs.registry:
        return False
    try:
        gymnasium.register(
            id=s.id,
            entry_point="digirl.envs.gym:GymnasiumEnv",
            kwargs={"env_id": s.id},
            # The digirl env ends episodes at the task's horizon itself (``truncated``): no TimeLimit.
            max_episode_steps=None,
            nondeterministic=bool(s.metadata.get("nondeterministic", s.requires == "android")),  # a real phone
        )
    except gymnasium.error.Error as e:  # an id Gymnasium's grammar rejects: still a digirl env
        log.warning("%s is not registered with Gymnasium: %s", s.id, e)
        return False
    return True
