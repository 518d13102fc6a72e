"""Simulator throughput: env steps/s on one core (expert and random policy) and over 1, 2 worker processes.

One step = ``env.step(action)`` with the full observation (screenshot at the given resolution, UI
elements, history); the expert step also includes ``env.cheat()``. Episodes are reset when they
end (resets are counted in the time, not as steps). Tasks are sampled from the shipped task sets.

- ``single``: one process, a loop over ``SimEnv``; wall-clock and CPU-time steps/s;
- ``vector``: :func:`digirl.envs.vector.run_expert` with 1 and 2 worker processes (each env in its
  own process; screenshots cross through shared memory, the rest through a pipe), total steps /
  wall time.

The single-process figures start from cold caches unless ``--warmup N`` first runs N untimed steps
on the same env (later episodes are timed, not replays), as a long-lived collection worker runs.

    python benchmarks/throughput/bench_sim.py                      # default 270x600, perturbation 1
    python benchmarks/throughput/bench_sim.py --steps 5000 --width 540 --height 1200
    python benchmarks/throughput/bench_sim.py --steps 10000 --warmup 20000 --workers ""   # warm caches only
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np


def single(taskset: str, policy: str, steps: int, width: int, height: int, level: int, warmup: int = 0) -> dict[str, Any]:
    """``steps`` timed steps, after ``warmup`` untimed ones on the same env (later episodes, so the
    timed ones are not replays; the caches are warm, as in a long-lived collection worker)."""
    from digirl.sim.env import SimEnv

    env = SimEnv(taskset=taskset, width=width, height=height, perturbation=level)
    rng = np.random.default_rng(0)
    seed = 0

    def run(k: int) -> tuple[int, int, int]:
        nonlocal seed
        n = episodes = successes = 0
        while n < k:
            env.reset(seed=seed)
            seed += 1
            episodes += 1
            done = False
            while not done:
                a = env.cheat() if policy == "expert" else env.action_space.sample(rng)
                assert a is not None
                _, r, term, trunc, _ = env.step(a)
                successes += r > 0
                n += 1
                done = term or trunc
        return n, episodes, successes

    run(warmup)
    stats = env.renderer.stats
    frames0, hits0 = stats["frames"], stats["frame_hits"]
    wall, cpu = time.perf_counter(), time.process_time()
    n, episodes, successes = run(steps)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {
        "taskset": taskset,
        "policy": policy,
        "warmup_steps": warmup,
        "steps": n,
        "episodes": episodes,
        "success_rate": round(successes / episodes, 4),
        "steps_per_s_wall": round(n / wall, 1),
        "steps_per_s_cpu": round(n / cpu, 1),
        "frame_cache_hit_rate": round((stats["frame_hits"] - hits0) / max(1, stats["frames"] - frames0), 3),
    }


def vector(num_envs: int, episodes: int, width: int, height: int, level: int) -> dict[str, Any]:
    from digirl.envs.vector import EpisodeJob, env_factory, run_expert

    fn = env_factory("digirl/sim-general-v0", width=width, height=height, perturbation=level)
    jobs = [EpisodeJob(None, seed=i) for i in range(episodes)]
    t = time.perf_counter()
    trajs = run_expert(fn, jobs, num_envs=num_envs, mode="process")
    wall = time.perf_counter() - t
    n = sum(tr.length for tr in trajs)
    return {
        "num_envs": num_envs,
        "episodes": len(trajs),
        "steps": n,
        "success_rate": round(sum(tr.success for tr in trajs) / len(trajs), 4),
        "env_failures": sum(tr.env_failure for tr in trajs),
        "steps_per_s_wall": round(n / wall, 1),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=3000, help="steps per single-process measurement")
    p.add_argument(
        "--warmup",
        type=int,
        default=0,
        help="untimed steps before each single-process measurement (same env, earlier episodes): "
        "0 times a cold start, as a fresh worker sees it; a few thousand time a long-lived worker",
    )
    p.add_argument("--episodes", type=int, default=200, help="episodes per vector measurement")
    p.add_argument("--width", type=int, default=270)
    p.add_argument("--height", type=int, default=600)
    p.add_argument("--perturbation", type=int, default=1)
    p.add_argument("--workers", default="1,2", help="comma-separated worker counts for the vector runs")
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "results" / "sim.json")
    args = p.parse_args(argv)
    res: dict[str, Any] = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpu_count": os.cpu_count(),
            "processor": platform.processor(),
        },
        "resolution": [args.width, args.height],
        # what each timed env step produces; no policy reads it here (the expert and random actions act)
        "observation": "screenshot + elements",
        "perturbation": args.perturbation,
        "warmup_steps": args.warmup,
        "single": [],
        "vector": [],
    }
    single("general", "expert", 300, args.width, args.height, args.perturbation)  # warm caches/imports
    for ts in ("general", "webshop"):
        for policy in ("expert", "random"):
            r = single(ts, policy, args.steps, args.width, args.height, args.perturbation, args.warmup)
            res["single"].append(r)
            print(
                f"single  {ts:8s} {policy:6s} {r['steps_per_s_wall']:8.1f} steps/s wall "
                f"({r['steps_per_s_cpu']:.1f} per CPU-s), success/episode {r['success_rate']:.3f}, "
                f"frame-cache hits {r['frame_cache_hit_rate']:.2f}"
            )
    for w in (int(x) for x in args.workers.split(",") if x.strip()):
        r = vector(w, args.episodes, args.width, args.height, args.perturbation)
        res["vector"].append(r)
        print(
            f"vector  {w} worker(s): {r['steps_per_s_wall']:8.1f} steps/s wall, {r['episodes']} episodes, "
            f"success {r['success_rate']:.3f}, env failures {r['env_failures']}"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
