"""Settling a run's policy config against the saved policy it loads (``policy.init``).

Apart from :mod:`digirl.policies.registry` because it reads the per-kind sub-configs of
:mod:`digirl.policies.config`, which itself asks the registry for the known kinds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from digirl.core.errors import ConfigError, DataError
from digirl.policies.config import HF_LORA_KEYS, KIND_CONFIGS, RUNTIME_KEYS, PolicyConfig
from digirl.policies.registry import POLICY_FILE, saved_policy_kind

__all__ = ["settle_loaded_policy"]


def _saved_meta(path: Path) -> dict[str, Any]:
    meta_path = path / POLICY_FILE
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise DataError(f"{meta_path}: not valid JSON ({e})") from e
    if not isinstance(meta, dict) or not isinstance(meta.get("config", {}), dict):
        raise DataError(f"{meta_path}: 'config' is not an object")
    return meta


def settle_loaded_policy(cfg: PolicyConfig, given: Mapping[str, str], *, path: str | Path | None = None) -> PolicyConfig:
    """``cfg`` with ``policy.<kind>`` as the saved policy at ``path`` (default ``cfg.init``) fixes it, so a
    run's saved config records the policy as loaded.

    ``given`` maps the dotted keys the run set explicitly (``policy.default.use_elements``) to how they
    were given (shown in errors; ``""``: the key itself). A given key the saved policy fixes
    (not in :data:`~digirl.policies.config.RUNTIME_KEYS`) with another value than the saved one is a
    :class:`ConfigError` naming the key, the saved value and the requested one. Run-time keys keep the
    run's value where given. Not a saved policy folder, or a kind without a known sub-config: ``cfg``.
    """
    folder = Path(path if path is not None else cfg.init or "")
    if not str(folder) or saved_policy_kind(folder) is None:
        return cfg
    kind = saved_policy_kind(folder)
    if kind not in KIND_CONFIGS:
        return cfg  # a plug-in kind: its own load() decides
    attr, cls = KIND_CONFIGS[kind]
    meta = _saved_meta(folder)
    try:
        saved = cls.from_dict(dict(meta.get("config") or {}))  # type: ignore[attr-defined]
    except (TypeError, ValueError) as e:
        raise DataError(f"{folder / POLICY_FILE}: bad {kind} policy config ({e})") from e
    runtime = RUNTIME_KEYS.get(kind, ())
    if kind == "hf" and not meta.get("lora"):  # adapters may start on a fully fine-tuned policy
        runtime = (*(runtime or ()), *HF_LORA_KEYS)
    run = getattr(cfg, attr)
    keep: dict[str, Any] = {}
    for f in fields(cls):
        key = f"policy.{attr}.{f.name}"
        is_runtime = runtime is None or f.name in runtime
        if key not in given:
            # hf takes its run-time options from the run (its defaults where not given); others keep the saved ones
            if is_runtime and kind == "hf":
                keep[f.name] = getattr(run, f.name)
            continue
        want, have = getattr(run, f.name), getattr(saved, f.name)
        if is_runtime:
            keep[f.name] = want
        elif want != have:
            how = given[key] or f"{key}={_show(want)}"
            raise ConfigError(
                f"{how}: the policy in {folder} was saved with {f.name}={_show(have)}, and a loaded policy keeps its "
                f"architecture (requested {_show(want)}). Drop the override, or train a new policy with it "
                f"(run-time keys of a loaded {kind} policy: {', '.join(runtime or ()) or 'none'})"
            )
    try:  # the kind too: policy.kind=default (its default) loads a folder of any kind
        settled: PolicyConfig = replace(cfg, kind=kind, **{attr: replace(saved, **keep)})
    except ValueError as e:  # e.g. policy.tap_epsilon given for a kind that has none
        raise ConfigError(f"policy.init={folder}: {e}") from e
    return settled


def _show(v: Any) -> str:
    return json.dumps(v) if isinstance(v, bool | None) else repr(v) if isinstance(v, str) else str(v)
