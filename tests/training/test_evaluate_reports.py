"""Evaluation reports: failed episodes per family are kept in memory and, on request, linked as GIFs."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from digirl.core.types import Trajectory
from digirl.training.evaluate import LOOP_WINDOW, failure_mode, is_looping, summarize, write_reports
from tests.data.trajfactory import build_traj, frame


def _trajs() -> list:
    return [
        *[build_traj(2, seed=i, family="tap", success=False) for i in range(5)],
        build_traj(2, seed=9, family="tap", success=True),
        build_traj(3, seed=11, family="type|x", success=False),
        build_traj(2, seed=12, family="type|x", success=False, env_failure=True),
    ]


def test_summarize_keeps_a_few_failures_per_family_out_of_the_json() -> None:
    r = summarize(_trajs(), "test", keep_failures=2)
    assert {k: len(v) for k, v in r.failures.items()} == {"tap": 2, "type|x": 1}  # env failures are not failures
    d = r.to_dict()
    assert "failures" not in d and d["episodes"] == 7 and d["ci95"] == list(r.ci95)
    json.dumps(d)


def test_reports_without_gifs_by_default(tmp_path: Path) -> None:
    write_reports([summarize(_trajs(), "test")], tmp_path)
    assert not list(tmp_path.glob("*-failures")) and "Failed episodes" not in (tmp_path / "eval.md").read_text()


def test_failure_gifs_are_written_and_linked(tmp_path: Path) -> None:
    pytest.importorskip("imageio.v3")
    reports = [summarize(_trajs(), "test"), summarize(_trajs()[:2], "train")]
    write_reports(reports, tmp_path, name="eval-iter0003", failure_gifs=1)
    gifs = sorted(p.name for p in (tmp_path / "eval-iter0003-failures").iterdir())
    assert gifs == ["test-tap-0.gif", "test-type_x-0.gif", "train-tap-0.gif"]
    md = (tmp_path / "eval-iter0003.md").read_text()
    assert "(eval-iter0003-failures/test-type_x-0.gif)" in md and "Tap the type|x 11" not in md  # pipes escaped
    data = json.loads((tmp_path / "eval-iter0003.json").read_text())
    assert data["test"]["failure_gifs"]["tap"][0]["gif"] == "eval-iter0003-failures/test-tap-0.gif"


def _cycle(period: int, n_steps: int = 8, *, screens: int | None = None) -> Trajectory:
    """A failed episode whose step i shows screen i % screens and takes action i % period."""
    t = build_traj(n_steps, seed=3, success=False)
    shots = [frame(1000 + k) for k in range(screens or period)]
    for i, s in enumerate(t.steps):
        s.observation = replace(s.observation, screenshot=shots[i % len(shots)])
        s.action_text = f"action {i % period}"
    return t


@pytest.mark.parametrize(
    ("period", "screens", "mode"),
    [
        (1, 1, "looping"),  # the same tap on a screen it does not change
        (2, 2, "looping"),  # enter / tap / enter / tap between two screens
        (3, 3, "looping"),  # a cycle of three (screen, action) pairs, gone round twice
        (4, 4, "out_of_steps"),  # a longer cycle is not called a loop
        (1, 8, "out_of_steps"),  # the same action, a new screen every time (scrolling a list)
    ],
)
def test_out_of_steps_episodes_going_round_a_cycle_are_looping(period: int, screens: int, mode: str) -> None:
    t = _cycle(period, screens=screens)
    assert t.truncated and failure_mode(t) == mode
    assert summarize([t], "test").failure_modes == {mode: 1}


def test_looping_needs_a_full_window_and_an_episode_out_of_steps() -> None:
    assert not is_looping(_cycle(1, n_steps=LOOP_WINDOW - 1))
    assert is_looping(_cycle(1, n_steps=LOOP_WINDOW))
    done = build_traj(LOOP_WINDOW, seed=3, success=True, repeat_frames=True)
    for s in done.steps:
        s.action_text = "same"
    assert is_looping(done) and failure_mode(done) == "success"  # the label is for failures only
