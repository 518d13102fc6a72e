"""Digi-Q vs Filtered BC on a noisy-expert dataset (CPU), with two ceilings that need the simulator.

For one task family and noise level: collect noisy-expert trajectories, SFT a weak starting policy on
their successes, then train offline from it and evaluate greedily on the same tasks:

- Filtered BC (the successful trajectories' steps);
- Digi-Q with the given ``algo.digiq.*`` variants (e.g. N = 1, δ);
- "oracle best-of-N": BC on the candidate with the highest *true* value at every state (ground-truth
  values of every candidate, scripted-expert continuation) — what Digi-Q's extraction would give with
  a perfect critic;
- "expert steps only": BC on the dataset steps the expert took (the noise is known) — a perfect
  step filter;
- optionally offline DigiRL (``--digirl``).

``--sticky`` makes the noise systematic (``expert_noise_sticky=true``: the same wrong action on the same
screen), the behaviour of a policy with habits rather than of a coin; uniform noise is averaged out by
the greedy mode of Filtered BC's clone. Per BC dataset (Filtered BC's, each Digi-Q run's extraction) the
result also says what was cloned: the share of noisy dataset actions and of actions whose true value
(expert continuation) is the best among the state's candidates.

    python benchmarks/studies/digiq_noisy_expert.py OUT --family app_settings,browser_tab,set_alarm,app_notifications \
        --noise 0.7 --trajectories 96 --variant "algo.digiq.extract_candidates=1 algo.digiq.delta=0" --variant ""

Writes ``OUT/result.json`` (every success rate, the extraction and critic diagnostics, the command) and
prints a table. About 10–20 min on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

import numpy as np
import torch

from digirl.algorithms.base import Sample, bc_update
from digirl.algorithms.digiq.sidecar import Sidecar
from digirl.algorithms.digiq.stages import load_candidates, load_labels
from digirl.config.core import load_config
from digirl.data.store import TrajectoryStore
from digirl.envs.registry import make
from digirl.experiments.digiq_oracle import learned_q, load_oracle, oracle_metrics, oracle_values
from digirl.policies.registry import load_policy
from digirl.training.config import CollectConfig, SFTRunConfig, TrainConfig
from digirl.training.digiq import train_digiq
from digirl.training.loop import train
from digirl.training.sft import collect, sft


def evaluate(policy, tasks: list[str], repeats: int, seed: int = 7) -> float:
    env = make("digirl/sim-general-v0", perturbation=0)
    wins = 0.0
    for rep in range(repeats):
        for i, t in enumerate(tasks):
            obs, _ = env.reset(seed=seed + i + len(tasks) * rep, options={"task": t})
            for _ in range(env.default_horizon):
                obs, r, term, trunc, _ = env.step(policy.act([obs], greedy=True)[0].action)
                if term or trunc:
                    break
            wins += r
    return wins / (repeats * len(tasks))


def bc(init: str, samples: list[Sample], steps: int, seed: int) -> object:
    torch.manual_seed(seed)
    policy = load_policy(init)
    opt = torch.optim.AdamW(policy.parameters(), lr=2e-3)  # type: ignore[attr-defined]
    bc_update(policy, opt, samples, steps=steps, batch_size=32, grad_accum=1, max_grad_norm=1.0, rng=np.random.default_rng(seed))  # type: ignore[arg-type]
    return policy


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--family", default="app_settings,browser_tab,set_alarm,app_notifications")
    ap.add_argument("--per-family", type=int, default=2, help="tasks per family")
    ap.add_argument("--noise", type=float, default=0.7)
    ap.add_argument("--trajectories", type=int, default=96)
    ap.add_argument("--actor-steps", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3, help="evaluation episodes per task")
    ap.add_argument("--variant", action="append", default=None, help="algo.digiq.* overrides of one Digi-Q run")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sticky", action="store_true", help="systematic noise: the same wrong action on the same screen")
    ap.add_argument("--digirl", action="store_true", help="also offline DigiRL on the same data")
    ap.add_argument("--no-ceilings", action="store_true", help="skip the two ground-truth ceilings (diagnostics stay)")
    args = ap.parse_args()
    from digirl.sim.tasks.tasksets import load_taskset

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    pool = load_taskset("general", "train")
    tasks = [t.instruction for f in args.family.split(",") for t in [x for x in pool if x.family == f][: args.per_family]]
    (out / "tasks.txt").write_text("\n".join(tasks) + "\n")
    env = [f"env.task_file={out / 'tasks.txt'}", "env.runner=inline", "env.num_envs=1", "env.perturbation=0", f"seed={args.seed}"]
    policy = ["policy.default.dim=48", "policy.default.layers=1", "policy.default.heads=2"]
    data = out / "data"
    if not data.exists():
        collect(
            load_config(
                CollectConfig,
                overrides=[
                    *env,
                    "expert=true",
                    f"expert_noise={args.noise}",
                    f"expert_noise_sticky={args.sticky}",
                    f"trajectories={args.trajectories}",
                ],
            ),
            data,
        )
    if not (out / "sft" / "policy").exists():
        sft(load_config(SFTRunConfig, overrides=[*env, *policy, f"sft.dataset={data}", "sft.steps=40"]), out / "sft")
    init = str(out / "sft" / "policy")
    base = [
        *env,
        "eval.test_tasks=0",
        "eval.train_tasks=0",
        "log.tensorboard=false",
        "mode=offline",
        f"offline_dataset={data}",
        f"policy.init={init}",
        f"algo.offline_actor_steps={args.actor_steps}",
        "algo.lr=2e-3",
        "algo.batch_size=32",
    ]
    digiq_base = ["algo.digiq.candidates=5", "algo.digiq.repft_steps=80", "algo.digiq.critic_steps=300",
                  "algo.digiq.critic_hidden=128", "algo.digiq.folds=3", f"algo.digiq.data={out / 'stages'}"]  # fmt: skip
    result: dict[str, float] = {"start": evaluate(load_policy(init), tasks, args.repeats)}
    if not (out / "fbc" / "policy").exists():  # a rerun reuses finished runs
        train(load_config(TrainConfig, overrides=[*base, "algo.name=filtered_bc"]), out / "fbc")
    result["filtered_bc"] = evaluate(load_policy(out / "fbc" / "policy"), tasks, args.repeats)
    if args.digirl:
        if not (out / "digirl" / "policy").exists():
            train(load_config(TrainConfig, overrides=[*base, "algo.name=digirl"]), out / "digirl")
        result["digirl_offline"] = evaluate(load_policy(out / "digirl" / "policy"), tasks, args.repeats)
    runs: dict[str, Path] = {}
    for i, v in enumerate(args.variant or [""]):
        run = out / f"digiq-{i}"
        if not (run / "policy").exists():
            train_digiq(load_config(TrainConfig, overrides=[*base, "algo.name=digiq", *digiq_base, *v.split()]), run)
        runs[f"digiq[{v or 'defaults'}]"] = run
        result[f"digiq[{v or 'defaults'}]"] = evaluate(load_policy(run / "policy"), tasks, args.repeats)
    # ground truth: the true value of every candidate (replayed simulator, expert continuation)
    cfg = load_config(TrainConfig, overrides=[*base, "algo.name=digiq", *digiq_base])
    oracle_values(cfg, out / "digiq-0", max_states=10**6)
    sc = Sidecar(out / "stages")
    cands, labels, true = load_candidates(sc), load_labels(sc), load_oracle(sc)
    trajs = {t.traj_id: t for t in TrajectoryStore(data, create=False).load()}
    fbc_set = [(t.traj_id, h, 0) for t in trajs.values() if t.success for h in range(len(t.steps))]
    diagnostics = {"filtered_bc": cloned_report(fbc_set, trajs, cands, true)}
    for name, run in runs.items():
        diagnostics[name] = {**cloned_report(extracted(run), trajs, cands, true), **oracle_metrics(learned_q(run), true)}
    if not args.no_ceilings:  # a perfect critic and a perfect step filter
        best: list[Sample] = []
        for (tid, h), cs in cands.items():
            vals = np.array([true.get((tid, h, j), np.nan) for j in range(len(cs))])
            ok = np.array([cs[j].is_valid and labels.get((tid, h, j)) is not False for j in range(len(cs))])
            if np.isnan(vals).any() or not ok.any():
                continue
            vals = np.where(ok, vals, -1.0)
            if vals.max() > vals.min():
                best.append(Sample(trajs[tid].steps[h].observation, cs[int(np.argmax(vals))]))
        expert = [
            Sample(s.observation, s.action)
            for t in trajs.values()
            for h, s in enumerate(t.steps)
            if h not in t.metadata["noisy_steps"]
        ]
        result["oracle_best_of_n"] = evaluate(bc(init, best, args.actor_steps, args.seed), tasks, args.repeats)
        result["expert_steps_only"] = evaluate(bc(init, expert, args.actor_steps, args.seed), tasks, args.repeats)
    data_success = float(np.mean([t.success for t in trajs.values()]))
    summary = {
        "command": shlex.join(sys.argv),
        "tasks": tasks,
        "noise": args.noise,
        "sticky": args.sticky,
        "seed": args.seed,
        "data_success": data_success,
        "success": result,
        "cloned": diagnostics,
        "wall_s": time.time() - t0,
    }
    (out / "result.json").write_text(json.dumps(summary, indent=2))
    print(f"data: {len(trajs)} trajectories, {100 * data_success:.1f}% successful")
    for k, v in result.items():
        print(f"{k:60s} {100 * v:5.1f}%")
    for k, d in diagnostics.items():
        print(k, {m: round(x, 3) for m, x in d.items()})


def extracted(run: Path) -> list[tuple[str, int, int]]:
    """(traj_id, step, chosen candidate) of every state a Digi-Q run kept for behaviour cloning."""
    from digirl.data.annotations import ANNOTATIONS_DIR, read_annotations

    return [
        (a.traj_id, a.step, int(a.extra["chosen"])) for a in read_annotations(run / ANNOTATIONS_DIR) if a.step >= 0 and a.kept
    ]


def cloned_report(
    picks: list[tuple[str, int, int]],
    trajs: dict,
    cands: dict,
    true: dict[tuple[str, int, int], float],
) -> dict[str, float]:
    """What a BC dataset holds: how many samples, the share of noisy dataset actions, of proposals, and
    (where every candidate's true value is known) of actions with the state's best true value."""
    noisy = [j == 0 and h in trajs[tid].metadata["noisy_steps"] for tid, h, j in picks]
    best, regret = [], []
    for tid, h, j in picks:
        vals = [true.get((tid, h, c)) for c in range(len(cands[(tid, h)]))]
        if None in vals or vals[j] is None:
            continue
        v = np.array(vals, dtype=np.float64)
        best.append(float(v[j] >= v.max() - 1e-9))
        regret.append(float(v.max() - v[j]))
    return {
        "samples": float(len(picks)),
        "noisy_dataset_action": float(np.mean(noisy)) if picks else float("nan"),
        "proposal": float(np.mean([j != 0 for _, _, j in picks])) if picks else float("nan"),
        "best_true_value": float(np.mean(best)) if best else float("nan"),
        "true_regret": float(np.mean(regret)) if regret else float("nan"),
    }


if __name__ == "__main__":
    main()
