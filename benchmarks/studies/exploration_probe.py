"""Where a policy's exploration stops: can sampled rollouts reach success, and from which step on?

For a saved policy and one task family of the simulator, on the family's train tasks:

- ``first_target_mass``: the probability the policy gives the scripted expert's first action when it
  is a tap on an element (P(kind = tap_element) · P(that element)), on each episode's first screen;
- ``prefix_k``: success of rollouts sampled at temperature 1 (seeded; ``--tap-epsilon`` mixes the
  pointer with a uniform choice, as ``policy.tap_epsilon`` does in collection) when the first ``k``
  actions are the expert's and the policy plays the rest (k = 0 is the policy alone, what online RL
  sees).

A family at 0% with k = 0 but high with k = 1 is an exploration failure at the first step: online RL
sees no success to learn from until a sample leaves the policy's habit. Seeded (policy sampling,
tasks, episodes), so the same command gives the same numbers on the same machine.

    python benchmarks/studies/exploration_probe.py runs/t1/general-s1/sft/policy --family web_search --episodes 40

Writes ``--out`` (JSON with the command) and prints the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from digirl.core.actions import ActionType
from digirl.policies.default import DefaultPolicy, batch_to_tensors
from digirl.policies.features import KIND_INDEX, element_under
from digirl.sim.env import SimEnv


def first_target_mass(policy: DefaultPolicy, env: SimEnv, tasks: list[Any], seeds: list[int]) -> list[float]:
    """P(the expert's first tap) under the policy on each episode's first screen (NaN: not a tap on an element)."""
    out = []
    for task, seed in zip(tasks, seeds):
        obs, _ = env.reset(seed=seed, options={"task": task})
        exp = env.cheat()
        batch = policy.featurize([obs])
        target = None
        if exp is not None and exp.type == ActionType.DUAL_POINT and exp.touch is not None:
            target = element_under(batch.elements[0], exp.touch[0], exp.touch[1])
        if target is None:
            out.append(float("nan"))
            continue
        with torch.no_grad():
            logits = policy.net(batch_to_tensors(batch, policy.device))
        p_kind = torch.softmax(logits["kind"][0].float(), -1)[KIND_INDEX["tap_element"]]
        p_elem = torch.softmax(logits["element"][0].float(), -1)[target]
        out.append(float(p_kind * p_elem))
    return out


def prefix_success(policy: DefaultPolicy, env: SimEnv, tasks: list[Any], seeds: list[int], k: int) -> float:
    """Success rate when the expert plays the first ``k`` actions and the sampling policy the rest."""
    wins = 0
    for task, seed in zip(tasks, seeds):
        policy.reseed(seed)
        obs, _ = env.reset(seed=seed, options={"task": task})
        done, reward, step = False, 0.0, 0
        while not done:
            expert = env.cheat() if step < k else None
            action = expert if expert is not None else policy.act([obs])[0].action
            obs, reward, term, trunc, _ = env.step(action)
            done, step = term or trunc, step + 1
        wins += reward > 0
    return wins / max(1, len(tasks))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("policy", type=Path, help="a saved default-policy folder")
    p.add_argument("--family", default="web_search")
    p.add_argument("--taskset", default="general")
    p.add_argument("--episodes", type=int, default=40)
    p.add_argument("--max-prefix", type=int, default=3, help="largest k (expert's first k actions)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tap-epsilon", type=float, default=0.0, help="sample with policy.tap_epsilon (ε-exploration of taps)")
    p.add_argument("--out", type=Path, default=Path("exploration_probe.json"))
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    policy = DefaultPolicy.load(args.policy)
    policy.tap_epsilon = args.tap_epsilon
    policy.train(False)
    env = SimEnv(taskset=args.taskset, perturbation=1, split="train")
    pool = [t for t in env.tasks() if t.family == args.family]
    if not pool:
        p.error(f"no train task of family {args.family!r} in {args.taskset}")
    rng = np.random.default_rng(args.seed)
    tasks = [pool[int(i)] for i in rng.integers(len(pool), size=args.episodes)]
    seeds = [int(s) for s in rng.integers(0, 2**31 - 1, size=args.episodes)]
    t0 = time.perf_counter()
    mass = np.array(first_target_mass(policy, env, tasks, seeds))
    res: dict[str, Any] = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "policy": str(args.policy),
        "family": args.family,
        "episodes": args.episodes,
        "tap_epsilon": args.tap_epsilon,
        "first_target_mass_mean": None if np.isnan(mass).all() else float(np.nanmean(mass)),
        "first_target_mass_median": None if np.isnan(mass).all() else float(np.nanmedian(mass)),
        "prefix_success": {},
    }
    print(f"{args.family}: P(expert's first tap) mean {res['first_target_mass_mean']}, median {res['first_target_mass_median']}")
    for k in range(args.max_prefix + 1):
        rate = prefix_success(policy, env, tasks, seeds, k)
        res["prefix_success"][str(k)] = rate
        print(f"  expert's first {k} action(s), then the policy sampling: {rate:.1%} of {args.episodes} succeed")
    res["wall_s"] = round(time.perf_counter() - t0, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
