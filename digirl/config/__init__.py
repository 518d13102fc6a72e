"""Typed configs (dataclasses + YAML presets + ``key=value`` overrides) and the named-schema registry.

``digirl config show NAME`` resolves the schema registered as ``NAME``; schemas register as
``"module:Class"`` strings so listing them imports nothing heavy.
"""

from __future__ import annotations

import importlib

from digirl.config.core import (
    DEFAULT_PRESET_DIR,
    PresetInfo,
    cfg_field,
    config_help,
    config_to_dict,
    config_to_yaml,
    is_secret_field,
    list_presets,
    load_config,
    load_config_file,
    parse_overrides,
    register_preset_dir,
    save_config,
)

__all__ = [
    "CONFIG_SCHEMAS",
    "DEFAULT_PRESET_DIR",
    "PresetInfo",
    "cfg_field",
    "config_help",
    "config_to_dict",
    "config_to_yaml",
    "get_schema",
    "is_secret_field",
    "list_presets",
    "load_config",
    "load_config_file",
    "parse_overrides",
    "register_preset_dir",
    "register_schema",
    "save_config",
]

#: Schema name (what a user types) → ``"module:Class"`` of its root dataclass.
CONFIG_SCHEMAS: dict[str, str] = {}


def register_schema(name: str, target: str) -> None:
    """Register the dataclass ``target`` (``"package.module:Class"``) under ``name``."""
    mod, sep, attr = target.partition(":")
    if not sep or not mod or not attr:
        raise ValueError(f"schema target must look like 'package.module:Class', got {target!r}")
    CONFIG_SCHEMAS[name] = target


def get_schema(name: str) -> type:
    """Import and return the dataclass registered as ``name``."""
    from digirl.core.errors import ConfigError

    try:
        target = CONFIG_SCHEMAS[name]
    except KeyError:
        known = ", ".join(sorted(CONFIG_SCHEMAS)) or "none registered"
        raise ConfigError(f"unknown config schema {name!r}; known: {known}") from None
    mod, _, attr = target.partition(":")
    cls = getattr(importlib.import_module(mod), attr)
    if not isinstance(cls, type):
        raise ConfigError(f"config schema {name!r} -> {target} is not a class")
    return cls


# Built-in schemas register here (strings only, so nothing heavy is imported), e.g.
# register_schema("train", "digirl.training.config:TrainConfig").
register_schema("train", "digirl.training.config:TrainConfig")
register_schema("sft", "digirl.training.config:SFTRunConfig")
register_schema("collect", "digirl.training.config:CollectConfig")
register_schema("eval", "digirl.training.config:EvalRunConfig")
register_schema("table1", "digirl.experiments.table1:Table1Config")
