"""DigiRL's non-stationarity experiment on the simulator: the world changes under a trained agent.

The simulator's ``world_version`` salts generated content, renames buttons ("Install" → "Get"),
moves search boxes and changes the wallpaper (docs/simulator.md). Given a finished training run,
this benchmark reports, for each world version in turn:

- **frozen**: the run's final policy, never updated again, evaluated in that world;
- **continued**: the same run resumed in that world for ``iterations`` more online iterations
  (critics, optimizer state and replay buffer carry over, as when a deployed agent keeps learning),
  then evaluated there. Each version continues from the previous one.

The paper's Fig. 4 shows the frozen policy decaying and continued training holding success.
Every stage is a ``digirl`` CLI call in its own process, like ``digirl bench table1``.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from digirl.config.core import cfg_field
from digirl.experiments.subruns import run_cli
from digirl.experiments.table1 import _success
from digirl.utils.provenance import result_metadata, saved_observation

log = logging.getLogger(__name__)


_f = cfg_field  # help text on every setting


@dataclass
class NonStationaryConfig:
    """``digirl bench nonstationary OUT run=RUN_DIR key=value ...``"""

    run: str = _f("", "a finished `digirl train` run folder (its config, checkpoints and data are copied, not changed)")
    versions: list[int] = _f([0, 1, 2], "world versions, in the order the world shifts")
    iterations: int = _f(4, "online iterations of continued training in each new world")
    test_tasks: int = _f(96, "first N test tasks in order")
    extra: list[str] = _f([], "extra key=value overrides of the continued runs (e.g. env.num_envs=8)")

    def __post_init__(self) -> None:
        if not self.versions:
            raise ValueError("versions must not be empty")
        if self.iterations < 1:
            raise ValueError(f"iterations must be >= 1, got {self.iterations}")


def run_nonstationary(cfg: NonStationaryConfig, out: str | Path) -> dict[str, Any]:
    from digirl.config.core import load_config_file
    from digirl.training.config import TrainConfig

    src = Path(cfg.run)
    if not (src / "config.yaml").is_file() or not (src / "policy").is_dir():
        raise ValueError(f"run={cfg.run}: not a finished `digirl train` run folder (needs config.yaml and policy/)")
    base = load_config_file(TrainConfig, src / "config.yaml")
    from digirl.envs.registry import env_has

    if not env_has(base.env.id, "world_options"):
        raise ValueError(f"{base.env.id}: world versions exist on the simulator only")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    evals = [f"eval.test_tasks={cfg.test_tasks}", "eval.train_tasks=0"]

    frozen: dict[int, float | None] = {}
    for v in cfg.versions:
        res = run_cli(
            ["eval", str(src / "policy"), "--out", str(out / f"frozen-v{v}"), f"env.world_version={v}", *evals],
            out / f"frozen-v{v}.log",
        )
        frozen[v] = _success(res, "test")
        log.info("frozen policy, world %d: %s", v, frozen[v])

    run = out / "continued"
    if not run.exists():
        shutil.copytree(src, run)
    continued: dict[int, float | None] = {cfg.versions[0]: frozen[cfg.versions[0]]}
    iterations = base.iterations
    for v in cfg.versions[1:]:
        iterations += cfg.iterations
        res = run_cli(
            [
                "train",
                str(run),
                f"env.world_version={v}",
                f"iterations={iterations}",
                "eval.every=0",
                *evals,
                *cfg.extra,
            ],
            out / f"continued-v{v}.log",
        )
        continued[v] = _success(res["final"], "test")
        log.info("continued training, world %d: %s", v, continued[v])

    summary = {
        **result_metadata(observation=saved_observation([Path(src) / "config.yaml"])),
        "run": str(src),
        "config": cfg.__dict__,
        "frozen": frozen,
        "continued": continued,
        "wall_s": time.time() - t0,
    }
    (out / "nonstationary.json").write_text(json.dumps(summary, indent=2))
    (out / "nonstationary.md").write_text(to_markdown(summary))
    return summary


def to_markdown(summary: dict[str, Any]) -> str:
    cfg = summary["config"]
    lines = [
        "| world version | frozen policy (test) | continued online training (test) |",
        "|---|---|---|",
    ]
    for v in cfg["versions"]:
        f, c = summary["frozen"].get(v), summary["continued"].get(v)
        cell = "–" if c is None else f"{100 * c:.1f}%"
        lines.append(f"| {v} | {'–' if f is None else f'{100 * f:.1f}%'} | {cell} |")
    lines.append("")
    lines.append(
        f"Run {summary['run']}; continued training: {cfg['iterations']} more online iterations per world "
        f"version, resuming the same run (critics and replay buffer carry over); test = first {cfg['test_tasks']} "
        "test tasks."
    )
    return "\n".join(lines) + "\n"
