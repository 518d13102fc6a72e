"""Resuming a Table 1 run: running the same command again in the same OUT finishes what is missing.

A Table 1 run is many independent processes over hours; when it stops part-way (a machine taken back,
a device budget spent), the next invocation in the same folder

- reads back every finished train run (``SET-sSEED/KEY.json``, written when the run ends) that ran with
  the same arguments; an unfinished run folder is continued by ``digirl train`` itself, from its last
  complete checkpoint (one without a checkpoint is started again);
- keeps a (set, seed)'s SFT policy, its evaluation and its offline data when they are complete and
  makes them again when not (they are deterministic);
- needs only the SFT evaluation of a (set, seed) whose runs have all finished.

``OUT/table1-config.json`` holds every setting the numbers depend on; a different setting is an error,
since the table would otherwise mix two experiments. Settings that only choose or schedule runs
(:data:`SCHEDULING`) may change between invocations, so a run can also grow by more rows; it can
grow by more seeds and task sets too (:data:`GROWING`: the new list keeps every old entry), each new
(set, seed) running the same pipeline.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Any

from digirl.core.errors import DataError

log = logging.getLogger(__name__)

CONFIG_FILE = "table1-config.json"
SCHEDULING = frozenset({"parallel", "gpus", "only", "ablations", "variants"})
#: Lists a run may extend: more seeds or task sets leave the finished cells' meaning unchanged.
GROWING = frozenset({"seeds", "sets"})
OUT_MARK = "$OUT"


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise DataError(f"{path}: not valid JSON ({e}); {what}") from e


def check_config(out: Path, cfg: dict[str, Any], *, create: bool = True, defaults: dict[str, Any] | None = None) -> None:
    """Record ``cfg`` in a new OUT (unless ``create`` is off: then OUT must hold a run), or check it
    against the settings OUT was started with. A setting OUT's record lacks (added to the config since)
    counts as its value in ``defaults``."""
    want = json.loads(json.dumps({k: v for k, v in cfg.items() if k not in SCHEDULING}))
    path = out / CONFIG_FILE
    if path.is_file():
        have = _read_json(path, "delete the folder's results or use a new folder")
        for k, v in json.loads(json.dumps(defaults or {})).items():
            if k in want:
                have.setdefault(k, v)
        grown = {k for k in GROWING if _extends(have.get(k), want.get(k))}
        diff = sorted(k for k in set(have) | set(want) if have.get(k) != want.get(k) and k not in grown)
        if diff:
            said = "; ".join(f"{k}: {have.get(k)!r} there, {want.get(k)!r} now" for k in diff)
            raise ValueError(f"{out} holds a Table 1 run with other settings ({said}); use a new folder")
        if grown:
            log.info("%s grows: %s", out, "; ".join(f"{k} {have.get(k)} -> {want.get(k)}" for k in sorted(grown)))
            path.write_text(json.dumps({**have, **want}, indent=2))
        return
    if any(out.glob("*-s*/*.json")):
        raise ValueError(f"{out} holds Table 1 results but no {CONFIG_FILE} to say how they were made; use a new folder")
    if not create:
        raise ValueError(f"{out} holds no Table 1 run ({CONFIG_FILE} is missing)")
    path.write_text(json.dumps(want, indent=2))


def _extends(old: Any, new: Any) -> bool:
    """``new`` is a longer list holding every entry of ``old``."""
    return isinstance(old, list) and isinstance(new, list) and len(new) > len(old) and all(x in new for x in old)


def portable_args(args: list[str], out: Path) -> list[str]:
    """``args`` with OUT's path written as ``$OUT``, so a copied or moved OUT still matches its runs."""
    base = str(out)
    if base in ("", "."):
        return list(args)
    prefix = base.rstrip("/") + "/"
    return [a.replace(prefix, OUT_MARK + "/") for a in args]


def finished_run(path: Path, args: list[str]) -> dict[str, Any] | None:
    """The result saved at ``path`` by a train run that finished with ``args`` (portable form), or None
    when the run has not finished. A result of other arguments is an error: OUT mixes two experiments."""
    if not path.is_file():
        return None
    res = _read_json(path, "delete it to run that run again")
    if not isinstance(res, dict) or "final" not in res:
        raise DataError(f"{path}: not a finished train run's result (no 'final'); delete it to run that run again")
    ran = res.pop("args", None)
    res.pop("machine", None)
    if ran is not None and ran != args:
        changed = [f"{a!r} → {b!r}" for a, b in zip(ran, args) if a != b] or [f"{len(ran)} → {len(args)} arguments"]
        raise ValueError(
            f"{path} is a run with other arguments ({', '.join(changed)}); delete it and its run folder, or use a new OUT"
        )
    return res


def save_run(path: Path, res: dict[str, Any], args: list[str], machine: dict[str, Any]) -> None:
    """A finished run's result with its arguments and the machine it ran on (a resumed table may
    gather runs from several). Written whole or not at all: a result file is what marks a run finished."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({**res, "args": args, "machine": machine}, default=str))
    tmp.replace(path)


def sft_complete(cell: Path) -> bool:
    from digirl.policies.registry import POLICY_FILE

    return (cell / "sft" / "policy" / POLICY_FILE).is_file()  # written last by every policy's save()


def saved_eval(cell: Path) -> dict[str, Any] | None:
    path = cell / "sft-eval" / "eval.json"
    if not path.is_file():
        return None
    ev = _read_json(path, "delete it to evaluate the SFT policy again")
    if not isinstance(ev, dict):
        raise DataError(f"{path}: not an evaluation report (split → report); delete it to evaluate again")
    return ev


def dataset_complete(path: Path, n: int) -> bool:
    """Whether ``path`` is a dataset of at least ``n`` trajectories (a collection cut short before it
    wrote its metadata is not a dataset yet)."""
    from digirl.data.store import META_FILE, TrajectoryStore

    if not (path / META_FILE).is_file():
        return False
    return len(TrajectoryStore(path, create=False)) >= n


def start_run(run_dir: Path) -> None:
    """Before a train run: a folder with no checkpoint to continue from is left over (a run stopped
    before its first checkpoint, or a copied folder with only its metrics); it is made again, so its
    metrics are not appended to. A folder with a checkpoint is continued by ``digirl train``."""
    from digirl.training.checkpoint import latest_checkpoint

    if run_dir.is_dir() and latest_checkpoint(run_dir) is None:
        clear("no checkpoint to continue from", run_dir)


def clear(why: str, *paths: Path) -> None:
    """Remove a (set, seed)'s intermediate outputs before they are made again."""
    for p in paths:
        if p.exists():
            log.warning("making %s again: %s", p, why)
            shutil.rmtree(p)
