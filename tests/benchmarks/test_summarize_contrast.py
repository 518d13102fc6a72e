"""``benchmarks/studies/summarize_contrast.py``: methods and seeds read from commands, paired at equal counts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.studies.summarize_contrast import collect, contrast, runs_of

_CMD = "benchmarks/studies/time_to_target.py --out O --set general --seed {seed} --target 0.85"


def _curve(*tests: float) -> list[dict[str, Any]]:
    return [
        {"online_trajectories": 256 * i, "wall_s": 0.0, "train_wall_s": 0.0, "test_success": t, "validation_success": t}
        for i, t in enumerate(tests)
    ]


def _single(seed: int, train: str, *tests: float) -> dict[str, Any]:
    return {"command_line": _CMD.format(seed=seed) + f" -- env.num_envs=16 {train}", "curve": _curve(*tests)}


def _arms(seed: int, digirl: list[float], fbc: list[float]) -> dict[str, Any]:
    return {
        "command_line": _CMD.format(seed=seed) + " --arm digirl --arm fbc algo.name=filtered_bc -- iterations=80",
        "arms": {
            "digirl": {"train_overrides": [], "curve": _curve(*digirl)},
            "fbc": {"train_overrides": ["algo.name=filtered_bc"], "curve": _curve(*fbc)},
        },
    }


def test_runs_of_reads_method_and_seed_from_both_result_forms() -> None:
    assert [(m, s) for m, s, _ in runs_of(_single(3, "algo.name=filtered_bc", 0.1))] == [("filtered_bc", 3)]
    assert [(m, s) for m, s, _ in runs_of(_single(4, "", 0.1))] == [("digirl", 4)]
    assert [(m, s) for m, s, _ in runs_of(_arms(5, [0.1], [0.2]))] == [("digirl", 5), ("filtered_bc", 5)]


def test_contrast_pairs_seeds_at_counts_every_run_reached(tmp_path: Path) -> None:
    files = []
    for i, result in enumerate(
        [
            _single(0, "", 0.2, 0.4, 0.5, 0.9),  # an older, longer DigiRL run of seed 0
            _arms(0, [0.2, 0.4, 0.5], [0.2, 0.6, 0.7]),  # repeats it at every shared count
            _arms(1, [0.3, 0.5], [0.3, 0.6]),
            _single(2, "algo.name=filtered_bc", 0.1, 0.2),  # no DigiRL run of seed 2: listed, not paired
        ]
    ):
        files.append(tmp_path / f"r{i}.json")
        files[-1].write_text(json.dumps(result))
    curves, notes = collect(files)
    assert notes == ["digirl seed 0 ran twice; equal at shared counts (r1.json used)"]
    c = contrast(curves, "digirl", "filtered_bc")
    assert c["seeds"] == [0, 1] and c["only_b"] == [2] and c["only_a"] == []
    assert list(c["points"]) == ["0", "256", "end"]  # 512 was not reached by seed 1
    row = c["points"]["256"]["test"]
    assert row["a"] == [0.4, 0.5] and row["b"] == [0.6, 0.6]
    assert row["b_minus_a"]["mean"] == pytest.approx(0.15)
    assert (row["b_minus_a"]["wins"], row["b_minus_a"]["losses"]) == (2, 0)
    assert c["points"]["end"]["online_trajectories"] == {"digirl": [512, 256], "filtered_bc": [512, 256]}


def test_a_repeat_that_differs_is_reported(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(_single(0, "", 0.2, 0.4)))
    (tmp_path / "b.json").write_text(json.dumps(_single(0, "", 0.2, 0.5)))
    _, notes = collect([tmp_path / "a.json", tmp_path / "b.json"])
    assert notes == ["digirl seed 0 ran twice; DIFFERENT at shared counts (b.json used)"]


def test_the_summary_records_what_the_runs_saw_and_chose_on(tmp_path: Path) -> None:
    from benchmarks.studies.summarize_contrast import inputs_provenance

    files = []
    for i, obs in enumerate(["screenshot", "screenshot+elements"]):
        files.append(tmp_path / f"r{i}.json")
        files[-1].write_text(json.dumps({**_single(i, "", 0.1), "observation": obs, "selection_split": "validation"}))
    meta = inputs_provenance(files)
    assert meta["observation"] == "screenshot | screenshot+elements"
    assert meta["selection_split"] == meta["runs_selection_split"] == "validation"
    assert meta["runs_gpu"] == "unrecorded" and "machine" in meta and "command" in meta
