"""``digirl quickstart``: demos → SFT → DigiRL on the embedded simulator, on a CPU, in minutes."""

from __future__ import annotations

import argparse
from typing import Any

from digirl.cli.common import add_command, arg, emit_json


def _cmd(args: argparse.Namespace) -> int:
    from digirl.training.quickstart import quickstart

    s = quickstart(args.out, budget=args.budget, env_id=args.env, seed=args.seed, num_envs=args.num_envs, algo=args.algo)
    if args.json:
        emit_json(s)
        return 0
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"Held-out test tasks ({s['test_tasks']}, first in order)")
    for col in ("policy", "success", "95% CI", "mean length"):
        t.add_column(col)
    label = {"digirl": "DigiRL", "filtered_bc": "Filtered BC"}[s["algo"]]
    rows = [("untrained (same network)", s["untrained"])] if "untrained" in s else []
    rl_row = f"{label} (1 iteration: smoke test)" if s.get("budget") == "tiny" else f"{label} (off-to-online)"
    rows += [("SFT (start)", s["sft"]), (rl_row, s["final"])]
    for name, r in rows:
        lo, hi = r["ci95"]
        t.add_row(name, f"{100 * r['success_rate']:.1f}%", f"{100 * lo:.0f}–{100 * hi:.0f}%", f"{r['mean_length']:.2f}")
    Console().print(t)
    if s.get("budget") == "tiny":
        print(
            "tiny budget: untrained -> SFT is learning from 16 expert demos; the one online iteration (4 trajectories) "
            "only checks the RL stage runs. For RL that moves the success rate: digirl quickstart (default budget)."
        )
    print(f"learning curve: {s['out']}/learning_curve.png   run folder: {s['out']}/{s['algo']}   ({s['wall_s']:.0f} s)")
    return 0


def add_commands(sub: Any) -> None:
    add_command(
        sub,
        "quickstart",
        "expert demos → SFT → DigiRL off-to-online on the simulator (CPU, ~10 min); prints SFT vs DigiRL",
        "digirl quickstart --out runs/quickstart",
        _cmd,
        arg("--out", default="runs/quickstart", help="output folder"),
        arg(
            "--budget",
            default="default",
            choices=["tiny", "default", "long"],
            help="tiny: ~20-30 s on 2 cores; every stage at toy size, shows an untrained policy vs SFT on 8 test tasks "
            "(the one online iteration is a smoke test of the RL stage, too short to improve on SFT); default: ~10 min on "
            "2 cores, SFT then DigiRL improving it on 48 test tasks; long: the same on 96 test tasks",
        ),
        arg("--env", default="digirl/sim-general-v0", help="simulator env id"),
        arg("--seed", type=int, default=0),
        arg("--algo", default="digirl", choices=["digirl", "filtered_bc"], help="the RL algorithm of the last stage"),
        arg("--num-envs", type=int, default=2, help="simulator worker processes"),
    )
