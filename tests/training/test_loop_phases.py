"""The loop in phases: a run object, two drivers over it, no import cycle, train() short and in order."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import digirl.training.async_loop as async_loop
import digirl.training.loop as loop
import digirl.training.run as run_mod
from digirl.config.core import load_config
from digirl.core.errors import ConfigError
from digirl.testing.tiny_runs import TINY_ONLINE_DIGIRL
from digirl.training.async_loop import AsynchronousDriver, SharedCollector
from digirl.training.config import TrainConfig
from digirl.training.loop import SynchronousDriver, online_driver, train
from digirl.training.run import Run

# smaller still: two episodes an iteration, two eval tasks
TINY = [*TINY_ONLINE_DIGIRL, "eval.train_tasks=2", "rollout_size=2", "algo.critic_steps=1", "algo.instruct_critic_steps=1"]


def _imported_modules(module: object) -> set[str]:
    """Every module a source file imports, at top level or inside functions (TYPE_CHECKING included)."""
    tree = ast.parse(Path(module.__file__).read_text())  # type: ignore[attr-defined]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_the_drivers_and_the_run_import_one_way():
    # loop -> async_loop -> run, loop -> run; never back, not even inside a function
    assert "digirl.training.loop" not in _imported_modules(async_loop)
    assert not {"digirl.training.loop", "digirl.training.async_loop"} & _imported_modules(run_mod)
    assert {"digirl.training.run", "digirl.training.async_loop"} <= _imported_modules(loop)


def test_train_reads_top_to_bottom_in_a_few_lines():
    tree = ast.parse(Path(loop.__file__).read_text())
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "train")
    assert fn.end_lineno - fn.lineno + 1 <= 60
    for mod in (loop, async_loop, run_mod):  # no closure handed around, no long function
        for node in ast.walk(ast.parse(Path(mod.__file__).read_text())):
            if isinstance(node, ast.FunctionDef):
                assert node.end_lineno - node.lineno + 1 <= 80, (mod.__name__, node.name)


def test_the_loops_former_names_still_import_from_it():
    for name in ("rollout_metrics", "iteration_jobs", "store_iteration", "evaluate_policy", "evaluate_as_configured"):
        assert getattr(loop, name) is getattr(run_mod, name)


def test_the_driver_follows_the_config_and_refuses_before_any_work(tmp_path):
    cfg = load_config(TrainConfig, overrides=TINY)
    run = Run.open(cfg, tmp_path / "sync")
    try:
        assert isinstance(online_driver(run), SynchronousDriver)
    finally:
        run.close()

    cfg = load_config(TrainConfig, overrides=[*TINY, "asynchronous.max_staleness=1"])
    run = Run.open(cfg, tmp_path / "async")
    try:
        driver = online_driver(run)
        assert isinstance(driver, AsynchronousDriver) and isinstance(run.runner, SharedCollector)
        assert driver.runner is run.runner  # evaluation and the collector thread take turns on one collector
    finally:
        run.close()

    cfg = load_config(TrainConfig, overrides=[*TINY, "asynchronous.max_staleness=1", "task_sampling=family"])
    with pytest.raises(ConfigError, match="task_sampling=family"):
        train(cfg, tmp_path / "refused")
    assert not (tmp_path / "refused" / "checkpoints").exists()  # refused before the first checkpoint


class _Recorder:
    """Wraps a run's phases to record the order they run in."""

    def __init__(self, run: Run) -> None:
        self.calls: list[tuple[str, int]] = []
        for name in ("update", "evaluate", "checkpoint", "log"):
            self._wrap(run, name)
        original_collect = run.collect

        def collect(it, act):
            self.calls.append(("collect", it))
            return original_collect(it, act)

        run.collect = collect  # type: ignore[method-assign]

    def _wrap(self, run: Run, name: str) -> None:
        original = getattr(run, name)

        def wrapped(*args, **kw):
            step = next((a for a in reversed(args) if isinstance(a, int)), -1)
            self.calls.append((name, step))
            return original(*args, **kw)

        setattr(run, name, wrapped)


def test_the_synchronous_driver_runs_the_phases_in_order(tmp_path):
    cfg = load_config(TrainConfig, overrides=[*TINY, "iterations=2", "eval.every=1", "warmup_iterations=1"])
    run = Run.open(cfg, tmp_path / "run")
    rec = _Recorder(run)
    try:
        run.offline_phase()
        SynchronousDriver().run(run)
        result = run.finish()
    finally:
        run.close()
    assert rec.calls == [
        ("evaluate", 0),  # the starting policy's score (an online run from scratch)
        ("log", 0),
        ("collect", 0),  # warm-up iteration: collect only
        ("log", 1),
        ("evaluate", 1),
        ("log", 1),
        ("checkpoint", -1),
        ("collect", 1),
        ("update", 2),
        ("log", 2),
        ("checkpoint", -1),  # the last iteration's evaluation is the final one
        ("evaluate", 2),
        ("log", 2),
    ]
    assert [h["iteration"] for h in result["history"]] == [0, 1, 2]
    assert result["iterations"] == run.state.iteration == 2 and run.state.updates == 1
    assert (tmp_path / "run" / "policy").is_dir() and (tmp_path / "run" / "eval.json").exists()
