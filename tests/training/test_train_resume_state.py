"""digirl.training.resume: what a resumed run takes back from its folder (issue 43, finding 3)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from digirl.core.actions import Action
from digirl.core.types import Observation, Step, TaskSpec, Trajectory
from digirl.training.resume import FINAL_EVAL_FILE, final_eval_done, mark_final_eval, stored_iterations


def _traj(it: int | None, k: int, *, failure: bool = False) -> Trajectory:
    obs = Observation(screenshot=np.zeros((2, 2, 3), np.uint8), instruction="tap", step=0)
    meta = {} if it is None else {"iteration": it}
    return Trajectory(
        task=TaskSpec(instruction="tap"),
        steps=[Step(obs, Action.tap(0.5, 0.5), "tap", 1.0, terminated=True, truncated=False)],
        env_failure=failure,
        metadata=meta,
        traj_id=f"i{it}-{k}",
    )


def test_a_shard_stored_after_the_checkpoint_is_pending_not_replayed() -> None:
    # iterations 0 and 1 checkpointed; iteration 2's shard was written, then the run was killed
    online = [_traj(0, 0), _traj(0, 1, failure=True), _traj(1, 0), _traj(1, 1), _traj(2, 0), _traj(2, 1, failure=True)]
    replay, pending = stored_iterations(online, iteration=2)
    assert [t.traj_id for t in replay] == ["i0-0", "i1-0", "i1-1"]  # failures out, storage order
    assert {it: [t.traj_id for t in ts] for it, ts in pending.items()} == {2: ["i2-0", "i2-1"]}
    # what the loop then does with them: each trajectory enters the buffer once
    buffer = [*replay, *(t for t in pending[2] if not t.env_failure)]
    assert sorted(t.traj_id for t in buffer) == ["i0-0", "i1-0", "i1-1", "i2-0"]


def test_a_fresh_run_and_trajectories_without_an_iteration() -> None:
    assert stored_iterations([], 0) == ([], {})
    replay, pending = stored_iterations([_traj(None, 0), _traj(0, 0)], iteration=0)
    assert [t.traj_id for t in replay] == ["iNone-0"] and list(pending) == [0]


def test_final_eval_marker(tmp_path: Path) -> None:
    assert final_eval_done(tmp_path, 6) is None
    final = [{"split": "test", "success_rate": 0.5}]
    mark_final_eval(tmp_path, 6, final)
    assert final_eval_done(tmp_path, 6) == final
    assert final_eval_done(tmp_path, 8) is None  # the run was extended: evaluate at the new end
    saved = json.loads((tmp_path / FINAL_EVAL_FILE).read_text())
    assert (saved["iteration"], saved["final"]) == (6, final)
    (tmp_path / FINAL_EVAL_FILE).write_text("{")  # torn by hand: evaluate again
    assert final_eval_done(tmp_path, 6) is None


def test_marking_on_a_full_disk_leaves_no_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    def enospc(*_a: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    import digirl.data.store as store  # the final-eval marker is written by store.atomic_write_json

    monkeypatch.setattr(store.os, "replace", enospc)
    with pytest.raises(OSError, match="No space left"):
        mark_final_eval(tmp_path, 1, [])
    assert os.listdir(tmp_path) == []


def test_asynchronous_runs_leave_out_what_the_learner_dropped_as_stale() -> None:
    def versioned(it: int, k: int, version: int) -> Trajectory:
        t = _traj(it, k)
        t.policy_version = version
        return t

    # k = 1, warm-up 1: the learner consumes iterations 0, 1, 2, 3 at versions 0, 0, 1, 2
    online = [versioned(0, 0, 0), versioned(1, 0, 0), versioned(2, 0, 0), versioned(2, 1, 1), versioned(3, 0, 0)]
    replay, pending = stored_iterations(online, 3, updates=2, max_staleness=1, warmup_iterations=1)
    assert [t.traj_id for t in replay] == ["i0-0", "i1-0", "i2-0", "i2-1"]  # at most 1 update old: all kept
    assert list(pending) == [3]
    replay, pending = stored_iterations(online, 4, updates=3, max_staleness=1, warmup_iterations=1)
    assert [t.traj_id for t in replay] == ["i0-0", "i1-0", "i2-0", "i2-1"]  # i3-0: 2 updates old, dropped
    assert pending == {}
    replay, _ = stored_iterations(online, 4, updates=3, max_staleness=0, warmup_iterations=1)
    assert len(replay) == 5  # synchronous: nothing is dropped


def test_a_checkpoint_on_a_full_disk_leaves_no_temp_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    from digirl.policies.registry import build_policy
    from digirl.training import checkpoint as ck
    from digirl.training.config import PolicyConfig

    policy = build_policy(PolicyConfig(), seed=0)
    ck.save_checkpoint(tmp_path, ck.LoopState(iteration=1), policy, {})

    def full(*_a: object, **_k: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path / "checkpoints" / "x" / "train_state.pt"))

    monkeypatch.setattr(ck.torch, "save", full)
    with pytest.raises(OSError, match="No space left"):
        ck.save_checkpoint(tmp_path, ck.LoopState(iteration=2), policy, {})
    assert sorted(os.listdir(tmp_path / "checkpoints")) == ["LATEST", "iter-000001"]  # the last good one stays LATEST
    assert ck.latest_checkpoint(tmp_path) == tmp_path / "checkpoints" / "iter-000001"
