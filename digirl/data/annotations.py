"""What a learner computed about stored steps: values, Q-values, advantages, and whether it kept them.

An algorithm reports :class:`StepAnnotation` rows after each update; the training loop writes them
as one Parquet file per iteration, ``RUN/annotations/iter-NNNNNN.parquet`` (atomic: written to a
temporary name, then renamed), keyed by ``(traj_id, step)`` of the trajectory store. The viewer
reads them next to the trajectories. ``step = -1`` rows describe a whole trajectory (e.g. the
instruction-level value V_instruct(c) of DigiRL's curriculum).
"""

from __future__ import annotations

import json
import os
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from digirl.core.errors import DataError

__all__ = ["ANNOTATIONS_DIR", "StepAnnotation", "annotation_iterations", "read_annotations", "write_annotations"]

ANNOTATIONS_DIR = "annotations"
_FILE_RE = re.compile(r"^iter-(\d{6,})\.parquet$")

_SCHEMA = pa.schema(
    [
        pa.field("traj_id", pa.string(), nullable=False),
        pa.field("step", pa.int32(), nullable=False),
        pa.field("value", pa.float64()),
        pa.field("q", pa.float64()),
        pa.field("advantage", pa.float64()),
        pa.field("kept", pa.bool_()),
        pa.field("weight", pa.float64()),
        pa.field("extra", pa.string(), nullable=False),
    ]
)


@dataclass(frozen=True)
class StepAnnotation:
    """One step's numbers from one update (``None``: the algorithm does not compute that number).

    ``value`` is V(s) (DigiRL: probability of success), ``q`` is Q(s, a) of the taken action,
    ``advantage`` the advantage the actor filter used, ``kept`` whether the step was behaviour-cloned,
    ``weight`` its loss weight; ``extra`` holds algorithm-specific JSON (Digi-Q's candidates with
    their Q-values, DigiRL's curriculum decision).
    """

    traj_id: str
    step: int
    value: float | None = None
    q: float | None = None
    advantage: float | None = None
    kept: bool | None = None
    weight: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _path(root: Path, iteration: int) -> Path:
    return root / f"iter-{iteration:06d}.parquet"


def write_annotations(root: str | Path, iteration: int, rows: Sequence[StepAnnotation]) -> Path:
    """Write (or replace) iteration ``iteration``'s annotations under ``root`` atomically."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    cols: dict[str, list[Any]] = {f.name: [] for f in _SCHEMA}
    for r in rows:
        cols["traj_id"].append(r.traj_id)
        cols["step"].append(int(r.step))
        for k in ("value", "q", "advantage", "weight"):
            v = getattr(r, k)
            cols[k].append(None if v is None else float(v))
        cols["kept"].append(None if r.kept is None else bool(r.kept))
        cols["extra"].append(json.dumps(r.extra, separators=(",", ":"), default=float))
    table = pa.Table.from_pydict(cols, schema=_SCHEMA)
    final = _path(root, iteration)
    tmp = root / f".tmp-{uuid.uuid4().hex}.parquet"
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, final)
    finally:
        tmp.unlink(missing_ok=True)
    return final


def annotation_iterations(root: str | Path) -> list[int]:
    """Iterations that have annotations under ``root``, oldest first."""
    root = Path(root)
    if not root.is_dir():
        return []
    return sorted(int(m.group(1)) for p in root.iterdir() if (m := _FILE_RE.match(p.name)))


def read_annotations(root: str | Path, iteration: int | None = None) -> list[StepAnnotation]:
    """The annotations of ``iteration`` (default: the latest); empty when there are none."""
    its = annotation_iterations(root)
    if not its:
        return []
    it = its[-1] if iteration is None else iteration
    path = _path(Path(root), it)
    if not path.is_file():
        raise DataError(f"{path}: no annotations for iteration {it} (have {its})")
    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as e:
        raise DataError(f"{path}: corrupt or truncated Parquet file ({e})") from e
    missing = [f.name for f in _SCHEMA if f.name not in table.column_names]
    if missing:
        raise DataError(f"{path}: missing column(s) {', '.join(missing)}")
    out = []
    for i, r in enumerate(table.to_pylist()):
        try:
            extra = json.loads(r["extra"])
        except (TypeError, ValueError) as e:
            raise DataError(f"{path}: row {i}, column 'extra': invalid JSON ({e})") from e
        out.append(
            StepAnnotation(
                traj_id=str(r["traj_id"]),
                step=int(r["step"]),
                value=r["value"],
                q=r["q"],
                advantage=r["advantage"],
                kept=r["kept"],
                weight=r["weight"],
                extra=extra,
            )
        )
    return out
