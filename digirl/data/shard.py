"""Reading and writing one shard folder: ``trajectories.parquet``, ``steps.parquet``, ``images/``.

:class:`~digirl.data.store.TrajectoryStore` owns the dataset-level concerns (naming shards,
locking, atomic publication); this module turns records into files and back.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

from digirl.core.errors import DataError
from digirl.core.types import Observation, Step, TaskSpec, Trajectory
from digirl.data import schema as sc

__all__ = [
    "IMAGES_DIR",
    "NO_IMAGE",
    "check_screenshot",
    "check_shard_images",
    "fsync_path",
    "image_path",
    "plan_shard",
    "read_shard",
    "write_shard",
]

IMAGES_DIR = "images"

#: Placeholder screenshot when images are not loaded: a valid, read-only (0, 0, 3) uint8 array.
NO_IMAGE = np.zeros((0, 0, 3), dtype=np.uint8)
NO_IMAGE.setflags(write=False)


def fsync_path(path: Path, *, directory: bool = False) -> None:
    """Flush a file's (or a folder's entries') data to disk; best effort where unsupported."""
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0)
    try:
        fd = os.open(path, flags)
    except OSError:  # some platforms cannot open directories; durability is best effort there
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def check_screenshot(arr: Any, where: str) -> np.ndarray:
    """``arr`` if it is a storable uint8 (H, W, 3) frame with pixels, else ``ValueError``."""
    if not isinstance(arr, np.ndarray) or arr.dtype != np.uint8 or arr.ndim != 3 or arr.shape[2] != 3:
        raise ValueError(f"{where}: screenshot must be a uint8 (H, W, 3) array")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{where}: screenshot has no pixels (was it loaded with load_images=False?)")
    return arr


def plan_shard(
    trajs: Sequence[Trajectory],
) -> tuple[dict[str, np.ndarray], list[dict[str, Any]], list[dict[str, Any]]]:
    """Name every screenshot (identical frames within the shard share one file) and build rows."""
    images: dict[str, np.ndarray] = {}
    by_hash: dict[bytes, str] = {}

    def name(arr: np.ndarray, stem: str, where: str) -> str:
        arr = check_screenshot(arr, where)
        h = hashlib.blake2b(np.ascontiguousarray(arr).data, digest_size=16)
        h.update(repr(arr.shape).encode())
        key = h.digest()
        if key not in by_hash:
            rel = f"{IMAGES_DIR}/{stem}.png"
            by_hash[key] = rel
            images[rel] = arr
        return by_hash[key]

    traj_rows, step_rows = [], []
    for t in trajs:
        shots = [
            name(s.observation.screenshot, f"{t.traj_id}-{i}", f"trajectory {t.traj_id} step {i}") for i, s in enumerate(t.steps)
        ]
        final = None
        if t.final_observation is not None:
            where = f"trajectory {t.traj_id} final observation"
            final = name(t.final_observation.screenshot, f"{t.traj_id}-final", where)
        traj_rows.append(sc.trajectory_row(t, final))
        step_rows.extend(sc.step_rows(t, shots))
    return images, traj_rows, step_rows


def write_shard(
    tmp: Path,
    images: Mapping[str, np.ndarray],
    traj_table: pa.Table,
    step_table: pa.Table,
    *,
    compress_level: int,
    durable: bool,
    workers: int = 1,
) -> None:
    """Write a planned shard into the (new) folder ``tmp``, syncing everything when ``durable``.

    ``workers`` > 1 encodes PNGs on that many threads (zlib runs outside the GIL).
    """
    (tmp / IMAGES_DIR).mkdir(parents=True)
    if workers > 1 and len(images) > 1:
        with ThreadPoolExecutor(max_workers=workers) as ex:
            # list() re-raises the first exception of any worker
            list(ex.map(lambda kv: write_png(tmp / kv[0], kv[1], compress_level, durable), images.items()))
    else:
        for rel, arr in images.items():
            write_png(tmp / rel, arr, compress_level, durable)
    for fname, table in ((sc.STEPS_FILE, step_table), (sc.TRAJ_FILE, traj_table)):
        write_parquet(tmp / fname, table)
        if durable:
            fsync_path(tmp / fname)
    if durable:
        fsync_path(tmp / IMAGES_DIR, directory=True)
        fsync_path(tmp, directory=True)


def read_shard(sdir: Path, *, load_images: bool, include_failures: bool) -> list[Trajectory]:
    """Every trajectory of the shard folder ``sdir``; any inconsistency is a ``DataError``."""
    tpath, spath = sdir / sc.TRAJ_FILE, sdir / sc.STEPS_FILE
    trows = sc.read_table(tpath, sc.TRAJ_COLUMNS).to_pylist()
    srows = sc.read_table(spath, sc.STEP_COLUMNS).to_pylist()
    ids = [str(r["traj_id"]) for r in trows]
    if len(set(ids)) != len(ids):
        raise DataError(f"{tpath}: duplicate traj_id values")
    by_traj: dict[str, list[tuple[int, dict[str, Any]]]] = {i: [] for i in ids}
    for i, r in enumerate(srows):
        if r["traj_id"] not in by_traj:
            raise DataError(f"{spath}: row {i} belongs to trajectory {r['traj_id']!r}, which {tpath.name} lacks")
        by_traj[r["traj_id"]].append((i, r))
    out = []
    for ti, tr in enumerate(trows):
        rows = sorted(by_traj[tr["traj_id"]], key=lambda x: int(x[1]["step"]))
        if [int(r["step"]) for _, r in rows] != list(range(int(tr["length"]))):
            raise DataError(
                f"{spath}: trajectory {tr['traj_id']!r} has steps {[int(r['step']) for _, r in rows]} but length {tr['length']}"
            )
        if not include_failures and tr["env_failure"]:
            continue
        out.append(_build_trajectory(sdir, ti, tr, rows, load_images))
    return out


def _load_image(sdir: Path, rel: Any, where: str, size: tuple[int, int] | None) -> np.ndarray:
    path = image_path(sdir, rel, where)
    try:
        with Image.open(path) as im:
            arr = np.array(im.convert("RGB"))
    except (OSError, ValueError, SyntaxError) as e:
        raise DataError(f"{path}: unreadable image ({e})") from e
    if size is not None and (arr.shape[1], arr.shape[0]) != size:
        raise DataError(f"{path}: image is {arr.shape[1]}x{arr.shape[0]}, {where} says {size[0]}x{size[1]}")
    return arr


def _build_trajectory(
    sdir: Path, ti: int, tr: dict[str, Any], rows: list[tuple[int, dict[str, Any]]], load_images: bool
) -> Trajectory:
    tpath, spath = sdir / sc.TRAJ_FILE, sdir / sc.STEPS_FILE
    cache: dict[str, np.ndarray] = {}  # frames shared by several steps decode once

    def image(rel: Any, where: str, size: tuple[int, int] | None) -> np.ndarray:
        if not load_images:
            return NO_IMAGE
        if rel not in cache:
            cache[rel] = _load_image(sdir, rel, where, size)
        return cache[rel]

    steps: list[Step] = []
    prev: np.ndarray | None = None
    for i, r in rows:
        shot = image(r["screenshot"], f"{spath} row {i}", (int(r["width"]), int(r["height"])))
        obs = Observation(
            screenshot=shot,
            instruction=str(r["instruction"]),
            step=int(r["obs_step"]),
            history=sc.actions_from_obj(sc.parse_json_field(r["history"], spath, i, "history"), spath, i, "history"),
            elements=sc.elements_from_obj(sc.parse_json_field(r["elements"], spath, i, "elements"), spath, i, "elements"),
            previous_screenshot=prev if load_images else None,
        )
        info = sc.parse_json_field(r["info"], spath, i, "info")
        if not isinstance(info, dict):
            raise DataError(f"{spath}: row {i}, column 'info': expected a JSON object")
        steps.append(
            Step(
                observation=obs,
                action=sc.parse_action(r["action"], spath, i, "action"),
                action_text=str(r["action_text"]),
                reward=float(r["reward"]),
                terminated=bool(r["terminated"]),
                truncated=bool(r["truncated"]),
                info=info,
                log_prob=None if r["log_prob"] is None else float(r["log_prob"]),
            )
        )
        prev = shot
    task_d = sc.parse_json_field(tr["task"], tpath, ti, "task")
    meta = sc.parse_json_field(tr["metadata"], tpath, ti, "metadata")
    if not isinstance(task_d, dict) or not isinstance(meta, dict):
        raise DataError(f"{tpath}: row {ti}: 'task' and 'metadata' must be JSON objects")
    try:
        task = TaskSpec.from_dict(task_d)
    except (KeyError, TypeError, ValueError) as e:
        raise DataError(f"{tpath}: row {ti}, column 'task': bad task ({e})") from e
    final = None
    fo = sc.parse_json_field(tr["final_observation"], tpath, ti, "final_observation")
    if fo is not None:
        if not isinstance(fo, dict) or tr["final_screenshot"] is None:
            raise DataError(f"{tpath}: row {ti}: final_observation needs an object and a final_screenshot")
        try:
            step_no, instruction = int(fo["step"]), str(fo["instruction"])
        except (KeyError, TypeError, ValueError) as e:
            raise DataError(f"{tpath}: row {ti}, column 'final_observation': {e!r}") from e
        final = Observation(
            screenshot=image(tr["final_screenshot"], f"{tpath} row {ti}", None),
            instruction=instruction,
            step=step_no,
            history=sc.actions_from_obj(fo.get("history", []), tpath, ti, "final_observation"),
            elements=sc.elements_from_obj(fo.get("elements"), tpath, ti, "final_observation"),
            previous_screenshot=prev if load_images else None,
        )
    return Trajectory(
        task=task,
        steps=steps,
        final_observation=final,
        env_failure=bool(tr["env_failure"]),
        failure_reason=str(tr["failure_reason"]),
        seed=None if tr["seed"] is None else int(tr["seed"]),
        metadata=meta,
        traj_id=str(tr["traj_id"]),
        policy_version=None if tr["policy_version"] is None else int(tr["policy_version"]),
    )


def check_shard_images(sdir: Path) -> list[str]:
    """Problems with the images a (structurally valid) shard references: missing, corrupt, wrong size."""
    tpath, spath = sdir / sc.TRAJ_FILE, sdir / sc.STEPS_FILE
    refs: list[tuple[Any, str, tuple[int, int] | None]] = []
    st = pq.read_table(spath, columns=["screenshot", "width", "height"]).to_pylist()
    refs += [(r["screenshot"], f"{spath} row {i}", (r["width"], r["height"])) for i, r in enumerate(st)]
    tt = pq.read_table(tpath, columns=["final_screenshot"]).to_pylist()
    refs += [(r["final_screenshot"], f"{tpath} row {i}", None) for i, r in enumerate(tt) if r["final_screenshot"]]
    problems: list[str] = []
    checked: set[str] = set()
    for rel, where, size in refs:
        if rel in checked:
            continue
        checked.add(rel)
        try:
            _verify_image(sdir, rel, where, size)
        except DataError as e:
            problems.append(str(e))
    return problems


def image_path(sdir: Path, rel: Any, where: str) -> Path:
    """The existing image file ``rel`` inside the shard folder ``sdir``; else ``DataError``."""
    rel_s = str(rel)
    if not rel_s or os.path.isabs(rel_s) or ".." in Path(rel_s).parts:
        raise DataError(f"{where}: screenshot path {rel!r} leaves the shard folder")
    path = sdir / rel_s
    if not path.is_file():
        raise DataError(f"{path}: image file missing (referenced by {where})")
    return path


def _verify_image(sdir: Path, rel: Any, where: str, size: tuple[int, int] | None) -> None:
    path = image_path(sdir, rel, where)
    try:
        with Image.open(path) as im:
            got = im.size
            im.load()  # a full decode: verify() alone misses damaged compressed data
    except (OSError, ValueError, SyntaxError) as e:
        raise DataError(f"{path}: unreadable image ({e})") from e
    if size is not None and tuple(got) != tuple(size):
        raise DataError(f"{path}: image is {got[0]}x{got[1]}, {where} says {size[0]}x{size[1]}")


def write_png(path: Path, arr: np.ndarray, level: int, durable: bool) -> None:
    """Write ``arr`` as a lossless PNG (zlib ``level``), fsynced when ``durable``."""
    with open(path, "wb") as f:
        Image.fromarray(np.ascontiguousarray(arr)).save(f, format="PNG", compress_level=level)
        if durable:
            f.flush()
            os.fsync(f.fileno())


def write_parquet(path: Path, table: pa.Table) -> None:
    """Write a shard table (zstd-compressed; the JSON columns shrink several-fold)."""
    pq.write_table(table, path, compression="zstd")
