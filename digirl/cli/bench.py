"""``digirl bench table1``: DigiRL's Table 1 on the embedded simulator."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from digirl.cli.common import add_command, add_group, arg, emit_json
from digirl.experiments.subruns import children_stop_with_me


def _show(args: argparse.Namespace, summary: dict[str, Any], name: str, written: str | None) -> int:
    """A driver's result: its summary as JSON, or its NAME.md table and, given ``written``, what it wrote."""
    if args.json:
        emit_json(summary)
    else:
        print((Path(args.out) / f"{name}.md").read_text())
        if written is not None:
            print(f"wrote {args.out}/{name}.md, {written} ({summary['wall_s']:.0f} s)")
    return 0


def _run_table1_driver(args: argparse.Namespace, name: str) -> int:
    """``bench table1`` and ``bench online``: the Table 1 driver, its table written as NAME.md / NAME.json."""
    from digirl.config.core import load_config
    from digirl.experiments.table1 import Table1Config, run_table1

    cfg = load_config(Table1Config, preset=args.preset, overrides=args.overrides)
    if name == "online" and not any(v.split("|")[2:3] == ["online"] for v in cfg.variants):
        raise SystemExit("digirl bench online: no online method among the variants (see --preset bench-online)")
    with children_stop_with_me():
        summary = run_table1(cfg, args.out, report_only=args.report_only, name=name)
    return _show(args, summary, name, f"{name}.json and the curves")


def _cmd_table1(args: argparse.Namespace) -> int:
    return _run_table1_driver(args, "table1")


def _cmd_online(args: argparse.Namespace) -> int:
    return _run_table1_driver(args, "online")


def _cmd_compare(args: argparse.Namespace) -> int:
    from digirl.experiments.table1_compare import RowPair, compare_markdown, compare_results, load_table1_result

    pairs = [RowPair.parse(s) for s in args.rows] if args.rows else None
    cmp = compare_results(load_table1_result(args.a), load_table1_result(args.b), pairs, at=args.at)
    if args.json:
        emit_json(cmp)
    else:
        print(compare_markdown(cmp, args.a, args.b))
    return 0


def _cmd_nonstationary(args: argparse.Namespace) -> int:
    from digirl.config.core import load_config
    from digirl.experiments.nonstationary import NonStationaryConfig, run_nonstationary

    cfg = load_config(NonStationaryConfig, overrides=args.overrides)
    with children_stop_with_me():
        summary = run_nonstationary(cfg, args.out)
    return _show(args, summary, "nonstationary", None)


def _cmd_digiq(args: argparse.Namespace) -> int:
    from digirl.config.core import load_config
    from digirl.experiments.digiq_bench import DigiQBenchConfig, run_digiq_bench

    cfg = load_config(DigiQBenchConfig, preset=args.preset, overrides=args.overrides)
    with children_stop_with_me():
        summary = run_digiq_bench(cfg, args.out)
    return _show(args, summary, "digiq", "digiq.json and curves.png")


_OVERRIDES = arg("overrides", nargs="*", metavar="key=value")


def _add_table1_drivers(bsub: Any) -> None:
    """``bench table1`` and ``bench online``: one driver, two method sets."""
    add_command(
        bsub,
        "table1",
        "SFT / Filtered BC / DigiRL, offline and off-to-online, mean ± std over seeds",
        "digirl bench table1 runs/table1 --preset table1-smoke",
        _cmd_table1,
        arg("out", help="output folder (runs, table1.md, table1.json, curves.png)"),
        arg(
            "--preset",
            help="table1-gpu (one H100/H200 + 16 CPU cores), table1-smoke (CI), or the best measured recipes at "
            "3,072 online trajectories: table1-recipe-general, table1-recipe-webshop (5 seeds, ~16 / ~25 min on one GPU host)",
        ),
        _OVERRIDES,
        arg(
            "--report-only",
            action="store_true",
            help="run nothing: write the table of the runs OUT holds and list the unfinished ones "
            "(the same command without this flag finishes them; finished runs are always read back)",
        ),
    )
    add_command(
        bsub,
        "online",
        "DigiRL / Filtered BC / GRPO / PPO / branching online from one SFT policy, at equal trajectories and equal env steps",
        "digirl bench online runs/online --preset bench-online-smoke",
        _cmd_online,
        arg("out", help="output folder (runs, online.md, online.json, curves.png, curves_env_steps.png)"),
        arg(
            "--preset",
            default="bench-online",
            help="bench-online (default: both sets, 5 seeds, 3,072 trajectories a run, pixels only; resumable, several "
            "GPU sessions) or bench-online-smoke (CPU, minutes); key=value overrides change either "
            "(sets=[general] seeds=[0,1,2])",
        ),
        _OVERRIDES,
        arg("--report-only", action="store_true", help="run nothing: the table of the runs OUT holds"),
    )


def add_commands(sub: Any) -> None:
    bsub = add_group(
        sub,
        "bench",
        "benchmarks that reproduce the papers' tables on the simulator",
        "digirl bench table1 runs/table1 --preset table1-gpu seeds=[0]",
        metavar="BENCH",
    )
    _add_table1_drivers(bsub)
    add_command(
        bsub,
        "compare",
        "paired comparisons across two Table 1 runs, seed by seed (A − B with its 95 percent t-interval), and what differs",
        "digirl bench compare runs/ablations runs/baseline --rows digirl_off2on_mc:digirl_off2on",
        _cmd_compare,
        arg("a", help="run A: a table1.json or the folder holding it"),
        arg("b", help="run B: a table1.json or the folder holding it"),
        arg(
            "--rows", nargs="+", metavar="KEY[:KEY_B]", help="rows to compare (default: every row key in both runs, with itself)"
        ),
        arg(
            "--at",
            type=int,
            metavar="N",
            help="compare test success at the evaluation after N online trajectories instead of the final one "
            "(how fast rows learn; the runs' eval_every sets which N exist)",
        ),
    )
    add_command(
        bsub,
        "nonstationary",
        "the world shifts (simulator world_version): a frozen policy vs the same run trained on (DigiRL Fig. 4)",
        "digirl bench nonstationary runs/ns run=runs/digirl versions=[0,1,2] iterations=4",
        _cmd_nonstationary,
        arg("out", help="output folder (nonstationary.md / .json, eval reports, the continued run)"),
        _OVERRIDES,
    )
    add_command(
        bsub,
        "digiq",
        "Digi-Q vs SFT / offline Filtered BC / offline DigiRL on the same SFT rollouts, ablations, critic vs ground truth",
        "digirl bench digiq runs/digiq-bench --preset digiq-smoke",
        _cmd_digiq,
        arg("out", help="output folder (runs, digiq.md, digiq.json, curves.png)"),
        arg("--preset", help="digiq-gpu (one H200 + 16 CPU cores, both sets, 3 seeds) or digiq-smoke (CPU, CI)"),
        _OVERRIDES,
    )
