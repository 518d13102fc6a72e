"""Pixels-only policy variants side by side, read on the validation split (issue 41, item 5).

Variants (each a ``digirl sft`` of the same expert demos, then ``digirl eval`` of the SFT policy; with
``--iterations N`` also N online DigiRL iterations from it, off-to-online from its own rollouts):

- ``pixels``: the screenshot-only default (``use_elements=false``: every tap is a grid cell);
- ``regions``: screenshot only, the pointer over boxes detected from the pixels (``pixel_regions=true``);
- ``elements``: reads the simulator's element list (``screenshot+elements``; the non-pixels reference).

Each (variant, seed) cell is a folder with its own result; a cell whose result exists is skipped, so
the script resumes after a kill. ``summary.json`` holds every seed, the mean and the sample std per
variant, and each result's provenance (observation, selection split, machine, exact commands).

    nice -n 10 python benchmarks/studies/pixels_regions.py --out benchmarks/results/pixels/cpu_sft --seeds 0 1
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from digirl.utils.provenance import result_metadata

VARIANTS: dict[str, tuple[str, list[str]]] = {
    "pixels": ("screenshot", ["policy.default.use_elements=false"]),
    "regions": ("screenshot", ["policy.default.use_elements=false", "policy.default.pixel_regions=true"]),
    "elements": ("screenshot+elements", ["policy.default.use_elements=true"]),
}


def _digirl(args: list[str], log: Path) -> dict[str, Any]:
    """``digirl ARGS --json``: its JSON result (last stdout line); stderr goes to ``log``."""
    cmd = [sys.executable, "-m", "digirl", *args, "--json"]
    with open(log, "w") as fh:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=fh, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"`{' '.join(args)}` failed (exit {proc.returncode}); see {log}")
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _success(result: dict[str, Any], split: str) -> float | None:
    for key in (f"{split}_success_rate", f"eval/{split}_success_rate"):
        if key in result:
            return float(result[key])
    inner = result.get(split)
    if isinstance(inner, dict) and "success_rate" in inner:
        return float(inner["success_rate"])
    for report in result.get("final") or []:  # digirl train: the final evaluation, one report per split
        if isinstance(report, dict) and report.get("split") == split:
            return float(report["success_rate"])
    return None


def run_cell(out: Path, variant: str, seed: int, a: argparse.Namespace) -> dict[str, Any]:
    """One (variant, seed): SFT and its evaluation (``result.json``), then, with ``--iterations``, DigiRL
    off-to-online from that SFT policy (``result_digirl_<iterations>x<rollout_size>.json``). Each stage
    whose result exists is read back, not run again."""
    cell = out / variant / f"seed{seed}"
    cell.mkdir(parents=True, exist_ok=True)
    observation, keys = VARIANTS[variant]
    env = [f"env.id=digirl/sim-{a.set}-v0", f"env.num_envs={a.num_envs}"]
    ev = [f"eval.val_tasks={a.val_tasks}", f"eval.test_tasks={a.test_tasks}", "eval.train_tasks=0"]
    policy = cell / "sft" / "policy"
    done = cell / "result.json"
    if done.is_file():
        row: dict[str, Any] = json.loads(done.read_text())
    else:
        sft_args = ["sft", str(cell / "sft"), *env, f"seed={seed}", *a.sft, *keys, *a.policy]
        t0 = time.perf_counter()
        if not (policy / "policy.json").is_file():
            _digirl(sft_args, cell / "sft.log")
        t_sft = time.perf_counter() - t0
        eval_args = ["eval", str(policy), *env, *ev]
        sft_eval = _digirl(eval_args, cell / "eval_sft.log")
        row = {
            "variant": variant,
            "seed": seed,
            "observation": observation,
            "sft_s": round(t_sft, 1),
            "sft_validation": _success(sft_eval, "validation"),
            "sft_test": _success(sft_eval, "test"),
            "commands": [["digirl", *sft_args], ["digirl", *eval_args]],
            **result_metadata(observation=observation, selection_split="validation", command=sys.argv),
        }
        done.write_text(json.dumps(row, indent=2))
    if a.iterations <= 0:
        return row
    # The stage's folder names its budget and extra train keys, so another budget is another run (never a resume).
    extra = "_" + hashlib.sha1(" ".join(a.train).encode()).hexdigest()[:8] if a.train else ""
    tag = f"{a.iterations}x{a.rollout_size}{extra}"
    rl_done = cell / f"result_digirl_{tag}.json"
    if rl_done.is_file():
        rl: dict[str, Any] = json.loads(rl_done.read_text())
    else:
        data = cell / f"offline_{a.offline}"
        collect_args = ["collect", str(data), f"policy.init={policy}", *env, f"seed={seed}", f"trajectories={a.offline}"]
        if not (cell / f"offline_{a.offline}.done").is_file():
            _digirl(collect_args, cell / "collect.log")
            (cell / f"offline_{a.offline}.done").write_text("")
        run = cell / f"digirl_{tag}"
        train_args = [
            "train",
            str(run),
            "--preset",
            f"digirl-{a.set}",
            f"offline_dataset={data}",
            f"policy.init={policy}",
            *env,
            f"seed={seed}",
            f"iterations={a.iterations}",
            f"rollout_size={a.rollout_size}",
            "eval.every=0",
            *ev,
            *a.train,
        ]
        t1 = time.perf_counter()
        final = _digirl(train_args, cell / f"train_{tag}.log")
        rl = {
            "iterations": a.iterations,
            "rollout_size": a.rollout_size,
            "offline_trajectories": a.offline,
            "train_s": round(time.perf_counter() - t1, 1),
            "digirl_validation": _success(final, "validation"),
            "digirl_test": _success(final, "test"),
            "commands": [["digirl", *collect_args], ["digirl", *train_args]],
            **result_metadata(observation=observation, selection_split="validation", command=sys.argv),
        }
        rl_done.write_text(json.dumps(rl, indent=2))
    merged = dict(row)
    merged.update({k: v for k, v in rl.items() if k.startswith("digirl_") or k in ("train_s", "iterations", "rollout_size")})
    merged["commands"] = row["commands"] + rl["commands"]
    return merged


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for variant in VARIANTS:
        mine = [r for r in rows if r["variant"] == variant]
        if not mine:
            continue
        entry: dict[str, Any] = {"observation": mine[0]["observation"], "seeds": [r["seed"] for r in mine]}
        for key in ("sft_validation", "sft_test", "digirl_validation", "digirl_test"):
            vals = [r[key] for r in mine if r.get(key) is not None]
            if vals:
                entry[key] = {
                    "per_seed": vals,
                    "mean": statistics.fmean(vals),
                    "sample_std": statistics.stdev(vals) if len(vals) > 1 else None,
                }
        out[variant] = entry
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--set", default="general", choices=("general", "webshop"))
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    p.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    p.add_argument("--val-tasks", type=int, default=48)
    p.add_argument("--test-tasks", type=int, default=0, help="test tasks evaluated beside validation (0: validation only)")
    p.add_argument("--num-envs", type=int, default=2)
    p.add_argument("--sft", nargs="*", default=["sft.demos=48", "sft.demo_sampling=stratified", "sft.steps=200"])
    p.add_argument("--policy", nargs="*", default=["policy.default.max_elements=48"], help="policy keys for every variant")
    p.add_argument("--iterations", type=int, default=0, help="online DigiRL iterations after SFT (0: SFT only)")
    p.add_argument("--rollout-size", type=int, default=16)
    p.add_argument("--offline", type=int, default=32, help="offline trajectories collected with the SFT policy")
    p.add_argument(
        "--train",
        nargs="*",
        default=["algo.offline_actor_steps=20", "algo.actor_steps=10"],
        help="extra digirl train keys (default: the General recipe's actor steps)",
    )
    a = p.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    rows = []
    for seed in a.seeds:
        for variant in a.variants:
            row = run_cell(a.out, variant, seed, a)
            rows.append(row)
            print(json.dumps({k: row.get(k) for k in ("variant", "seed", "sft_validation", "digirl_validation")}), flush=True)
    summary = {
        "protocol": {
            "set": a.set,
            "seeds": a.seeds,
            "val_tasks": a.val_tasks,
            "test_tasks": a.test_tasks,
            "sft": a.sft,
            "policy": a.policy,
            "iterations": a.iterations,
            "rollout_size": a.rollout_size,
            "offline": a.offline,
            "train": a.train,
        },
        "variants": summarize(rows),
        "rows": [{k: v for k, v in r.items() if k not in ("machine", "commands")} for r in rows],
        **result_metadata(observation="per variant", selection_split="validation", command=sys.argv),
    }
    (a.out / "summary.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary["variants"], indent=2))


if __name__ == "__main__":
    main()
