"""``digirl envs list`` and ``digirl envs check ENV_ID``: what environments exist and whether they work."""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import time
from typing import Any

from digirl.cli.common import add_command, add_group, arg, emit_json
from digirl.envs.registry import BACKENDS

# The module whose presence means an extra is installed (an unknown extra is looked up by its own name).
_EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "browser": ("playwright",),
    "android": ("adbutils",),
    "hf": ("transformers",),
    "distributed": ("ray",),
    "viewer": ("gradio",),
    "wandb": ("wandb",),
}


def extra_installed(extra: str) -> bool:
    """Whether the optional dependencies of ``extra`` (e.g. ``browser``) are importable."""
    if not extra:
        return True
    mods = _EXTRA_MODULES.get(extra, (extra,))
    return all(importlib.util.find_spec(m) is not None for m in mods)


def add_commands(sub: Any) -> None:
    esub = add_group(sub, "envs", "List registered environments or check one.", "digirl envs list --json")

    add_command(
        esub,
        "list",
        "List the registered environment ids (all, or those matching a filter).",
        "digirl envs list --backend sim        # or: digirl envs list click --backend browser",
        cmd_list,
        arg("pattern", nargs="?", default=None, metavar="PATTERN", help="only ids or descriptions containing this (any case)"),
        arg("--backend", choices=BACKENDS, default=None, help="only envs of this backend"),
        arg("--installed", action="store_true", help="only envs whose extra is installed (ready to run)"),
    )
    add_command(
        esub,
        "check",
        "Run the conformance checker on one environment (spaces, seeded determinism, expert success).",
        "digirl envs check digirl/toy-tap-v0 --episodes 2 --json",
        cmd_check,
        arg("env_id", metavar="ENV_ID", help="a registered id (see `digirl envs list`)"),
        arg("--episodes", type=int, default=2, help="seeded episodes per check (seeds 0..N-1; default 2)"),
        arg("--max-tasks", type=int, default=5, help="tasks whose expert is replayed (default 5)"),
        arg("--no-expert", action="store_true", help="skip replaying the scripted expert (cheat())"),
    )


def cmd_list(args: argparse.Namespace) -> int:
    from digirl.envs.registry import list_envs

    specs = list_envs()
    pattern = (args.pattern or "").lower()
    rows: list[dict[str, Any]] = []
    for s in specs:
        installed = extra_installed(s.requires)
        if args.backend is not None and s.backend != args.backend:
            continue
        if pattern and pattern not in s.id.lower() and pattern not in s.description.lower():
            continue
        if args.installed and not installed:
            continue
        rows.append(
            {
                "id": s.id,
                "backend": s.backend,
                "description": s.description,
                "requires": s.requires,
                "installed": installed,
                "metadata": dict(s.metadata),
            }
        )
    filters = ", ".join(
        f
        for f in (
            f"backend {args.backend}" if args.backend else "",
            f"matching {args.pattern!r}" if args.pattern else "",
            "installed" if args.installed else "",
        )
        if f
    )
    if args.json:
        emit_json({"envs": rows, "count": len(rows), "total": len(specs)})
        return 0 if rows or not filters else 1
    if not rows:
        print(
            f"no environment matches ({filters}); {len(specs)} are registered: see `digirl envs list`"
            if filters
            else "no environments registered"
        )
        return 1 if filters else 0
    w = max(len(r["id"]) for r in rows)
    print(f"{'ID':<{w}}  {'BACKEND':<8}  {'REQUIRES':<14}  DESCRIPTION")
    for r in rows:
        req = r["requires"] or "-"
        if not r["installed"]:
            req += " (missing)"
        print(f"{r['id']:<{w}}  {r['backend']:<8}  {req:<14}  {r['description']}")
    missing = sorted({r["requires"] for r in rows if not r["installed"]})
    if missing:
        print("\n(missing) = install the extra first, e.g. pip install 'digirl[" + missing[0] + "]'")
    if filters:
        print(f"\n{len(rows)} of {len(specs)} environments ({filters})")
    else:
        by = sorted({r["backend"] for r in rows})
        print(f"\n{len(rows)} environments; filter with PATTERN, --backend {{{','.join(by)}}} or --installed")
    return 0


def _report_to_dict(report: Any) -> Any:
    if hasattr(report, "to_dict"):
        return report.to_dict()
    if dataclasses.is_dataclass(report) and not isinstance(report, type):
        return dataclasses.asdict(report)
    return report


def _report_ok(report: Any) -> bool:
    for name in ("ok", "passed"):
        if isinstance(report, dict) and name in report:
            return bool(report[name])
        if hasattr(report, name):
            return bool(getattr(report, name))
    return True  # the checker raises on failure when its report carries no verdict


def cmd_check(args: argparse.Namespace) -> int:
    from digirl.envs.registry import make, spec

    if args.episodes < 1:
        raise ValueError("--episodes must be at least 1")
    spec(args.env_id)  # an unknown id fails here, with the known ids listed
    from digirl.envs.checker import check_env  # imported only when used

    t0 = time.perf_counter()
    env = make(args.env_id)
    error = ""
    report: Any = None
    try:
        report = check_env(env, seeds=tuple(range(args.episodes)), check_expert=not args.no_expert, max_tasks=args.max_tasks)
        ok = _report_ok(report)
    except AssertionError as e:  # a failed conformance check, not a crash of the command
        ok, error = False, str(e) or "assertion failed"
    finally:
        env.close()
    seconds = round(time.perf_counter() - t0, 3)
    if args.json:
        out: dict[str, Any] = {"env_id": args.env_id, "ok": ok, "seconds": seconds}
        if report is not None:
            out["report"] = _report_to_dict(report)
        if error:
            out["error"] = error
        emit_json(out)
    else:
        if report is not None:
            print(report)
        if error:
            print(f"FAILED: {error}")
        print(f"{args.env_id}: {'OK' if ok else 'FAILED'} ({seconds:.1f}s)")
    return 0 if ok else 1
