"""Export a trajectory store as a Hugging Face ``datasets``-loadable folder.

The export is one flat table with a row per step, the screenshot embedded as PNG bytes in an
``image`` column shaped like ``datasets.Image`` (struct ``{bytes, path}``), split into
``data/train-NNNNN.parquet`` files, plus a ``README.md`` dataset card. ``datasets`` itself is not
needed to write it.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from digirl.core.errors import DataError
from digirl.data import schema as sc
from digirl.data.shard import fsync_path, image_path
from digirl.data.store import TrajectoryStore

__all__ = ["HF_COLUMNS", "export_hf"]

log = logging.getLogger(__name__)

_IMAGE_TYPE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])

#: (name, Arrow type, meaning) of every exported column, in order.
HF_COLUMNS: tuple[tuple[str, pa.DataType, str], ...] = (
    ("traj_id", pa.string(), "trajectory id"),
    ("step", pa.int32(), "step index within the trajectory"),
    ("instruction", pa.string(), "task instruction"),
    ("task_id", pa.string(), "task id"),
    ("family", pa.string(), "task family"),
    ("image", _IMAGE_TYPE, "screenshot before the action (PNG)"),
    ("width", pa.int32(), "screenshot width"),
    ("height", pa.int32(), "screenshot height"),
    ("action", pa.string(), "JSON action object (as in the store's steps.action)"),
    ("action_type", pa.string(), "action type"),
    ("action_text", pa.string(), "raw policy output"),
    ("reward", pa.float64(), "step reward"),
    ("terminated", pa.bool_(), "episode ended in a terminal state"),
    ("truncated", pa.bool_(), "episode cut by the horizon"),
    ("log_prob", pa.float64(), "behaviour log-probability (null if unknown)"),
    ("history", pa.string(), "JSON list of earlier actions"),
    ("elements", pa.string(), "JSON list of UI elements (null if unknown)"),
    ("info", pa.string(), "JSON info from env.step"),
    ("trajectory_reward", pa.float64(), "sum of the trajectory's rewards"),
    ("trajectory_length", pa.int32(), "steps in the trajectory"),
    ("success", pa.bool_(), "the trajectory succeeded"),
    ("env_failure", pa.bool_(), "the environment failed during the trajectory"),
)

_HF_DTYPES = {pa.string(): "string", pa.int32(): "int32", pa.float64(): "float64", pa.bool_(): "bool"}


def _hf_schema() -> pa.Schema:
    features: dict[str, Any] = {}
    for name, typ, _ in HF_COLUMNS:
        features[name] = {"_type": "Image"} if typ == _IMAGE_TYPE else {"dtype": _HF_DTYPES[typ], "_type": "Value"}
    # datasets reads column features (here: which struct is an Image) from this metadata key.
    meta = {b"huggingface": json.dumps({"info": {"features": features}}).encode()}
    return pa.schema([pa.field(n, t) for n, t, _ in HF_COLUMNS], metadata=meta)


def export_hf(
    store: TrajectoryStore,
    out_dir: str | os.PathLike[str],
    *,
    include_failures: bool = True,
    rows_per_file: int = 2000,
    shards: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Write ``store`` as a ``datasets`` folder at ``out_dir`` (which must not exist or be empty).

    The folder appears complete or not at all: it is written beside ``out_dir`` and renamed.
    Returns ``{"path", "files", "rows", "trajectories"}``.

    Raises:
        DataError: ``out_dir`` is not empty, or a shard or image of the store is unreadable.
    """
    if rows_per_file < 1:
        raise ValueError(f"rows_per_file must be >= 1, got {rows_per_file}")
    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise DataError(f"{out}: already exists and is not an empty folder; choose a new output path")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".tmp-export-{uuid.uuid4().hex[:12]}"
    n_rows = n_trajs = 0
    try:
        files = _ParquetFiles(tmp / "data", rows_per_file)
        for sid in shards if shards is not None else store.shard_ids():
            sdir = store.shard_path(sid)
            trajs = sc.read_table(sdir / sc.TRAJ_FILE, sc.TRAJ_COLUMNS).to_pylist()
            by_id = {t["traj_id"]: t for t in trajs}
            steps = sc.read_table(sdir / sc.STEPS_FILE, sc.STEP_COLUMNS).to_pylist()
            steps.sort(key=lambda r: (r["traj_id"], r["step"]))
            n_trajs += sum(1 for t in trajs if include_failures or not t["env_failure"])
            for i, r in enumerate(steps):
                t = by_id.get(r["traj_id"])
                if t is None:
                    raise DataError(f"{sdir / sc.STEPS_FILE}: row {i} names unknown trajectory {r['traj_id']!r}")
                if t["env_failure"] and not include_failures:
                    continue
                png = image_path(sdir, r["screenshot"], f"{sdir / sc.STEPS_FILE} row {i}").read_bytes()
                files.add(_hf_row(r, t, png))
                n_rows += 1
        files.close()
        (tmp / "README.md").write_text(_card(store, n_rows, n_trajs, include_failures), encoding="utf-8")
        if out.exists():
            out.rmdir()
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    log.info("exported %d steps of %d trajectories to %s", n_rows, n_trajs, out)
    return {"path": str(out), "files": len(files.paths), "rows": n_rows, "trajectories": n_trajs}


def _hf_row(step: dict[str, Any], traj: dict[str, Any], png: bytes) -> dict[str, Any]:
    """One exported row: a step's columns, its screenshot as an Image, and its trajectory's outcome."""
    return {
        **{k: step[k] for k in ("traj_id", "step", "instruction", "width", "height")},
        **{k: step[k] for k in ("action", "action_type", "action_text", "reward")},
        **{k: step[k] for k in ("terminated", "truncated", "log_prob", "history")},
        "elements": step["elements"],
        "info": step["info"],
        "task_id": traj["task_id"],
        "family": traj["family"],
        "image": {"bytes": png, "path": f"{step['traj_id']}-{step['step']}.png"},
        "trajectory_reward": traj["reward"],
        "trajectory_length": traj["length"],
        "success": traj["success"],
        "env_failure": traj["env_failure"],
    }


class _ParquetFiles:
    """Rows written as numbered ``train-NNNNN.parquet`` files of at most ``rows_per_file`` rows each."""

    def __init__(self, folder: Path, rows_per_file: int) -> None:
        folder.mkdir(parents=True)
        self.folder, self.rows_per_file = folder, rows_per_file
        self.schema = _hf_schema()
        self.paths: list[Path] = []
        self.rows: list[dict[str, Any]] = []

    def add(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        if len(self.rows) >= self.rows_per_file:
            self._flush()

    def close(self) -> None:
        if self.rows or not self.paths:
            self._flush()  # an empty store still exports one (empty) file so the schema is visible

    def _flush(self) -> None:
        path = self.folder / f"train-{len(self.paths):05d}.parquet"
        pq.write_table(pa.Table.from_pylist(self.rows, schema=self.schema), path, compression="zstd")
        fsync_path(path)
        self.paths.append(path)
        self.rows.clear()


def _card(store: TrajectoryStore, n_rows: int, n_trajs: int, include_failures: bool) -> str:
    s = store.summary()

    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{100 * x:.1f}%"

    cols = "\n".join(f"| `{n}` | {t} | {doc} |" for n, t, doc in HF_COLUMNS)
    fams = "\n".join(
        f"| {name or '(none)'} | {v['trajectories']} | {pct(v['success_rate'])} |" for name, v in s["families"].items()
    )
    failures = (
        "Env-failure trajectories are included (column `env_failure`)."
        if include_failures
        else "Env-failure trajectories are excluded."
    )
    version, schema_v = s["digirl_version"], s["schema_version"]
    info = json.dumps(s["info"], sort_keys=True)
    return f"""---
configs:
- config_name: default
  data_files:
  - split: train
    path: data/train-*.parquet
tags:
- digirl
- device-control
- gui-agent
---

# Device-control trajectories ({store.path.name})

Exported by digirl {version} (schema {schema_v}) from a trajectory store.
One row per step; rows of a trajectory are consecutive and ordered by `step`.
{failures}

- rows (steps): {n_rows}
- trajectories: {n_trajs}
- success rate of the whole dataset (excluding env failures): {pct(s["success_rate"])}
- dataset info: `{info}`

| family | trajectories | success rate |
|---|---|---|
{fams}

## Columns

| column | Arrow type | meaning |
|---|---|---|
{cols}

## Loading

```python
from datasets import load_dataset
ds = load_dataset("parquet", data_dir="PATH/data", split="train")  # or load_dataset("PATH")
ds[0]["image"]  # PIL image
```
"""
