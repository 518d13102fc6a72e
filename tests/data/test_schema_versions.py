"""Schema evolution: columns added in later versions round-trip, and older shards still read."""

from __future__ import annotations

import pyarrow.parquet as pq
from trajfactory import build_traj

from digirl.data import schema as sc
from digirl.data.store import TrajectoryStore


def test_policy_version_round_trips(tmp_path):
    store = TrajectoryStore(tmp_path / "ds")
    a, b = build_traj(seed=1), build_traj(seed=2)
    a.policy_version = 7
    store.append([a, b])
    got = {t.traj_id: t.policy_version for t in TrajectoryStore(tmp_path / "ds").load()}
    assert got == {a.traj_id: 7, b.traj_id: None}


def test_a_shard_written_before_policy_version_reads_as_unknown(tmp_path):
    store = TrajectoryStore(tmp_path / "ds")
    t = build_traj(seed=3)
    t.policy_version = 2
    store.append([t])
    path = store.shard_path(store.shard_ids()[0]) / sc.TRAJ_FILE
    old = pq.read_table(path).drop_columns(["policy_version"])  # what schema version 1 wrote
    pq.write_table(old, path)
    (loaded,) = TrajectoryStore(tmp_path / "ds").load()
    assert loaded.traj_id == t.traj_id and loaded.policy_version is None
    assert TrajectoryStore(tmp_path / "ds").check() == []
