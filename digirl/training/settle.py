"""A run's config settled against what it loads, before anything is created: the saved config is what ran.

- ``observation=screenshot|screenshot+elements`` sets what the policy, the critics and the Digi-Q
  encoder see (their ``use_elements``); an explicit ``use_elements`` that disagrees is an error.
  ``auto`` (the default): what the policy sees (a loaded policy: as saved), and the critics and the
  Digi-Q encoder see the same unless their ``use_elements`` is given (then the run is recorded as
  mixed). The settled value is saved in the run's config and every result JSON.
- A loaded policy (``policy.init`` = a saved folder, or a resumed run's checkpoint) fixes its
  architecture: an override that differs is an error naming the key, the saved value and the
  requested one (run-time keys may differ: :data:`digirl.policies.config.RUNTIME_KEYS`), and the
  config is rewritten to the policy as loaded, so ``config.yaml`` records it.
- A resumed run's critics are fixed by its checkpoint: an override of ``algo.critic.*`` or
  ``algo.digiq.encoder.*`` that differs from the run's saved config is an error.

:func:`settle_run_config` is what the CLI calls on every ``sft | collect | train | eval`` config; it also
sets what this process's result JSONs record (:func:`digirl.utils.provenance.set_run_context`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from digirl.core.errors import ConfigError

__all__ = ["OBSERVATIONS", "given_keys", "observation_of", "settle_run_config"]

#: Values of the ``observation`` switch (``auto``: as the encoders' own ``use_elements`` say).
OBSERVATIONS = ("auto", "screenshot", "screenshot+elements")
#: The encoders the switch sets, by config path (those a config has).
_ENCODERS = ("policy.default", "algo.critic", "algo.digiq.encoder")


def _flatten(tree: Mapping[str, Any], prefix: str = "") -> list[str]:
    out: list[str] = []
    for k, v in tree.items():
        key = f"{prefix}{k}"
        out += _flatten(v, key + ".") if isinstance(v, Mapping) else [key]
    return out


def given_keys(preset: str | Path | None, overrides: Sequence[str]) -> dict[str, str]:
    """The dotted keys a preset and ``key=value`` overrides set, each with how it was given."""
    from digirl.config.sources import load_preset_tree

    given: dict[str, str] = {}
    if preset is not None:
        given |= {k: f"{k} (from {preset})" for k in _flatten(load_preset_tree(preset))}
    for item in overrides:  # already checked by the config loader: key=value
        given[item.partition("=")[0].strip()] = item
    return given


def _get(cfg: Any, path: str) -> Any:
    node = cfg
    for part in path.split("."):
        node = getattr(node, part, None)
        if node is None:
            return None
    return node


def _set(cfg: Any, path: str, value: Any) -> Any:
    """``cfg`` with ``path`` (dotted) replaced; frozen sub-configs are rebuilt on the way up."""
    head, _, rest = path.partition(".")
    if not rest:
        return dataclasses.replace(cfg, **{head: value})
    return dataclasses.replace(cfg, **{head: _set(getattr(cfg, head), rest, value)})


def _encoders(cfg: Any) -> list[str]:
    """Config paths of the encoders this config has (the policy's only for kind=default)."""
    out = []
    for path in _ENCODERS:
        if path == "policy.default" and getattr(getattr(cfg, "policy", None), "kind", None) != "default":
            continue
        if _get(cfg, path) is not None:
            out.append(path)
    return out


def _apply_observation(cfg: Any, given: dict[str, str]) -> Any:
    obs = getattr(cfg, "observation", "auto")
    if obs not in OBSERVATIONS:
        raise ConfigError(f"observation={obs}: must be one of {', '.join(OBSERVATIONS)}")
    if obs == "auto":
        return cfg
    want = obs == "screenshot+elements"
    policy = getattr(cfg, "policy", None)
    if want and policy is not None and policy.kind != "default":
        raise ConfigError(f"observation={obs}: a {policy.kind!r} policy sees the screenshot only (no element list)")
    for path in _encoders(cfg):
        key = f"{path}.use_elements"
        have = _get(cfg, key)
        if key in given and have != want:
            raise ConfigError(
                f"observation={obs} sets {key}={str(want).lower()}, but {given[key]} asks for {str(have).lower()}: "
                "give one of the two"
            )
        cfg = _set(cfg, key, want)
        given.setdefault(key, f"observation={obs}")
    return cfg


def observation_of(cfg: Any) -> str:
    """What the run's agent sees: ``screenshot`` or ``screenshot+elements`` (policy, critics and Digi-Q
    encoder alike), else each part's view, e.g. ``policy: screenshot; critics: screenshot+elements``."""
    views: dict[str, str] = {}
    policy = getattr(cfg, "policy", None)
    if policy is not None:
        sees = policy.kind == "default" and policy.default.use_elements
        views["policy"] = "screenshot+elements" if sees else "screenshot"
    algo = getattr(cfg, "algo", None)
    if algo is not None:
        views["critics"] = "screenshot+elements" if algo.critic.use_elements else "screenshot"
        views["digiq encoder"] = "screenshot+elements" if algo.digiq.encoder.use_elements else "screenshot"
    if len(set(views.values())) <= 1:
        return next(iter(views.values()), "screenshot")
    return "; ".join(f"{k}: {v}" for k, v in views.items())


def _follow_the_policy(cfg: Any, given: Mapping[str, str]) -> Any:
    """``observation=auto``: encoders whose ``use_elements`` was not given see what the policy sees."""
    policy = getattr(cfg, "policy", None)
    if policy is None:
        return cfg
    view = policy.kind == "default" and policy.default.use_elements
    for path in _encoders(cfg):
        if path != "policy.default" and f"{path}.use_elements" not in given:
            cfg = _set(cfg, f"{path}.use_elements", view)
    return cfg


def _check_resumed_critics(cfg: Any, saved: Any, given: Mapping[str, str], run_dir: Path) -> None:
    for path in ("algo.critic", "algo.digiq.encoder"):
        now, before = _get(cfg, path), _get(saved, path)
        if now is None or before is None:
            continue
        for f in dataclasses.fields(now):
            key = f"{path}.{f.name}"
            if key in given and getattr(now, f.name) != getattr(before, f.name):
                raise ConfigError(
                    f"{given[key] or key}: {run_dir} resumes critics saved with {f.name}={getattr(before, f.name)!r} "
                    f"(requested {getattr(now, f.name)!r}); a resumed run keeps its critics' architecture"
                )


def settle_run_config(
    cfg: Any,
    *,
    preset: str | Path | None = None,
    overrides: Sequence[str] = (),
    run_dir: str | Path | None = None,
    follow_policy: bool = True,
) -> Any:
    """``cfg`` (loaded from ``preset`` and ``overrides``) settled as the module docstring says. With
    ``run_dir`` holding a saved run (``config.yaml``, the preset then), only ``overrides`` are requests:
    the policy is checked against the run's latest checkpoint (else ``policy.init``) and the critics
    against the saved config. Raises :class:`ConfigError` before anything is created. ``follow_policy=False``
    (a config built in Python: which keys were set is unknown) leaves the critics' flags as they are."""
    from digirl.policies.settle import settle_loaded_policy

    resumed = run_dir is not None and (Path(run_dir) / "config.yaml").is_file()
    given = given_keys(None if resumed else preset, overrides)
    cfg = _apply_observation(cfg, given)
    policy = getattr(cfg, "policy", None)
    if policy is not None:
        path: Path | None = None
        if resumed:
            latest = Path(run_dir or "") / "checkpoints" / "LATEST"
            if latest.is_file():
                path = latest.parent / latest.read_text().strip() / "policy"
        settled = settle_loaded_policy(policy, given, path=path)
        if settled is not policy:
            cfg = dataclasses.replace(cfg, policy=settled)
    if resumed and (Path(run_dir or "") / "checkpoints" / "LATEST").is_file():
        from digirl.config.core import load_config_file

        _check_resumed_critics(cfg, load_config_file(type(cfg), Path(run_dir or "") / "config.yaml"), given, Path(run_dir or ""))
    obs = getattr(cfg, "observation", None)
    if obs == "auto":
        if follow_policy and not resumed:  # a resumed run's critics are what its checkpoint holds
            cfg = _follow_the_policy(cfg, given)
        seen = observation_of(cfg)
        if seen in OBSERVATIONS:  # consistent: record it (a mixed setup stays auto; its flags say the rest)
            cfg = dataclasses.replace(cfg, observation=seen)
    elif obs is not None and observation_of(cfg) != obs:  # a loaded policy decided otherwise
        raise ConfigError(f"observation={obs}, but the run would see {observation_of(cfg)}")
    if policy is not None and policy.kind == "default":
        try:
            cfg.policy.default.check_view()
        except ValueError as e:
            raise ConfigError(f"policy.default: {e}") from e
    from digirl.utils.provenance import set_run_context

    ev = getattr(cfg, "eval", None)
    try:  # what every result JSON this process writes records
        set_run_context(observation=observation_of(cfg), selection_split=getattr(ev, "selection_split", None))
    except ValueError as e:
        raise ConfigError(f"eval.selection_split: {e}") from e
    return cfg
