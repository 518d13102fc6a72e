"""DigiRL's update on a growing replay buffer, with the critic's feature cache and without it.

Every update scores the step critic on the buffer's observations (all of them without the
curriculum, the kept share with it) and trains it on minibatches drawn from them. Without the
cache each of those observations is featurized again at every update; with it, once. The two
modes run interleaved in one process on the same trajectories (Web Shopping, a noisy scripted
expert), the same seeds and the recipe's actor steps, and must end with bit-identical weights
(in deterministic mode, the default, as `bench table1` runs; on CUDA, without it, even two uncached
runs differ).

    python benchmarks/throughput/bench_critic_update.py                       # CPU
    python benchmarks/throughput/bench_critic_update.py --device cuda --trajectories 1024

Writes benchmarks/results/critic_update_<device>.json (command, machine, date inside).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
import time
from collections.abc import Hashable, Iterable, Sequence
from contextlib import closing
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from digirl.algorithms.base import AlgoConfig
from digirl.algorithms.digirl import DigiRL
from digirl.core.types import Observation, Trajectory
from digirl.envs.collector import make_collector
from digirl.envs.vector import EpisodeJob
from digirl.policies.config import PolicyConfig
from digirl.policies.default import DefaultPolicy
from digirl.policies.features import Batch, FeatureSpec, featurize
from digirl.policies.registry import build_policy
from digirl.sim.tasks.tasksets import load_taskset
from digirl.utils.rng import seed_everything


class _NoCache:
    """What the update did before the cache: featurize every requested observation afresh."""

    def __init__(self, spec: FeatureSpec) -> None:
        self.spec = spec

    def batch(self, keys: Sequence[Hashable], observations: Sequence[Observation]) -> Batch:
        return featurize(observations, self.spec)

    def retain(self, keys: Iterable[Hashable]) -> None:
        pass


def collect(n: int) -> list[Trajectory]:
    tasks = load_taskset("webshop", "train")
    jobs = [EpisodeJob(tasks[i % len(tasks)], seed=i) for i in range(n)]
    with closing(make_collector("digirl/sim-webshop-v0", runner="inline")) as runner:
        trajs = sorted(runner.run(None, jobs, expert=True, expert_eps=0.4, expert_seed=0), key=lambda t: t.seed or 0)
    for i, t in enumerate(trajs):
        t.traj_id = f"traj-{i:05d}"
    return trajs


@dataclass
class Run:
    update_s: list[float]  # each update's time, oldest first
    digest: str  # of the final critic and policy weights


def run(trajs: list[Trajectory], *, cached: bool, curriculum: bool, rollout: int, device: str) -> Run:
    torch.manual_seed(0)
    policy = build_policy(PolicyConfig(device=device), seed=0)
    assert isinstance(policy, DefaultPolicy)  # the critic's feature cache is the default policy's
    cfg = AlgoConfig(curriculum=curriculum, offline_actor_steps=20, actor_steps=10)
    algo = DigiRL(policy, cfg, seed=0)
    if not cached:
        algo._features = _NoCache(cfg.critic.features)  # type: ignore[assignment]
    times = []
    for end in range(rollout, len(trajs) + 1, rollout):
        t0 = time.perf_counter()
        algo.update(trajs[:end], "offline" if end == rollout else "online")
        if device == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    h = hashlib.sha256()
    for p in (*algo.critics[0].parameters(), *policy.parameters()):
        h.update(p.detach().cpu().numpy().tobytes())
    return Run(times, h.hexdigest())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--trajectories", type=int, default=256, help="buffer size at the last update")
    ap.add_argument("--rollout", type=int, default=64, help="trajectories added per update")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--out", default=None)
    ap.add_argument(
        "--nondeterministic",
        action="store_true",
        help="allow CUDA's nondeterministic kernels (the two modes' weights then differ run to run)",
    )
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    # As `bench table1` runs (deterministic mode): without it CUDA's atomics make even two
    # uncached runs differ, and the identical-weights check means nothing.
    seed_everything(0, deterministic=not args.nondeterministic)

    t0 = time.perf_counter()
    trajs = collect(args.trajectories)
    collect_s = time.perf_counter() - t0
    rows: dict[str, dict[str, object]] = {}
    for curriculum in (False, True):
        runs: dict[str, list[Run]] = {"cached": [], "uncached": []}
        for _ in range(args.repeats):
            for mode in ("uncached", "cached"):  # interleaved: both see the same machine state
                res = run(trajs, cached=mode == "cached", curriculum=curriculum, rollout=args.rollout, device=args.device)
                runs[mode].append(res)
        digests = {r.digest for rs in runs.values() for r in rs}
        totals = {m: min(sum(r.update_s) for r in rs) for m, rs in runs.items()}
        lasts = {m: min(r.update_s[-1] for r in rs) for m, rs in runs.items()}
        key = "curriculum" if curriculum else "no_curriculum"
        rows[key] = {
            "identical_weights": len(digests) == 1,
            "total_update_s": totals,
            "last_update_s": lasts,
            "speedup_total": totals["uncached"] / totals["cached"],
            "speedup_last": lasts["uncached"] / lasts["cached"],
            "runs": {m: [asdict(r) for r in rs] for m, rs in runs.items()},
        }
        sys.stdout.write(
            f"{key:14s} updates total {totals['uncached']:.1f} s -> {totals['cached']:.1f} s "
            f"({totals['uncached'] / totals['cached']:.2f}x); last update {lasts['uncached']:.2f} s -> {lasts['cached']:.2f} s "
            f"({lasts['uncached'] / lasts['cached']:.2f}x); identical weights: {len(digests) == 1}\n"
        )
    steps = sum(t.length for t in trajs)
    result = {
        "command": " ".join([os.path.basename(sys.executable), *sys.argv]),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "torch": torch.__version__,
            "device": args.device,
            "gpu": torch.cuda.get_device_name() if args.device == "cuda" else None,
        },
        "deterministic": not args.nondeterministic,
        "trajectories": len(trajs),
        "steps": steps,
        "collect_s": collect_s,
        "rows": rows,
    }
    out = Path(args.out or Path(__file__).resolve().parents[1] / "results" / f"critic_update_{args.device}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    sys.stdout.write(f"{len(trajs)} trajectories, {steps} steps; wrote {out}\n")


if __name__ == "__main__":
    main()
