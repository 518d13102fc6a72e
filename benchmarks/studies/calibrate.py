"""Calibration run: SFT → offline data → DigiRL / Filtered BC off2on, printing success curves.

Used to pick the presets' budgets; the Table-1 benchmark (``digirl bench table1``) is the real one.

    python benchmarks/studies/calibrate.py runs/calib --env digirl/sim-webshop-v0 --demos 48 --sft-steps 150 [key=value ...]

The trailing ``key=value`` overrides go to both ``digirl train`` runs.
"""

import argparse
import json
import logging
import subprocess
import sys
import time
from pathlib import Path

from digirl.config.core import load_config
from digirl.training.config import CollectConfig, SFTRunConfig
from digirl.training.sft import collect, sft


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default="runs/calib", help="output folder (default runs/calib)")
    ap.add_argument("--env", default="digirl/sim-general-v0", help="env id (default digirl/sim-general-v0)")
    ap.add_argument("--demos", type=int, default=48, help="expert demos for SFT (default 48)")
    ap.add_argument("--sft-steps", type=int, default=150, help="SFT steps (default 150)")
    ap.add_argument("overrides", nargs="*", metavar="key=value", help="passed on to both training runs")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    out, env, demos, sft_steps = Path(args.out), args.env, args.demos, args.sft_steps
    common = [f"env.id={env}", "env.num_envs=8"]
    t0 = time.time()
    r = sft(load_config(SFTRunConfig, overrides=[*common, f"sft.demos={demos}", f"sft.steps={sft_steps}"]), out / "sft")
    print("SFT", r, time.time() - t0, flush=True)
    s = collect(
        load_config(CollectConfig, overrides=[*common, f"policy.init={out}/sft/policy", "trajectories=128"]), out / "offline"
    )
    print("OFFLINE", s["success_rate"], time.time() - t0, flush=True)
    procs = []
    for algo in ("digirl", "filtered_bc"):
        cmd = [
            sys.executable,
            "-m",
            "digirl",
            "train",
            str(out / algo),
            "mode=off2on",
            f"offline_dataset={out}/offline",
            f"policy.init={out}/sft/policy",
            f"algo.name={algo}",
            "iterations=12",
            "rollout_size=32",
            "eval.every=3",
            "eval.test_tasks=96",
            "eval.train_tasks=0",
            *common,
            "log.tensorboard=false",
            *args.overrides,
        ]
        procs.append(subprocess.Popen(cmd, stdout=open(out / f"{algo}.log", "w"), stderr=subprocess.STDOUT))
    for p in procs:
        p.wait()
    for algo in ("digirl", "filtered_bc"):
        rows = [json.loads(line) for line in open(out / algo / "metrics.jsonl")]
        print(
            algo, [(r["step"], round(r["eval/test_success_rate"], 3)) for r in rows if "eval/test_success_rate" in r], flush=True
        )
    print("total", time.time() - t0)


if __name__ == "__main__":
    main()
