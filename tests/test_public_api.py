"""The top-level API: ``digirl.make``, ``digirl.Action``, ``digirl.Trajectory``, ``digirl.load_policy``,
``digirl.TrajectoryStore``, all lazy (``import digirl`` loads neither numpy nor torch)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import digirl

ROOT = Path(__file__).resolve().parents[1]


def test_names_resolve_to_their_homes() -> None:
    from digirl.core.actions import Action
    from digirl.core.types import Trajectory
    from digirl.data.store import TrajectoryStore
    from digirl.envs.registry import make
    from digirl.policies.registry import load_policy

    assert digirl.Action is Action and digirl.Trajectory is Trajectory and digirl.make is make
    assert digirl.load_policy is load_policy and digirl.TrajectoryStore is TrajectoryStore
    assert {"Action", "Trajectory", "load_policy", "TrajectoryStore", "make"} <= set(digirl.__all__) <= set(dir(digirl))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = digirl.nope  # type: ignore[attr-defined]


def test_import_digirl_stays_light() -> None:
    code = (
        "import sys, json, digirl\n"
        "print(json.dumps(sorted(m for m in ('numpy', 'torch', 'gymnasium', 'digirl.envs') if m in sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_make_step_and_store_round_trip(tmp_path: Path) -> None:
    """The module docstring's example: make an env, step it with an Action, store the episode, read it back."""
    env = digirl.make("digirl/sim-general-v0", perturbation=0)
    obs, _ = env.reset(seed=0)
    steps = []
    from digirl.core.types import Step

    obs2, reward, terminated, truncated, info = env.step(digirl.Action.tap(0.5, 0.3))
    steps.append(Step(obs, digirl.Action.tap(0.5, 0.3), '{"type": "DUAL_POINT"}', reward, terminated, truncated, info))
    traj = digirl.Trajectory(task=env.task, steps=steps)
    store = digirl.TrajectoryStore(tmp_path / "data", create=True)
    store.append([traj])
    (back,) = list(store.iter_trajectories())
    assert back.task.instruction == env.task.instruction and len(back.steps) == 1
    assert back.steps[0].action == digirl.Action.tap(0.5, 0.3)
    assert np.array_equal(back.steps[0].observation.screenshot, obs.screenshot)
    assert obs2.step == 1


def test_load_policy_names_a_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="not a saved policy folder"):
        digirl.load_policy(tmp_path / "nothing")
