"""The learning run GRPO's and PPO's tests share: nine "open the X app" tasks, a small default policy
trained from scratch online for 5 iterations of 24 rollouts (the budget FBC and DigiRL learn in,
tests/training/test_learning.py), evaluated greedily on the nine tasks before and after."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from digirl.config.core import load_config
from digirl.training.config import TrainConfig
from digirl.training.loop import train

TASKS = [
    "Open the clock app",
    "Open the calendar app",
    "Open the camera",
    "Open the settings app",
    "Open YouTube",
    "Open Google Maps",
    "Open the Play Store",
    "Open the photos app",
    "Open the Chrome app",
]


def learning_run(tmp_path: Path, algo: str, *extra: str) -> tuple[list[dict[str, Any]], list[dict[str, float]]]:
    """(the evaluation history, the logged metrics) of one run of ``algo`` with overrides ``extra``."""
    tasks = tmp_path / "tasks.txt"
    tasks.write_text("\n".join(TASKS) + "\n")
    small = [
        f"{part}.{k}={v}" for part in ("policy.default", "algo.critic") for k, v in (("dim", 48), ("layers", 1), ("heads", 2))
    ]
    cfg = load_config(
        TrainConfig,
        overrides=[
            "mode=online",
            f"env.task_file={tasks}",
            "env.runner=inline",
            "env.num_envs=4",
            "env.perturbation=0",
            "iterations=5",
            "rollout_size=24",
            "eval.every=100",
            "eval.test_tasks=0",
            "eval.train_tasks=9",
            "eval.seed=7",
            f"algo.name={algo}",
            "algo.batch_size=32",
            "algo.lr=2e-3",
            *small,
            "log.tensorboard=false",
            "seed=0",
            *extra,
        ],
    )
    history = train(cfg, tmp_path / "run")["history"]
    metrics = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    return history, metrics
