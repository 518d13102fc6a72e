"""export_hf writes a flat per-step table that pyarrow and `datasets` read back."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from PIL import Image
from trajfactory import build_traj

from digirl.data.hf import HF_COLUMNS, export_hf
from digirl.data.store import TrajectoryStore


@pytest.fixture
def store(tmp_path: Path) -> TrajectoryStore:
    s = TrajectoryStore(tmp_path / "ds")
    s.append([build_traj(3, seed=0), build_traj(2, seed=1, env_failure=True)])
    s.append([build_traj(4, seed=2, repeat_frames=True)])
    return s


def test_export_is_flat_and_lossless(store: TrajectoryStore, tmp_path: Path) -> None:
    res = export_hf(store, tmp_path / "hf", rows_per_file=4)
    assert res == {"path": str(tmp_path / "hf"), "files": 3, "rows": 9, "trajectories": 3}
    files = sorted((tmp_path / "hf" / "data").glob("train-*.parquet"))
    assert [f.name for f in files] == ["train-00000.parquet", "train-00001.parquet", "train-00002.parquet"]
    table = pq.read_table(tmp_path / "hf" / "data")
    assert table.column_names == [c[0] for c in HF_COLUMNS] and table.num_rows == 9
    rows = table.to_pylist()
    trajs = {t.traj_id: t for t in store.load()}
    for r in rows:
        want = trajs[r["traj_id"]].steps[r["step"]].observation.screenshot
        got = np.array(Image.open(io.BytesIO(r["image"]["bytes"])).convert("RGB"))
        np.testing.assert_array_equal(got, want)
    assert sum(r["env_failure"] for r in rows) == 2
    card = (tmp_path / "hf" / "README.md").read_text()
    assert card.startswith("---\nconfigs:") and "data/train-*.parquet" in card
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-export")]


def test_datasets_loads_the_export(store: TrajectoryStore, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    export_hf(store, tmp_path / "hf", include_failures=False)
    ds = datasets.load_dataset(str(tmp_path / "hf"), split="train", cache_dir=str(tmp_path / "cache"))
    assert len(ds) == 7
    assert isinstance(ds.features["image"], datasets.Image)
    img = ds[0]["image"]
    assert img.size == (16, 8)
    first = store.load()[0]
    np.testing.assert_array_equal(np.array(img.convert("RGB")), first.steps[0].observation.screenshot)
