"""TrajectoryStore: round trips, de-duplication, atomicity and validation."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from trajfactory import ALL_ACTIONS, build_traj

from digirl.core.actions import ActionType
from digirl.core.errors import DataError
from digirl.core.types import SCHEMA_VERSION, Observation, Trajectory
from digirl.data import shard as shard_mod
from digirl.data.store import TrajectoryStore


def _norm(d: dict[str, Any]) -> dict[str, Any]:
    """What a JSON round trip makes of a dict (tuples become lists, numpy scalars plain numbers)."""
    out: dict[str, Any] = json.loads(json.dumps(d, default=lambda o: o.item()))
    return out


def _assert_obs_equal(a: Observation, b: Observation) -> None:
    np.testing.assert_array_equal(a.screenshot, b.screenshot)
    assert (a.instruction, a.step, a.history, a.elements) == (b.instruction, b.step, b.history, b.elements)
    if a.previous_screenshot is None:
        assert b.previous_screenshot is None
    else:
        assert b.previous_screenshot is not None
        np.testing.assert_array_equal(a.previous_screenshot, b.previous_screenshot)


def _assert_traj_equal(a: Trajectory, b: Trajectory) -> None:
    assert (a.traj_id, a.task, a.env_failure, a.failure_reason, a.seed) == (
        b.traj_id,
        b.task,
        b.env_failure,
        b.failure_reason,
        b.seed,
    )
    assert _norm(a.metadata) == b.metadata
    assert len(a.steps) == len(b.steps)
    for sa, sb in zip(a.steps, b.steps):
        _assert_obs_equal(sa.observation, sb.observation)
        assert (sa.action, sa.action_text, sa.reward, sa.terminated, sa.truncated, sa.log_prob) == (
            sb.action,
            sb.action_text,
            sb.reward,
            sb.terminated,
            sb.truncated,
            sb.log_prob,
        )
        assert _norm(sa.info) == sb.info
    if a.final_observation is None:
        assert b.final_observation is None
    else:
        assert b.final_observation is not None
        _assert_obs_equal(a.final_observation, b.final_observation)


def test_round_trip_every_action_type_and_field(tmp_path: Path) -> None:
    trajs = [
        build_traj(len(ALL_ACTIONS), seed=0, actions=ALL_ACTIONS),
        build_traj(2, seed=1, success=False),
        build_traj(1, seed=2, env_failure=True, final=False),
        build_traj(0, seed=3, final=False),  # an episode that failed before the first step
    ]
    store = TrajectoryStore(tmp_path / "ds", info={"env_id": "digirl/toy-tap-v0"})
    assert store.append(trajs) == 4
    back = TrajectoryStore(tmp_path / "ds", create=False).load()
    assert [t.traj_id for t in back] == [t.traj_id for t in trajs]
    for a, b in zip(trajs, back):
        _assert_traj_equal(a, b)
    invalid = back[0].steps[ALL_ACTIONS.index(ALL_ACTIONS[6])].action
    assert invalid.type is ActionType.INVALID and invalid.text == "tap at the blue thing"
    assert invalid.error == "no coordinates"
    assert {s.action.type for s in back[0].steps} == set(ActionType)
    assert back[0].steps[1].log_prob is None and back[0].steps[2].log_prob == -0.5
    # previous_screenshot is rebuilt from the previous step, also for the final observation
    assert back[0].steps[0].observation.previous_screenshot is None
    np.testing.assert_array_equal(back[0].steps[3].observation.previous_screenshot, trajs[0].steps[2].observation.screenshot)
    assert back[0].final_observation is not None
    np.testing.assert_array_equal(back[0].final_observation.previous_screenshot, trajs[0].steps[-1].observation.screenshot)
    assert back[2].env_failure and back[2].failure_reason == "emulator crashed"
    assert store.info == {"env_id": "digirl/toy-tap-v0"} and store.schema_version == SCHEMA_VERSION


def test_filters_lazy_images_and_streaming(tmp_path: Path) -> None:
    store = TrajectoryStore(tmp_path / "ds")
    store.append([build_traj(2, seed=0), build_traj(2, seed=1, env_failure=True)])
    store.append([build_traj(3, seed=2)])
    assert store.shard_ids() == ["000000", "000001"]
    assert len(store) == 3
    assert [t.traj_id for t in store.load(include_failures=False)] == [t.traj_id for t in store.load() if not t.env_failure]
    lazy = store.load(load_images=False, shards=["000001"])
    assert len(lazy) == 1 and lazy[0].steps[0].observation.screenshot.shape == (0, 0, 3)
    assert lazy[0].steps[1].observation.previous_screenshot is None
    # iter_trajectories yields the same trajectories as load, shard by shard
    assert [t.traj_id for t in store.iter_trajectories()] == store.trajectory_ids()
    with pytest.raises(DataError, match="no shard"):
        store.load(shards=["000009"])
    # a frame-less trajectory cannot be written back
    with pytest.raises(ValueError, match="no pixels"):
        store.append([Trajectory(task=lazy[0].task, steps=lazy[0].steps, traj_id="copy")])


def test_identical_frames_share_one_png(tmp_path: Path) -> None:
    store = TrajectoryStore(tmp_path / "ds")
    t = build_traj(5, seed=4, repeat_frames=True)
    store.append([t])
    pngs = list((store.shard_path("000000") / "images").glob("*.png"))
    assert len(pngs) == 1  # 5 steps + final observation, one distinct frame
    (back,) = store.load()
    _assert_traj_equal(t, back)


def test_duplicates_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    store = TrajectoryStore(tmp_path / "ds")
    a, b = build_traj(1, seed=0, traj_id="a"), build_traj(1, seed=1, traj_id="b")
    with pytest.raises(ValueError, match="twice"):
        store.append([a, build_traj(1, seed=2, traj_id="a")])
    assert store.append([a]) == 1
    other = TrajectoryStore(tmp_path / "ds")  # a second handle (e.g. a resumed run) sees it too
    with pytest.raises(ValueError, match="already stored"):
        other.append([b, build_traj(1, seed=3, traj_id="a")])
    assert other.contains("a") and "a" in other and not other.contains("b")
    assert other.trajectory_ids() == ["a"] and other.shard_ids() == ["000000"]
    assert store.append([]) == 0
    with pytest.raises(ValueError, match="traj_id"):
        store.append([build_traj(1, traj_id="../evil")])
    bad_info = build_traj(1, seed=5, traj_id="c")
    bad_info.steps[0].info["obj"] = object()
    with pytest.raises(ValueError, match="trajectory c step 0 info"):
        store.append([bad_info])
    assert store.shard_ids() == ["000000"]
    assert not [p for p in (tmp_path / "ds" / "shards").iterdir() if p.name.startswith(".tmp")]


@pytest.mark.parametrize(("fail_in", "workers"), [("parquet", 1), ("parquet", 4), ("png", 4)])
def test_crash_mid_append_leaves_no_visible_shard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail_in: str, workers: int
) -> None:
    store = TrajectoryStore(tmp_path / "ds", io_workers=workers)
    store.append([build_traj(2, seed=0, traj_id="kept")])
    written: list[Path] = []
    real_png = shard_mod.write_png

    def spy_png(path: Path, *a: object, **k: object) -> None:
        if fail_in == "png" and path.name == "lost-3.png":
            raise OSError("disk full (simulated)")
        real_png(path, *a, **k)  # type: ignore[arg-type]
        written.append(path)

    def boom(path: Path, table: pa.Table) -> None:
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(shard_mod, "write_png", spy_png)
    if fail_in == "parquet":
        monkeypatch.setattr(shard_mod, "write_parquet", boom)
    with pytest.raises(OSError, match="disk full"):
        store.append([build_traj(5, seed=1, traj_id="lost")])
    assert written  # the crash happened after images were on disk
    assert store.shard_ids() == ["000000"] and store.trajectory_ids() == ["kept"]
    assert not [p for p in (tmp_path / "ds" / "shards").iterdir() if p.name.startswith(".tmp")]
    monkeypatch.undo()
    store.append([build_traj(5, seed=1, traj_id="lost")])  # the retry succeeds, same id
    assert TrajectoryStore(tmp_path / "ds").trajectory_ids() == ["kept", "lost"]


_WRITER = """
import sys, numpy as np
from digirl.core.actions import Action
from digirl.core.types import Observation, Step, TaskSpec, Trajectory
from digirl.data.store import TrajectoryStore
store = TrajectoryStore(sys.argv[1])
rng = np.random.default_rng(0)
task = TaskSpec("Tap it", task_id="t", family="tap")
k = 0
while True:
    batch = []
    for j in range(2):
        steps = [Step(Observation(rng.integers(0, 256, (96, 64, 3), dtype=np.uint8), "Tap it", i),
                      Action.tap(0.5, 0.5), "tap", 0.0, False, False) for i in range(8)]
        batch.append(Trajectory(task, steps, traj_id=f"{sys.argv[2]}{k}-{j}"))
    store.append(batch)
    print(k, flush=True)
    k += 1
"""


def test_sigkill_while_appending_keeps_only_complete_shards(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = tmp_path / "ds"
    TrajectoryStore(root)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    saw_tmp = False
    for run in range(3):
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(root), f"r{run}-"], stdout=subprocess.PIPE, env=env)
        assert proc.stdout is not None
        assert proc.stdout.readline()  # at least one append of this writer is committed
        deadline = time.monotonic() + 10
        # Kill while a temp shard exists, i.e. in the middle of an append, when we can catch one.
        while time.monotonic() < deadline:
            if any(p.name.startswith(".tmp") for p in (root / "shards").iterdir()):
                break
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        saw_tmp = saw_tmp or any(p.name.startswith(".tmp") for p in (root / "shards").iterdir())
        with caplog.at_level(logging.WARNING, logger="digirl.data.store"):
            store = TrajectoryStore(root)  # opening removes the leftover temp shard
        assert not [p for p in (root / "shards").iterdir() if p.name.startswith(".tmp")]
        ids = store.trajectory_ids()
        assert len(ids) == len(set(ids)) == 2 * len(store.shard_ids())
        assert store.check() == []
        assert all(len(t.steps) == 8 for t in store.load(load_images=False))
        # a restarted writer would resume with fresh ids; emulate its de-duplication on one id
        assert store.contains(ids[0])
    assert saw_tmp  # at least one kill landed mid-append (the poll above makes this near certain)
    assert "incomplete shard" in caplog.text


def _truncate(path: Path, keep: float = 0.5) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


def test_corrupt_parquet_is_named_and_skippable(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = TrajectoryStore(tmp_path / "ds")
    store.append([build_traj(2, seed=0)])
    store.append([build_traj(2, seed=1)])
    bad = store.shard_path("000000") / "steps.parquet"
    _truncate(bad)
    before = {p: p.read_bytes() for p in (tmp_path / "ds").rglob("*") if p.is_file()}
    with pytest.raises(DataError, match=r"steps\.parquet: corrupt or truncated Parquet"):
        store.load()
    with caplog.at_level(logging.WARNING):
        got = store.load(on_error="skip")
    assert [t.seed for t in got] == [None]  # shard 1 (seed 1 -> None) survives
    assert "skipping shard 000000" in caplog.text
    problems = store.check()
    assert len(problems) == 1 and str(bad) in problems[0]
    after = {p: p.read_bytes() for p in (tmp_path / "ds").rglob("*") if p.is_file()}
    assert before == after  # reading and checking modify nothing


def test_truncated_trajectory_table_is_named(tmp_path: Path) -> None:
    store = TrajectoryStore(tmp_path / "ds")
    store.append([build_traj(2, seed=0)])
    bad = store.shard_path("000000") / "trajectories.parquet"
    _truncate(bad, 0.9)
    with pytest.raises(DataError, match=r"trajectories\.parquet"):
        len(TrajectoryStore(tmp_path / "ds"))


def test_wrong_column_type_and_missing_column(tmp_path: Path) -> None:
    store = TrajectoryStore(tmp_path / "ds")
    store.append([build_traj(2, seed=0)])
    path = store.shard_path("000000") / "steps.parquet"
    table = pq.read_table(path)
    i = table.schema.get_field_index("reward")
    pq.write_table(table.set_column(i, "reward", pa.array(["x"] * table.num_rows)), path)
    with pytest.raises(DataError, match=r"steps\.parquet: column 'reward' has type string"):
        store.load()
    pq.write_table(table.drop_columns(["action"]), path)
    with pytest.raises(DataError, match=r"steps\.parquet: missing column\(s\) action"):
        store.load()


def test_missing_image_is_named(tmp_path: Path) -> None:
    store = TrajectoryStore(tmp_path / "ds")
    store.append([build_traj(2, seed=0, traj_id="t")])
    img = store.shard_path("000000") / "images" / "t-1.png"
    img.unlink()
    with pytest.raises(DataError, match=r"t-1\.png: image file missing"):
        store.load()
    assert len(store.load(load_images=False)) == 1
    assert any("t-1.png: image file missing" in p for p in store.check())
    img.write_bytes(b"\x89PNG not really")
    with pytest.raises(DataError, match=r"t-1\.png: unreadable image"):
        store.load()


def test_meta_validation(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"meta\.json: missing"):
        TrajectoryStore(tmp_path / "none", create=False)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(DataError, match="not empty"):
        TrajectoryStore(foreign)
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"]
    root = tmp_path / "ds"
    TrajectoryStore(root)
    meta = json.loads((root / "meta.json").read_text())
    meta["schema_version"] = SCHEMA_VERSION + 1
    (root / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(DataError, match=rf"newer digirl \(schema {SCHEMA_VERSION + 1} > {SCHEMA_VERSION}\); upgrade"):
        TrajectoryStore(root)
    (root / "meta.json").write_text("{not json")
    with pytest.raises(DataError, match=r"meta\.json: unreadable or not JSON"):
        TrajectoryStore(root)


def test_summary(tmp_path: Path) -> None:
    store = TrajectoryStore(tmp_path / "ds")
    store.append(
        [
            build_traj(2, seed=0, family="tap"),
            build_traj(4, seed=1, family="tap", success=False),
            build_traj(3, seed=2, family="type"),
            build_traj(1, seed=3, family="type", env_failure=True),
        ]
    )
    s = store.summary()
    assert (s["trajectories"], s["steps"], s["env_failures"], s["successes"]) == (4, 10, 1, 2)
    assert s["success_rate"] == pytest.approx(2 / 3) and s["mean_length"] == pytest.approx(3.0)
    assert s["families"]["tap"] == {"trajectories": 2, "env_failures": 0, "successes": 1, "success_rate": 0.5}
    assert s["families"]["type"]["success_rate"] == 1.0
    assert sum(v["trajectories"] for v in s["tasks"].values()) == 4
    assert s["size_bytes"] > 0 and s["schema_version"] == SCHEMA_VERSION and s["shards"] == 1
    empty = TrajectoryStore(tmp_path / "empty").summary()
    assert empty["trajectories"] == 0 and empty["success_rate"] is None
