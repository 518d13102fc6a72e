"""``digirl quickstart``: demos → SFT → DigiRL on the embedded simulator, on a CPU, in minutes."""

from __future__ import annotations

import argparse
from typing import Any

from digirl.cli.common import add_json_flag, add_parser, emit_json


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
    for name, r in (("SFT (start)", s["sft"]), (f"{label} (off-to-online)", s["final"])):
        lo, hi = r["ci95"]
        t.add_row(name, f"{100 * r['success_rate']:.1f}%", f"{100 * lo:.0f}–{100 * hi:.0f}%", f"{r['mean_length']:.2f}")
    Console().print(t)
    print(f"learning curve: {s['out']}/learning_curve.png   run folder: {s['out']}/{s['algo']}   ({s['wall_s'] / 60:.1f} min)")
    return 0


def add_commands(sub: Any) -> None:
    p = add_parser(
        sub,
        "quickstart",
        "expert demos → SFT → DigiRL off-to-online on the simulator (CPU, ~10 min); prints SFT vs DigiRL",
        "digirl quickstart --out runs/quickstart",
    )
    p.add_argument("--out", default="runs/quickstart", help="output folder")
    p.add_argument(
        "--budget",
        default="default",
        choices=["tiny", "default", "long"],
        help="tiny: seconds (smoke test); default: ~10 min on 2 cores",
    )
    p.add_argument("--env", default="digirl/sim-general-v0", help="simulator env id")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--algo", default="digirl", choices=["digirl", "filtered_bc"], help="the RL algorithm of the last stage")
    p.add_argument("--num-envs", type=int, default=2, help="simulator worker processes")
    add_json_flag(p)
    p.set_defaults(func=_cmd)
