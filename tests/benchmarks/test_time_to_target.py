"""``benchmarks/studies/time_to_target.py``'s curve: test and validation success at every evaluation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.studies.time_to_target import _arms, curve_from_metrics, paired, reach


def test_curve_has_validation_beside_test(tmp_path: Path) -> None:
    rows = [
        {"time": 110.0, "data/online_trajectories": 64},
        {"time": 120.0, "eval/test_success_rate": 0.5, "eval/validation_success_rate": 0.25, "timing_s/eval": 10.0},
        {"time": 150.0, "data/online_trajectories": 128},
        {"time": 170.0, "eval/test_success_rate": 0.75, "timing_s/eval": 5.0},
    ]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    curve = curve_from_metrics(tmp_path / "metrics.jsonl", t_start=100.0, offset_s=2.0)
    assert curve == [
        {"online_trajectories": 64, "wall_s": 12.0, "train_wall_s": 12.0, "test_success": 0.5, "validation_success": 0.25},
        {"online_trajectories": 128, "wall_s": 67.0, "train_wall_s": 57.0, "test_success": 0.75, "validation_success": None},
    ]


def _point(n: int, test: float, val: float | None = None) -> dict[str, Any]:
    seconds = float(n)
    return {"online_trajectories": n, "wall_s": seconds, "train_wall_s": seconds, "test_success": test, "validation_success": val}


def test_reach_reads_the_selection_split_and_reports_test_there() -> None:
    curve = [_point(0, 0.2, 0.1), _point(256, 0.9, 0.5), _point(512, 0.7, 0.86)]
    assert reach(curve, "validation", 0.85) == {
        "time_to_target_wall_s": 512.0,
        "time_to_target_train_s": 512.0,
        "trajectories_to_target": 512,
        "test_success_at_target": 0.7,
    }
    assert reach(curve, "test", 0.85)["trajectories_to_target"] == 256
    assert set(reach(curve, "validation", 0.95).values()) == {None}


def test_paired_compares_at_the_last_count_every_arm_reached_and_at_each_end() -> None:
    slow = [_point(0, 0.2), _point(256, 0.5), _point(512, 0.6)]
    fast = [_point(0, 0.2), _point(256, 0.4), _point(512, 0.7), _point(768, 0.8)]
    pair = paired({"digirl": slow, "fbc": fast})
    assert pair["equal_trajectories"] == 512
    assert pair["at_equal_trajectories"] == {
        "digirl": {"online_trajectories": 512, "test_success": 0.6, "validation_success": None},
        "fbc": {"online_trajectories": 512, "test_success": 0.7, "validation_success": None},
    }
    assert pair["at_end"]["fbc"] == {"online_trajectories": 768, "test_success": 0.8, "validation_success": None}
    assert pair["at_end"]["digirl"]["online_trajectories"] == 512


def test_arm_names_are_distinct_folder_names() -> None:
    assert _arms([["digirl"], ["fbc", "algo.name=filtered_bc"]]) == [("digirl", []), ("fbc", ["algo.name=filtered_bc"])]
    with pytest.raises(SystemExit, match="must differ"):
        _arms([["a"], ["a", "x=1"]])
    with pytest.raises(SystemExit, match="folder"):
        _arms([["../up"]])
