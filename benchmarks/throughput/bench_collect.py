"""Collection throughput with the default policy acting: env steps/s at 1, 4, 16 envs.

The default policy (fresh weights, seed 0, sampling at temperature 1) acts on
``digirl/sim-general-v0`` through the process-mode VectorRunner, batched over every env that waits
for an action, scheduled deterministically (each batch waits for all resets, as training does by
default). Each measurement first runs ``2 × envs`` warm-up episodes (worker start-up, caches), then
times ``--episodes`` episodes of fixed seeds. ``policy_share`` is the fraction of the wall time
spent inside ``policy.act`` (featurization, forward, decoding); ``env_wait_share`` the time spent
waiting for env replies.

    python benchmarks/throughput/bench_collect.py                          # CPU, 1/4/16 envs
    python benchmarks/throughput/bench_collect.py --device cuda --envs 1 4 16 64
    python benchmarks/throughput/bench_collect.py --frame-stack 2          # DigiRL's two stacked frames

Writes benchmarks/results/collect_<device>.json unless ``--out`` says otherwise. The same script
runs against an older checkout in ``benchmarks/compare/compare_revs.py`` (it only uses APIs both have).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import Any


def measure(n_envs: int, episodes: int, device: str, frame_stack: int, taskset: str) -> dict[str, Any]:
    from digirl.envs.collector import make_collector
    from digirl.envs.vector import EpisodeJob
    from digirl.policies.config import EncoderConfig, PolicyConfig
    from digirl.policies.registry import build_policy
    from digirl.sim.tasks.tasksets import load_taskset

    tasks = load_taskset(taskset, "train")
    policy = build_policy(PolicyConfig(device=device, default=EncoderConfig(frame_stack=frame_stack)), seed=0)

    def act(observations: Any) -> Any:
        return policy.act(observations)

    warm = [EpisodeJob(tasks[(7 * i) % len(tasks)], seed=10_000 + i) for i in range(2 * n_envs)]
    jobs = [EpisodeJob(tasks[i % len(tasks)], seed=i) for i in range(episodes)]
    # deterministic: every policy batch holds every active episode (what `digirl train deterministic=true` runs)
    with closing(make_collector(f"digirl/sim-{taskset}-v0", num_envs=n_envs, deterministic=True)) as runner:
        list(runner.run(act, warm))
        s0 = runner.stats.to_dict()
        t0, c0 = time.perf_counter(), time.process_time()
        trajs = list(runner.run(act, jobs))
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        s1 = runner.stats.to_dict()
    steps = sum(t.length for t in trajs)
    return {
        "envs": n_envs,
        "episodes": len(trajs),
        "steps": steps,
        "env_failures": sum(t.env_failure for t in trajs),
        "seconds": round(wall, 4),
        "env_steps_per_s": round(steps / wall, 2),
        "policy_share": round((s1["policy_s"] - s0["policy_s"]) / wall, 4),
        "env_wait_share": round((s1["env_wait_s"] - s0["env_wait_s"]) / wall, 4),
        "parent_cpu_share": round(cpu / wall, 4),
        "policy_calls": s1["policy_calls"] - s0["policy_calls"],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--envs", type=int, nargs="+", default=[1, 4, 16])
    p.add_argument("--episodes", type=int, default=64, help="timed episodes per measurement")
    p.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1, ...")
    p.add_argument("--frame-stack", type=int, default=1)
    p.add_argument("--taskset", default="general", choices=["general", "webshop"])
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads in the acting process")
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        p.error("--device cuda: no CUDA device is visible")
    res: dict[str, Any] = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "machine": {
            "platform": platform.platform(),
            "cpu_count": os.cpu_count(),
            "load_avg": os.getloadavg(),
            "torch": torch.__version__,
            "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none",
        },
        "device": args.device,
        "frame_stack": args.frame_stack,
        "taskset": args.taskset,
        "collection": [],
    }
    for n in args.envs:
        r = measure(n, args.episodes, args.device, args.frame_stack, args.taskset)
        res["collection"].append(r)
        print(
            f"collect envs={n:>3}: {r['env_steps_per_s']:8.1f} env steps/s ({r['steps']} steps, "
            f"policy {100 * r['policy_share']:.0f}%, env wait {100 * r['env_wait_share']:.0f}%)",
            flush=True,
        )
    out = args.out or Path(__file__).resolve().parents[1] / "results" / f"collect_{args.device.split(':')[0]}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
