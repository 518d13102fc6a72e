"""Evaluation reports: failed episodes per family are kept in memory and, on request, linked as GIFs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from digirl.training.evaluate import summarize, write_reports
from tests.data.trajfactory import build_traj


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
