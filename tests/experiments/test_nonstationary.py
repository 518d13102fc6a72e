"""The non-stationarity benchmark: frozen vs continued training as the simulator's world shifts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from digirl.cli.main import main

SMALL = [
    "env.id=digirl/sim-general-v0",
    "env.runner=inline",
    "env.num_envs=1",
    "policy.device=cpu",
    "policy.default.dim=32",
    "policy.default.layers=1",
    "policy.default.heads=2",
    "algo.critic.dim=32",
    "algo.critic.layers=1",
    "algo.critic.heads=2",
    "algo.actor_steps=2",
    "algo.critic_steps=2",
    "algo.instruct_critic_steps=2",
    "log.tensorboard=false",
]


@pytest.mark.slow
def test_frozen_and_continued_runs_per_world_version(tmp_path: Path, capsys):
    run = tmp_path / "run"
    args = [
        "train",
        str(run),
        *SMALL,
        "mode=online",
        "iterations=1",
        "rollout_size=2",
        "eval.every=0",
        "eval.test_tasks=2",
        "eval.train_tasks=0",
    ]
    assert main(args) == 0
    capsys.readouterr()
    out = tmp_path / "ns"
    assert (
        main(["bench", "nonstationary", str(out), f"run={run}", "versions=[0,1]", "iterations=1", "test_tasks=2", "--json"]) == 0
    )
    s = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(s["frozen"]) == {"0", "1"} and set(s["continued"]) == {"0", "1"}
    assert (out / "nonstationary.md").read_text().startswith("| world version")
    # the continued run is a copy resumed in the new world; the original run is untouched
    cont = (out / "continued" / "config.yaml").read_text()
    assert "world_version: 1" in cont and "iterations: 2" in cont
    assert "world_version: 0" in (run / "config.yaml").read_text()
    assert main(["bench", "nonstationary", str(tmp_path / "bad"), f"run={tmp_path / 'nope'}"]) == 2  # a clear error
    assert "not a finished `digirl train` run folder" in capsys.readouterr().err
