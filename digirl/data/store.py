"""An append-only, crash-safe on-disk store of :class:`~digirl.core.types.Trajectory` records.

Layout (details in ``docs/data-format.md``)::

    DATASET/
      meta.json                      format, schema_version, created, digirl_version, info
      shards/000000/trajectories.parquet   one row per trajectory
      shards/000000/steps.parquet          one row per step
      shards/000000/images/*.png           screenshots (lossless), paths relative to the shard

Each :meth:`TrajectoryStore.append` writes one shard into ``shards/.tmp-*``, syncs it, and makes it
visible with a single ``os.rename``: readers see either the whole shard or nothing, whatever
moment a writer is killed. Existing shards are never rewritten.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import json
import logging
import os
import re
import shutil
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from digirl.core.errors import DataError, StorageError
from digirl.core.types import SCHEMA_VERSION, Trajectory
from digirl.data import schema as sc
from digirl.data import shard as sh

if TYPE_CHECKING:
    from typing_extensions import Unpack

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no cross-process lock
    fcntl = None  # type: ignore[assignment]

__all__ = ["OnError", "ReadOptions", "TrajectoryStore", "open_input_dataset"]

log = logging.getLogger(__name__)

META_FILE = "meta.json"
SHARDS_DIR = "shards"
LOCK_FILE = ".lock"
TMP_PREFIX = ".tmp-"
_SHARD_RE = re.compile(r"^\d{6,}$")
#: errno values of a file system that cannot ``flock`` a folder (then ``.lock`` is used).
_NO_DIR_FLOCK = {errno.EBADF, errno.EINVAL, errno.ENOLCK, errno.EOPNOTSUPP, errno.EISDIR}

OnError = Literal["raise", "skip"]


class ReadOptions(TypedDict, total=False):
    """Keywords of :meth:`TrajectoryStore.iter_trajectories`, which :meth:`TrajectoryStore.load` passes on."""

    include_failures: bool
    load_images: bool
    shards: Iterable[str] | None
    on_error: OnError


def atomic_write_json(path: Path, obj: Any) -> None:
    """Write ``obj`` as JSON to ``path`` all at once (a temp file, fsync, rename): a kill leaves the old file or the new."""
    tmp = path.with_name(f"{TMP_PREFIX}{uuid.uuid4().hex}-{path.name}")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(obj, f, indent=2, sort_keys=True, default=str)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    sh.fsync_path(path.parent, directory=True)


def _missing_parents(path: Path) -> list[Path]:
    """``path`` and its ancestors that do not exist yet, nearest the root last."""
    out = []
    for p in (path, *path.parents):
        if os.path.lexists(p):
            break
        out.append(p)
    return out


def _instruction(task_json: str) -> str:
    try:
        return str(json.loads(task_json).get("instruction", ""))
    except (ValueError, AttributeError):
        return ""


class TrajectoryStore:
    """A dataset folder of trajectories, appended one shard at a time.

    Args:
        path: the dataset folder.
        create: create an empty dataset if ``path`` does not hold one (an existing non-empty
            folder without ``meta.json`` is never taken over).
        info: free-form JSON metadata (env id, action codec, ...) written into ``meta.json``
            when the dataset is created.
        durable: ``fsync`` files and folders before a shard becomes visible (survives power loss,
            not only process crashes). Turn off only for throwaway data.
        png_compress_level: zlib level for screenshots (0-9); 1 is fast and still ~30x smaller
            than raw pixels on UI screens.
        io_workers: threads that encode screenshots during :meth:`append` (default
            ``min(4, cpu_count)``).

    Raises:
        DataError: the folder is not a dataset, ``meta.json`` is corrupt, or the dataset was
            written by a newer schema.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        create: bool = True,
        info: Mapping[str, Any] | None = None,
        durable: bool = True,
        png_compress_level: int = 1,
        io_workers: int | None = None,
    ) -> None:
        if not 0 <= png_compress_level <= 9:
            raise ValueError(f"png_compress_level must be in 0..9, got {png_compress_level}")
        self.path = Path(path)
        self.durable = durable
        self.png_compress_level = png_compress_level
        self.io_workers = io_workers if io_workers is not None else min(4, os.cpu_count() or 1)
        # shard id -> (file identity, traj ids); shards are immutable, the identity guards against
        # a shard deleted by hand and re-created by another process.
        self._ids: dict[str, tuple[tuple[int, int], tuple[str, ...]]] = {}
        self.meta = self._open(create, dict(info or {}))
        self._remove_temp_dirs(blocking=False)

    # ------------------------------------------------------------------ opening
    def _open(self, create: bool, info: dict[str, Any]) -> dict[str, Any]:
        root = self.path
        meta_path = root / META_FILE
        if root.exists() and not root.is_dir():
            raise DataError(f"{root}: not a directory, cannot hold a dataset")
        if not meta_path.exists():
            if not create:
                raise DataError(f"{meta_path}: missing; {root} is not a digirl dataset")
            shards = root / SHARDS_DIR
            foreign = root.is_dir() and any(
                p.name not in (LOCK_FILE, SHARDS_DIR) and not p.name.startswith(TMP_PREFIX) for p in root.iterdir()
            )
            if foreign or (shards.is_dir() and any(shards.iterdir())):
                raise DataError(f"{meta_path}: missing, and {root} is not empty; refusing to create a dataset there")
            if os.path.lexists(shards) and not shards.is_dir():
                raise DataError(f"{shards}: not a directory, cannot hold the dataset's shards")
            self._create(info)
        meta = self._read_meta(meta_path)
        shards = root / SHARDS_DIR
        if os.path.lexists(shards) and not shards.is_dir():  # found now, not after a collection's work
            raise DataError(f"{shards}: not a directory, cannot hold the dataset's shards")
        return meta

    def _create(self, info: dict[str, Any]) -> None:
        """Make the folder, ``shards/`` and ``meta.json``; on failure remove what this call made."""
        root, meta_path, shards = self.path, self.path / META_FILE, self.path / SHARDS_DIR
        info_json = json.loads(sc.to_json(info, "info"))  # bad info fails before the disk is touched
        made = _missing_parents(root)
        made_shards = False
        try:
            root.mkdir(parents=True, exist_ok=True)
            with self._lock():
                if not meta_path.exists():  # another process may have created it meanwhile
                    from digirl import __version__

                    made_shards = not shards.exists()
                    shards.mkdir(exist_ok=True)
                    meta = {
                        "format": sc.FORMAT_NAME,
                        "schema_version": SCHEMA_VERSION,
                        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                        "digirl_version": __version__,
                        "info": info_json,
                    }
                    atomic_write_json(meta_path, meta)
                    log.info("created dataset %s", root)
        except OSError as e:
            if not meta_path.exists():
                with contextlib.suppress(OSError):
                    if made_shards:
                        shards.rmdir()
                    if root in made:  # a fallback lock file in a folder this call made
                        (root / LOCK_FILE).unlink(missing_ok=True)
                for p in made:  # the folders this call created, deepest first; each only if still empty
                    with contextlib.suppress(OSError):
                        p.rmdir()
            if isinstance(e, StorageError):
                raise
            raise StorageError.of(e, root, "create the dataset") from e

    @staticmethod
    def _read_meta(meta_path: Path) -> dict[str, Any]:
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise DataError(f"{meta_path}: unreadable or not JSON ({e})") from e
        if not isinstance(meta, dict) or meta.get("format") != sc.FORMAT_NAME:
            raise DataError(f"{meta_path}: not a digirl dataset (format is not {sc.FORMAT_NAME!r})")
        version = meta.get("schema_version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise DataError(f"{meta_path}: schema_version {version!r} is not a positive integer")
        if version > SCHEMA_VERSION:
            raise DataError(
                f"{meta_path}: dataset written by a newer digirl (schema {version} > {SCHEMA_VERSION}); upgrade digirl"
            )
        return meta

    @property
    def schema_version(self) -> int:
        return int(self.meta["schema_version"])

    @property
    def info(self) -> dict[str, Any]:
        """The free-form ``info`` object of ``meta.json``."""
        return dict(self.meta.get("info") or {})

    def __repr__(self) -> str:
        return f"TrajectoryStore({str(self.path)!r})"

    # ------------------------------------------------------------------ locking / temp dirs
    @contextlib.contextmanager
    def _lock(self, blocking: bool = True) -> Iterator[bool]:
        """Exclusive cross-process lock on the dataset; yields whether it was acquired.

        The lock is a ``flock`` on the dataset folder itself, so no file is left behind, and a
        read-only dataset can be locked too. Where the file system refuses ``flock`` on a folder
        (NFS emulates it with byte-range locks, which need a file open for writing), the lock is
        ``DATASET/.lock`` instead, as before.
        """
        if fcntl is None:
            yield True
            return
        fd, acquired = self._acquire(fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB), blocking)
        try:
            yield acquired
        finally:
            if fd >= 0:
                os.close(fd)  # closing releases the lock

    def _acquire(self, flags: int, blocking: bool) -> tuple[int, bool]:
        """``(fd, acquired)`` for :meth:`_lock`; ``fd`` is -1 when nothing is held open."""
        fd = -1
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            fcntl.flock(fd, flags)
            return fd, True
        except BlockingIOError:
            return fd, False
        except OSError as e:
            if fd >= 0:
                os.close(fd)
            if e.errno not in _NO_DIR_FLOCK:
                if not blocking:
                    return -1, False
                raise StorageError.of(e, self.path, "lock the dataset") from e
        try:  # the file system cannot lock a folder: a lock file instead
            fd = os.open(self.path / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            if blocking:
                raise StorageError.of(e, self.path / LOCK_FILE, "lock the dataset") from e
            return -1, False  # read-only dataset: nothing to clean up
        try:
            fcntl.flock(fd, flags)
        except BlockingIOError:
            return fd, False
        return fd, True

    def _temp_dirs(self) -> list[Path]:
        shards = self.path / SHARDS_DIR
        if not shards.is_dir():
            return []
        return sorted(p for p in shards.iterdir() if p.name.startswith(TMP_PREFIX))

    def _remove_temp_dirs(self, blocking: bool) -> list[Path]:
        removed: list[Path] = []
        if not self._temp_dirs():
            return removed
        with self._lock(blocking) as locked:
            if not locked:  # a writer is active; its temp dir is not a leftover
                return removed
            for p in self._temp_dirs():
                log.warning("removing an incomplete shard left by an interrupted append: %s", p)
                try:
                    if p.is_dir():
                        shutil.rmtree(p)
                    else:
                        p.unlink()
                    removed.append(p)
                except OSError as e:
                    log.warning("could not remove %s: %s", p, e)
        return removed

    def repair(self) -> list[Path]:
        """Remove temp folders left by interrupted appends (waits for active writers). Returns them."""
        return self._remove_temp_dirs(blocking=True)

    # ------------------------------------------------------------------ index
    def shard_ids(self) -> list[str]:
        """Ids of the complete shards, oldest first."""
        d = self.path / SHARDS_DIR
        if not d.is_dir():
            return []
        return sorted((p.name for p in d.iterdir() if _SHARD_RE.match(p.name) and p.is_dir()), key=int)

    def shard_path(self, shard: str) -> Path:
        """The folder of a shard (``PATH/shards/NNNNNN``); image paths in its tables are relative to it."""
        return self.path / SHARDS_DIR / shard

    def _shard_ids_of(self, shard: str) -> tuple[str, ...]:
        path = self.shard_path(shard) / sc.TRAJ_FILE
        try:
            st = path.stat()
            ident = (st.st_ino, st.st_mtime_ns)
        except OSError:
            ident = (-1, -1)  # read_table reports the missing file
        cached = self._ids.get(shard)
        if cached is None or cached[0] != ident:
            table = sc.read_table(path, sc.TRAJ_COLUMNS, ["traj_id"])
            cached = (ident, tuple(str(v) for v in table.column("traj_id").to_pylist()))
            self._ids[shard] = cached
        return cached[1]

    def trajectory_ids(self) -> list[str]:
        """Every stored traj_id, in storage order (reads one column per shard; no images)."""
        return [i for s in self.shard_ids() for i in self._shard_ids_of(s)]

    def __len__(self) -> int:
        return sum(len(self._shard_ids_of(s)) for s in self.shard_ids())

    def contains(self, traj_id: str) -> bool:
        """Whether a trajectory with this id is stored (for de-duplication on resume)."""
        return any(traj_id in self._shard_ids_of(s) for s in self.shard_ids())

    def __contains__(self, traj_id: object) -> bool:
        return isinstance(traj_id, str) and self.contains(traj_id)

    # ------------------------------------------------------------------ writing
    def append(self, trajectories: Sequence[Trajectory]) -> int:
        """Write ``trajectories`` as one new shard, atomically. Returns how many were written.

        Raises:
            ValueError: a traj_id repeats within the batch or is already stored, a traj_id is not
                a safe file-name fragment, or a field cannot be stored. Nothing is written then.
            TypeError: an element is not a :class:`Trajectory`.
        """
        trajs = list(trajectories)
        if not trajs:
            return 0
        seen: set[str] = set()
        for t in trajs:
            if not isinstance(t, Trajectory):
                raise TypeError(f"append() takes Trajectory objects, got {type(t).__name__}")
            sc.check_traj_id(t.traj_id)
            if t.traj_id in seen:
                raise ValueError(f"traj_id {t.traj_id!r} appears twice in one append")
            seen.add(t.traj_id)
        images, traj_rows, step_rows = sh.plan_shard(trajs)
        # Build tables before touching the disk: bad data fails here and leaves nothing behind.
        traj_table = sc.rows_to_table(traj_rows, sc.TRAJ_SCHEMA, "trajectories")
        step_table = sc.rows_to_table(step_rows, sc.STEP_SCHEMA, "steps")

        with self._lock():
            stored = {i for s in self.shard_ids() for i in self._shard_ids_of(s)}
            dups = sorted(seen & stored)
            if dups:
                raise ValueError(f"{len(dups)} traj_id(s) already stored in {self.path}, e.g. {dups[0]!r}; nothing written")
            existing = self.shard_ids()
            shard = f"{(int(existing[-1]) + 1) if existing else 0:06d}"
            shards_dir = self.path / SHARDS_DIR
            if os.path.lexists(shards_dir) and not shards_dir.is_dir():
                raise DataError(f"{shards_dir}: not a directory, cannot hold the dataset's shards; nothing written")
            tmp = shards_dir / f"{TMP_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:12]}"
            try:
                shards_dir.mkdir(exist_ok=True)
                sh.write_shard(
                    tmp,
                    images,
                    traj_table,
                    step_table,
                    compress_level=self.png_compress_level,
                    durable=self.durable,
                    workers=self.io_workers,
                )
                os.rename(tmp, shards_dir / shard)  # the commit point
            except BaseException as e:
                shutil.rmtree(tmp, ignore_errors=True)
                if isinstance(e, OSError) and not isinstance(e, StorageError):
                    raise StorageError.of(
                        e, shards_dir / shard, f"write shard {shard} ({len(trajs)} trajector{'y' if len(trajs) == 1 else 'ies'})"
                    ) from e
                raise
            if self.durable:
                sh.fsync_path(shards_dir, directory=True)
        log.debug("appended shard %s (%d trajectories, %d steps)", shard, len(trajs), len(step_rows))
        return len(trajs)

    # ------------------------------------------------------------------ reading
    def _select(self, shards: Iterable[str] | None) -> list[str]:
        have = self.shard_ids()
        if shards is None:
            return have
        want = [str(s) for s in shards]
        unknown = [s for s in want if s not in have]
        if unknown:
            raise DataError(f"{self.path / SHARDS_DIR}: no shard(s) {', '.join(unknown)}")
        return want

    def iter_trajectories(
        self,
        *,
        include_failures: bool = True,
        load_images: bool = True,
        shards: Iterable[str] | None = None,
        on_error: OnError = "raise",
    ) -> Iterator[Trajectory]:
        """Yield trajectories shard by shard (one shard in memory at a time).

        With ``load_images=False`` screenshots are empty ``(0, 0, 3)`` arrays and
        ``previous_screenshot`` is ``None``. ``on_error="skip"`` logs and skips an unreadable shard.
        """
        if on_error not in ("raise", "skip"):
            raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
        for sid in self._select(shards):
            try:
                trajs = sh.read_shard(self.shard_path(sid), load_images=load_images, include_failures=include_failures)
            except DataError as e:
                if on_error == "skip":
                    log.warning("skipping shard %s: %s", sid, e)
                    continue
                raise
            yield from trajs

    def load(self, **options: Unpack[ReadOptions]) -> list[Trajectory]:
        """All (selected) trajectories in storage order; ``options`` as :meth:`iter_trajectories` takes them."""
        return list(self.iter_trajectories(**options))

    # ------------------------------------------------------------------ checking / summary
    def check(self) -> list[str]:
        """Validate every shard, row and image. Returns ``"FILE: problem"`` lines (empty if sound)."""
        problems: list[str] = []
        owner: dict[str, str] = {}
        for sid in self.shard_ids():
            sdir = self.shard_path(sid)
            try:
                sh.read_shard(sdir, load_images=False, include_failures=True)
                ids = self._shard_ids_of(sid)
            except DataError as e:
                problems.append(str(e))
                continue
            for tid in ids:
                if tid in owner:
                    problems.append(f"{sdir / sc.TRAJ_FILE}: traj_id {tid!r} is also stored in shard {owner[tid]}")
                owner.setdefault(tid, sid)
            problems += sh.check_shard_images(sdir)
        return problems

    def quick_check(self) -> dict[str, list[str]]:
        """What :meth:`check` would find that shows without decoding rows or images: unreadable or
        truncated tables, a step count that disagrees with the trajectories' lengths, a traj_id
        stored twice. Returns ``{shard id: ["FILE: problem", ...]}`` for the shards with problems
        (a duplicate is reported on the later shard); empty when none is found."""
        problems: dict[str, list[str]] = {}
        owner: dict[str, str] = {}
        for sid in self.shard_ids():
            sdir = self.shard_path(sid)
            try:
                lengths = sc.read_table(sdir / sc.TRAJ_FILE, sc.TRAJ_COLUMNS, ["length"]).column("length").to_pylist()
                ids = self._shard_ids_of(sid)
                steps = sc.read_table(sdir / sc.STEPS_FILE, sc.STEP_COLUMNS, ["traj_id"]).num_rows
            except DataError as e:
                problems.setdefault(sid, []).append(str(e))
                continue
            if steps != sum(int(n) for n in lengths):
                problems.setdefault(sid, []).append(
                    f"{sdir / sc.STEPS_FILE}: {steps} step rows, but the trajectories' lengths add up to {sum(lengths)}"
                )
            if len(set(ids)) != len(ids):
                problems.setdefault(sid, []).append(f"{sdir / sc.TRAJ_FILE}: duplicate traj_id values")
            for tid in dict.fromkeys(ids):
                if tid in owner:
                    problems.setdefault(sid, []).append(
                        f"{sdir / sc.TRAJ_FILE}: traj_id {tid!r} is also stored in shard {owner[tid]}"
                    )
                owner.setdefault(tid, sid)
        return problems

    def summary(self, *, shards: Iterable[str] | None = None) -> dict[str, Any]:
        """Counts and rates from the trajectory tables only (fast; no steps, no images), over every
        shard or those named in ``shards``."""
        cols = ["traj_id", "task", "task_id", "family", "env_failure", "reward", "length", "success"]
        rows: list[dict[str, Any]] = []
        selected = self._select(shards)
        for sid in selected:
            rows += sc.read_table(self.shard_path(sid) / sc.TRAJ_FILE, sc.TRAJ_COLUMNS, cols).to_pylist()
        ok = [r for r in rows if not r["env_failure"]]

        def group(key: str) -> dict[str, dict[str, Any]]:
            g: dict[str, dict[str, Any]] = {}
            for r in rows:
                k = r[key] if key != "task_id" else (r["task_id"] or _instruction(r["task"]))
                e = g.setdefault(k, {"trajectories": 0, "env_failures": 0, "successes": 0})
                e["trajectories"] += 1
                e["env_failures"] += int(bool(r["env_failure"]))
                e["successes"] += int(bool(r["success"]))
            for e in g.values():
                n = e["trajectories"] - e["env_failures"]
                e["success_rate"] = e["successes"] / n if n else None
            return dict(sorted(g.items(), key=lambda kv: (-kv[1]["trajectories"], kv[0])))

        return {
            "path": str(self.path),
            "schema_version": self.schema_version,
            "digirl_version": self.meta.get("digirl_version"),
            "created": self.meta.get("created"),
            "info": self.info,
            "shards": len(selected),
            "trajectories": len(rows),
            "steps": sum(int(r["length"]) for r in rows),
            "env_failures": len(rows) - len(ok),
            "successes": sum(bool(r["success"]) for r in ok),
            "success_rate": (sum(bool(r["success"]) for r in ok) / len(ok)) if ok else None,
            "mean_length": (sum(int(r["length"]) for r in ok) / len(ok)) if ok else None,
            "mean_reward": (sum(float(r["reward"]) for r in ok) / len(ok)) if ok else None,
            "families": group("family"),
            "tasks": group("task_id"),
            "size_bytes": self.size_bytes(),
        }

    def size_bytes(self) -> int:
        """Bytes of every file under the dataset folder."""
        return sum(p.stat().st_size for p in self.path.rglob("*") if p.is_file())


def open_input_dataset(path: str | os.PathLike[str], key: str) -> TrajectoryStore:
    """The dataset a command reads (``key`` names the option that gave ``path``), checked before the
    command creates anything: it exists, its tables read (:meth:`TrajectoryStore.quick_check`) and
    it holds at least one trajectory. Otherwise a ``DataError`` naming the option and the problem."""
    try:
        store = TrajectoryStore(path, create=False)
    except DataError as e:
        raise DataError(f"{key}={path}: {e}") from e
    bad = store.quick_check()
    if bad:
        first = bad[min(bad, key=int)][0]
        more = sum(len(v) for v in bad.values()) - 1
        raise DataError(f"{key}={path}: {first}" + (f" (and {more} more; see `digirl data check {path}`)" if more else ""))
    if not store.shard_ids():
        raise DataError(f"{key}={path}: the dataset holds no trajectories")
    return store
