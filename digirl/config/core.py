"""Typed configs: nested dataclasses with help text, YAML presets and dotted ``key=value`` overrides.

A schema is a (possibly frozen) dataclass whose fields are made with :func:`cfg_field`; components
are nested dataclasses. :func:`load_config` resolves defaults → preset (with ``base:`` inheritance)
→ overrides, and coerces every value against the field's annotation, so a typo or a wrong type is a
:class:`~digirl.core.errors.ConfigError` naming the key instead of a crash an hour into training.

Secrets (fields named ``*api_key``/``*token``/``*secret`` or with ``secret=True`` in their metadata)
are never written out: saved files hold ``<from env VAR>`` (when the field names its variable with
``env="VAR"``) or nothing, and ``<from env VAR>`` is read back from the environment on load.
"""

from __future__ import annotations

import copy
import difflib
import enum
import json
import math
import os
import re
import tempfile
import types
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import MISSING, Field, field, fields, is_dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar, Union

import yaml

from digirl.config.sources import (
    DEFAULT_PRESET_DIR,
    PresetInfo,
    RawValue,
    list_presets,
    load_preset_tree,
    merge,
    parse_overrides,
    register_preset_dir,
    unwrap,
    yaml_load,
)
from digirl.core.errors import ConfigError

__all__ = [
    "DEFAULT_PRESET_DIR",
    "PresetInfo",
    "cfg_field",
    "config_help",
    "config_to_dict",
    "config_to_yaml",
    "is_secret_field",
    "list_presets",
    "load_config",
    "load_config_file",
    "parse_overrides",
    "register_preset_dir",
    "save_config",
]

T = TypeVar("T")

_SECRET_SUFFIXES = ("api_key", "token", "secret")
_ENV_PLACEHOLDER = re.compile(r"^<from env ([A-Za-z_][A-Za-z0-9_]*)>$")
_NOT_SET = object()


# --------------------------------------------------------------------------- fields
def cfg_field(
    default: Any = MISSING,
    help: str = "",
    *,
    choices: Sequence[Any] | None = None,
    secret: bool | None = None,
    env: str | None = None,
) -> Any:
    """A dataclass field carrying help text (and optional allowed ``choices``).

    Mutable and dataclass defaults are wrapped in a ``default_factory`` (a fresh copy per
    instance); pass a class (``cfg_field(EnvConfig, ...)``) to use it as the factory.
    ``secret`` overrides the name rule for secrets; ``env`` names the variable a secret comes from.
    """
    meta: dict[str, Any] = {"help": help}
    if choices is not None:
        meta["choices"] = tuple(choices)
    if secret is not None:
        meta["secret"] = secret
    if env is not None:
        meta["env"] = env
    if isinstance(default, type) and is_dataclass(default):
        return field(default_factory=default, metadata=meta)
    if is_dataclass(default) and not isinstance(default, type):
        proto = default  # a deep copy per instance: nested lists must not be shared
        return field(default_factory=lambda: copy.deepcopy(proto), metadata=meta)
    if isinstance(default, (list, dict, set)):
        proto_c = default
        return field(default_factory=lambda: copy.deepcopy(proto_c), metadata=meta)
    if default is MISSING:
        return field(metadata=meta)
    return field(default=default, metadata=meta)


def is_secret_field(f: Field[Any]) -> bool:
    """Whether ``f`` must never be written to disk or logs."""
    flag = f.metadata.get("secret")
    if flag is not None:
        return bool(flag)
    return f.name.lower().endswith(_SECRET_SUFFIXES)


def _check_schema(cls: Any) -> None:
    if not (isinstance(cls, type) and is_dataclass(cls)):
        raise TypeError(f"a config schema must be a dataclass class, got {cls!r}")


def _hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except NameError as e:  # an annotation names something not importable at module level
        raise TypeError(f"cannot resolve the annotations of {cls.__qualname__}: {e}") from e


def _init_fields(cls: type) -> list[Field[Any]]:
    return [f for f in fields(cls) if f.init]


def _field_default(f: Field[Any]) -> Any:
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    return _NOT_SET


# --------------------------------------------------------------------------- type names
def _type_name(tp: Any) -> str:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is type(None):
        return "null"
    if origin is Literal:
        return "{" + ",".join(str(a) for a in args) + "}"
    if origin in (Union, types.UnionType):
        return " | ".join(_type_name(a) for a in args)
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[{', '.join('...' if a is Ellipsis else _type_name(a) for a in args)}]"
    return getattr(tp, "__name__", str(tp))


# --------------------------------------------------------------------------- coercion
def _err(key: str, tp: Any, value: Any, why: str = "") -> ConfigError:
    shown = value.text if isinstance(value, RawValue) else value
    extra = f" ({why})" if why else ""
    return ConfigError(f"{key}: expected {_type_name(tp)}, got {shown!r}{extra}")


def _allows_none(tp: Any) -> bool:
    return (
        tp is Any or tp is type(None) or (typing.get_origin(tp) in (Union, types.UnionType) and type(None) in typing.get_args(tp))
    )


def _coerce(value: Any, tp: Any, key: str) -> Any:
    """Convert ``value`` (YAML-parsed, possibly a :class:`RawValue`) to type ``tp`` or raise ConfigError."""
    origin = typing.get_origin(tp)
    v = unwrap(value)
    if isinstance(v, str) and (m := _ENV_PLACEHOLDER.match(v)):
        v = value = os.environ.get(m.group(1))
        if v is None and not _allows_none(tp):
            raise ConfigError(f"{key}: set the environment variable {m.group(1)}")
    if tp is Any:
        return v
    if origin in (Union, types.UnionType):
        return _coerce_union(value, v, tp, key)
    if v is None:
        if tp is type(None):
            return None
        raise _err(key, tp, value, "null is not allowed here")
    if origin is Literal:
        return _coerce_literal(value, v, tp, key)
    if origin in (list, Sequence, tuple, dict, Mapping) or tp in (list, tuple, dict):
        return _coerce_container(value, v, tp, key)
    if isinstance(tp, type) and is_dataclass(tp):
        if isinstance(v, tp):
            return v
        if not isinstance(v, Mapping):
            raise _err(key, tp, value, "expected a mapping of its fields")
        return _build(tp, v, key + ".")
    scalar = _SCALARS.get(tp) if isinstance(tp, type) else None
    if scalar is not None:
        return scalar(value, v, tp, key)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        for member in tp:
            if v == member.value or v == member.name or v is member:
                return member
        raise _err(key, tp, value, "choose one of " + ", ".join(repr(m.value) for m in tp))
    if isinstance(tp, type) and issubclass(tp, os.PathLike):
        if isinstance(v, (str, os.PathLike)):
            return typing.cast(Any, tp)(v)
        raise _err(key, tp, value)
    if isinstance(tp, type):
        if isinstance(v, tp):
            return v
        raise _err(key, tp, value)
    return v  # an annotation we do not understand (e.g. a Callable): pass through


# Each coercer takes (value as given, possibly a RawValue; its unwrapped value; the type; the key).
def _coerce_union(value: Any, v: Any, tp: Any, key: str) -> Any:
    args = typing.get_args(tp)
    if v is None:
        if type(None) in args:
            return None
        raise _err(key, tp, value)
    for arm in (a for a in args if a is not type(None)):
        try:
            return _coerce(value, arm, key)
        except ConfigError:
            continue
    raise _err(key, tp, value)


def _coerce_literal(value: Any, v: Any, tp: Any, key: str) -> Any:
    args = typing.get_args(tp)
    for choice in args:
        if v == choice and type(v) is type(choice):
            return choice
        if isinstance(choice, str) and not isinstance(v, str):
            text = value.text if isinstance(value, RawValue) else str(v)
            if text == choice:
                return choice
    raise _err(key, tp, value, "choose one of " + ", ".join(map(repr, args)))


def _coerce_container(value: Any, v: Any, tp: Any, key: str) -> Any:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (dict, Mapping) or tp is dict:
        if not isinstance(v, Mapping):
            raise _err(key, tp, value, "write mappings as {k: v}")
        k_tp, v_tp = args if args else (Any, Any)
        return {_coerce(k, k_tp, key): _coerce(x, v_tp, f"{key}.{k}") for k, x in v.items()}
    is_tuple = origin is tuple or tp is tuple
    if not isinstance(v, (list, tuple)):
        raise _err(key, tp, value, "write tuples as [a,b]" if is_tuple else "write lists as [a,b]")
    if not is_tuple:
        item_tp = args[0] if args else Any
        return [_coerce(x, item_tp, f"{key}[{i}]") for i, x in enumerate(v)]
    if not args or (len(args) == 2 and args[1] is Ellipsis):
        item_tp = args[0] if args else Any
        return tuple(_coerce(x, item_tp, f"{key}[{i}]") for i, x in enumerate(v))
    if len(v) != len(args):
        raise _err(key, tp, value, f"needs exactly {len(args)} items")
    return tuple(_coerce(x, a, f"{key}[{i}]") for i, (x, a) in enumerate(zip(v, args)))


def _coerce_bool(value: Any, v: Any, tp: Any, key: str) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.lower() in ("true", "false", "yes", "no", "on", "off", "1", "0"):
        return v.lower() in ("true", "yes", "on", "1")
    if isinstance(v, int) and v in (0, 1):
        return bool(v)
    raise _err(key, tp, value)


def _coerce_int(value: Any, v: Any, tp: Any, key: str) -> int:
    if isinstance(v, bool):
        raise _err(key, tp, value)
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str):
        try:
            return int(v.replace("_", ""))
        except ValueError:
            try:
                f = float(v)
            except ValueError:
                raise _err(key, tp, value) from None
            if f.is_integer():
                return int(f)
    raise _err(key, tp, value)


def _coerce_float(value: Any, v: Any, tp: Any, key: str) -> float:
    if isinstance(v, bool):
        raise _err(key, tp, value)
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):  # YAML 1.1 reads "3e-4" (no dot) as a string
        try:
            return float(v)
        except ValueError:
            raise _err(key, tp, value) from None
    raise _err(key, tp, value)


def _coerce_str(value: Any, v: Any, tp: Any, key: str) -> str:
    if isinstance(v, str):
        return v
    if isinstance(value, RawValue) and not isinstance(v, (list, dict)):
        return value.text  # what was typed: "001" stays "001", "yes" stays "yes"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return str(v)
    raise _err(key, tp, value)


_SCALARS: dict[Any, Callable[[Any, Any, Any, str], Any]] = {
    bool: _coerce_bool,
    int: _coerce_int,
    float: _coerce_float,
    str: _coerce_str,
}


# --------------------------------------------------------------------------- building
def _all_keys(cls: type, prefix: str = "") -> Iterator[str]:
    hints = _hints(cls)
    for f in _init_fields(cls):
        tp = hints.get(f.name, Any)
        yield prefix + f.name
        if isinstance(tp, type) and is_dataclass(tp):
            yield from _all_keys(tp, prefix + f.name + ".")


def _unknown(key: str, root: type | None) -> ConfigError:
    hint = ""
    if root is not None:
        known = [k for k in _all_keys(root) if not key.startswith(k + ".")]  # not the typo's own parents
        close = difflib.get_close_matches(key, known, n=3, cutoff=0.8)
        if not close:  # a typo in the last part only: compare the leaf names
            leaf = key.rsplit(".", 1)[-1]
            leaves = {k: k.rsplit(".", 1)[-1] for k in known}
            close = [k for k, name in leaves.items() if difflib.get_close_matches(leaf, [name], cutoff=0.75)]
        if close:
            hint = "; did you mean " + " or ".join(close[:3]) + "?"
    return ConfigError(f"unknown config key {key!r}{hint} (`digirl config keys NAME` lists every key)")


_ROOT: list[type] = []  # the schema being built, for suggestions on nested typos


def _build(cls: type[T], data: Mapping[str, Any], prefix: str = "") -> T:
    """Construct ``cls`` from a (possibly partial) nested mapping of raw values."""
    hints = _hints(cls)
    init = {f.name: f for f in _init_fields(cls)}
    for k, v in data.items():
        if k not in init:
            full = prefix + str(k)
            while isinstance(unwrap(v), Mapping) and len(unwrap(v)) == 1:  # name the whole typed key
                ((sub, v),) = unwrap(v).items()
                full += f".{sub}"
            raise _unknown(full, _ROOT[-1] if _ROOT else cls)
    kwargs: dict[str, Any] = {}
    for name, f in init.items():
        tp = hints.get(name, Any)
        key = prefix + name
        if name in data:
            raw = data[name]
            if isinstance(tp, type) and is_dataclass(tp) and isinstance(unwrap(raw), Mapping):
                base = _field_default(f)
                merged = merge(config_to_dict(base) if is_dataclass(base) else {}, unwrap(raw))
                val = _build(tp, merged, key + ".")
            else:
                val = _coerce(raw, tp, key)
            choices = f.metadata.get("choices")
            if choices is not None and val not in choices:
                raise ConfigError(f"{key}: {val!r} is not one of {', '.join(map(repr, choices))}")
            kwargs[name] = val
        elif _field_default(f) is _NOT_SET:
            raise ConfigError(f"missing required config key {key!r} ({f.metadata.get('help', '')})")
    try:
        return cls(**kwargs)
    except ConfigError:
        raise
    except (ValueError, TypeError, AssertionError) as e:  # __post_init__ validation
        where = prefix.rstrip(".") or cls.__name__
        raise ConfigError(f"{where}: {e}") from e


# --------------------------------------------------------------------------- public API
def load_config(cls: type[T], *, preset: str | Path | None = None, overrides: Sequence[str] = ()) -> T:
    """Defaults of ``cls``, then ``preset`` (a file or a registered name), then ``key=value`` overrides.

    Example: ``load_config(RunConfig, preset="toy", overrides=["algo.lr=3e-4", "eval.every=2"])``.
    Raises :class:`ConfigError` for unknown keys (with suggestions), wrong types and failed validation.
    """
    _check_schema(cls)
    if isinstance(overrides, str):
        raise TypeError("overrides is a list of 'key=value' strings, not one string")
    tree: dict[str, Any] = {}
    if preset is not None:
        tree = load_preset_tree(preset)
    tree = merge(tree, parse_overrides(overrides))
    _ROOT.append(cls)
    try:
        return _build(cls, tree)
    finally:
        _ROOT.pop()


def load_config_file(cls: type[T], path: str | Path) -> T:
    """Load a config saved by :func:`save_config` (or any YAML preset file)."""
    return load_config(cls, preset=Path(path))


def _plain(v: Any, for_save: bool) -> Any:
    if is_dataclass(v) and not isinstance(v, type):
        return config_to_dict(v, for_save=for_save)
    if isinstance(v, enum.Enum):
        return v.value
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    if isinstance(v, (list, tuple)):
        return [_plain(x, for_save) for x in v]
    if isinstance(v, Mapping):
        return {k: _plain(x, for_save) for k, x in v.items()}
    return v


def config_to_dict(cfg: Any, *, for_save: bool = False) -> dict[str, Any]:
    """A nested dict of plain values (lists, str paths). ``for_save`` replaces or drops secrets."""
    if not (is_dataclass(cfg) and not isinstance(cfg, type)):
        raise TypeError(f"expected a config dataclass instance, got {type(cfg).__name__}")
    out: dict[str, Any] = {}
    for f in fields(cfg):
        v = getattr(cfg, f.name)
        if for_save and is_secret_field(f):
            if f.metadata.get("env"):
                out[f.name] = f"<from env {f.metadata['env']}>"
            continue  # never written, whatever its value
        out[f.name] = _plain(v, for_save)
    return out


def _yaml_value(v: Any) -> str:
    if isinstance(v, float) and math.isnan(v):
        return ".nan"
    s: str = yaml.safe_dump(v, default_flow_style=True, width=10**9, allow_unicode=True, sort_keys=False)
    if s.endswith("\n...\n"):
        s = s[: -len("\n...\n")]
    s = s.strip()
    # Multi-line text, or text that our YAML 1.2 loader would read differently ("1e3" is a float
    # here, not in PyYAML's dumper): JSON's double-quoted form is valid YAML and unambiguous.
    if "\n" in s or yaml_load(s) != v:
        return json.dumps(v, ensure_ascii=False)
    return s


def _yaml_lines(cfg: Any, indent: int, comments: bool) -> list[str]:
    pad = " " * indent
    lines: list[str] = []
    data = config_to_dict(cfg, for_save=True)
    for f in fields(cfg):
        if f.name not in data:
            continue
        help_text = f.metadata.get("help", "")
        if comments and help_text:
            lines += [f"{pad}# {h}" for h in str(help_text).splitlines()]
        v = getattr(cfg, f.name)
        if is_dataclass(v) and not isinstance(v, type):
            lines.append(f"{pad}{f.name}:")
            lines += _yaml_lines(v, indent + 2, comments)
        else:
            lines.append(f"{pad}{f.name}: {_yaml_value(data[f.name])}")
    return lines


def config_to_yaml(cfg: Any, *, comments: bool = True) -> str:
    """YAML text of ``cfg`` with each field's help as a comment; secrets are never included."""
    return "\n".join(_yaml_lines(cfg, 0, comments)) + "\n"


def save_config(cfg: Any, path: str | Path) -> Path:
    """Write ``cfg`` as YAML atomically (a crash never leaves a half-written file); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = f"# {type(cfg).__module__}.{type(cfg).__qualname__} (resolved config)\n" + config_to_yaml(cfg)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def config_help(cls: type) -> list[tuple[str, str, Any, str]]:
    """``(dotted key, type name, default, help)`` for every leaf field, depth first."""
    _check_schema(cls)
    rows: list[tuple[str, str, Any, str]] = []

    def walk(c: type, prefix: str, inst: Any) -> None:
        hints = _hints(c)
        for f in _init_fields(c):
            tp = hints.get(f.name, Any)
            # the parent's default instance may differ from the class defaults (cfg_field(Algo(lr=...)))
            default = getattr(inst, f.name) if inst is not None else _field_default(f)
            if isinstance(tp, type) and is_dataclass(tp):
                walk(tp, prefix + f.name + ".", default if isinstance(default, tp) else None)
                continue
            if default is _NOT_SET:
                shown: Any = "(required)"
            elif is_secret_field(f):
                shown = f"<from env {f.metadata['env']}>" if f.metadata.get("env") else None
            else:
                shown = _plain(default, True)
            rows.append((prefix + f.name, _type_name(tp), shown, str(f.metadata.get("help", ""))))

    try:
        root: Any = cls()
    except (TypeError, ValueError):  # required fields: fall back to per-field defaults
        root = None
    walk(cls, "", root)
    return rows
