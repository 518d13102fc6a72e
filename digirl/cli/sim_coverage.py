"""``digirl sim coverage``: the CLI face of :mod:`digirl.sim.coverage`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from digirl.cli.common import add_json_flag, add_parser, emit_json
from digirl.sim.coverage import coverage_report
from digirl.sim.tasks.tasksets import TASKSET_DIR, TASKSETS


# --------------------------------------------------------------------------- CLI
def add_coverage_parser(sim_subparsers: Any) -> argparse.ArgumentParser:
    """Add ``digirl sim coverage`` to the ``digirl sim`` subparsers."""
    p = add_parser(
        sim_subparsers,
        "coverage",
        help="how many instructions of a task file the simulator parses and its scripted expert solves",
        example="digirl sim coverage --task-file my_tasks.txt --perturbation 1",
    )
    p.add_argument(
        "--task-file",
        required=True,
        metavar="FILE",
        help="text file, one instruction per line (# comments and blank lines skipped); "
        "a shipped set may be named as general_test, webshop_train, ...",
    )
    p.add_argument("--perturbation", type=int, default=1, help="simulator perturbation level (default: 1)")
    p.add_argument(
        "--seeds",
        default="0",
        help="comma-separated reset seeds; a line counts as solved on all (default: 0)",
    )
    p.add_argument(
        "--taskset", choices=TASKSETS, help="run every line in this task set's env (default: per intent)"
    )
    p.add_argument("--max-lines", type=int, help="only the first N instructions")
    p.add_argument(
        "--no-expert", action="store_true", help="parse coverage only; do not run the scripted expert"
    )
    p.add_argument(
        "--show", type=int, default=20, help="how many unsupported/failing lines to list (default: 20)"
    )
    add_json_flag(p)
    p.set_defaults(func=_cmd_coverage)
    return p


def _resolve_task_file(arg: str) -> Path:
    p = Path(arg)
    if p.is_file():
        return p
    shipped = TASKSET_DIR / f"{arg}.txt"
    if shipped.is_file():
        return shipped
    raise FileNotFoundError(f"task file not found: {arg}")


def _cmd_coverage(args: argparse.Namespace) -> int:
    path = _resolve_task_file(args.task_file)
    try:
        seeds = [int(s) for s in str(args.seeds).split(",") if s.strip()]
    except ValueError:
        raise ValueError(f"--seeds must be comma-separated integers, got {args.seeds!r}") from None
    lines = path.read_text(encoding="utf-8").splitlines()
    report = coverage_report(
        lines,
        perturbation=args.perturbation,
        seeds=seeds or [0],
        run_expert=not args.no_expert,
        taskset=args.taskset,
        max_lines=args.max_lines,
    )
    report["task_file"] = str(path)
    if args.json:
        emit_json(report)
        return 0
    _print_report(report, args.show)
    return 0


def _print_report(r: dict[str, Any], show: int) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console()
    ex = r["expert"]
    con.print(
        f"[bold]{r['task_file']}[/]: {r['lines']} instructions, parsed {r['parsed']} ({r['parse_rate']:.1%})"
    )
    if ex["ran"]:
        con.print(
            f"scripted expert (perturbation {ex['perturbation']}, seeds {ex['seeds']}): solved {r['solved']} "
            f"lines ({r['solve_rate']:.1%}); {ex['successes']}/{ex['episodes']} episodes in {ex['seconds']} s"
        )
    else:
        con.print(f"scripted expert skipped: {ex['skipped_reason']}")
    t = Table(title="per family")
    t.add_column("family")
    t.add_column("lines", justify="right")
    if ex["ran"]:
        t.add_column("solved", justify="right")
        t.add_column("rate", justify="right")
    for fam, c in r["families"].items():
        row = [fam, str(c["lines"])]
        if ex["ran"]:
            row += [str(c["solved"]), f"{c['solved'] / c['lines']:.1%}" if c["lines"] else "-"]
        t.add_row(*row)
    con.print(t)
    for title, rows in (("unsupported", r["unsupported"]), ("expert failures", r["failures"])):
        if rows:
            con.print(f"[bold]{title}[/] ({len(rows)}; first {min(show, len(rows))}):")
            for row in rows[:show]:
                con.print(f"  line {row['line']}: {json.dumps(row['text'])} — {row['reason']}", markup=False)
