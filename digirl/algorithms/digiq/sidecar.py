"""Stage sidecars: what Digi-Q's stages compute about a dataset, stored beside it, never in it.

A :class:`Sidecar` is a folder (``algo.digiq.data``) with one sub-folder per stage. A stage holds
``stage.json`` (the options that produced it: reusing it with other options is an error, not a silent
mix) and part files written atomically (temporary name, fsync, rename): Parquet tables of rows keyed
by ``(traj_id, step, cand)`` and ``.npz`` arrays (float16 features, no pickle) with the same keys. A
stage killed at any moment keeps its complete parts; rerunning it computes only the missing keys.
The store's own shards are never touched. Without a folder everything lives in memory.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from digirl.core.errors import DataError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no cross-process lock
    fcntl = None  # type: ignore[assignment]

__all__ = ["Key", "Sidecar", "Stage"]

log = logging.getLogger(__name__)

#: (traj_id, step, cand); cand = -1 for a state-only record (φ(s)).
Key = tuple[str, int, int]
_TMP = ".tmp-"


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class Stage:
    """One stage's parts: keyed rows and keyed arrays (in a folder, or in memory when ``root`` is None)."""

    def __init__(self, root: Path | None, name: str) -> None:
        self.root = root
        self.name = name
        self._rows: list[dict[str, list[Any]]] = []
        self._arrays: dict[str, list[tuple[list[Key], np.ndarray]]] = {}
        self._meta: dict[str, Any] | None = None
        if root is not None:
            root.mkdir(parents=True, exist_ok=True)

    # ------------------------------------------------------------------ options
    def check_meta(self, meta: Mapping[str, Any]) -> None:
        """Record the options of this stage, or fail if it was produced with different ones."""
        want = json.loads(json.dumps(dict(meta), default=str))
        have = self.meta()
        if have is None:
            self._meta = want
            if self.root is not None:
                self._atomic(self.root / "stage.json", json.dumps(want, indent=2, sort_keys=True).encode())
            return
        if have != want:
            diff = sorted(k for k in set(have) | set(want) if have.get(k) != want.get(k))
            where = self.root if self.root is not None else f"in-memory stage {self.name}"
            raise DataError(
                f"{where}: produced with other options ({', '.join(f'{k}: {have.get(k)!r} -> {want.get(k)!r}' for k in diff)}); "
                "use another algo.digiq.data folder or delete this stage"
            )

    def meta(self) -> dict[str, Any] | None:
        if self._meta is None and self.root is not None and (self.root / "stage.json").is_file():
            path = self.root / "stage.json"
            try:
                self._meta = json.loads(path.read_text())
            except (OSError, ValueError) as e:
                raise DataError(f"{path}: unreadable stage options ({e})") from e
        return self._meta

    # ------------------------------------------------------------------ writing
    def _atomic(self, final: Path, data: bytes) -> None:
        assert self.root is not None
        tmp = self.root / f"{_TMP}{uuid.uuid4().hex}-{final.name}"
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, final)
        _fsync_dir(self.root)

    def write_rows(self, rows: Mapping[str, Sequence[Any]]) -> None:
        """Append one part of rows (columns ``traj_id``, ``step``, ``cand`` and any others)."""
        cols = {k: list(v) for k, v in rows.items()}
        n = {len(v) for v in cols.values()}
        if len(n) > 1 or not {"traj_id", "step", "cand"} <= set(cols):
            raise ValueError(f"rows need equal-length columns incl. traj_id, step, cand; got {sorted(cols)}")
        if not n or n == {0}:
            return
        if self.root is None:
            self._rows.append(cols)
            return
        import io

        import pyarrow as pa
        import pyarrow.parquet as pq

        buf = io.BytesIO()
        pq.write_table(pa.table(cols), buf)
        self._atomic(self.root / f"part-{uuid.uuid4().hex}.parquet", buf.getvalue())

    def write_arrays(self, kind: str, keys: Sequence[Key], x: np.ndarray) -> None:
        """Append one part of float16 rows ``x`` [len(keys), d] under ``kind`` (e.g. ``f`` or ``phi``)."""
        if len(keys) != len(x):
            raise ValueError(f"{len(keys)} keys for {len(x)} rows")
        if not len(keys):
            return
        x16 = np.asarray(x, dtype=np.float16)
        if self.root is None:
            self._arrays.setdefault(kind, []).append((list(keys), x16))
            return
        import io

        buf = io.BytesIO()
        np.savez(
            buf,
            traj_id=np.array([k[0] for k in keys], dtype=np.str_),
            step=np.array([k[1] for k in keys], dtype=np.int32),
            cand=np.array([k[2] for k in keys], dtype=np.int32),
            x=x16,
        )
        self._atomic(self.root / f"{kind}-{uuid.uuid4().hex}.npz", buf.getvalue())

    # ------------------------------------------------------------------ reading
    def rows(self) -> list[dict[str, Any]]:
        """Every row, de-duplicated by key (the first written wins)."""
        parts: list[dict[str, list[Any]]] = list(self._rows)
        if self.root is not None:
            import pyarrow as pa
            import pyarrow.parquet as pq

            for p in sorted(self.root.glob("part-*.parquet"), key=lambda q: q.stat().st_mtime_ns):
                try:
                    parts.append(pq.read_table(p).to_pydict())
                except (pa.ArrowException, OSError) as e:
                    raise DataError(f"{p}: corrupt or truncated stage file ({e}); delete it to recompute its rows") from e
        out: list[dict[str, Any]] = []
        seen: set[Key] = set()
        for cols in parts:
            names = list(cols)
            for i in range(len(cols["traj_id"])):
                r = {k: cols[k][i] for k in names}
                key = (str(r["traj_id"]), int(r["step"]), int(r["cand"]))
                if key not in seen:
                    seen.add(key)
                    out.append(r)
        return out

    def keys(self) -> set[Key]:
        return {(str(r["traj_id"]), int(r["step"]), int(r["cand"])) for r in self.rows()}

    def arrays(self, kind: str) -> tuple[dict[Key, int], np.ndarray]:
        """(key → row index, float16 matrix) of ``kind``, de-duplicated (first written wins)."""
        parts: list[tuple[list[Key], np.ndarray]] = list(self._arrays.get(kind, []))
        if self.root is not None:
            for p in sorted(self.root.glob(f"{kind}-*.npz"), key=lambda q: q.stat().st_mtime_ns):
                try:
                    with np.load(p, allow_pickle=False) as z:
                        keys = list(zip(z["traj_id"].tolist(), z["step"].tolist(), z["cand"].tolist()))
                        parts.append(([(str(a), int(b), int(c)) for a, b, c in keys], np.asarray(z["x"])))
                except (OSError, ValueError, KeyError) as e:
                    raise DataError(f"{p}: corrupt or truncated feature file ({e}); delete it to recompute its rows") from e
        index: dict[Key, int] = {}
        mats: list[np.ndarray] = []
        rows = 0
        for keys, x in parts:
            take: list[int] = []
            for i, k in enumerate(keys):
                if k not in index:
                    index[k] = rows + len(take)
                    take.append(i)
            if take:
                mats.append(x[take])
                rows += len(take)
        if not mats:
            return {}, np.zeros((0, 0), np.float16)
        dims = {m.shape[1] for m in mats}
        if len(dims) > 1:
            raise DataError(f"{self.root or self.name}: {kind} parts have different widths {sorted(dims)}")
        return index, np.concatenate(mats)

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Exclusive lock while computing this stage (two processes never compute the same parts)."""
        if self.root is None or fcntl is None:
            yield
            return
        fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            for p in self.root.glob(f"{_TMP}*"):  # left by a killed writer (writers hold this lock)
                if p.is_dir():
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    with contextlib.suppress(OSError):
                        p.unlink()
            yield
        finally:
            os.close(fd)


class Sidecar:
    """The stage folders of one dataset (``root``), or in-memory stages (``root=None``)."""

    def __init__(self, root: str | os.PathLike[str] | None) -> None:
        self.root = Path(root) if root is not None else None
        self._stages: dict[str, Stage] = {}

    def stage(self, name: str) -> Stage:
        if name not in self._stages:
            self._stages[name] = Stage(self.root / name if self.root is not None else None, name)
        return self._stages[name]

    def path(self, name: str) -> Path | None:
        return self.root / name if self.root is not None else None
