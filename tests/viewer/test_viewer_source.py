"""The viewer's data side: a run folder or a dataset, filters, pages, a step's picture and numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from digirl.core.errors import DataError
from digirl.viewer.source import ALL, Filters, ViewerSource
from tests.viewer.runfactory import make_run


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return make_run(tmp_path)


def test_a_run_lists_its_online_and_offline_data(run: Path) -> None:
    src = ViewerSource(run)
    assert src.kind == "run" and set(src.indexes) == {"online", "offline"}
    assert [r.row.traj_id for r in src.rows] == ["on0", "on1", "on3", "on5", "off20", "off21"]
    assert src.choices("iteration") == [ALL, "offline", "0", "1"] and src.choices("family") == [ALL, "swipe", "tap", "type"]
    assert src.annotation_iterations() == [0, 1]
    assert ViewerSource(run / "data").kind == "dataset"
    with pytest.raises(DataError, match="neither a dataset"):
        ViewerSource(run / "annotations")


def test_filters_and_pages(run: Path) -> None:
    src = ViewerSource(run)
    ids = lambda f: [r.row.traj_id for r in src.filter(f)]  # noqa: E731
    assert ids(Filters(text="TAP THE TAP")) == ["on0", "on1"]
    assert ids(Filters(text="off2")) == ["off20", "off21"]  # traj_id matches too
    assert ids(Filters(family="swipe")) == ["on3", "on5"]
    assert ids(Filters(outcome="success")) == ["on0", "off20", "off21"]
    assert ids(Filters(iteration="offline")) == ["off20", "off21"] and ids(Filters(iteration="1")) == ["on3", "on5"]
    assert ids(Filters(split="train")) == [r.row.traj_id for r in src.rows] and ids(Filters(split="test")) == []
    rows, page, pages = src.page(src.rows, 9, 4)
    assert (page, pages, [r.row.traj_id for r in rows]) == (2, 2, ["off20", "off21"])
    assert src.table(rows)[0][:3] == ["off20", "Tap the type 20", "type"]


def test_a_step_with_annotations_and_candidates(run: Path) -> None:
    src = ViewerSource(run)
    t = src.trajectory("on1")
    notes = src.notes(1)
    assert src.step_table(t, notes)[0] == [0, str(t.steps[0].action), 0.0, "0.600", "0.800", "0.200", "yes"]
    d = src.step(t, 0, notes)
    assert "V = 0.600" in d.markdown and "raw text 0" in d.markdown and d.picture.size == (96, 48)
    assert d.candidates is not None and [r[4] for r in d.candidate_rows] == ["yes", "", ""]
    assert d.candidate_rows[1][2:4] == ["0.200", "-0.400"]  # Q and Q - V
    assert [r[5] for r in d.candidate_rows] == ["highest Q", "", ""]  # no best-of-N choice recorded
    plain = src.step(t, 0, {})
    assert "V =" not in plain.markdown and plain.candidates is None
    assert src.notes(None) == {}


def test_imported_candidates_without_q_are_drawn(tmp_path: Path) -> None:
    from digirl.core.actions import Action
    from digirl.core.codecs import action_to_dict
    from digirl.data.store import TrajectoryStore
    from tests.data.trajfactory import build_traj

    t = build_traj(1, seed=0, traj_id="x")
    t.steps[0].info["candidates"] = [{"action": action_to_dict(Action.back()), "text": "..."}, {"action": {"type": "BAD"}}]
    TrajectoryStore(tmp_path / "ds", durable=False).append([t])
    src = ViewerSource(tmp_path / "ds")
    d = src.step(src.trajectory("x"), 0, {})
    assert d.candidates is not None and d.candidate_rows == [[0, "back", "–", "–", "", ""]]  # the malformed one is skipped


def test_best_of_n_pick_is_marked() -> None:
    from digirl.core.actions import Action
    from digirl.core.codecs import action_to_dict
    from digirl.data.annotations import StepAnnotation
    from tests.data.trajfactory import build_traj

    step = build_traj(1, seed=0, traj_id="x").steps[0]
    cands = [{"action": action_to_dict(a), "q": q} for a, q in ((step.action, 0.7), (Action.back(), 0.9), (Action.home(), 0.6))]
    for kept, label in ((False, "best-of-N, below δ"), (True, "best-of-N, kept")):
        # the pick is not the highest Q (candidate 1 may be invalid or a no-op): the recorded choice wins
        a = StepAnnotation("x", 0, value=0.5, q=0.7, kept=kept, extra={"candidates": cands, "chosen": 2})
        drawn, rows = ViewerSource._candidates(step, a)
        assert [r[5] for r in rows] == ["", "", label] and [c.best for c in drawn] == [False, False, True]
        assert rows[2][2:5] == ["0.600", "0.100", ""] and rows[0][4] == "yes"
