"""``digirl sim coverage``: the CLI face of :mod:`digirl.sim.coverage`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from digirl.cli.common import FAMILY_FILES, add_command, arg, emit_json, register_family_files
from digirl.sim.coverage import coverage_report_file
from digirl.sim.tasks.tasksets import TASKSET_DIR, TASKSETS


# --------------------------------------------------------------------------- CLI
def add_coverage_parser(sim_subparsers: Any) -> argparse.ArgumentParser:
    """Add ``digirl sim coverage`` to the ``digirl sim`` subparsers."""
    return add_command(
        sim_subparsers,
        "coverage",
        "how many instructions of a task file the simulator parses and its scripted expert solves",
        "digirl sim coverage --task-file my_tasks.txt --perturbation 1",
        _cmd_coverage,
        arg(
            "--task-file",
            required=True,
            metavar="FILE",
            help="text file, one instruction per line (# comments and blank lines skipped); a .tsv file "
            "'family<TAB>instruction[<TAB>slot=value;...]' also measures right-family placement; a .yaml "
            "file may define families; a shipped set may be named as general_test, phone_train, ...",
        ),
        FAMILY_FILES,
        arg("--perturbation", type=int, default=1, help="simulator perturbation level (default: 1)"),
        arg("--seeds", default="0", help="comma-separated reset seeds; a line counts as solved on all (default: 0)"),
        arg("--taskset", choices=TASKSETS, help="run every line in this task set's env (default: per intent)"),
        arg("--max-lines", type=int, help="only the first N instructions"),
        arg("--no-expert", action="store_true", help="parse coverage only; do not run the scripted expert"),
        arg("--show", type=int, default=20, help="how many unsupported/failing lines to list (default: 20)"),
    )


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
    register_family_files(args.families)
    report = coverage_report_file(
        path,
        perturbation=args.perturbation,
        seeds=seeds or [0],
        run_expert=not args.no_expert,
        taskset=args.taskset,
        max_lines=args.max_lines,
    )
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
        f"[bold]{r['task_file']}[/]: {r['lines']} instructions, parsed {r['parsed']} ({r['parse_rate']:.1%}): "
        f"{r['how']['rule']} by a phrasing, {r['how']['normalized']} after fixing typos or casing, "
        f"{r['how'].get('compound', 0)} as compound requests, {r['how']['question']} questions turned into web searches"
    )
    counts = r.get("status_counts") or {}
    labels = {
        "solved": "solved",
        "parse": "no family parses it",
        "unsupported_app": "asks for an app the phone lacks",
        "expert": "the expert failed",
        "not_run": "parsed (expert not run)",
    }
    con.print("per line: " + "; ".join(f"{labels.get(k, k)} {v}" for k, v in sorted(counts.items())))
    exp = r.get("expected")
    if exp:
        con.print(
            f"parsed to the expected family: {exp['right_family']} of {exp['lines']} ({exp['rate']:.1%}); "
            f"slot values differing: {len(exp['slot_mismatches'])}"
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
    if exp:
        t.add_column("expected", justify="right")
        t.add_column("right family", justify="right")
    if ex["ran"]:
        t.add_column("solved", justify="right")
        t.add_column("rate", justify="right")
    for fam, c in r["families"].items():
        row = [fam, str(c["lines"])]
        if exp:
            row += [str(c["expected"]), f"{c['right'] / c['expected']:.1%}" if c["expected"] else "-"]
        if ex["ran"]:
            row += [str(c["solved"]), f"{c['solved'] / c['lines']:.1%}" if c["lines"] else "-"]
        t.add_row(*row)
    con.print(t)
    for title, rows in (("rejected", r["unsupported"]), ("expert failures", r["failures"])):
        if rows:
            con.print(f"[bold]{title}[/] ({len(rows)}; first {min(show, len(rows))}):")
            for row in rows[:show]:
                con.print(f"  line {row['line']}: {json.dumps(row['text'])} — {row['reason']}", markup=False)
    failing = [x for x in r.get("per_line", []) if x["status"] in ("parse", "unsupported_app", "expert")]
    if failing:
        con.print(f"[bold]why lines fail[/] ({len(failing)}; first {min(show, len(failing))}):")
        for row in failing[:show]:
            con.print(f"  line {row['line']} [{row['status']}]: {json.dumps(row['text'])}", markup=False)
    noted = [x for x in r.get("per_line", []) if x["status"] in ("solved", "not_run") and x["reason"]]
    if noted:
        con.print(f"[bold]placeholder apps[/] ({len(noted)}; first {min(show, len(noted))}):")
        for row in noted[:show]:
            con.print(f"  line {row['line']}: {json.dumps(row['text'])} — {row['reason']}", markup=False)
    if exp:
        for title, rows in (("wrong family", exp["wrong"]), ("slot values differing", exp["slot_mismatches"])):
            if rows:
                con.print(f"[bold]{title}[/] ({len(rows)}; first {min(show, len(rows))}):")
                for row in rows[:show]:
                    detail = row.get("slots") or f"expected {row['expected']}, got {row['got'] or 'nothing'} {row['reason']}"
                    con.print(f"  line {row['line']}: {json.dumps(row['text'])} — {detail}", markup=False)
