"""Paired comparisons across two Table 1 results: exact numbers, start checks, row pairs, bad files."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from digirl.cli.main import main
from digirl.experiments.table1_compare import RowPair, compare_markdown, compare_results, load_table1_result

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "table1"


def _result(rows: dict[str, list[float]], **config: Any) -> dict[str, Any]:
    return {
        "config": {"demos": 24, "sft_extra": [], **config},
        "test_by_seed": {"general": {k: {str(s): v for s, v in enumerate(vals)} for k, vals in rows.items()}},
    }


def test_same_key_rows_exact_numbers_and_same_start() -> None:
    a = _result({"sft": [0.2, 0.1, 0.3], "digirl_off2on": [0.6, 0.7, 0.8]})
    b = _result({"sft": [0.2, 0.1, 0.3], "digirl_off2on": [0.5, 0.5, 0.5]})
    cmp = compare_results(a, b)
    assert cmp["config_diff"] == {}
    s = cmp["sets"]["general"]
    assert s["start_differs"] == [] and s["start_seeds"] == [0, 1, 2]
    sft, rl = s["rows"]
    assert (sft["a"], sft["mean"], sft["wins"], sft["losses"]) == ("sft", 0.0, 0, 0)
    # differences 0.1, 0.2, 0.3: mean 0.2, sample std 0.1, t(2) = 4.303
    half = 4.303 * 0.1 / math.sqrt(3)
    assert rl["mean"] == pytest.approx(0.2)
    assert (rl["ci_low"], rl["ci_high"]) == (pytest.approx(0.2 - half), pytest.approx(0.2 + half))
    assert (rl["wins"], rl["losses"], rl["resolved"], rl["seeds"]) == (3, 0, False, [0, 1, 2])  # -4.8 ... +44.8
    md = compare_markdown(cmp, "A", "B")
    assert "The configs are identical." in md and "the same SFT start at every common seed" in md
    assert "| general | digirl_off2on | 3 | +20.0 | -4.8 … +44.8 | 3 / 0 | no |" in md


def test_cross_key_pairs_common_seeds_and_a_different_start() -> None:
    a = _result({"sft": [0.2, 0.4], "digirl_off2on_mc": [0.5, 0.9]}, demo_sampling="stratified")
    b = _result({"sft": [0.2, 0.1, 0.3], "digirl_off2on": [0.6, 0.7, 0.8]}, demo_sampling="family")
    cmp = compare_results(a, b, [RowPair.parse("digirl_off2on_mc:digirl_off2on"), RowPair.parse("missing")])
    assert cmp["config_diff"] == {"demo_sampling": ["stratified", "family"]}
    s = cmp["sets"]["general"]
    assert s["start_differs"] == [1]
    (row,) = s["rows"]
    assert s["missing"] == ["missing:missing"]  # reported, not an error
    assert (row["a"], row["b"], row["seeds"], row["wins"], row["losses"]) == ("digirl_off2on_mc", "digirl_off2on", [0, 1], 1, 1)
    assert row["mean"] == pytest.approx(0.05)
    md = compare_markdown(cmp, "A", "B")
    assert "the SFT start differs at seeds [1]" in md and "demo_sampling: 'stratified' | 'family'" in md
    assert "| general | digirl_off2on_mc − digirl_off2on | 2 |" in md
    assert "no common seeds for missing:missing" in md


def test_row_pair_parse() -> None:
    assert RowPair.parse("x") == RowPair("x", "x")
    assert RowPair.parse("x:y") == RowPair("x", "y")
    for bad in ("", ":y", "x:"):
        with pytest.raises(ValueError, match="KEY_A:KEY_B"):
            RowPair.parse(bad)


def test_bad_files_name_themselves(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no Table 1 result here"):
        load_table1_result(tmp_path)
    bad = tmp_path / "table1.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match=r"table1\.json: not valid JSON"):
        load_table1_result(tmp_path)
    bad.write_text(json.dumps({"rows": []}))
    with pytest.raises(ValueError, match="not a Table 1 result"):
        load_table1_result(bad)


def test_cli_json_and_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, vals in (("a", [0.6, 0.7]), ("b", [0.5, 0.5])):
        (tmp_path / name).mkdir()
        (tmp_path / name / "table1.json").write_text(json.dumps(_result({"sft": [0.1, 0.2], "digirl_off2on": vals})))
    assert main(["bench", "compare", str(tmp_path / "a"), str(tmp_path / "b"), "--rows", "digirl_off2on", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sets"]["general"]["rows"][0]["mean"] == pytest.approx(0.15)
    assert main(["bench", "compare", str(tmp_path / "a"), str(tmp_path / "nowhere")]) != 0
    assert "nowhere" in capsys.readouterr().err


def test_reproduces_a_recorded_comparison() -> None:
    """The results README's recipe comparison: DigiRL +12.5 (CI -2.7 ... +27.7; 5 W / 0 L)."""
    a, b = RESULTS / "round2_gpu_3072_app_flags_stratified", RESULTS / "round2_gpu_3072_actor_steps"
    if not (a / "table1.json").is_file() or not (b / "table1.json").is_file():
        pytest.skip("recorded results are not in this checkout")
    cmp = compare_results(load_table1_result(a), load_table1_result(b), [RowPair("digirl_off2on", "digirl_off2on")])
    (row,) = cmp["sets"]["general"]["rows"]
    assert (round(100 * row["mean"], 1), round(100 * row["ci_low"], 1), round(100 * row["ci_high"], 1)) == (12.5, -2.7, 27.7)
    assert (row["wins"], row["losses"]) == (5, 0)
    assert cmp["sets"]["general"]["start_differs"] == [0, 1, 2, 3, 4]


def test_at_a_budget_pairs_the_curves_seed_by_seed() -> None:
    a = _result({"sft": [0.2, 0.1], "digirl_off2on_mc": [0.8, 0.9]})
    a["curves_by_seed"] = {"general": {"digirl_off2on_mc": {"0": [[0, 0.2], [64, 0.5]], "1": [[0, 0.1], [64, 0.4]]}}}
    b = _result({"sft": [0.2, 0.1], "digirl_off2on": [0.8, 0.9]})
    # an older result: curves listed in the order of its finished seeds
    b["curves"] = {"general": {"digirl_off2on": [[[0, 0.2], [64, 0.7]], [[0, 0.1], [64, 0.7]]]}}
    pairs = [RowPair("digirl_off2on_mc", "digirl_off2on"), RowPair("sft", "sft")]
    mc, sft = compare_results(a, b, pairs, at=64)["sets"]["general"]["rows"]
    assert mc["mean"] == pytest.approx(-0.25) and (mc["wins"], mc["losses"]) == (0, 2)
    assert sft["mean"] == 0.0  # the start is the start at any budget
    cmp = compare_results(a, b, pairs, at=128)  # no evaluation there
    assert cmp["sets"]["general"]["missing"] == ["digirl_off2on_mc:digirl_off2on"]
    md = compare_markdown(cmp, "A", "B")
    assert "test success at 128 online trajectories" in md and "or not evaluated at that budget" in md
    assert "final test success" in compare_markdown(compare_results(a, b, pairs), "A", "B")


def test_recorded_ablations_at_1024_online_trajectories() -> None:
    """The results README: the MC-return advantage learns slower than DigiRL's (-8.5, 0 W / 5 L)."""
    a, b = RESULTS / "round2_gpu_3072_recipe_general_ablations", RESULTS / "round2_gpu_3072_app_flags_stratified"
    if not (a / "table1.json").is_file() or not (b / "table1.json").is_file():
        pytest.skip("recorded results are not in this checkout")
    cmp = compare_results(load_table1_result(a), load_table1_result(b), [RowPair("digirl_off2on_mc", "digirl_off2on")], at=1024)
    (row,) = cmp["sets"]["general"]["rows"]
    assert (round(100 * row["mean"], 1), round(100 * row["ci_low"], 1), round(100 * row["ci_high"], 1)) == (-8.5, -12.6, -4.5)
    assert (row["wins"], row["losses"], row["resolved"]) == (0, 5, True)
    assert cmp["sets"]["general"]["start_differs"] == []
