"""`digirl train` under torchrun with 2 CPU processes: rank 0 collects, every rank trains, one set of files."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys

import pytest

from digirl.data.store import TrajectoryStore
from digirl.testing.tiny_runs import TINY_ONLINE_DIGIRL
from digirl.training.checkpoint import latest_checkpoint, load_checkpoint

ARGS = [*TINY_ONLINE_DIGIRL, "iterations=2"]


@pytest.mark.slow
def test_two_process_train_run(tmp_path):
    torchrun = shutil.which("torchrun") or os.path.join(os.path.dirname(sys.executable), "torchrun")
    if not os.path.exists(torchrun):
        pytest.skip("torchrun not found")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    run = tmp_path / "run"
    env = dict(os.environ, DIGIRL_DIST_BACKEND="gloo", DIGIRL_NO_PROGRESS="1", OMP_NUM_THREADS="1")
    cmd = [torchrun, "--nproc_per_node", "2", "--master_port", str(port), "-m", "digirl", "train", str(run), *ARGS, "--json"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    reports = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(reports) == 1, "only rank 0 reports"
    assert json.loads(reports[0])["iterations"] == 2
    store = TrajectoryStore(run / "data", create=False)
    assert len(store.shard_ids()) == 2 and len(store) == 12  # collected once, not once per rank
    lines = (run / "metrics.jsonl").read_text().splitlines()
    assert len([json.loads(x) for x in lines if "train/actor_loss" in x]) == 2  # logged once per iteration
    state = load_checkpoint(latest_checkpoint(run))[0]
    assert state.iteration == 2 and state.updates == 2
    assert (run / "policy" / "policy.json").is_file()
