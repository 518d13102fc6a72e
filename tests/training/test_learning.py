"""Every algorithm *learns* on a small simulator task set (CPU, fixed seeds, well under a minute).

The task set: nine "open the X app" instructions whose app icon is on the home screen. A randomly
initialised policy solves none of them greedily; after a few online iterations it must solve most.
"""

import json
from pathlib import Path

import pytest

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


def _run(tmp_path: Path, algo: str) -> list[dict]:
    tasks = tmp_path / "tasks.txt"
    tasks.write_text("\n".join(TASKS) + "\n")
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
            "algo.actor_steps=12",
            "algo.critic_steps=15",
            "algo.instruct_critic_steps=10",
            "algo.batch_size=32",
            "algo.lr=2e-3",
            "policy.default.dim=48",
            "algo.critic.dim=48",
            "policy.default.layers=1",
            "algo.critic.layers=1",
            "policy.default.heads=2",
            "algo.critic.heads=2",
            "log.tensorboard=false",
            "seed=0",
        ],
    )
    res = train(cfg, tmp_path / "run")
    return res["history"]


@pytest.mark.learning
@pytest.mark.parametrize("algo", ["filtered_bc", "digirl"])
def test_algorithm_learns_on_simulator_tasks(tmp_path, algo):
    history = _run(tmp_path, algo)
    before = history[0]["eval/train_success_rate"]
    after = history[-1]["eval/train_success_rate"]
    assert history[0]["online_trajectories"] == 0 and history[-1]["online_trajectories"] == 120
    assert before <= 0.25, f"the untrained policy should mostly fail, got {before}"
    assert after >= before + 0.5, f"{algo} did not learn: {before:.2f} -> {after:.2f}"
    metrics = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    keys = set().union(*metrics)
    assert "rollout/success_rate" in keys and "train/actor_loss" in keys
    nll = [m["rollout/action_nll"] for m in metrics if "rollout/action_nll" in m]
    assert nll and all(x > 0 for x in nll), "the sampling policy's -log pi(a|s) should be logged every iteration"
    if algo == "digirl":
        assert {
            "critic/step_loss",
            "critic/instruct_acc",
            "train/adv_mean",
            "train/kept_step_fraction",
            "train/curriculum_cutoff",
        } <= keys
