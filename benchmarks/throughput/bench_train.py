"""Throughput of the training spine: env steps/s during collection and training samples/s.

Collection: the default policy acting (sampling) on ``digirl/sim-general-v0`` through the
VectorRunner with N env worker processes. Training: behaviour-cloning updates of the default
policy (featurization + forward + backward + AdamW) at a given batch size.

    python benchmarks/throughput/bench_train.py                     # CPU
    python benchmarks/throughput/bench_train.py --device cuda --envs 1 4 8 16 --batch 256

Writes benchmarks/results/train_<device>.json (command, machine, date inside).
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

import numpy as np
import torch


def collection(n_envs: int, episodes: int, device: str) -> dict[str, float]:
    from digirl.envs.collector import make_collector
    from digirl.envs.vector import EpisodeJob
    from digirl.policies.config import PolicyConfig
    from digirl.policies.registry import build_policy
    from digirl.sim.tasks.tasksets import load_taskset

    tasks = load_taskset("general", "train")
    policy = build_policy(PolicyConfig(device=device), seed=0)
    jobs = [EpisodeJob(tasks[i % len(tasks)], seed=i) for i in range(episodes)]
    with closing(make_collector("digirl/sim-general-v0", num_envs=n_envs)) as runner:
        list(runner.run(lambda obs: policy.act(obs), jobs[: n_envs * 2]))  # warm up workers
        t0 = time.perf_counter()
        trajs = list(runner.run(lambda obs: policy.act(obs), jobs))
        dt = time.perf_counter() - t0
        stats = runner.stats.to_dict()
    steps = sum(t.length for t in trajs)
    return {
        "envs": n_envs,
        "episodes": len(trajs),
        "steps": steps,
        "seconds": dt,
        "env_steps_per_s": steps / dt,
        "policy_share": stats.get("policy_s", 0.0) / dt if dt else 0.0,
    }


def training(batch: int, steps: int, device: str, bf16: bool) -> dict[str, float]:
    from digirl.algorithms.base import Sample, bc_update
    from digirl.envs.registry import make
    from digirl.policies.config import PolicyConfig
    from digirl.policies.default import DefaultPolicy
    from digirl.policies.registry import build_policy

    env = make("digirl/sim-general-v0")
    samples = []
    for seed in range(40):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            a = env.cheat()
            samples.append(Sample(obs, a))
            obs, _, term, trunc, _ = env.step(a)
            done = term or trunc
    policy = build_policy(PolicyConfig(device=device), seed=0)
    assert isinstance(policy, DefaultPolicy)  # bc_update trains the default policy's parameters
    opt = torch.optim.AdamW(policy.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    ctx = (
        torch.autocast("cuda", dtype=torch.bfloat16)
        if bf16 and device.startswith("cuda")
        else torch.autocast("cpu", enabled=False)
    )
    with ctx:
        bc_update(policy, opt, samples, steps=2, batch_size=batch, grad_accum=1, max_grad_norm=1.0, rng=rng)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        bc_update(policy, opt, samples, steps=steps, batch_size=batch, grad_accum=1, max_grad_norm=1.0, rng=rng)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        dt = time.perf_counter() - t0
    return {"batch": batch, "steps": steps, "bf16": bf16, "seconds": dt, "samples_per_s": batch * steps / dt}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--envs", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--episodes", type=int, default=48)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--train-steps", type=int, default=20)
    ap.add_argument("--bf16", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    result = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "torch": torch.__version__,
            "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none",
            "load_avg": os.getloadavg(),
        },
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "collection": [collection(n, args.episodes, args.device) for n in args.envs],
        "training": training(args.batch, args.train_steps, args.device, args.bf16),
    }
    for c in result["collection"]:
        share = 100 * c["policy_share"]
        print(f"collect  envs={c['envs']:>2}: {c['env_steps_per_s']:7.1f} env steps/s ({c['steps']} steps, policy {share:.0f}%)")
    t = result["training"]
    print(f"train    batch={t['batch']}: {t['samples_per_s']:7.1f} samples/s (bf16={t['bf16']})")
    out = Path(args.out or f"benchmarks/results/train_{args.device.split(':')[0]}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
