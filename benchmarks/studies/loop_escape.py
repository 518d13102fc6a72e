"""Three decodings of the same saved policies on the same test tasks: greedy, greedy with
``eval.loop_escape`` and sampled (temperature 1), with each one's failure modes.

Answers whether a greedy score that lags the sampled one is the greedy policy going round cycles
(the ``looping`` failure mode) and how much of the gap the loop escape wins back. Every decoding
plays the first N test tasks in order with the evaluation seed, as ``digirl eval`` does; the
sampled pass and the escaping pass start from the same generator state for every policy.

    python benchmarks/studies/loop_escape.py RUN/checkpoints/iter-000032/policy ... \\
        --env digirl/sim-webshop-v0 --out loop_escape.json

Writes ``--out`` (JSON with the command and the machine) and prints one row per policy.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

from digirl.config.core import load_config
from digirl.policies.registry import build_policy
from digirl.training.common import make_runner, preserved_sampling, task_pool
from digirl.training.config import EvalRunConfig
from digirl.training.evaluate import eval_tasks
from digirl.training.loop import evaluate_policy

DECODINGS = ("greedy", "loop_escape", "sampled")


def measure(policy_dir: str, overrides: list[str], n_test: int) -> dict[str, Any]:
    cfg = load_config(EvalRunConfig, overrides=[*overrides, f"policy.init={policy_dir}"])
    policy = build_policy(cfg.policy, seed=0)
    tasks = eval_tasks(task_pool(cfg.env, cfg.env.test_split), [], n_test, 0, cfg.eval.seed)
    runner = make_runner(cfg.env, deterministic=True)
    row: dict[str, Any] = {"policy": policy_dir}
    try:
        for name in DECODINGS:
            with preserved_sampling(policy):  # every decoding starts from the same random state
                (report,) = evaluate_policy(
                    policy,
                    runner,
                    tasks,
                    greedy=name != "sampled",
                    temperature=cfg.policy.temperature,
                    seed=cfg.eval.seed,
                    loop_escape=name == "loop_escape",
                )
            row[name] = {"success_rate": report.success_rate, "failure_modes": report.failure_modes}
    finally:
        runner.close()
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("policies", nargs="+", help="saved policy folders")
    ap.add_argument("--env", default="digirl/sim-webshop-v0")
    ap.add_argument("--test-tasks", type=int, default=96)
    ap.add_argument("--num-envs", type=int, default=2)
    ap.add_argument("--runner", default="auto", help="env.runner (inline: in this process)")
    ap.add_argument("--out", default="loop_escape.json")
    args = ap.parse_args(argv)
    overrides = [f"env.id={args.env}", f"env.num_envs={args.num_envs}", f"env.runner={args.runner}", "policy.device=cpu"]
    t0 = time.time()
    rows = []
    for p in args.policies:
        row = measure(p, overrides, args.test_tasks)
        rows.append(row)
        cells = "  ".join(
            f"{d} {100 * row[d]['success_rate']:5.1f}% (looping {row[d]['failure_modes'].get('looping', 0)})" for d in DECODINGS
        )
        print(f"{p}: {cells}", flush=True)
    result = {
        "command": " ".join(["loop_escape.py", *(sys.argv[1:] if argv is None else argv)]),
        "machine": {"platform": platform.platform(), "python": platform.python_version()},
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "wall_s": time.time() - t0,
        "env": args.env,
        "test_tasks": args.test_tasks,
        "rows": rows,
    }
    Path(args.out).write_text(json.dumps(result, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
