"""Time to success: wall-clock from a finished SFT policy to a target test success, for one run.

Runs the training spine as the README does — SFT (timed apart), SFT rollouts as the offline
dataset, DigiRL off-to-online with an evaluation every few iterations — and reports the learning
curve against wall-clock and against online trajectories, and the first time the test success
reached the target: with the evaluations' own time included ("wall") and excluded ("train"), both
counted from the moment the SFT policy exists (offline collection included).

The target is read on the validation split by default (``--select validation``: the first
``eval.val_tasks`` validation tasks, 96 unless overridden), and the test success at every point is
reported beside it: a time chosen by watching test would make the test number a best-of estimate.
``--select test`` reads the target on test (the protocol of earlier records).

    python benchmarks/studies/time_to_target.py --out /tmp/ttt --target 0.85 --train-timeout 470 -- \\
        env.num_envs=16 iterations=80 rollout_size=64 eval.every=4 eval.test_tasks=96 \\
        algo.offline_actor_steps=20 algo.actor_steps=10

**Paired arms.** ``--arm NAME [OVERRIDES ...]`` (repeatable) trains several methods from the *same*
SFT policy and offline dataset, at the same time, each on its own GPU of ``--gpus`` (round robin):
e.g. ``--arm digirl --arm fbc algo.name=filtered_bc --gpus 0,1``. A method's difference from
another is then read seed by seed from one start, on one host under the same load; the JSON holds
every arm's curve and the paired numbers at equal online trajectories and at the end of the run.

The default SFT is the General recipe's (``table1-recipe-general``: 24 demos, two per family, and
the policy's app-family flags), a start of ~20% test success; ``--sft`` replaces it.

Everything after ``--`` is passed to ``digirl train`` (and the env/policy keys to sft/collect too).
The curve is read from the run's ``metrics.jsonl`` (every record carries its wall-clock time), so a
run stopped by ``--train-timeout`` still reports every evaluation it finished. Writes
``time_to_target.json`` in ``--out`` and prints the curve.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from digirl.experiments.subruns import run_cli
from digirl.utils.provenance import result_metadata, saved_observation


def _cli(args: list[str], log: Path, timeout: float | None = None, gpu: int | None = None) -> dict[str, Any] | None:
    """The command's JSON result; ``None`` when it ran out of ``timeout`` seconds (then it is stopped)."""
    try:
        return run_cli(args, log, timeout=timeout, gpu=gpu)
    except subprocess.TimeoutExpired:
        return None
    except RuntimeError as e:
        raise SystemExit(str(e)) from e


def curve_from_metrics(path: Path, t_start: float, offset_s: float) -> list[dict[str, Any]]:
    """Evaluation points of a run's metrics.jsonl: wall-clock since ``t_start`` (unix) plus ``offset_s``;
    ``validation_success`` where the run evaluated validation (eval.val_tasks > 0)."""
    curve: list[dict[str, Any]] = []
    trajectories, eval_s = 0, 0.0
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        trajectories = int(rec.get("data/online_trajectories", trajectories))
        if "eval/test_success_rate" in rec:
            took = float(rec.get("timing_s/eval", 0.0))
            began = rec["time"] - took - t_start + offset_s
            curve.append(
                {
                    "online_trajectories": trajectories,
                    "wall_s": began,
                    "train_wall_s": began - eval_s,
                    "test_success": rec["eval/test_success_rate"],
                    "validation_success": rec.get("eval/validation_success_rate"),
                }
            )
            eval_s += took
    return curve


def reach(curve: list[dict[str, Any]], split: str, target: float) -> dict[str, Any]:
    """When a curve first reached ``target`` on ``split`` (``None`` fields when it never did)."""
    hit = next((p for p in curve if p[f"{split}_success"] >= target), None)
    return {
        "time_to_target_wall_s": None if hit is None else hit["wall_s"],
        "time_to_target_train_s": None if hit is None else hit["train_wall_s"],
        "trajectories_to_target": None if hit is None else hit["online_trajectories"],
        "test_success_at_target": None if hit is None else hit["test_success"],
    }


def paired(arms: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Every arm's success at the largest online-trajectory count that all arms evaluated, and at
    each arm's own last evaluation (the end of the shared wall-clock budget)."""
    common = set.intersection(*({p["online_trajectories"] for p in c} for c in arms.values()))
    n = max(common) if common else None

    def at(curve: list[dict[str, Any]], trajectories: int | None) -> dict[str, Any] | None:
        pts = [p for p in curve if trajectories is None or p["online_trajectories"] == trajectories]
        return None if not pts else {k: pts[-1][k] for k in ("online_trajectories", "test_success", "validation_success")}

    return {
        "equal_trajectories": n,
        "at_equal_trajectories": {name: at(c, n) for name, c in arms.items()},
        "at_end": {name: at(c, None) for name, c in arms.items()},
    }


def _arms(specs: list[list[str]]) -> list[tuple[str, list[str]]]:
    names = [s[0] for s in specs]
    if len(set(names)) != len(names):
        raise SystemExit(f"--arm names must differ: {names}")
    for name in names:
        if not name.replace("_", "").replace("-", "").isalnum():
            raise SystemExit(f"--arm name {name!r}: letters, digits, '-' and '_' only (it names a folder)")
    return [(s[0], s[1:]) for s in specs]


def _print_curve(curve: list[dict[str, Any]]) -> None:
    for p in curve:
        n, wall, train_s, ok = p["online_trajectories"], p["wall_s"], p["train_wall_s"], 100 * p["test_success"]
        val = "   –  " if p["validation_success"] is None else f"{100 * p['validation_success']:5.1f}%"
        print(f"  {n:5d} traj  {wall:7.1f} s wall ({train_s:7.1f} s w/o eval)  validation {val}  test {ok:5.1f}%")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--target", type=float, default=0.85, help="success to reach on --select's split (default 0.85)")
    ap.add_argument(
        "--select",
        default="validation",
        choices=["validation", "test"],
        help="the split whose success is compared with the target (default validation; test beside it)",
    )
    ap.add_argument("--set", default="general", choices=["general", "webshop"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--sft",
        nargs="*",
        default=[
            "sft.demos=24",
            "sft.demo_sampling=stratified",
            "sft.steps=150",
            "policy.default.label_rows=true",
            "policy.default.screen_match=true",
            "policy.default.word_dropout=0.3",
        ],
        help="digirl sft overrides (default: the General recipe's SFT)",
    )
    ap.add_argument("--offline", type=int, default=128, help="SFT rollouts as the offline dataset")
    ap.add_argument("--train-timeout", type=float, help="stop training after this many seconds (the curve so far is kept)")
    ap.add_argument(
        "--arm",
        nargs="+",
        action="append",
        metavar="NAME [OVERRIDE]",
        help="a method trained from the shared SFT start: a name, then its train overrides (repeatable)",
    )
    ap.add_argument("--gpus", default="", help="comma-separated GPU indices for the arms, round robin (default: all visible)")
    ap.add_argument("train", nargs="*", help="digirl train overrides for every arm (after --)")
    a = ap.parse_args()
    arms = _arms(a.arm) if a.arm else [("run", [])]
    gpus = [int(g) for g in a.gpus.split(",") if g.strip()]
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    shared = [o for o in a.train if o.startswith(("env.", "policy.device"))]
    env = [f"env.id=digirl/sim-{a.set}-v0", *shared]

    t0 = time.perf_counter()
    _cli(["sft", str(out / "sft"), *env, f"seed={a.seed}", *a.sft], out / "sft.log")
    t_sft = time.perf_counter() - t0
    pol = str(out / "sft" / "policy")

    t1, t1_unix = time.perf_counter(), time.time()
    _cli(
        ["collect", str(out / "offline"), *env, f"policy.init={pol}", f"trajectories={a.offline}", f"seed={a.seed}"],
        out / "collect.log",
    )
    t_collect = time.perf_counter() - t1
    t_train_unix = time.time()

    def train(k: int) -> dict[str, Any] | None:
        name, overrides = arms[k]
        return _cli(
            [
                "train",
                str(out / name),
                *env,
                "mode=off2on",
                f"offline_dataset={out / 'offline'}",
                f"policy.init={pol}",
                f"seed={a.seed}",
                "eval.train_tasks=0",
                "eval.val_tasks=96",
                "eval.selection_split=" + a.select,
                "log.tensorboard=false",
                *a.train,
                *overrides,
            ],
            out / f"{name}.log",
            timeout=a.train_timeout,
            gpu=gpus[k % len(gpus)] if gpus else None,
        )

    with ThreadPoolExecutor(len(arms)) as pool:  # the arms train side by side, under the same load
        results = list(pool.map(train, range(len(arms))))
    total = time.perf_counter() - t1
    curves = {name: curve_from_metrics(out / name / "metrics.jsonl", t_train_unix, t_train_unix - t1_unix) for name, _ in arms}
    if a.select == "validation" and any(c and c[0]["validation_success"] is None for c in curves.values()):
        raise SystemExit("--select validation, but a run evaluated no validation tasks (eval.val_tasks=0?)")
    runs = {
        name: {
            "train_overrides": overrides,
            "curve": curves[name],
            **reach(curves[name], a.select, a.target),
            "finished": res is not None,
            "final": None if res is None else res["final"],
        }
        for (name, overrides), res in zip(arms, results)
    }
    summary: dict[str, Any] = {
        **result_metadata(
            observation=saved_observation([out / name / "config.yaml" for name, _ in arms]), selection_split=a.select
        ),
        "command_line": " ".join(sys.argv),
        "target": a.target,
        "target_split": a.select,
        "sft_s": t_sft,
        "offline_collect_s": t_collect,
        "after_sft_total_s": total,
    }
    if a.arm:
        summary |= {"arms": runs, "paired": paired(curves)}
    else:
        summary |= {k: v for k, v in runs["run"].items() if k != "train_overrides"}
    (out / "time_to_target.json").write_text(json.dumps(summary, indent=2, default=str))
    print(f"SFT {t_sft:.0f} s; offline collection {t_collect:.0f} s; total after SFT {total:.0f} s")
    for name, run in runs.items():
        if a.arm:
            print(f"{name} ({' '.join(run['train_overrides']) or 'no overrides'}):")
        _print_curve(run["curve"])
        wall, train_s = run["time_to_target_wall_s"], run["time_to_target_train_s"]
        reached = "never" if wall is None else f"{wall:.0f} s wall ({train_s:.0f} s without evaluations)"
        print("target", a.target, "on", a.select, "reached at", reached)
    if a.arm:
        pair = summary["paired"]
        labels = {"at_equal_trajectories": f"at {pair['equal_trajectories']} online trajectories", "at_end": "at the end"}
        for key, label in labels.items():
            cells = [f"{name} " + ("–" if p is None else f"{100 * p['test_success']:.1f}%") for name, p in pair[key].items()]
            print(f"test {label}: {', '.join(cells)}")


if __name__ == "__main__":
    main()
