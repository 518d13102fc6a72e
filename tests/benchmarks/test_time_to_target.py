"""``benchmarks/studies/time_to_target.py``'s curve: test and validation success at every evaluation."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.studies.time_to_target import curve_from_metrics


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
