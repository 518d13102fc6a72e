"""Calibration run: SFT → offline data → DigiRL / Filtered BC off2on, printing success curves.

Used to pick the presets' budgets; the Table-1 benchmark (benchmarks/table1.py) is the real one.
"""

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
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "runs/calib")
    env = sys.argv[2] if len(sys.argv) > 2 else "digirl/sim-general-v0"
    demos = sys.argv[3] if len(sys.argv) > 3 else "48"
    sft_steps = sys.argv[4] if len(sys.argv) > 4 else "150"
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
        args = [
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
            *sys.argv[5:],
        ]
        procs.append(subprocess.Popen(args, stdout=open(out / f"{algo}.log", "w"), stderr=subprocess.STDOUT))
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
