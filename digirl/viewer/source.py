"""What the viewer shows, without the user interface: a run folder or a dataset opened lazily,
its trajectories filtered and paged, and one step's picture, text and learner numbers.

A **run folder** (``digirl train``'s output) contributes its online data (``RUN/data``), the offline
dataset named in its ``config.yaml`` (when it still exists) and its annotations
(``RUN/annotations/iter-NNNNNN.parquet``); a **dataset** contributes itself.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml
from PIL import Image

from digirl.core.codecs import action_from_dict
from digirl.core.errors import DataError
from digirl.core.types import Trajectory
from digirl.data.annotations import ANNOTATIONS_DIR, StepAnnotation, annotation_iterations, read_annotations
from digirl.data.browse import DatasetIndex, TrajectoryRow
from digirl.data.store import META_FILE
from digirl.viz.draw import Candidate, draw_action, draw_candidates

__all__ = ["ALL", "Filters", "Row", "StepDetail", "ViewerSource"]

log = logging.getLogger(__name__)

#: The "no filter" value of the choice filters.
ALL = "all"
OUTCOMES = (ALL, "success", "failure", "env failure")
NO_ITERATION = "–"


@dataclass(frozen=True)
class Row:
    """A trajectory row and the part of the run it comes from (``online``, ``offline`` or ``dataset``)."""

    source: str
    row: TrajectoryRow

    @property
    def iteration_label(self) -> str:
        """``offline`` for a run's offline dataset, the online iteration, or ``–`` when unknown."""
        if self.source == "offline":
            return "offline"
        return NO_ITERATION if self.row.iteration is None else str(self.row.iteration)


@dataclass(frozen=True)
class Filters:
    text: str = ""
    family: str = ALL
    outcome: str = ALL
    iteration: str = ALL
    split: str = ALL

    def match(self, r: Row) -> bool:
        t = self.text.strip().lower()
        row = r.row
        if t and t not in row.instruction.lower() and t not in row.traj_id.lower() and t not in row.task_id.lower():
            return False
        if self.family != ALL and row.family != self.family:
            return False
        if self.outcome != ALL and row.outcome != self.outcome:
            return False
        if self.iteration != ALL and r.iteration_label != self.iteration:
            return False
        return self.split == ALL or (row.split or "(none)") == self.split


@dataclass
class StepDetail:
    """One step as the viewer shows it."""

    picture: Image.Image
    markdown: str
    candidates: Image.Image | None
    candidate_rows: list[list[Any]]


def _fmt(v: float | None, digits: int = 3) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"


class ViewerSource:
    """A run folder or a dataset, opened for viewing (trajectory tables read now, steps on demand)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.indexes: dict[str, DatasetIndex] = {}
        self.annotations_dir: Path | None = None
        if (self.path / META_FILE).is_file():
            self.kind = "dataset"
            self.indexes["dataset"] = DatasetIndex(self.path)
        elif (self.path / "data" / META_FILE).is_file() or (self.path / "config.yaml").is_file():
            self.kind = "run"
            if (self.path / "data" / META_FILE).is_file():
                self.indexes["online"] = DatasetIndex(self.path / "data")
            offline = self._offline_dataset()
            if offline is not None:
                self.indexes["offline"] = DatasetIndex(offline)
            self.annotations_dir = self.path / ANNOTATIONS_DIR
        else:
            raise DataError(f"{self.path}: neither a dataset (no {META_FILE}) nor a run folder (no data/ or config.yaml)")
        self.rows = [Row(src, r) for src, idx in self.indexes.items() for r in idx.rows]
        self._by_id = {r.row.traj_id: r for r in self.rows}
        self._notes: dict[int, dict[tuple[str, int], StepAnnotation]] = {}

    def _offline_dataset(self) -> Path | None:
        try:
            cfg = yaml.safe_load((self.path / "config.yaml").read_text())
        except (OSError, yaml.YAMLError):
            return None
        ds = cfg.get("offline_dataset") if isinstance(cfg, dict) else None
        if not ds:
            return None
        p = Path(ds)
        if not p.is_absolute() and not (p / META_FILE).is_file():
            p = self.path / p  # relative to the run folder, if not to the working directory
        if (p / META_FILE).is_file():
            return p
        log.warning("the run's offline dataset %s is not there; showing the online data only", ds)
        return None

    # ------------------------------------------------------------------ listing
    def choices(self, what: str) -> list[str]:
        """Values for a choice filter: ``family``, ``outcome``, ``iteration`` or ``split``."""
        if what == "outcome":
            return list(OUTCOMES)
        if what == "family":
            vals = {r.row.family for r in self.rows}
        elif what == "split":
            vals = {r.row.split or "(none)" for r in self.rows}
        elif what == "iteration":
            its = {r.iteration_label for r in self.rows}
            named = [x for x in ("offline", NO_ITERATION) if x in its]
            return [ALL, *named, *sorted((i for i in its if i not in named), key=int)]
        else:
            raise ValueError(f"no filter {what!r}")
        return [ALL, *sorted(vals)]

    def filter(self, f: Filters) -> list[Row]:
        return [r for r in self.rows if f.match(r)]

    @staticmethod
    def page(rows: Sequence[Row], page: int, size: int) -> tuple[list[Row], int, int]:
        """Rows of 1-based ``page`` (clamped), the page number used and the page count."""
        pages = max(1, math.ceil(len(rows) / size))
        page = min(max(1, page), pages)
        return list(rows[(page - 1) * size : page * size]), page, pages

    @staticmethod
    def table(rows: Sequence[Row]) -> list[list[Any]]:
        return [
            [
                r.row.traj_id,
                r.row.instruction,
                r.row.family,
                r.row.split,
                r.iteration_label,
                r.row.length,
                r.row.reward,
                r.row.outcome,
            ]
            for r in rows
        ]

    TABLE_HEADERS = ["traj_id", "instruction", "family", "split", "iteration", "steps", "reward", "outcome"]

    # ------------------------------------------------------------------ one trajectory
    def trajectory(self, traj_id: str) -> Trajectory:
        r = self._by_id.get(traj_id)
        if r is None:
            raise KeyError(f"no trajectory {traj_id!r}")
        return self.indexes[r.source].trajectory(traj_id)

    def annotation_iterations(self) -> list[int]:
        return annotation_iterations(self.annotations_dir) if self.annotations_dir is not None else []

    def notes(self, iteration: int | None) -> dict[tuple[str, int], StepAnnotation]:
        """``(traj_id, step) -> annotation`` of one update (``None``: none)."""
        if iteration is None or self.annotations_dir is None:
            return {}
        if iteration not in self._notes:
            rows = read_annotations(self.annotations_dir, iteration)
            self._notes = {iteration: {(a.traj_id, a.step): a for a in rows}}  # keep one update in memory
        return self._notes[iteration]

    def step_table(self, t: Trajectory, notes: dict[tuple[str, int], StepAnnotation]) -> list[list[Any]]:
        out = []
        for i, s in enumerate(t.steps):
            a = notes.get((t.traj_id, i))
            kept = "–" if a is None or a.kept is None else ("yes" if a.kept else "no")
            v, q, adv = (None, None, None) if a is None else (a.value, a.q, a.advantage)
            out.append([i, str(s.action), s.reward, _fmt(v), _fmt(q), _fmt(adv), kept])
        return out

    STEP_HEADERS = ["step", "action", "reward", "V", "Q", "advantage", "kept"]

    def step(self, t: Trajectory, i: int, notes: dict[tuple[str, int], StepAnnotation]) -> StepDetail:
        s = t.steps[i]
        a = notes.get((t.traj_id, i))
        lines = [
            f"**step {i + 1} / {t.length}** · action `{s.action}` · reward **{s.reward:g}**"
            + (" · terminated" if s.terminated else "")
            + (" · truncated" if s.truncated else ""),
        ]
        if a is not None:
            kept = "–" if a.kept is None else ("**kept**" if a.kept else "filtered out")
            lines.append(
                f"V = {_fmt(a.value)} · Q = {_fmt(a.q)} · advantage = {_fmt(a.advantage)} · {kept} · weight = {_fmt(a.weight)}"
            )
        elif notes:
            lines.append("(this step has no annotation in the chosen update)")
        if s.log_prob is not None:
            lines.append(f"behaviour log-probability: {s.log_prob:.3f}")
        fence = "````"
        lines += ["", "model output:", "", f"{fence}text\n{s.action_text or '(empty)'}\n{fence}"]
        if not s.action.is_valid:
            lines.append(f"parse error: {s.action.error}")
        cands, rows = self._candidates(s, a)
        return StepDetail(
            picture=draw_action(s.observation.screenshot, s.action),
            markdown="\n".join(lines),
            candidates=draw_candidates(s.observation.screenshot, cands) if cands else None,
            candidate_rows=rows,
        )

    @staticmethod
    def _candidates(step: Any, a: StepAnnotation | None) -> tuple[list[Candidate], list[list[Any]]]:
        """Digi-Q's candidates: from the annotation (with Q), else from the stored step (imported data).

        The "best" column marks the critic's pick: best-of-N's choice as the update recorded it (``extra["chosen"]``,
        with whether the state was kept for cloning), else the highest Q among the candidates."""
        raw = (a.extra.get("candidates") if a is not None else None) or step.info.get("candidates") or []
        value = a.value if a is not None else None
        cands: list[Candidate] = []
        rows: list[list[Any]] = []
        for i, c in enumerate(raw if isinstance(raw, list) else []):
            try:
                action = action_from_dict(c["action"])
            except (KeyError, TypeError, ValueError):
                continue  # one malformed candidate does not hide the others
            q = c.get("q")
            q = float(q) if isinstance(q, (int, float)) and not isinstance(q, bool) else None
            chosen = bool(c.get("chosen", action == step.action))
            cands.append(Candidate(action, q, chosen))
            adv = None if q is None or value is None else q - value
            rows.append([i, str(action), _fmt(q), _fmt(adv), "yes" if chosen else "", ""])
        pick = a.extra.get("chosen") if a is not None else None
        at = [r[0] for r in rows]  # candidate numbers (a malformed one leaves a gap)
        known = [k for k, c in enumerate(cands) if c.q is not None]
        if isinstance(pick, int) and not isinstance(pick, bool) and pick in at:
            best = at.index(pick)
            rows[best][5] = "best-of-N" + ("" if a is None or a.kept is None else (", kept" if a.kept else ", below δ"))
        elif known:
            best = max(known, key=lambda k: float(cands[k].q or 0.0))
            rows[best][5] = "highest Q"
        else:
            return cands, rows
        cands[best] = replace(cands[best], best=True)
        return cands, rows

    CANDIDATE_HEADERS = ["#", "action", "Q", "Q − V", "taken", "best"]
