"""``digirl config show|keys|presets``: print resolved configs, their keys and the available presets."""

from __future__ import annotations

import argparse
from typing import Any

from digirl.cli.common import add_command, add_group, arg, emit_json


class _OverridesParser(argparse.ArgumentParser):
    """Lets ``key=value`` overrides follow options (``show train --json a=1``): argparse alone stops
    filling a ``nargs="*"`` positional once an option is seen, and would reject the rest."""

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        ns, extras = super().parse_known_args(args, namespace)
        if hasattr(ns, "overrides"):
            late = [a for a in extras if "=" in a and not a.startswith("-")]
            ns.overrides = [*ns.overrides, *late]
            extras = [a for a in extras if a not in late]
        return ns, extras


_SCHEMA = arg("schema", metavar="NAME", help="config schema name (e.g. train)")


def add_commands(sub: Any) -> None:
    csub = add_group(
        sub,
        "config",
        "Show resolved configs (defaults + preset + key=value overrides), their keys, and presets.",
        "digirl config show train algo.lr=3e-4 eval.every=2",
        parser_class=_OverridesParser,
    )

    add_command(
        csub,
        "show",
        "Print the resolved config of a schema as YAML (secrets are never shown); save it with > file.yaml.",
        "digirl config show train --preset toy algo.lr=3e-4 > my_run.yaml",
        cmd_show,
        _SCHEMA,
        arg("overrides", nargs="*", metavar="KEY=VALUE", help="dotted overrides, e.g. algo.lr=3e-4"),
        arg("-p", "--preset", default=None, help="preset name or YAML file applied before overrides"),
        arg("--no-comments", action="store_true", help="omit the help text comments"),
    )
    add_command(
        csub,
        "keys",
        "List the keys of a schema with their type, default and help (all, or those matching a filter).",
        "digirl config keys train algo.critic     # keys containing 'algo.critic'; --search TEXT also reads help",
        cmd_keys,
        _SCHEMA,
        arg(
            "filter",
            nargs="?",
            default=None,
            metavar="FILTER",
            help="only keys containing this (any case), e.g. a prefix like eval.",
        ),
        arg("-s", "--search", default=None, metavar="TEXT", help="only keys whose name or help text contains TEXT (any case)"),
    )
    add_command(
        csub, "presets", "List the presets found in the registered preset directories.", "digirl config presets", cmd_presets
    )


def cmd_show(args: argparse.Namespace) -> int:
    from digirl.config import config_to_dict, config_to_yaml, get_schema, load_config

    cls = get_schema(args.schema)
    cfg: Any = load_config(cls, preset=args.preset, overrides=args.overrides)
    if args.json:
        emit_json({"schema": args.schema, "preset": args.preset, "config": config_to_dict(cfg, for_save=True)})
    else:
        print(config_to_yaml(cfg, comments=not args.no_comments), end="")
    return 0


def cmd_keys(args: argparse.Namespace) -> int:
    from digirl.config import config_help, get_schema

    rows = config_help(get_schema(args.schema))
    total = len(rows)
    if args.filter:
        want = args.filter.lower()
        rows = [r for r in rows if want in r[0].lower()]
    if args.search:
        text = args.search.lower()
        rows = [r for r in rows if text in r[0].lower() or text in r[3].lower()]
    filtered = bool(args.filter or args.search)
    if filtered and not rows:
        what = " and ".join(
            w
            for w in (
                f"{args.filter!r} in its name" if args.filter else "",
                f"{args.search!r} in its name or help" if args.search else "",
            )
            if w
        )
        hint = "" if args.search else "; --search TEXT also reads the help text"
        raise ValueError(f"{args.schema!r} has no key with {what} ({total} keys: `digirl config keys {args.schema}`{hint})")
    if args.json:
        emit_json(
            {"schema": args.schema, "total": total, "keys": [dict(zip(("key", "type", "default", "help"), r)) for r in rows]}
        )
        return 0
    wk = max((len(r[0]) for r in rows), default=3)
    wt = max((len(r[1]) for r in rows), default=4)
    for key, tp, default, help_text in rows:
        print(f"{key:<{wk}}  {tp:<{wt}}  {default!r:<12}  {help_text}")
    if filtered:
        print(f"\n{len(rows)} of {total} keys")
    return 0


def cmd_presets(args: argparse.Namespace) -> int:
    from digirl.config import list_presets

    presets = list_presets()
    if args.json:
        emit_json(
            {"presets": [{"name": p.name, "path": str(p.path), "description": p.description, "base": p.base} for p in presets]}
        )
        return 0
    if not presets:
        print("no presets found")
        return 0
    w = max(len(p.name) for p in presets)
    for p in presets:
        base = f" (base: {p.base})" if p.base else ""
        print(f"{p.name:<{w}}  {p.description}{base}")
    return 0
