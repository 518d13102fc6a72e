"""Column layout of the on-disk trajectory store and conversions between records and rows.

Two Parquet tables per shard (see ``docs/data-format.md``): one row per trajectory and one row
per step. Structured fields (task, actions, history, elements, info, metadata) are JSON strings
so that any Parquet reader can open the files without digirl. This module has no file I/O
besides Parquet reading helpers; images are written by :mod:`digirl.data.store`.
"""

from __future__ import annotations

import enum
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from digirl.core.actions import Action
from digirl.core.codecs import action_from_dict, action_to_dict
from digirl.core.errors import DataError
from digirl.core.types import SCHEMA_VERSION, Observation, Trajectory, UIElement

__all__ = [
    "FORMAT_NAME",
    "STEPS_FILE",
    "STEP_COLUMNS",
    "TRAJ_COLUMNS",
    "TRAJ_FILE",
    "Column",
    "action_from_json_obj",
    "action_to_json_obj",
    "check_traj_id",
    "read_table",
    "to_json",
]

#: ``format`` value in meta.json; guards against opening an unrelated folder.
FORMAT_NAME = "digirl-trajectories"
TRAJ_FILE = "trajectories.parquet"
STEPS_FILE = "steps.parquet"

# traj_id becomes part of image file names, so it must be a safe file-name fragment.
_TRAJ_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


@dataclass(frozen=True)
class Column:
    """One stored column: its Arrow type, whether it may be null, and what it means."""

    name: str
    type: pa.DataType
    nullable: bool
    doc: str
    #: Schema version that introduced the column; files written before it lack it and read as null.
    since: int = 1

    def field(self) -> pa.Field:
        return pa.field(self.name, self.type, nullable=self.nullable)


TRAJ_COLUMNS: tuple[Column, ...] = (
    Column("traj_id", pa.string(), False, "unique id of the trajectory in the dataset"),
    Column("task", pa.string(), False, "JSON of TaskSpec.to_dict()"),
    Column("task_id", pa.string(), False, "copy of task.task_id, for cheap grouping"),
    Column("family", pa.string(), False, "copy of task.family, for cheap grouping"),
    Column("env_failure", pa.bool_(), False, "the environment failed; not the agent's fault"),
    Column("failure_reason", pa.string(), False, "why the environment failed ('' if it did not)"),
    Column("seed", pa.int64(), True, "reset seed, if any"),
    Column("metadata", pa.string(), False, "JSON object of free-form metadata"),
    Column("reward", pa.float64(), False, "sum of step rewards"),
    Column("length", pa.int32(), False, "number of steps"),
    Column("success", pa.bool_(), False, "not env_failure and reward > 0"),
    Column(
        "final_screenshot",
        pa.string(),
        True,
        "PNG of the observation after the last step, relative to the shard",
    ),
    Column(
        "final_observation",
        pa.string(),
        True,
        "JSON {instruction, step, history, elements} of the final observation (null if none)",
    ),
    Column("policy_version", pa.int64(), True, "version of the policy weights that acted (null if unknown)", since=2),
)

STEP_COLUMNS: tuple[Column, ...] = (
    Column("traj_id", pa.string(), False, "trajectory this step belongs to"),
    Column("step", pa.int32(), False, "index of the step in its trajectory (0-based)"),
    Column("obs_step", pa.int32(), False, "Observation.step (step counter the env reported)"),
    Column("instruction", pa.string(), False, "instruction shown to the agent"),
    Column("history", pa.string(), False, "JSON list of action objects (Observation.history)"),
    Column("elements", pa.string(), True, "JSON list of UIElement.to_dict() or null when unknown"),
    Column("screenshot", pa.string(), False, "PNG path relative to the shard folder"),
    Column("width", pa.int32(), False, "screenshot width in pixels"),
    Column("height", pa.int32(), False, "screenshot height in pixels"),
    Column("action", pa.string(), False, "JSON action object"),
    Column("action_type", pa.string(), False, "copy of the action type (ActionType value)"),
    Column("action_text", pa.string(), False, "raw policy output the action was parsed from"),
    Column("reward", pa.float64(), False, "reward of this transition"),
    Column("terminated", pa.bool_(), False, "the episode ended in a terminal state"),
    Column("truncated", pa.bool_(), False, "the episode was cut by the horizon"),
    Column("info", pa.string(), False, "JSON object returned by env.step"),
    Column("log_prob", pa.float64(), True, "behaviour-policy log-probability, null if unknown"),
)


def arrow_schema(columns: Sequence[Column]) -> pa.Schema:
    """The Arrow schema of a table, tagged with the schema version."""
    return pa.schema([c.field() for c in columns], metadata={"digirl.schema_version": str(SCHEMA_VERSION)})


TRAJ_SCHEMA = arrow_schema(TRAJ_COLUMNS)
STEP_SCHEMA = arrow_schema(STEP_COLUMNS)


# --------------------------------------------------------------------------- JSON


def _json_default(o: Any) -> Any:
    # numpy scalars and arrays appear in env info dicts; convert rather than fail.
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, enum.Enum):
        return o.value
    if isinstance(o, Path):
        return str(o)
    if isinstance(o, (set, frozenset)):
        return sorted(o, key=repr)
    raise TypeError(f"{type(o).__name__} is not JSON-serializable")


def to_json(obj: Any, where: str) -> str:
    """Compact JSON of ``obj``; ``where`` names the field in the error a caller sees."""
    try:
        return json.dumps(obj, default=_json_default, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as e:
        raise ValueError(f"{where}: cannot store as JSON ({e})") from e


# --------------------------------------------------------------------------- actions


def action_to_json_obj(a: Action) -> dict[str, Any]:
    """The stored form of an action: :func:`digirl.core.codecs.action_to_dict`.

    ``{"type"}`` plus ``touch``/``lift`` as ``[x, y]`` for DUAL_POINT, ``text`` for TYPE, and
    ``text``/``error`` for INVALID.
    """
    return action_to_dict(a)


def action_from_json_obj(d: Any) -> Action:
    """Inverse of :func:`action_to_json_obj`; raises ``ValueError`` on malformed input."""
    if not isinstance(d, Mapping):
        raise ValueError(f"an action must be a JSON object, got {type(d).__name__}")
    return action_from_dict(d)


def check_traj_id(traj_id: Any) -> str:
    """``traj_id`` if it is a safe file-name fragment, else ``ValueError``."""
    if not isinstance(traj_id, str) or not _TRAJ_ID_RE.match(traj_id):
        raise ValueError(
            f"traj_id {traj_id!r} must be 1-128 characters of letters, digits, '.', '_' or '-', not starting with '.', '_' or '-'"
        )
    return traj_id


# --------------------------------------------------------------------------- records -> rows


def _observation_fields(obs: Observation, where: str) -> dict[str, Any]:
    return {
        "instruction": obs.instruction,
        "obs_step": int(obs.step),
        "history": to_json([action_to_json_obj(a) for a in obs.history], f"{where} history"),
        "elements": None if obs.elements is None else to_json([e.to_dict() for e in obs.elements], f"{where} elements"),
    }


def trajectory_row(t: Trajectory, final_screenshot: str | None) -> dict[str, Any]:
    """The trajectory-table row of ``t`` (``final_screenshot`` is the stored PNG path)."""
    where = f"trajectory {t.traj_id}"
    final_obs: str | None = None
    if t.final_observation is not None:
        f = _observation_fields(t.final_observation, f"{where} final observation")
        final_obs = to_json(
            {
                "instruction": f["instruction"],
                "step": f["obs_step"],
                "history": json.loads(f["history"]),
                "elements": None if f["elements"] is None else json.loads(f["elements"]),
            },
            f"{where} final observation",
        )
    reward = t.reward
    return {
        "traj_id": t.traj_id,
        "task": to_json(t.task.to_dict(), f"{where} task"),
        "task_id": t.task.task_id,
        "family": t.task.family,
        "env_failure": bool(t.env_failure),
        "failure_reason": str(t.failure_reason),
        "seed": None if t.seed is None else int(t.seed),
        "metadata": to_json(dict(t.metadata), f"{where} metadata"),
        "reward": reward,
        "length": t.length,
        "success": (not t.env_failure) and reward > 0,
        "final_screenshot": final_screenshot,
        "final_observation": final_obs,
        "policy_version": None if t.policy_version is None else int(t.policy_version),
    }


def step_rows(t: Trajectory, screenshots: Sequence[str]) -> list[dict[str, Any]]:
    """The step-table rows of ``t``; ``screenshots[i]`` is the stored PNG path of step ``i``."""
    rows = []
    for i, s in enumerate(t.steps):
        where = f"trajectory {t.traj_id} step {i}"
        if not math.isfinite(float(s.reward)):
            raise ValueError(f"{where}: reward {s.reward!r} is not finite")
        shot = s.observation.screenshot
        row = {"traj_id": t.traj_id, "step": i}
        row.update(_observation_fields(s.observation, where))
        row.update(
            {
                "screenshot": screenshots[i],
                "width": int(shot.shape[1]),
                "height": int(shot.shape[0]),
                "action": to_json(action_to_json_obj(s.action), f"{where} action"),
                "action_type": s.action.type.value,
                "action_text": str(s.action_text),
                "reward": float(s.reward),
                "terminated": bool(s.terminated),
                "truncated": bool(s.truncated),
                "info": to_json(dict(s.info), f"{where} info"),
                "log_prob": None if s.log_prob is None else float(s.log_prob),
            }
        )
        rows.append(row)
    return rows


def rows_to_table(rows: Sequence[Mapping[str, Any]], schema: pa.Schema, what: str) -> pa.Table:
    """Build a table with exactly ``schema`` (raises ``ValueError`` naming ``what`` on a mismatch)."""
    cols = {f.name: [r[f.name] for r in rows] for f in schema}
    try:
        return pa.Table.from_pydict(cols, schema=schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        raise ValueError(f"cannot build the {what} table: {e}") from e


# --------------------------------------------------------------------------- rows -> records


def parse_json_field(value: Any, path: Path, row: int, column: str) -> Any:
    """Decode one JSON cell; errors name the file, row and column."""
    if value is None:
        return None
    try:
        return json.loads(value)
    except (TypeError, ValueError) as e:
        raise DataError(f"{path}: row {row}, column '{column}': invalid JSON ({e})") from e


def actions_from_obj(items: Any, path: Path, row: int, column: str) -> tuple[Action, ...]:
    """Decoded JSON list of action objects (``history``) -> actions."""
    if not isinstance(items, list):
        raise DataError(f"{path}: row {row}, column '{column}': expected a JSON list of actions")
    try:
        return tuple(action_from_json_obj(d) for d in items)
    except ValueError as e:
        raise DataError(f"{path}: row {row}, column '{column}': bad action ({e})") from e


def parse_action(value: Any, path: Path, row: int, column: str) -> Action:
    """One JSON action object."""
    try:
        return action_from_json_obj(parse_json_field(value, path, row, column))
    except ValueError as e:
        raise DataError(f"{path}: row {row}, column '{column}': bad action ({e})") from e


def elements_from_obj(items: Any, path: Path, row: int, column: str) -> tuple[UIElement, ...] | None:
    """Decoded JSON list of UI elements (or ``None``) -> elements."""
    if items is None:
        return None
    try:
        if not isinstance(items, list):
            raise ValueError("expected a JSON list")
        return tuple(UIElement.from_dict(d) for d in items)
    except (KeyError, TypeError, ValueError, IndexError) as e:
        raise DataError(f"{path}: row {row}, column '{column}': bad UI element ({e})") from e


# --------------------------------------------------------------------------- reading + validation


def _type_ok(actual: pa.DataType, expected: pa.DataType) -> bool:
    # Accept the equivalent wide/narrow variants other writers (pandas, datasets) produce.
    if pa.types.is_string(expected):
        return bool(pa.types.is_string(actual) or pa.types.is_large_string(actual))
    if pa.types.is_integer(expected):
        return bool(pa.types.is_integer(actual))
    if pa.types.is_floating(expected):
        return bool(pa.types.is_floating(actual) or pa.types.is_integer(actual))
    return bool(actual == expected)


def read_table(path: Path, columns: Sequence[Column], names: Sequence[str] | None = None) -> pa.Table:
    """Read a shard table, checking it exists, parses, and has the expected columns and types.

    ``names`` restricts the columns read (and checked). Any problem is a :class:`DataError`
    whose message starts with the file path.
    """
    wanted = {c.name: c for c in columns}
    want = list(names) if names is not None else list(wanted)
    if not path.is_file():
        raise DataError(f"{path}: file missing")
    try:
        pf = pq.ParquetFile(path)
        schema = pf.schema_arrow
    except (pa.ArrowException, OSError, ValueError) as e:
        raise DataError(f"{path}: corrupt or truncated Parquet file ({e})") from e
    absent = [n for n in want if schema.get_field_index(n) < 0]
    late = [n for n in absent if wanted[n].since > 1 and wanted[n].nullable]  # older files lack these
    missing = [n for n in absent if n not in late]
    if missing:
        raise DataError(f"{path}: missing column(s) {', '.join(missing)}")
    want = [n for n in want if n not in late]
    for n in want:
        actual = schema.field(n).type
        if not _type_ok(actual, wanted[n].type):
            raise DataError(f"{path}: column '{n}' has type {actual}, expected {wanted[n].type}")
    try:
        table = pf.read(columns=want)
    except (pa.ArrowException, OSError, ValueError) as e:
        raise DataError(f"{path}: corrupt or truncated Parquet file ({e})") from e
    for n in want:
        if not wanted[n].nullable and table.column(n).null_count:
            raise DataError(f"{path}: column '{n}' has {table.column(n).null_count} null value(s)")
    for n in late:
        table = table.append_column(wanted[n].field(), pa.nulls(table.num_rows, wanted[n].type))
    return table
