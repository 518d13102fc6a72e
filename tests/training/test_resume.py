"""A training process killed with SIGKILL mid-run resumes without losing or duplicating anything."""

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from digirl.data.store import TrajectoryStore
from digirl.testing.tiny_runs import TINY_ONLINE_DIGIRL
from digirl.training.checkpoint import latest_checkpoint, load_checkpoint

ARGS = [*TINY_ONLINE_DIGIRL, "iterations=6"]


def _train(run: Path) -> subprocess.Popen:
    env = dict(os.environ, DIGIRL_NO_PROGRESS="1")
    return subprocess.Popen(
        [sys.executable, "-m", "digirl", "train", str(run), *ARGS], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )


@pytest.mark.slow
def test_kill9_mid_run_then_resume_loses_and_duplicates_nothing(tmp_path):
    run = tmp_path / "run"
    proc = _train(run)
    # Kill once the run is past its second iteration, wherever it is (collecting, updating, writing).
    deadline = time.time() + 900  # generous: CI machines can be slow
    while time.time() < deadline and proc.poll() is None:
        ck = latest_checkpoint(run) if (run / "checkpoints" / "LATEST").exists() else None
        if ck is not None and load_checkpoint(ck)[0].iteration >= 2:
            time.sleep(0.3)
            break
        time.sleep(0.1)
    assert proc.poll() is None, proc.stdout.read().decode()[-2000:] if proc.stdout else "finished too early"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    ck = latest_checkpoint(run)
    assert ck is not None, "no checkpoint was written before the deadline"
    killed_at = load_checkpoint(ck)[0].iteration
    assert 2 <= killed_at < 6

    proc = _train(run)  # same command: resumes
    out = proc.communicate(timeout=300)[0].decode()
    assert proc.returncode == 0, out[-3000:]
    state = load_checkpoint(latest_checkpoint(run))[0]
    assert state.iteration == 6

    trajs = TrajectoryStore(run / "data", create=False).load(load_images=False)
    ids = [t.traj_id for t in trajs]
    assert len(ids) == len(set(ids)), "a trajectory was stored twice"
    per_iter = Counter(int(t.metadata["iteration"]) for t in trajs)
    assert per_iter == {i: 6 for i in range(6)}, per_iter
    assert state.trajectories_seen == 36 or state.trajectories_seen >= 36 - 6  # counters restart from the checkpoint
    assert (run / "policy" / "model.safetensors").is_file()
