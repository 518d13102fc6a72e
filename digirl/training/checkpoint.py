"""Atomic checkpoints of a run: policy (safetensors), algorithm state, loop state, RNG states.

A checkpoint is written into a temporary folder, fsynced, renamed to ``checkpoints/iter-NNNNNN``
and only then published by atomically replacing ``checkpoints/LATEST``. A run killed at any
moment therefore resumes from the last *complete* checkpoint. Algorithm state (optimizers,
critics) is a ``torch.save`` file we wrote ourselves and is read back with ``weights_only=True``.
"""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from digirl.core.errors import DataError
from digirl.policies.base import ActingPolicy

log = logging.getLogger(__name__)


@dataclass
class LoopState:
    """Counters of the training loop (what resume needs besides weights)."""

    iteration: int = 0  # online iterations completed
    offline_done: bool = False
    updates: int = 0  # learner updates applied to the policy: its version
    trajectories_seen: int = 0
    env_steps_seen: int = 0  # env steps of online collection, branches included: the budget methods compare at
    best_test_success: float = -1.0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def rng_state() -> dict[str, Any]:
    return {
        "python": random.getstate(),
        "numpy": [x.tolist() if isinstance(x, np.ndarray) else x for x in np.random.get_state()],
        "torch": torch.get_rng_state(),
    }


def set_rng_state(state: dict[str, Any]) -> None:
    py = state["python"]
    random.setstate((py[0], tuple(py[1]), py[2]))
    name, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((name, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(state["torch"])


def save_checkpoint(run_dir: Path, state: LoopState, policy: ActingPolicy, algo_state: dict[str, Any], *, keep: int = 2) -> Path:
    ckpt_root = run_dir / "checkpoints"
    ckpt_root.mkdir(parents=True, exist_ok=True)
    name = f"iter-{state.iteration:06d}" + ("" if state.offline_done or state.iteration else "-init")
    tmp = ckpt_root / f".tmp-{name}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    try:  # a full disk or a kill leaves no half-written checkpoint folder behind
        tmp.mkdir()
        policy.save(tmp / "policy")
        torch.save({"algo": algo_state, "rng": rng_state()}, tmp / "train_state.pt")
        (tmp / "state.json").write_text(json.dumps(state.to_dict(), indent=2))
        for f in tmp.rglob("*"):
            if f.is_file():
                with open(f, "rb") as fh:
                    os.fsync(fh.fileno())
        final = ckpt_root / name
        if final.exists():
            shutil.rmtree(final)
        os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _fsync_dir(ckpt_root)
    latest_tmp = ckpt_root / f".LATEST.{os.getpid()}"
    try:
        latest_tmp.write_text(name + "\n")
        os.replace(latest_tmp, ckpt_root / "LATEST")
    except BaseException:
        latest_tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(ckpt_root)
    # Prune old checkpoints (never the one just published).
    done = sorted(p for p in ckpt_root.iterdir() if p.is_dir() and p.name.startswith("iter-"))
    for old in done[:-keep] if keep > 0 else []:
        if old.name != name:
            shutil.rmtree(old, ignore_errors=True)
    return final


def latest_checkpoint(run_dir: Path) -> Path | None:
    latest = run_dir / "checkpoints" / "LATEST"
    if not latest.is_file():
        return None
    name = latest.read_text().strip()
    path = run_dir / "checkpoints" / name
    if not path.is_dir():
        raise DataError(f"{latest}: points to {name}, which does not exist (the run folder was edited by hand?)")
    return path


def load_checkpoint(path: Path) -> tuple[LoopState, Path, dict[str, Any]]:
    """(loop state, policy folder, train state dict). Raises DataError naming the bad file."""
    state_file = path / "state.json"
    try:
        raw = json.loads(state_file.read_text())
        state = LoopState(**raw)
    except (OSError, json.JSONDecodeError, TypeError) as e:
        raise DataError(f"{state_file}: unreadable checkpoint state ({e})") from e
    ts = path / "train_state.pt"
    try:
        train_state = torch.load(ts, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises several types for corrupt files
        raise DataError(f"{ts}: corrupt or truncated training state ({e})") from e
    return state, path / "policy", train_state
