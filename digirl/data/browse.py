"""Browsing a large dataset lazily: a table of trajectory rows first, one trajectory's steps and
screenshots only when asked for.

:class:`DatasetIndex` reads the trajectory tables of every shard (a few columns, no steps, no
images) into :class:`TrajectoryRow` records for listing and filtering. :meth:`DatasetIndex.trajectory`
parses the shard that holds a trajectory without images (kept in a small LRU cache of shards) and
decodes only that trajectory's screenshots. The viewer and ``digirl data export-video`` use it.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from digirl.core.errors import DataError
from digirl.core.types import Observation, Step, Trajectory
from digirl.data import schema as sc
from digirl.data import shard as sh
from digirl.data.store import TrajectoryStore

__all__ = ["DatasetIndex", "TrajectoryRow", "select_episodes"]

_ROW_COLUMNS = [
    "traj_id",
    "task",
    "family",
    "env_failure",
    "reward",
    "length",
    "success",
    "metadata",
    "policy_version",
]


@dataclass(frozen=True)
class TrajectoryRow:
    """What the list of trajectories shows (read from the trajectory tables only)."""

    index: int
    shard: str
    traj_id: str
    instruction: str
    task_id: str
    family: str
    split: str
    env_failure: bool
    success: bool
    reward: float
    length: int
    #: ``metadata["iteration"]`` of online data (``None``: offline or unknown).
    iteration: int | None
    policy_version: int | None

    @property
    def outcome(self) -> str:
        return "env failure" if self.env_failure else ("success" if self.success else "failure")


def _row(index: int, shard: str, r: dict[str, Any], path: Path) -> TrajectoryRow:
    task = sc.parse_json_field(r["task"], path, index, "task")
    meta = sc.parse_json_field(r["metadata"], path, index, "metadata")
    task = task if isinstance(task, dict) else {}
    meta = meta if isinstance(meta, dict) else {}
    it = meta.get("iteration")
    return TrajectoryRow(
        index=index,
        shard=shard,
        traj_id=str(r["traj_id"]),
        instruction=str(task.get("instruction", "")),
        task_id=str(task.get("task_id", "")),
        family=str(r["family"] or ""),
        split=str(task.get("split", "")),
        env_failure=bool(r["env_failure"]),
        success=bool(r["success"]),
        reward=float(r["reward"]),
        length=int(r["length"]),
        iteration=int(it) if isinstance(it, (int, float)) and not isinstance(it, bool) else None,
        policy_version=None if r["policy_version"] is None else int(r["policy_version"]),
    )


class _ShardCache:
    """A shard parsed without images, with the screenshot paths to decode one trajectory's frames."""

    def __init__(self, sdir: Path) -> None:
        self.sdir = sdir
        self.trajs = {t.traj_id: t for t in sh.read_shard(sdir, load_images=False, include_failures=True)}
        steps = sc.read_table(sdir / sc.STEPS_FILE, sc.STEP_COLUMNS, ["traj_id", "step", "screenshot"]).to_pylist()
        self.shots: dict[str, dict[int, str]] = {}
        for r in steps:
            self.shots.setdefault(str(r["traj_id"]), {})[int(r["step"])] = str(r["screenshot"])
        finals = sc.read_table(sdir / sc.TRAJ_FILE, sc.TRAJ_COLUMNS, ["traj_id", "final_screenshot"]).to_pylist()
        self.finals = {str(r["traj_id"]): r["final_screenshot"] for r in finals}


class DatasetIndex:
    """Trajectory rows of a dataset, and trajectories with their screenshots loaded on demand."""

    def __init__(self, store: TrajectoryStore | str | Path, *, cached_shards: int = 4) -> None:
        self.store = store if isinstance(store, TrajectoryStore) else TrajectoryStore(store, create=False)
        self.cached_shards = max(1, cached_shards)
        self._cache: OrderedDict[str, _ShardCache] = OrderedDict()
        self.rows: list[TrajectoryRow] = []
        for sid in self.store.shard_ids():
            path = self.store.shard_path(sid) / sc.TRAJ_FILE
            for r in sc.read_table(path, sc.TRAJ_COLUMNS, _ROW_COLUMNS).to_pylist():
                self.rows.append(_row(len(self.rows), sid, r, path))
        self._by_id = {r.traj_id: r for r in self.rows}

    def __len__(self) -> int:
        return len(self.rows)

    def row(self, traj_id: str) -> TrajectoryRow:
        try:
            return self._by_id[traj_id]
        except KeyError:
            raise KeyError(f"no trajectory {traj_id!r} in {self.store.path}") from None

    def _shard(self, sid: str) -> _ShardCache:
        cached = self._cache.get(sid)
        if cached is None:
            cached = _ShardCache(self.store.shard_path(sid))
            self._cache[sid] = cached
            while len(self._cache) > self.cached_shards:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(sid)
        return cached

    def trajectory(self, traj_id: str, *, load_images: bool = True) -> Trajectory:
        """One trajectory; with ``load_images`` its screenshots (and only its) are decoded."""
        shard = self._shard(self.row(traj_id).shard)
        t = shard.trajs[traj_id]
        if not load_images:
            return t
        paths = shard.shots.get(traj_id, {})
        frames: dict[str, np.ndarray] = {}

        def load(rel: str, where: str) -> np.ndarray:
            if rel not in frames:
                path = sh.image_path(shard.sdir, rel, where)
                try:
                    with Image.open(path) as im:
                        frames[rel] = np.array(im.convert("RGB"))
                except (OSError, ValueError, SyntaxError) as e:
                    raise DataError(f"{path}: unreadable image ({e})") from e
            return frames[rel]

        prev: np.ndarray | None = None
        steps = []
        for i, s in enumerate(t.steps):
            shot = load(paths[i], f"{shard.sdir / sc.STEPS_FILE} trajectory {traj_id} step {i}")
            obs = _with_pixels(s.observation, shot, prev)
            steps.append(Step(obs, s.action, s.action_text, s.reward, s.terminated, s.truncated, s.info, s.log_prob))
            prev = shot
        final = t.final_observation
        rel = shard.finals.get(traj_id)
        if final is not None and rel:
            final = _with_pixels(final, load(str(rel), f"{shard.sdir / sc.TRAJ_FILE} trajectory {traj_id}"), prev)
        return Trajectory(
            task=t.task,
            steps=steps,
            final_observation=final,
            env_failure=t.env_failure,
            failure_reason=t.failure_reason,
            seed=t.seed,
            metadata=t.metadata,
            traj_id=t.traj_id,
            policy_version=t.policy_version,
        )


def _with_pixels(obs: Observation, screenshot: np.ndarray, previous: np.ndarray | None) -> Observation:
    """A copy of ``obs`` with its pixels filled in."""
    return Observation(
        screenshot=screenshot,
        instruction=obs.instruction,
        step=obs.step,
        history=obs.history,
        elements=obs.elements,
        previous_screenshot=previous,
    )


def select_episodes(rows: list[TrajectoryRow], spec: str) -> list[TrajectoryRow]:
    """Rows picked by ``spec``: comma-separated traj_ids, 0-based indices and ``A:B`` index ranges.

    ``all`` picks every row, ``failures`` / ``successes`` the scored failures / successes. Unknown
    ids and out-of-range indices are a ``ValueError`` naming them.
    """
    by_id = {r.traj_id: r for r in rows}
    out: list[TrajectoryRow] = []
    bad: list[str] = []
    for item in (p.strip() for p in spec.split(",")):
        if not item:
            continue
        if item == "all":
            out += rows
        elif item == "failures":
            out += [r for r in rows if not r.success and not r.env_failure]
        elif item == "successes":
            out += [r for r in rows if r.success]
        elif item in by_id:
            out.append(by_id[item])
        elif item.isdigit():
            if int(item) < len(rows):
                out.append(rows[int(item)])
            else:
                bad.append(item)
        elif ":" in item and all(p.strip().isdigit() or not p.strip() for p in item.split(":", 1)):
            a, b = item.split(":", 1)
            lo, hi = int(a or 0), int(b or len(rows))
            if lo >= len(rows) or hi <= lo:
                bad.append(item)
            out += rows[lo:hi]
        else:
            bad.append(item)
    if bad:
        raise ValueError(
            f"no such episode(s): {', '.join(bad)} (the dataset has {len(rows)} trajectories, indices 0..{len(rows) - 1})"
        )
    return list({r.traj_id: r for r in out}.values())  # first occurrence order, no repeats
