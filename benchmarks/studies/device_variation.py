"""Does a pixels-only policy trained on varied devices keep its success on devices it never saw? (issue 42)

Per seed (each seed its own chain of ``digirl`` processes; ``--workers`` seeds at once):

1. ``digirl sft``: expert demos on train-split tasks on **train-pool devices**
   (``digirl/sim-general-devices-v0``), the pixels-only policy (``observation=screenshot
   policy.default.use_elements=false policy.default.pixel_regions=true``);
2. ``digirl collect``: SFT rollouts on the same env, the offline dataset;
3. ``digirl train``: DigiRL off-to-online on ``digirl/sim-general-devices-v0``, no evaluation during
   training (``eval.every=0``, no final evaluation tasks): the final policy is the one evaluated;
4. evaluation of the final policy (this script's ``evaluate`` mode, a child process built from the
   library: ``load_config``, ``build_policy``, ``make_runner``, ``eval_task_sets``, ``play_evaluation``),
   the first N tasks of a split in order, greedy, task ``i`` with env seed ``eval.seed + i``:

   - (a) ``train_devices``: test and validation splits on train-pool devices (``...-devices-v0``);
   - (b) ``heldout_devices``: test and validation splits on held-out devices (``...-devices-test-v0``);
   - (c) ``default_device``: test split on the default device (``digirl/sim-general-test-v0``).

(a) and (b) play the same tasks with the same env seeds; only the device pool differs, so they are
compared pair by pair: the difference (b) − (a) and the ratio (b)/(a) (the issue's bar: held-out
success >= 0.9 x train-device success) with 95% paired-bootstrap intervals (tasks resampled, the same
draw for every seed and for both pools), an exact McNemar test on the discordant episodes, and a t
interval over the seeds' own differences. Each episode's device id is read back by replaying its
reset (same env id, task and seed) and checked against its first screenshot, so the JSON shows which
devices each pool really ran on. No choice is made in this study (fixed recipe, final policy); the
selection split recorded is ``validation``: any recipe choice made from it must read validation.

Resumable per (seed, stage): each stage writes ``seedS/stage_<name>.json`` when done and is skipped
when that file exists (a killed ``digirl train`` resumes from its checkpoints). ``--budget-s``: no
stage starts after that many seconds; a running stage is stopped at ``--hard-s`` (a seed whose chain
is cut is listed as unfinished, the figures use the finished seeds). Writes ``device_variation.json``
and ``device_variation.md`` in ``--out``.

Presets (``--preset``; any flag given overrides the preset's value):

- ``smoke``: 1 seed, a tiny SFT (4 demos, 5 steps) and one online iteration of 4 trajectories, 6 test
  and 4 validation tasks per pool, envs inline: ~25 s on 2 shared CPU cores (the test runs it end to end).
- ``gpu``: one H200 + 16 CPU cores, 3 seeds at once, the whole study in <= ~500 s wall. No pixels-only
  GPU run is recorded yet (benchmarks/results/time_to_target/ holds element-reading runs only), so the
  sizes come from the element-reading H200 recipe run (``general_h200_recipe_69e543f.json``: SFT of 24
  demos x 150 steps in 33 s, 128 SFT rollouts in 16 s, ~25 s per 4 online iterations of 64 trajectories
  and a 96-task evaluation on 16 envs, alone on the host) scaled for 3 runs sharing it (5 envs each, ~3x slower per run), and from
  the pixels-only CPU study (docs/results.md, "Pixels-only pointer over detected regions": 32 stratified
  demos, ``max_elements=48``, the General actor steps 20 / 10): SFT 32 demos x 150 steps (batch 64),
  64 SFT rollouts offline, 8 iterations x 64 = 512 online trajectories, first 96 test and 48 validation
  tasks per pool (480 evaluation episodes a seed). Budget: no stage starts after 450 s, stages end by 575 s.

The command to run on the GPU host (inside one 600-s call; a second call resumes what is left):

    PYTHONPATH=. python benchmarks/studies/device_variation.py --preset gpu --out $OUT/devices --device cuda

Smoke (CPU): ``PYTHONPATH=. python benchmarks/studies/device_variation.py --preset smoke --out /tmp/dv``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as a script: the repository root on the path for ``benchmarks.*``
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.studies.device_variation_report import FIGURES, device_check, markdown, paired, seed_row, spread
from digirl.experiments.subruns import StoppedError, children_stop_with_me, run_all, run_cli
from digirl.utils.provenance import git_revision, machine_info, result_metadata

SCRIPT = Path(__file__).resolve()
OBSERVATION = "screenshot"
TRAIN_ENV = "digirl/sim-general-devices-v0"
#: Pixels only: the pointer over boxes detected in the screenshot (docs/pixels-only.md).
PIXELS = [
    f"observation={OBSERVATION}",
    "policy.default.use_elements=false",
    "policy.default.pixel_regions=true",
    "policy.default.max_elements=48",
]


@dataclass(frozen=True)
class Condition:
    """One evaluation pool: the env id whose devices the episodes run on, and the splits it plays."""

    name: str
    env_id: str
    devices: str
    validation: bool


CONDITIONS = (
    Condition("train_devices", "digirl/sim-general-devices-v0", "train pool", True),
    Condition("heldout_devices", "digirl/sim-general-devices-test-v0", "held-out pool", True),
    Condition("default_device", "digirl/sim-general-test-v0", "default device (no variation)", False),
)

PRESETS: dict[str, dict[str, Any]] = {
    "smoke": {
        "seeds": [0],
        "workers": 1,
        "num_envs": 2,
        "sft": ["sft.demos=4", "sft.demo_sampling=stratified", "sft.steps=5", "sft.batch_size=8"],
        "offline": 4,
        "iterations": 1,
        "rollout_size": 4,
        "runner": "inline",
        "train": [f"algo.{k}=2" for k in ("offline_actor_steps", "actor_steps", "offline_critic_steps", "critic_steps")]
        + ["algo.instruct_critic_steps=2"],
        "test_tasks": 6,
        "val_tasks": 4,
        "budget_s": 300.0,
        "hard_s": 600.0,
    },
    "gpu": {
        "seeds": [0, 1, 2],
        "workers": 3,
        "num_envs": 5,
        "runner": "auto",
        "sft": ["sft.demos=32", "sft.demo_sampling=stratified", "sft.steps=150", "sft.batch_size=64"],
        "offline": 64,
        "iterations": 8,
        "rollout_size": 64,
        "train": ["algo.offline_actor_steps=20", "algo.actor_steps=10"],
        "test_tasks": 96,
        "val_tasks": 48,
        "budget_s": 450.0,
        "hard_s": 575.0,
    },
}


# --------------------------------------------------------------------------- evaluate (a child process)
def _episode_rows(env_cfg: Any, trajs: list[Any], seed0: int) -> list[dict[str, Any]]:
    """One row per episode, in task order. The device id is read by replaying the episode's reset (same
    env id, options, task and seed) on a fresh env; ``replay_matches`` says its first screenshot is the
    episode's own, so the id is the device the episode ran on."""
    from digirl.envs.registry import make

    env = make(env_cfg.id, **env_cfg.env_kwargs())
    rows = []
    try:
        for t in sorted(trajs, key=lambda t: int(t.seed)):
            obs, _ = env.reset(seed=int(t.seed), options={"task": t.task})
            state: dict[str, Any] = getattr(env, "state_summary", dict)()
            first = t.steps[0].observation.screenshot if t.steps else None
            rows.append(
                {
                    "index": int(t.seed) - seed0,
                    "task_id": t.task.task_id,
                    "family": t.task.family,
                    "seed": int(t.seed),
                    "success": bool(t.success),
                    "env_failure": bool(t.env_failure),
                    "length": t.length,
                    "device_id": state.get("device_id"),
                    "replay_matches": first is not None and bool(np.array_equal(first, obs.screenshot)),
                }
            )
    finally:
        env.close()
    return rows


def _play_condition(policy: Any, cfg: Any, cond: Condition) -> dict[str, Any]:
    from digirl.training.common import make_runner
    from digirl.training.evaluate import eval_task_sets, summarize
    from digirl.training.run import play_evaluation

    tasks = eval_task_sets(cfg.env, cfg.eval)
    runner = make_runner(cfg.env, deterministic=cfg.deterministic)
    t0 = time.perf_counter()
    try:
        played = play_evaluation(
            policy, runner, tasks, greedy=cfg.eval.greedy, temperature=cfg.policy.temperature, seed=cfg.eval.seed
        )
    finally:
        runner.close()
    splits = {
        split: {"report": summarize(trajs, split).to_dict(), "episodes": _episode_rows(cfg.env, trajs, cfg.eval.seed)}
        for split, trajs in played.items()
    }
    return {
        "condition": cond.name,
        "env_id": cond.env_id,
        "devices": cond.devices,
        "eval_s": round(time.perf_counter() - t0, 1),
        "splits": splits,
    }


def evaluate(policy_dir: str, out: Path, overrides: list[str], n_test: int, n_val: int) -> dict[str, Any]:
    """Every condition's evaluation of the policy at ``policy_dir`` (``out/<condition>.json``, each
    skipped when it exists): the library's config, policy, collector and evaluation protocol."""
    from digirl.config.core import load_config
    from digirl.policies.registry import build_policy
    from digirl.training.config import EvalRunConfig

    out.mkdir(parents=True, exist_ok=True)
    policy, results = None, {}
    for cond in CONDITIONS:
        path = out / f"{cond.name}.json"
        if not path.is_file():
            keys = [
                f"env.id={cond.env_id}",
                *overrides,
                f"policy.init={policy_dir}",
                f"observation={OBSERVATION}",
                f"eval.test_tasks={n_test}",
                f"eval.val_tasks={n_val if cond.validation else 0}",
                "eval.train_tasks=0",
                "eval.selection_split=validation",
            ]
            cfg = load_config(EvalRunConfig, overrides=keys)
            policy = policy or build_policy(cfg.policy, seed=0)
            row = {**_play_condition(policy, cfg, cond), "overrides": keys}
            path.write_text(json.dumps(row))
        results[cond.name] = json.loads(path.read_text())
    return results


def evaluate_main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="device_variation.py evaluate", description="evaluate one policy on every pool")
    ap.add_argument("policy")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--test-tasks", type=int, required=True)
    ap.add_argument("--val-tasks", type=int, required=True)
    ap.add_argument("--json", action="store_true", help="print a one-line JSON answer last (for run_cli)")
    ap.add_argument("overrides", nargs="*", help="digirl eval keys (env.num_envs=..., policy.device=...)")
    a = ap.parse_intermixed_args(argv)
    results = evaluate(a.policy, a.out, a.overrides, a.test_tasks, a.val_tasks)
    answer = {name: {split: r["splits"][split]["report"]["success_rate"] for split in r["splits"]} for name, r in results.items()}
    print(json.dumps(answer))
    return 0


# --------------------------------------------------------------------------- one seed's chain of stages
class Clock:
    """The study's time: no stage starts after ``budget_s``; a running stage is stopped at ``hard_s``."""

    def __init__(self, budget_s: float, hard_s: float) -> None:
        self.t0, self.budget_s, self.hard_s = time.monotonic(), budget_s, hard_s

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def may_start(self) -> bool:
        return self.elapsed() < self.budget_s

    def left(self) -> float:
        return max(1.0, self.hard_s - self.elapsed())


def _stages(seed: int, cell: Path, a: argparse.Namespace) -> list[tuple[str, list[str], list[str] | None]]:
    """(name, arguments, program) of each stage; program None is ``python -m digirl``."""
    dev, obs = [f"policy.device={a.device}"], f"observation={OBSERVATION}"
    env = [f"env.id={TRAIN_ENV}", f"env.num_envs={a.num_envs}", f"env.runner={a.runner}"]
    sft_policy, offline = cell / "sft" / "policy", cell / "offline"
    no_eval = ["eval.every=0", "eval.test_tasks=0", "eval.train_tasks=0", "eval.val_tasks=0", "eval.selection_split=validation"]
    online = [f"iterations={a.iterations}", f"rollout_size={a.rollout_size}", "log.tensorboard=false", *a.train]
    sizes = [f"--test-tasks={a.test_tasks}", f"--val-tasks={a.val_tasks}", *env[1:]]
    train = ["train", str(cell / "train"), "--preset", "digirl-general", "mode=off2on", f"offline_dataset={offline}"]
    collect = ["collect", str(offline), *env, f"policy.init={sft_policy}", f"trajectories={a.offline}", obs]
    evaluate = [str(cell / "train" / "policy"), "--out", str(cell / "eval"), *sizes, *dev]
    return [
        ("sft", ["sft", str(cell / "sft"), *env, f"seed={seed}", *a.sft, *PIXELS, *dev], None),
        ("collect", [*collect, f"seed={seed}", *dev], None),
        ("train", [*train, f"policy.init={sft_policy}", *env, f"seed={seed}", obs, *online, *no_eval, *dev], None),
        ("evaluate", evaluate, [sys.executable, str(SCRIPT), "evaluate"]),
    ]


def run_seed(seed: int, a: argparse.Namespace, clock: Clock) -> dict[str, Any]:
    """Seed ``seed``'s stages in order, each skipped when its ``stage_<name>.json`` exists; the seed's
    record (``stages`` done, and where it stopped if it did not finish)."""
    cell = a.out / f"seed{seed}"
    cell.mkdir(parents=True, exist_ok=True)
    record: dict[str, Any] = {"seed": seed, "stages": {}, "stopped": None}
    for name, args, program in _stages(seed, cell, a):
        done = cell / f"stage_{name}.json"
        if done.is_file():
            record["stages"][name] = json.loads(done.read_text())
            continue
        if not clock.may_start():
            record["stopped"] = f"{name} not started: past --budget-s {a.budget_s:g} s"
            return record
        if name in ("sft", "collect"):  # a stage cut short left a partial folder: it starts over
            shutil.rmtree(cell / ("sft" if name == "sft" else "offline"), ignore_errors=True)
        t0 = time.perf_counter()
        try:
            result = run_cli(args, cell / f"{name}.log", threads=a.threads, timeout=clock.left(), grace_s=15.0, program=program)
        except subprocess.TimeoutExpired:
            record["stopped"] = f"{name} stopped at --hard-s {a.hard_s:g} s (run again to resume)"
            return record
        except RuntimeError as e:
            record["stopped"] = f"{name} failed: {e}"
            return record
        command = [*(["digirl"] if program is None else ["python", SCRIPT.name, "evaluate"]), *args]
        stage = {"s": round(time.perf_counter() - t0, 1), "command": command, "result": result}
        done.write_text(json.dumps(stage, indent=2, default=str))
        record["stages"][name] = stage
    record["eval"] = {c.name: json.loads((cell / "eval" / f"{c.name}.json").read_text()) for c in CONDITIONS}
    return record


def summarize(records: list[dict[str, Any]], a: argparse.Namespace, wall_s: float, argv: list[str]) -> dict[str, Any]:
    done = [r for r in records if r["stopped"] is None]
    rows = [seed_row(r) for r in done]
    means = {k: spread([row[k] for row in rows]) for k in FIGURES} if rows else {}
    for k in ("ratio_test", "ratio_validation"):
        vals = [row[k] for row in rows if row[k] is not None]
        if vals:
            means[k] = spread(vals)
    meta = result_metadata(observation=OBSERVATION, selection_split="validation", command=[sys.executable, *sys.argv])
    return {
        "study": "device variation, pixels only (issue 42)",
        "preset": a.preset,
        "protocol": {
            "train_env": TRAIN_ENV,
            "policy": PIXELS,
            "seeds": a.seeds,
            "workers": a.workers,
            "num_envs": a.num_envs,
            "runner": a.runner,
            "sft": a.sft,
            "offline_trajectories": a.offline,
            "iterations": a.iterations,
            "rollout_size": a.rollout_size,
            "online_trajectories": a.iterations * a.rollout_size,
            "train": a.train,
            "test_tasks": a.test_tasks,
            "val_tasks": a.val_tasks,
            "device": a.device,
            "bootstrap_reps": a.bootstrap,
        },
        "conditions": [
            {
                "name": c.name,
                "env_id": c.env_id,
                "devices": c.devices,
                "splits": ["test", "validation"] if c.validation else ["test"],
            }
            for c in CONDITIONS
        ],
        "per_seed": rows,
        "means": means,
        "paired": {split: paired(done, split, a.bootstrap) for split in ("test", "validation")} if done else {},
        "device_check": device_check(done) if done else {},
        "finished_seeds": [r["seed"] for r in done],
        "unfinished": [
            {"seed": r["seed"], "stopped": r["stopped"], "stages_done": list(r["stages"])} for r in records if r not in done
        ],
        "wall_s": round(wall_s, 1),
        "budget_s": a.budget_s,
        "hard_s": a.hard_s,
        "cpu_count": meta["machine"]["cpus"],
        "gpu_model": meta["gpu"],
        "git_revision": git_revision() or "unknown (not a git checkout)",
        "command_line": " ".join(["python", "benchmarks/studies/device_variation.py", *argv]),
        **meta,
    }


# --------------------------------------------------------------------------- command line
def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", choices=sorted(PRESETS), required=True, help="sizes; any flag below overrides one")
    ap.add_argument("--out", type=Path, required=True, help="output folder (resumes what is in it)")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cpu", help="policy.device of every stage")
    ap.add_argument("--seeds", type=int, nargs="+")
    ap.add_argument("--workers", type=int, help="seeds run at once (each its own chain of processes)")
    ap.add_argument("--num-envs", type=int, help="env.num_envs of every stage")
    ap.add_argument("--runner", help="env.runner of every stage (inline: the envs in the stage's own process)")
    ap.add_argument("--sft", nargs="*", help="digirl sft keys (demos, sampling, steps, batch size)")
    ap.add_argument("--offline", type=int, help="SFT rollouts collected as the offline dataset")
    ap.add_argument("--iterations", type=int, help="online DigiRL iterations")
    ap.add_argument("--rollout-size", type=int, help="online trajectories per iteration")
    ap.add_argument("--train", nargs="*", help="extra digirl train keys")
    ap.add_argument("--test-tasks", type=int, help="first N test tasks per pool")
    ap.add_argument("--val-tasks", type=int, help="first N validation tasks on (a) and (b)")
    ap.add_argument("--budget-s", type=float, help="no stage starts after this many seconds")
    ap.add_argument("--hard-s", type=float, help="a running stage is stopped at this many seconds")
    ap.add_argument("--bootstrap", type=int, default=10_000, help="paired-bootstrap replicates")
    a = ap.parse_args(argv)
    for key, value in PRESETS[a.preset].items():
        if getattr(a, key) is None:
            setattr(a, key, value)
    if a.test_tasks < 1 or a.val_tasks < 1:
        ap.error("the study reads both splits: --test-tasks and --val-tasks must be >= 1")
    if a.hard_s < a.budget_s:
        ap.error(f"--hard-s ({a.hard_s:g}) must not be below --budget-s ({a.budget_s:g})")
    a.threads = max(1, (machine_info()["cpus"] or 1) // max(1, a.workers))
    return a


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["evaluate"]:
        return evaluate_main(argv[1:])
    a = parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    clock = Clock(a.budget_s, a.hard_s)
    with children_stop_with_me():
        try:
            records = run_all(lambda seed: run_seed(seed, a, clock), a.seeds, a.workers)
        except StoppedError as e:
            raise SystemExit(f"stopped: {e}") from e
    summary = summarize(records, a, clock.elapsed(), argv)
    (a.out / "device_variation.json").write_text(json.dumps(summary, indent=2))
    (a.out / "device_variation.md").write_text(markdown(summary))
    print(markdown(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
