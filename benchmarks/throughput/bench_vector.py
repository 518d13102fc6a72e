"""Env steps/s through the VectorRunner: inline vs process mode with 1, 2, 4 workers.

Three workloads, each also run as a plain serial loop (no runner) to give the runner's overhead
per step: ``toy`` (the toy env, 20-step episodes, a constant policy: pure runner cost),
``slow-toy`` (the toy env with 5 ms of sleeping latency per step, like a device: shows overlap),
and ``sim`` (``digirl/sim-general-v0`` driven by its scripted expert, if the sim is registered).
Worker start-up is excluded (a warm-up run first) and reported separately; each figure is the
best of ``--repeat`` timed runs (the machine may be shared).

    python benchmarks/throughput/bench_vector.py            # a few minutes; JSON to benchmarks/results/vector.json
    python benchmarks/throughput/bench_vector.py --quick    # fewer episodes
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from digirl.core.actions import Action
from digirl.core.types import Observation
from digirl.envs.base import DeviceEnv
from digirl.envs.vector import EpisodeJob, VectorRunner, env_factory
from digirl.policies.base import ActOutput
from digirl.testing.fake_envs import SlowEnv


def back_policy(observations: Sequence[Observation]) -> list[ActOutput]:
    return [ActOutput(Action.back(), "back") for _ in observations]


def serial_loop(env_fn: Callable[[], DeviceEnv], seeds: Sequence[int], expert: bool, repeat: int) -> tuple[int, float]:
    """The baseline: one env, reset/step in a loop in this process, no runner. Best of ``repeat``."""
    env = env_fn()

    def episodes(seeds: Sequence[int]) -> int:
        steps = 0
        for seed in seeds:
            obs, _ = env.reset(seed=seed)
            done = False
            while not done:
                action = env.cheat() if expert else back_policy([obs])[0].action
                assert action is not None
                obs, _r, term, trunc, _ = env.step(action)
                done = term or trunc
                steps += 1
        return steps

    episodes([10_000])  # warm-up (caches, lazy imports), as the runner gets one
    best = (0, float("inf"))
    for _ in range(repeat):
        t0 = time.perf_counter()
        steps = episodes(seeds)
        best = min(best, (steps, time.perf_counter() - t0), key=lambda x: x[1])
    env.close()
    return best


def runner_run(
    env_fn: Callable[[], DeviceEnv], seeds: Sequence[int], expert: bool, mode: str, n: int, repeat: int
) -> dict[str, Any]:
    t_start = time.perf_counter()
    runner = VectorRunner(env_fn, n, mode=mode, step_timeout_s=60.0)  # type: ignore[arg-type]
    act = None if expert else back_policy
    list(runner.run(act, [EpisodeJob(None, 10_000 + i) for i in range(n)], expert=expert))  # warm-up: start workers
    startup = time.perf_counter() - t_start
    best: dict[str, Any] = {}
    for _ in range(repeat):
        before, calls_before = runner.stats.steps, runner.stats.policy_calls
        t0 = time.perf_counter()
        trajs = list(runner.run(act, [EpisodeJob(None, s) for s in seeds], expert=expert))
        dt = time.perf_counter() - t0
        steps = runner.stats.steps - before
        assert not any(t.env_failure for t in trajs)
        if not best or dt < best["seconds"]:
            best = {
                "mode": mode,
                "num_envs": n,
                "episodes": len(trajs),
                "steps": steps,
                "seconds": round(dt, 4),
                "steps_per_s": round(steps / dt, 1),
                "startup_s": round(startup, 3),
                "policy_calls": runner.stats.policy_calls - calls_before,
            }
    runner.close()
    return best


def bench(
    name: str, env_fn: Callable[[], DeviceEnv], episodes: int, expert: bool, configs: list[tuple[str, int]], repeat: int
) -> dict[str, Any]:
    seeds = list(range(episodes))
    steps, dt = serial_loop(env_fn, seeds, expert, repeat)
    base = {"steps": steps, "seconds": round(dt, 4), "steps_per_s": round(steps / dt, 1)}
    print(f"[{name}] serial loop, no runner: {base['steps_per_s']:.0f} steps/s ({steps} steps)")
    rows = []
    for mode, n in configs:
        r = runner_run(env_fn, seeds, expert, mode, n, repeat)
        # Extra wall time per env step compared with the serial loop (negative: the pool overlaps envs).
        r["overhead_ms_per_step"] = round(1000 * (r["seconds"] - dt) / max(1, r["steps"]), 4)
        rows.append(r)
        print(
            f"[{name}] {mode:7s} x{n}: {r['steps_per_s']:8.0f} steps/s  overhead {r['overhead_ms_per_step']:+.3f} ms/step  "
            f"start-up {r['startup_s']:.2f}s  policy calls {r['policy_calls']}"
        )
    return {"episodes": episodes, "serial": base, "runs": rows}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer episodes")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per configuration; the best is kept")
    ap.add_argument("--out", default="benchmarks/results/vector.json")
    args = ap.parse_args()
    k = 1 if args.quick else 4
    configs = [("inline", 1), ("inline", 4), ("process", 1), ("process", 2), ("process", 4)]
    results: dict[str, Any] = {}
    r = args.repeat
    load_start = os.getloadavg()[0]
    results["toy"] = bench("toy", env_factory("digirl/toy-type-v0", horizon=20), 50 * k, False, configs, r)
    slow = functools.partial(SlowEnv, 0.005, mode="type", horizon=20)
    results["slow-toy"] = bench("slow-toy", slow, 5 * k, False, configs, r)
    try:
        sim_fn = env_factory("digirl/sim-general-v0")
    except KeyError:
        print("[sim] digirl/sim-general-v0 is not registered: skipped")
        results["sim"] = None
    else:
        sim_configs = [("inline", 1), ("process", 1), ("process", 2), ("process", 4)]
        results["sim"] = bench("sim", sim_fn, 10 * k, True, sim_configs, r)
    out = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpu_count": os.cpu_count(),
            "load_avg_1m_at_start": round(load_start, 2),
            "load_avg_1m_at_end": round(os.getloadavg()[0], 2),
        },
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "results": results,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
