"""Lazy browsing: trajectory rows from the tables only; one trajectory's screenshots on demand; selection."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from digirl.data.browse import DatasetIndex, select_episodes
from digirl.data.store import TrajectoryStore
from tests.data.trajfactory import build_traj


@pytest.fixture
def store(tmp_path: Path) -> TrajectoryStore:
    s = TrajectoryStore(tmp_path / "ds", durable=False)
    s.append([build_traj(3, seed=i, traj_id=f"a{i}", success=i % 2 == 0) for i in range(4)])
    s.append([build_traj(2, seed=10 + i, traj_id=f"b{i}", family="type", env_failure=i == 0) for i in range(3)])
    return s


def test_rows_come_from_the_trajectory_tables(store: TrajectoryStore) -> None:
    idx = DatasetIndex(store)
    assert [r.traj_id for r in idx.rows] == ["a0", "a1", "a2", "a3", "b0", "b1", "b2"]
    r = idx.row("a1")
    assert (r.shard, r.index, r.family, r.split, r.length, r.iteration) == ("000000", 1, "tap", "train", 3, 1)
    assert r.instruction == "Tap the tap 1" and r.outcome == "failure" and idx.row("b0").outcome == "env failure"
    with pytest.raises(KeyError, match="nope"):
        idx.row("nope")


def test_one_trajectory_loads_with_its_own_screenshots(store: TrajectoryStore) -> None:
    idx = DatasetIndex(store, cached_shards=1)
    full = {t.traj_id: t for t in store.load()}
    t = idx.trajectory("b1")
    ref = full["b1"]
    assert [s.action for s in t.steps] == [s.action for s in ref.steps]
    for a, b in zip(t.steps, ref.steps):
        assert np.array_equal(a.observation.screenshot, b.observation.screenshot)
    assert t.steps[0].observation.previous_screenshot is None
    assert np.array_equal(t.steps[1].observation.previous_screenshot, ref.steps[0].observation.screenshot)
    assert t.final_observation is not None and np.array_equal(t.final_observation.screenshot, ref.final_observation.screenshot)
    assert idx.trajectory("a0", load_images=False).steps[0].observation.screenshot.size == 0
    assert list(idx._cache) == ["000000"]  # one shard cached at a time


def test_select_episodes() -> None:
    from digirl.data.browse import TrajectoryRow

    rows = [TrajectoryRow(i, "000000", f"t{i}", "", "", "f", "", i == 3, i % 2 == 0, 0.0, 1, None, None) for i in range(6)]
    pick = lambda spec: [r.traj_id for r in select_episodes(rows, spec)]  # noqa: E731
    assert pick("1, t4,2:4") == ["t1", "t4", "t2", "t3"]
    assert pick("failures") == ["t1", "t5"] and pick("successes") == ["t0", "t2", "t4"]
    assert pick("0,0,all")[:2] == ["t0", "t1"] and len(pick("all")) == 6
    with pytest.raises(ValueError, match="7, zz"):
        select_episodes(rows, "7,zz")
