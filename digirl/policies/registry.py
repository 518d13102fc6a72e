"""Policy kinds → implementations, and the one way to build or load a policy.

A kind is registered with a ``"module:Class"`` entry point (nothing is imported until used) whose
class provides two constructors:

- ``from_config(cfg: PolicyConfig, *, device, seed) -> policy``: a fresh policy (for kinds built on a
  pretrained model, ``cfg.init`` is that model's folder);
- ``load(path, *, device, cfg: PolicyConfig | None) -> policy``: a folder written by ``policy.save``.

:func:`build_policy` is what ``digirl sft | collect | train | eval | serve`` call: a saved policy
folder in ``policy.init`` is loaded with the kind its ``policy.json`` names, whatever
``policy.kind`` says by default.
"""

from __future__ import annotations

import importlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from digirl.core.errors import ConfigError, DataError

if TYPE_CHECKING:
    import torch

    from digirl.policies.base import ActingPolicy
    from digirl.policies.config import PolicyConfig

__all__ = [
    "POLICY_FILE",
    "PolicyKind",
    "build_policy",
    "load_policy",
    "policy_class",
    "policy_kinds",
    "read_policy_meta",
    "register_policy_kind",
    "resolve_device",
    "saved_kind_config",
    "saved_policy_kind",
]

log = logging.getLogger(__name__)

#: The file that marks a saved policy folder and names its kind.
POLICY_FILE = "policy.json"
_C = TypeVar("_C")


@dataclass(frozen=True)
class PolicyKind:
    name: str
    entry_point: str
    description: str = ""
    #: The pip extra the kind needs (``hf``), or ``""``.
    requires: str = ""


_KINDS: dict[str, PolicyKind] = {}


def register_policy_kind(name: str, entry_point: str, *, description: str = "", requires: str = "") -> None:
    """Register (or replace) a policy kind; ``entry_point`` is ``"module:Class"``."""
    if ":" not in entry_point:
        raise ValueError(f"entry_point must be 'module:Class', got {entry_point!r}")
    _KINDS[name] = PolicyKind(name, entry_point, description, requires)


register_policy_kind(
    "default", "digirl.policies.default:DefaultPolicy", description="small from-scratch multimodal policy (CPU-friendly)"
)
register_policy_kind(
    "autoui",
    "digirl.policies.autoui:AutoUIPolicy",
    description="Auto-UI multimodal T5 with BLIP-2 image features, from a local Auto-UI-Base-style folder",
    requires="hf",
)
register_policy_kind(
    "api",
    "digirl.policies.api:APIPolicy",
    description="act-only agent behind an OpenAI-compatible chat endpoint (vLLM, hosted VLMs, served CogAgent)",
)
register_policy_kind(
    "hf",
    "digirl.policies.hf.policy:HFPolicy",
    description="a local Hugging Face vision-language model (Qwen2-VL, Qwen2.5-VL, LLaVA, ...), full or LoRA fine-tuning",
    requires="hf",
)


def policy_kinds() -> list[str]:
    return sorted(_KINDS)


def policy_class(kind: str) -> Any:
    """The class registered for ``kind`` (imports its module)."""
    try:
        spec = _KINDS[kind]
    except KeyError:
        raise ConfigError(f"unknown policy kind {kind!r}; known kinds: {', '.join(policy_kinds())}") from None
    mod_name, _, attr = spec.entry_point.partition(":")
    try:
        mod = importlib.import_module(mod_name)
    except ModuleNotFoundError as e:
        hint = f" (install the extra: pip install 'digirl[{spec.requires}]')" if spec.requires else ""
        raise ModuleNotFoundError(f"policy kind {kind!r} needs module {e.name!r}{hint}") from e
    return getattr(mod, attr)


def resolve_device(name: str) -> torch.device:
    """``auto`` → CUDA when available, else CPU; anything else as torch reads it."""
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def saved_policy_kind(path: str | Path) -> str | None:
    """The kind named by ``path/policy.json``, or ``None`` when ``path`` is not a saved policy folder."""
    meta_path = Path(path) / POLICY_FILE
    if not meta_path.is_file():
        return None
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise DataError(f"{meta_path}: not valid JSON ({e})") from e
    kind = meta.get("kind") if isinstance(meta, dict) else None
    if not isinstance(kind, str):
        raise DataError(f"{meta_path}: no 'kind' (not a digirl policy folder)")
    return kind


def read_policy_meta(path: str | Path, kind: str) -> dict[str, Any]:
    """The ``policy.json`` of the saved ``kind`` policy in the folder ``path``: a DataError naming the
    file when it is missing, not JSON, or of another kind."""
    meta_path = Path(path) / POLICY_FILE
    try:
        meta = json.loads(meta_path.read_text())
    except FileNotFoundError:
        raise DataError(f"{meta_path}: missing (not a saved policy folder)") from None
    except (OSError, ValueError) as e:
        raise DataError(f"{meta_path}: not valid JSON ({e})") from e
    if not isinstance(meta, dict) or meta.get("kind") != kind:
        raise DataError(f"{meta_path}: policy kind {meta.get('kind') if isinstance(meta, dict) else None!r} is not {kind!r}")
    return meta


def saved_kind_config(path: str | Path, meta: dict[str, Any], cls: type[_C], kind: str) -> _C:
    """The ``config`` of a saved ``kind`` policy's ``meta`` as ``cls`` (its ``from_dict``); a DataError
    naming the folder's ``policy.json`` when it does not fit."""
    try:
        return cls.from_dict(dict(meta.get("config") or {}))  # type: ignore[attr-defined,no-any-return]
    except (TypeError, ValueError) as e:
        raise DataError(f"{Path(path) / POLICY_FILE}: bad {kind} policy config ({e})") from e


def load_policy(path: str | Path, *, device: str | torch.device = "cpu", cfg: PolicyConfig | None = None) -> ActingPolicy:
    """Load a saved policy folder of any kind. ``cfg`` passes run-time options (device, generation)."""
    kind = saved_policy_kind(path)
    if kind is None:
        raise DataError(f"{Path(path) / POLICY_FILE}: missing (not a saved policy folder)")
    dev = resolve_device(device) if isinstance(device, str) else device
    policy: ActingPolicy = policy_class(kind).load(path, device=dev, cfg=cfg)
    return policy


def build_policy(cfg: PolicyConfig, *, seed: int) -> ActingPolicy:
    """The policy a run starts from: ``cfg.init`` loaded (any saved kind) or a fresh ``cfg.kind``."""
    device = resolve_device(cfg.device)
    if cfg.init:
        kind = saved_policy_kind(cfg.init)
        if kind is not None:
            if cfg.kind not in ("default", kind):
                raise ConfigError(f"policy.kind={cfg.kind} but {cfg.init} holds a saved {kind!r} policy")
            if cfg.tap_epsilon and kind != "default":
                raise ConfigError(f"policy.tap_epsilon applies to the default policy only; {cfg.init} holds a {kind!r} policy")
            policy = load_policy(cfg.init, device=device, cfg=cfg)
            log.info("loaded %s policy from %s", kind, cfg.init)
            return policy
        if not Path(cfg.init).is_dir():
            raise DataError(f"policy.init={cfg.init}: no such folder")
        if cfg.kind == "default" and (Path(cfg.init) / "config.json").is_file():
            raise ConfigError(f"policy.init={cfg.init} is a Hugging Face model folder; add policy.kind=hf to use it")
    built: ActingPolicy = policy_class(cfg.kind).from_config(cfg, device=device, seed=seed)
    return built
