"""Where config values come from: YAML presets (with ``base:`` inheritance) and ``key=value`` overrides.

Both are read with YAML 1.2 scalar rules and produce a nested mapping of raw values that
:func:`digirl.config.core.load_config` merges onto the defaults and type-checks.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from digirl.core.errors import ConfigError

__all__ = [
    "DEFAULT_PRESET_DIR",
    "PresetInfo",
    "RawValue",
    "list_presets",
    "load_preset_tree",
    "merge",
    "parse_overrides",
    "register_preset_dir",
    "unwrap",
    "yaml_load",
]

DEFAULT_PRESET_DIR = Path(__file__).resolve().parent / "presets"
_PRESET_DIRS: list[Path] = [DEFAULT_PRESET_DIR]


# --------------------------------------------------------------------------- YAML
class _Loader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML ships no type stubs
    """SafeLoader with YAML 1.2 scalars: ``yes``/``no``/``on``/``off`` and dates stay strings and
    ``3e-4`` is a float (YAML 1.1 reads it as a string), so presets and overrides mean what they look like."""


_REPLACED_TAGS = ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:float", "tag:yaml.org,2002:timestamp")
_Loader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag not in _REPLACED_TAGS]
    for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
    list("-+0123456789."),
)


def yaml_load(text: str) -> Any:
    """Parse YAML text with the YAML 1.2 scalar rules above (safe: builds plain data only)."""
    return yaml.load(text, Loader=_Loader)  # a SafeLoader subclass: no object construction


# --------------------------------------------------------------------------- override values
class RawValue:
    """An override value: the YAML-parsed value plus the text typed (kept for ``str`` fields)."""

    __slots__ = ("text", "value")

    def __init__(self, text: str, value: Any) -> None:
        self.text, self.value = text, value

    def __repr__(self) -> str:
        return repr(self.text)


def unwrap(v: Any) -> Any:
    return v.value if isinstance(v, RawValue) else v


def merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """Deep merge: mappings merge key by key, anything else in ``top`` replaces."""
    out = dict(base)
    for k, v in top.items():
        if isinstance(unwrap(v), Mapping) and isinstance(unwrap(out.get(k)), Mapping):
            out[k] = merge(unwrap(out[k]), unwrap(v))
        else:
            out[k] = v
    return out


def _expand_dotted(data: Mapping[str, Any]) -> dict[str, Any]:
    """``{"algo.lr": 1}`` → ``{"algo": {"lr": 1}}`` (dotted keys are allowed in presets too)."""
    out: dict[str, Any] = {}
    for k, v in data.items():
        if not isinstance(k, str):
            raise ConfigError(f"config keys must be strings, got {k!r}")
        v = _expand_dotted(v) if isinstance(v, Mapping) else v
        parts = k.split(".")
        node = {parts[-1]: v}
        for p in reversed(parts[:-1]):
            node = {p: node}
        out = merge(out, node)
    return out


def parse_overrides(overrides: Sequence[str]) -> dict[str, Any]:
    """``["algo.lr=3e-4", "eval.every=2"]`` → a nested mapping of raw values."""
    out: dict[str, Any] = {}
    for item in overrides:
        key, eq, text = item.partition("=")
        key = key.strip()
        if not eq or not key or any(not p for p in key.split(".")):
            raise ConfigError(f"override {item!r} is not key=value (e.g. algo.lr=3e-4)")
        try:
            value = yaml_load(text) if text.strip() else ""
        except yaml.YAMLError:
            value = text  # not YAML (e.g. an unbalanced bracket): keep the text; type checks decide
        node: dict[str, Any] = {key.split(".")[-1]: RawValue(text, value)}
        for p in reversed(key.split(".")[:-1]):
            node = {p: node}
        out = merge(out, node)
    return out


# --------------------------------------------------------------------------- presets
@dataclass(frozen=True)
class PresetInfo:
    """A preset file found in a registered preset directory."""

    name: str
    path: Path
    description: str
    base: str | None


def register_preset_dir(path: str | Path) -> None:
    """Make the ``*.yaml`` files in ``path`` loadable by name; earlier directories win on a clash."""
    p = Path(path).resolve()
    if p not in _PRESET_DIRS:
        _PRESET_DIRS.append(p)


def _find_preset(name: str, relative_to: Path | None = None) -> Path:
    candidates: list[Path] = []
    if relative_to is not None:
        candidates += [relative_to / name, relative_to / f"{name}.yaml"]
    for d in _PRESET_DIRS:
        candidates += [d / f"{name}.yaml", d / f"{name}.yml"]
    for c in candidates:
        if c.is_file():
            return c
    known = [p.name for p in list_presets()]
    close = difflib.get_close_matches(name, known, n=3)
    if close:
        hint = f"; did you mean {' or '.join(close)}?"
    else:
        hint = f"; known presets: {', '.join(known) or 'none'}"
    raise ConfigError(f"unknown preset {name!r}{hint}")


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: invalid YAML: {e}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a config file must be a mapping of keys, got {type(data).__name__}")
    return data


def load_preset_tree(preset: str | Path, seen: tuple[Path, ...] = (), relative_to: Path | None = None) -> dict[str, Any]:
    looks_like_path = isinstance(preset, Path) or "/" in preset or preset.endswith((".yaml", ".yml"))
    if looks_like_path:
        path = Path(preset)
        if not path.is_absolute() and relative_to is not None and (relative_to / path).is_file():
            path = relative_to / path
        if not path.is_file():
            raise ConfigError(f"config file not found: {path}")
    else:
        path = _find_preset(str(preset), relative_to)
    path = path.resolve()
    if path in seen:
        chain = " -> ".join(p.name for p in (*seen, path))
        raise ConfigError(f"presets inherit in a cycle: {chain}")
    data = _read_yaml(path)
    bases = data.pop("base", None)
    tree: dict[str, Any] = {}
    for b in [bases] if isinstance(bases, str) else (bases or []):
        tree = merge(tree, load_preset_tree(str(b), (*seen, path), path.parent))
    try:
        return merge(tree, _expand_dotted(data))
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None


def _first_comment(path: Path) -> str:
    try:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("#"):
                return line.lstrip("#").strip()
            if line.strip():
                break
    except OSError:
        pass
    return ""


def list_presets() -> list[PresetInfo]:
    """Every preset in the registered directories (the first directory wins on a name clash)."""
    out: dict[str, PresetInfo] = {}
    for d in _PRESET_DIRS:
        if not d.is_dir():
            continue
        for p in sorted([*d.glob("*.yaml"), *d.glob("*.yml")]):
            if p.stem in out:
                continue
            try:
                base = yaml_load(p.read_text(encoding="utf-8")) or {}
                b = base.get("base") if isinstance(base, dict) else None
            except (OSError, yaml.YAMLError):
                b = None
            out[p.stem] = PresetInfo(p.stem, p, _first_comment(p), None if b is None else str(b))
    return [out[k] for k in sorted(out)]
