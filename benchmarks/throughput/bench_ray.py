"""Ray collection and asynchronous learning, measured side by side on this machine.

``throughput``: env steps/s of ``env.runner=ray`` with 1/2/4/8 actors next to the process runner with
as many worker processes, on two workloads: ``sim`` (the simulator driven by its scripted expert:
CPU-bound, 270×600 screenshots) and ``latency`` (the toy env with 50–100 ms of sleeping latency per
reset and step, as a device round trip, and an always-BACK policy: shows overlap). Ray runs in both
modes: ``env.ray.inference=learner`` (an actor call per step, as the process runner's pipe round trip)
and ``inference=actor`` (the actor plays up to 16 steps per call itself); ``SIDES`` below says exactly
what each side does. Worker start-up is excluded (a warm-up run first); each figure is the best of
``--repeat`` timed runs (at most 3 for ``latency``), the runners interleaved so that a change in
machine load hits all of them.

``async``: DigiRL off-to-online on the simulator with an artificial latency of 0.5–2 s per reset and
step (``env.latency_s``, as a real phone), synchronous (``asynchronous.max_staleness=0``) vs
asynchronous (k = 2), both on Ray, 3 seeds. For each seed the two runs go at the same time, side by
side, so the machine's load affects both alike. Both start from one SFT policy and one offline
dataset (made first, without latency). Every iteration's checkpoint is then evaluated greedily on
the first ``--test-tasks`` test tasks, without latency; a run's clock is the wall time since its
online phase began (evaluation excluded). ``deterministic=false`` for both (slow resets do not hold
up the policy batches; asynchronous runs take the newest weights).

Time to the same success (the protocol, fixed before the runs; :data:`PROTOCOL`): the target is the
synchronous runs' mean final test success (after ``--iterations``); the asynchronous runs may go on
for ``--async-iterations`` (default: as many) so that the time they take to reach it can be read off
their checkpoints. A mode's time to target is that of its seed-averaged curve (mean success and mean
wall time per iteration over the seeds): the first iteration whose mean success reaches the target.
The criterion is met when that time is at least 1.5x shorter for the asynchronous runs and their
mean final success lies within the synchronous runs' 95% interval. Per-seed first crossings are
reported next to it. ``--corrections is none`` runs one asynchronous variant per
``asynchronous.correction`` value, all side by side with the synchronous run (the first is the
primary verdict; the others are under ``summary.variants``).

    python benchmarks/throughput/bench_ray.py throughput          # a few minutes
    python benchmarks/throughput/bench_ray.py async               # 40-60 min on 2 cores
    python benchmarks/throughput/bench_ray.py throughput --quick  # fewer episodes
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from digirl.core.actions import Action
from digirl.core.types import Observation
from digirl.envs.vector import EpisodeJob, VectorRunner, env_factory
from digirl.policies.base import ActOutput

RESULTS = Path(__file__).resolve().parents[1] / "results"


def _machine() -> dict[str, Any]:
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }


# --------------------------------------------------------------------------- throughput
#: What each runner does per episode, written into the JSON next to the figures.
SIDES = {
    "process": "worker processes; the parent picks every action (the expert's cheat(), computed in the worker and "
    "returned with each reply, or the act function, batched over the envs) and sends it: one pipe round trip per "
    "env step, frames through shared memory",
    "ray_learner": "env.ray.inference=learner: the same protocol with Ray actors: one actor call per env step, frames "
    "through Ray's object store",
    "ray_actor": "env.ray.inference=actor: each actor plays its episode itself with the same expert (or the act "
    "function's actor-side acting), one actor call per env.ray.steps_per_call=16 steps",
}


class _Back:
    """Episode acting on an actor: always BACK (the latency workload's policy)."""

    def act(self, obs: Observation) -> ActOutput:
        return ActOutput(Action.back(), "back")

    def metadata(self) -> dict[str, Any]:
        return {}


class BackActing:
    key = "back"

    def episode(self, env: Any, seed: int, attempt: int) -> _Back:
        return _Back()


class BackPolicy:
    """Always BACK, batched here or (``actor_acting``) played on the actors."""

    def __call__(self, observations: Sequence[Observation]) -> list[ActOutput]:
        return [ActOutput(Action.back(), "back") for _ in observations]

    def actor_acting(self, job: EpisodeJob) -> BackActing:
        return BackActing()


def _timed(runner: Any, seeds: Sequence[int], expert: bool) -> tuple[int, float]:
    before = runner.stats.steps
    t0 = time.perf_counter()
    trajs = list(runner.run(None if expert else BackPolicy(), [EpisodeJob(None, s) for s in seeds], expert=expert))
    dt = time.perf_counter() - t0
    assert not any(t.env_failure for t in trajs), [t.failure_reason for t in trajs if t.env_failure]
    return runner.stats.steps - before, dt


def throughput(
    name: str, env_fn: Callable[[], Any], episodes: int, expert: bool, counts: Sequence[int], repeat: int
) -> list[dict[str, Any]]:
    from digirl.distributed.config import RayConfig
    from digirl.distributed.runner import RayRunner

    rows = []
    seeds = list(range(episodes))
    for n in counts:
        runners: dict[str, Any] = {}
        startup: dict[str, float] = {}
        for label in SIDES:
            t0 = time.perf_counter()
            if label == "process":
                runners[label] = VectorRunner(env_fn, n, step_timeout_s=120.0)
            else:
                opts = RayConfig(num_cpus_per_actor=0.25, inference="actor" if label == "ray_actor" else "learner")
                runners[label] = RayRunner(env_fn, n, options=opts, step_timeout_s=120.0)
            _timed(runners[label], [10_000 + i for i in range(n)], expert)  # warm-up: start the workers
            startup[label] = time.perf_counter() - t0
        best: dict[str, tuple[int, float]] = {}
        for _ in range(repeat):  # interleaved: load changes hit every runner
            for label, r in runners.items():
                steps, dt = _timed(r, seeds, expert)
                if label not in best or dt < best[label][1]:
                    best[label] = (steps, dt)
        for r in runners.values():
            r.close()
        sps = {label: best[label][0] / best[label][1] for label in SIDES}
        row: dict[str, Any] = {"workload": name, "envs": n, "episodes": episodes, "steps": best["process"][0]}
        for label in SIDES:
            row[f"{label}_steps_per_s"] = round(sps[label], 1)
        for label in ("ray_learner", "ray_actor"):
            row[f"{label}_overhead_pct"] = round(100 * (sps["process"] / sps[label] - 1), 1)
        for label in SIDES:
            row[f"{label}_startup_s"] = round(startup[label], 2)
        rows.append(row)
        print(
            f"[{name}] {n} env(s): process {sps['process']:8.1f} | ray learner {sps['ray_learner']:8.1f} "
            f"({row['ray_learner_overhead_pct']:+.1f}%) | ray actor {sps['ray_actor']:8.1f} "
            f"({row['ray_actor_overhead_pct']:+.1f}%) steps/s",
            flush=True,
        )
    return rows


def cmd_throughput(args: argparse.Namespace) -> dict[str, Any]:
    from digirl.distributed.config import RayConfig
    from digirl.distributed.session import RaySession

    # One local Ray for every row, with logical room for both Ray runners' actors at 8 envs (16 x 0.25 CPU).
    session = RaySession(RayConfig(num_cpus_per_actor=0.25, local_num_cpus=4), 16)
    t0 = time.perf_counter()
    try:
        k = 1 if args.quick else 3
        counts = [1, 2, 4, 8]
        out: dict[str, Any] = {"sides": SIDES}
        if "sim" in args.workloads:
            out["sim"] = throughput("sim", env_factory("digirl/sim-general-v0"), 32 * k, True, counts, args.repeat)
        if "latency" in args.workloads:
            slow = env_factory("digirl/toy-tap-v0", horizon=10, latency_s=[0.05, 0.1])
            out["latency"] = throughput("latency", slow, 8 * k, False, counts, min(args.repeat, 3))  # slow, steadier
    finally:
        session.close()
    return out | {"seconds": round(time.perf_counter() - t0, 1)}


# --------------------------------------------------------------------------- async vs sync
SMALL = [
    "algo.offline_actor_steps=120",
    "algo.offline_critic_steps=80",
    "algo.actor_steps=30",
    "algo.critic_steps=20",
    "algo.instruct_critic_steps=20",
]


def _cli(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ, DIGIRL_NO_PROGRESS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    with open(log, "wb") as fh:
        return subprocess.Popen([sys.executable, "-m", "digirl", *args], stdout=fh, stderr=subprocess.STDOUT, env=env)


def _run(args: list[str], log: Path) -> None:
    proc = _cli(args, log)
    if proc.wait() != 0:
        raise RuntimeError(f"digirl {args[0]} failed; see {log}")


def _online_start(run: Path) -> float:
    """Unix time at which a run's online phase began (its step-0 record, after the offline phase)."""
    rows = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    return float(min(r["time"] for r in rows if r["step"] == 0))


def _curve(run: Path, test_tasks: int, eval_envs: int) -> list[dict[str, Any]]:
    """Greedy test success of every iteration's checkpoint, with the wall time since the online phase began."""
    from digirl.config.core import load_config
    from digirl.policies.registry import load_policy
    from digirl.training.common import make_runner, task_pool
    from digirl.training.config import EvalRunConfig
    from digirl.training.evaluate import eval_tasks
    from digirl.training.loop import evaluate_policy

    rows = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    t_start = min(r["time"] for r in rows if r["step"] == 0)  # after the offline phase (the same in both modes)
    t_iter = {r["step"]: r["time"] - t_start for r in rows if r["step"] > 0 and "rollout/success_rate" in r}
    cfg = load_config(
        EvalRunConfig, overrides=[f"env.num_envs={eval_envs}", "env.runner=process", f"eval.test_tasks={test_tasks}"]
    )
    tasks = eval_tasks(task_pool(cfg.env, "test"), [], test_tasks, 0, cfg.eval.seed)
    runner = make_runner(cfg.env, deterministic=True)
    out = []
    try:
        for ck in sorted((run / "checkpoints").glob("iter-*")):
            it = int(ck.name.split("-")[1])
            report = evaluate_policy(load_policy(ck / "policy"), runner, tasks, greedy=True, temperature=1.0, seed=cfg.eval.seed)[
                0
            ]
            out.append({"iteration": it, "wall_s": round(t_iter.get(it, 0.0), 1), "test_success": report.success_rate})
    finally:
        runner.close()
    return out


def _timing(run: Path) -> dict[str, Any]:
    """Where a run's online wall-clock went, from its metrics: per-iteration means of the ``timing_s/*`` figures."""
    rows = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    online = [r for r in rows if r["step"] > 0]
    keys = sorted({k for r in online for k in r if k.startswith("timing_s/")})
    out: dict[str, Any] = {}
    for k in keys:
        out[k.split("/", 1)[1] + "_mean_s"] = round(float(np.mean([r[k] for r in online if k in r])), 1)
    out["staleness_mean"] = round(float(np.mean([r.get("data/staleness", 0.0) for r in online])), 2)
    return out


def _time_to(curve: list[dict[str, Any]], target: float) -> float | None:
    for p in curve:
        if p["iteration"] > 0 and p["test_success"] >= target - 1e-9:
            return float(p["wall_s"])
    return None


#: How the ``async`` summary decides, written into the JSON (fixed before any run of this protocol).
PROTOCOL = (
    "target = mean over seeds of the synchronous runs' final test success (after --iterations); "
    "time to target of a mode = mean wall_s over seeds at the first iteration >= 1 whose seed-averaged test success "
    ">= target (None if never); speedup = sync / async time to target; criterion met iff speedup >= 1.5 and the "
    "asynchronous runs' mean final test success (after --async-iterations) lies within the synchronous runs' 95% "
    "t interval over seeds; per-seed first crossings of the target are reported, not used for the verdict"
)


def _mean_curve(curves: Sequence[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The seed-averaged curve: per iteration (those every seed has), mean wall time and mean test success."""
    n = min(len(c) for c in curves)
    out = []
    for i in range(n):
        pts = [c[i] for c in curves]
        assert len({p["iteration"] for p in pts}) == 1, "curves must list the same iterations"
        out.append(
            {
                "iteration": pts[0]["iteration"],
                "wall_s": round(float(np.mean([p["wall_s"] for p in pts])), 1),
                "test_success": float(np.mean([p["test_success"] for p in pts])),
            }
        )
    return out


def _mean_ci(xs: Sequence[float]) -> tuple[float, float]:
    """Mean and the half-width of a 95% t interval over seeds."""
    a = np.asarray(xs, dtype=float)
    if a.size < 2:
        return float(a.mean()), float("nan")
    t = {2: 12.706, 3: 4.303, 4: 3.182, 5: 2.776}.get(a.size, 2.0)
    return float(a.mean()), float(t * a.std(ddof=1) / math.sqrt(a.size))


def cmd_async(args: argparse.Namespace, save: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    env = ["env.id=digirl/sim-general-v0", "policy.device=cpu"]
    t0 = time.time()
    if not (work / "sft" / "policy" / "model.safetensors").is_file():
        _run(["sft", str(work / "sft"), *env, "env.num_envs=2", "sft.demos=16", "sft.steps=60"], work / "sft.log")
    if not (work / "offline" / "meta.json").is_file() or args.redo_offline:
        _run(
            ["collect", str(work / "offline"), *env, "env.num_envs=2", f"policy.init={work}/sft/policy", "trajectories=64"],
            work / "offline.log",
        )
    print(f"SFT policy and offline data ready ({time.time() - t0:.0f}s)", flush=True)
    common = [
        *env,
        "mode=off2on",
        f"offline_dataset={work}/offline",
        f"policy.init={work}/sft/policy",
        f"rollout_size={args.rollout}",
        f"env.num_envs={args.envs}",
        f"env.latency_s=[{args.latency[0]},{args.latency[1]}]",
        "env.runner=ray",
        "env.ray.num_cpus_per_actor=0.25",
        f"env.ray.inference={args.inference}",
        "deterministic=false",
        "eval.every=0",
        "eval.test_tasks=0",
        "eval.train_tasks=0",
        "checkpoint_keep=1000",
        "log.tensorboard=false",
        *SMALL,
    ]
    runs: dict[str, dict[str, Any]] = {}
    amodes = [_async_mode(c) for c in args.corrections]
    modes = ["sync", *amodes]
    for seed in args.seeds:
        procs = {}
        for mode in modes:
            d = work / f"{mode}-s{seed}"
            if (d / "policy" / "model.safetensors").is_file():
                continue  # done in an earlier invocation
            if mode == "sync":
                extra = [f"iterations={args.iterations}", "asynchronous.max_staleness=0"]
            else:
                extra = [
                    f"iterations={args.async_iterations or args.iterations}",
                    f"asynchronous.max_staleness={args.k}",
                    f"asynchronous.correction={args.corrections[amodes.index(mode)]}",
                ]
            procs[mode] = _cli(["train", str(d), *common, *extra, f"seed={seed}"], work / f"{mode}-s{seed}.log")
        for mode, p in procs.items():
            if p.wait() != 0:
                raise RuntimeError(f"{mode} seed {seed} failed; see {work}/{mode}-s{seed}.log")
        for mode in modes:
            d = work / f"{mode}-s{seed}"
            curve = _curve(d, args.test_tasks, 2)
            runs[f"{mode}-s{seed}"] = {
                "mode": mode,
                "seed": seed,
                "curve": curve,
                "total_wall_s": curve[-1]["wall_s"],
                "online_start_unix": _online_start(d),
                "timing": _timing(d),
            }
            print(
                f"[{mode} seed {seed}] " + " ".join(f"{p['wall_s']:.0f}s:{100 * p['test_success']:.0f}%" for p in curve),
                f"| {runs[f'{mode}-s{seed}']['timing']}",
                flush=True,
            )
        done = [x for x in args.seeds if f"{amodes[-1]}-s{x}" in runs]
        save(
            {
                "settings": vars(args) | {"work": str(work)},
                "seeds_done": done,
                "runs": runs,
                "summary": _summaries(runs, done, amodes),
            }
        )
    summary = _summaries(runs, args.seeds, amodes)
    print(json.dumps(summary, indent=2), flush=True)
    return {"settings": vars(args) | {"work": str(work)}, "seeds_done": list(args.seeds), "runs": runs, "summary": summary}


def _async_mode(correction: str) -> str:
    """A run's name for an asynchronous variant: ``async`` with the default correction, else ``async-<correction>``."""
    return "async" if correction == "is" else f"async-{correction}"


def _summaries(runs: dict[str, dict[str, Any]], seeds: Sequence[int], amodes: Sequence[str]) -> dict[str, Any]:
    """The first asynchronous variant's verdict (the primary one); the others' under ``variants``."""
    first = _summary(runs, seeds, amodes[0])
    if len(amodes) > 1:
        first["variants"] = {m: _summary(runs, seeds, m) for m in amodes[1:]}
    return first


def _summary(runs: dict[str, dict[str, Any]], seeds: Sequence[int], amode: str = "async") -> dict[str, Any]:
    """The verdict of :data:`PROTOCOL` for the asynchronous runs named ``amode``, with the per-seed figures."""
    final = {m: [runs[f"{m}-s{x}"]["curve"][-1]["test_success"] for x in seeds] for m in ("sync", amode)}
    final["async"] = final[amode]
    target = float(np.mean(final["sync"]))  # "the same success": what the synchronous runs end at, on average
    sync_iters = runs[f"sync-s{seeds[0]}"]["curve"][-1]["iteration"]
    per_seed = []
    for seed in seeds:
        s, a = runs[f"sync-s{seed}"], runs[f"{amode}-s{seed}"]
        ts, ta = _time_to(s["curve"], target), _time_to(a["curve"], target)
        same = [p for p in a["curve"] if p["iteration"] == sync_iters]  # the asynchronous run after as many iterations
        # Side by side: once the synchronous run has ended, the asynchronous one has the machine to itself.
        sync_end = s["total_wall_s"] + s.get("online_start_unix", 0.0) - a.get("online_start_unix", 0.0)
        per_seed.append(
            {
                "seed": seed,
                "sync_total_s": s["total_wall_s"],
                "async_total_s": a["total_wall_s"],
                "async_wall_s_at_sync_iterations": same[0]["wall_s"] if same else None,
                "speedup_same_iterations": round(s["total_wall_s"] / same[0]["wall_s"], 3) if same else None,
                "sync_final_success": s["curve"][-1]["test_success"],
                "async_final_success": a["curve"][-1]["test_success"],
                "async_success_at_sync_iterations": same[0]["test_success"] if same else None,
                "sync_time_to_target_s": ts,
                "async_time_to_target_s": ta,
                "speedup_to_target": None if ts is None or ta is None else round(ts / ta, 3),
                "sync_ended_at_async_s": round(sync_end, 1),
            }
        )
    mean = {m: _mean_curve([runs[f"{k}-s{x}"]["curve"] for x in seeds]) for m, k in (("sync", "sync"), ("async", amode))}
    tts, tta = _time_to(mean["sync"], target), _time_to(mean["async"], target)
    speedup = None if tts is None or tta is None else round(tts / tta, 3)
    fs, fa = _mean_ci(final["sync"]), _mean_ci(final["async"])
    within = bool(abs(fa[0] - fs[0]) <= fs[1]) if not math.isnan(fs[1]) else None
    same_it = [p["async_success_at_sync_iterations"] for p in per_seed]
    return {
        "async_runs": amode,
        "protocol": PROTOCOL,
        "target_success": target,
        "final_success_sync": fs,
        "final_success_async": fa,
        "async_success_at_sync_iterations": _mean_ci(same_it) if None not in same_it else None,
        "mean_curve": mean,
        "time_to_target_mean_curve_s": {"sync": tts, "async": tta},
        "speedup_to_target_mean_curve": speedup,
        "async_final_within_sync_ci": within,
        "criterion_met": bool(speedup is not None and speedup >= 1.5 and within),
        "speedup_same_iterations_mean": (
            float(np.mean([p["speedup_same_iterations"] for p in per_seed]))
            if None not in [p["speedup_same_iterations"] for p in per_seed]
            else None
        ),
        "speedup_to_target": [p["speedup_to_target"] for p in per_seed],
        "per_seed": per_seed,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    t = sub.add_parser("throughput", help="env steps/s: Ray actors vs worker processes")
    t.add_argument("--quick", action="store_true")
    t.add_argument("--repeat", type=int, default=3)
    t.add_argument("--workloads", nargs="+", choices=["sim", "latency"], default=["sim", "latency"])
    t.add_argument("--out", default=str(RESULTS / "ray_throughput.json"))
    a = sub.add_parser("async", help="asynchronous (k) vs synchronous DigiRL with phone-like latency")
    a.add_argument("--work", default="runs/bench_ray_async")
    a.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    a.add_argument("--k", type=int, default=2)
    a.add_argument("--iterations", type=int, default=8)
    a.add_argument(
        "--async-iterations",
        type=int,
        default=0,
        help="online iterations of the asynchronous runs (0 = --iterations); more lets their time to the "
        "synchronous runs' final success be read off their checkpoints",
    )
    a.add_argument("--rollout", type=int, default=16)
    a.add_argument("--envs", type=int, default=8)
    a.add_argument("--latency", type=float, nargs=2, default=[0.5, 2.0])
    a.add_argument(
        "--corrections",
        nargs="+",
        choices=["is", "none"],
        default=["is"],
        help="asynchronous.correction of the asynchronous runs: one run per value, all side by side with the "
        "synchronous one; the first is the primary verdict",
    )
    a.add_argument("--test-tasks", type=int, default=96)
    a.add_argument("--redo-offline", action="store_true")
    a.add_argument(
        "--inference", choices=["learner", "actor"], default="actor", help="env.ray.inference of both runs (same for both)"
    )
    a.add_argument("--out", default=str(RESULTS / "ray_async.json"))
    args = ap.parse_args()
    start = {"command": " ".join([Path(sys.executable).name, *sys.argv]), "machine_at_start": _machine()}
    t0 = time.time()

    def save(results: dict[str, Any]) -> None:  # also after each seed of ``async``: a cut-short run keeps its seeds
        out = {
            **start,
            "machine_at_end": _machine(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "wall_s": round(time.time() - t0, 1),
            "results": results,
        }
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(out, indent=2, default=str) + "\n")

    save(cmd_throughput(args) if args.what == "throughput" else cmd_async(args, save))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
