"""Evaluation on the validation split: ``eval.val_tasks=N`` takes the first N validation tasks in order,
beside test; an env without a validation split is an error, not a silent skip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from digirl.core.errors import ConfigError
from digirl.core.types import TaskSpec
from digirl.training.config import EnvConfig, EvalConfig
from digirl.training.evaluate import eval_task_sets, eval_tasks


def _tasks(split: str, n: int) -> list[TaskSpec | None]:
    return [TaskSpec(instruction=f"{split} {i}", task_id=f"{split}-{i}", split=split) for i in range(n)]


def test_eval_tasks_takes_validation_in_order_beside_test() -> None:
    out = eval_tasks(_tasks("test", 5), _tasks("train", 9), 3, 2, 0, val_pool=_tasks("validation", 6), n_val=4)
    assert list(out) == ["test", "validation", "train"]
    assert [t.task_id for t in out["validation"] if t] == ["validation-0", "validation-1", "validation-2", "validation-3"]
    assert [t.task_id for t in out["test"] if t] == ["test-0", "test-1", "test-2"]
    # without a validation request the result is what it was before the split existed
    assert eval_tasks(_tasks("test", 5), _tasks("train", 9), 3, 2, 0) == {k: v for k, v in out.items() if k != "validation"}


def test_eval_task_sets_loads_the_simulator_validation_split() -> None:
    env = EnvConfig(id="digirl/sim-general-v0")
    out = eval_task_sets(env, EvalConfig(test_tasks=2, train_tasks=0, val_tasks=3))
    assert list(out) == ["test", "validation"]
    assert [t.task_id for t in out["validation"] if t] == [f"general-validation-{i:04d}" for i in range(3)]
    assert {t.split for t in out["validation"] if t} == {"validation"}
    assert eval_task_sets(env, EvalConfig(test_tasks=2, train_tasks=0)).keys() == {"test"}  # default: no validation


def test_val_tasks_on_an_env_without_a_validation_split_is_an_error() -> None:
    env = EnvConfig(id="digirl/miniwob.click-button-v0")  # tasks come from the episode seed: no splits
    with pytest.raises(ConfigError, match=r"eval.val_tasks=8: digirl/miniwob.click-button-v0 has no 'validation' split"):
        eval_task_sets(env, EvalConfig(test_tasks=0, train_tasks=0, val_tasks=8))
    bad = EnvConfig(id="digirl/sim-general-v0", val_split="dev")
    with pytest.raises(ConfigError, match="has no 'dev' split"):
        eval_task_sets(bad, EvalConfig(test_tasks=0, train_tasks=0, val_tasks=8))


def test_training_logs_validation_beside_test(tmp_path: Path) -> None:
    from digirl.config.core import load_config
    from digirl.training.config import TrainConfig
    from digirl.training.loop import train

    over = ["env.runner=inline", "env.num_envs=1", "iterations=1", "rollout_size=1", "eval.every=1"]
    over += ["eval.test_tasks=2", "eval.val_tasks=2", "eval.train_tasks=0", "log.tensorboard=false", "log.progress=false"]
    over += ["policy.default.dim=16", "policy.default.layers=1", "policy.default.heads=2", "algo.name=filtered_bc"]
    res = train(load_config(TrainConfig, overrides=over), tmp_path / "run")
    assert [r["split"] for r in res["final"]] == ["test", "validation"]
    assert "eval/validation_success_rate" in res["history"][-1] and "eval/test_success_rate" in res["history"][-1]
    saved = json.loads((tmp_path / "run" / "eval" / "eval-iter0001.json").read_text())
    assert saved["validation"]["episodes"] == 2 and saved["observation"] == "screenshot+elements"
