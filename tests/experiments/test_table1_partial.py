"""Table 1's unfinished runs, as far as they got: their logged evaluations and paired comparisons."""

from __future__ import annotations

from pathlib import Path

import pytest

from digirl.experiments.table1_partial import partial_comparison, partial_curves, partial_markdown


def _metrics(path: Path, lines: list[str]) -> None:
    path.mkdir(parents=True)
    (path / "metrics.jsonl").write_text("\n".join(lines) + "\n")


def test_partial_curves_read_the_logged_test_evaluations(tmp_path: Path) -> None:
    _metrics(
        tmp_path / "webshop-s0" / "mc",
        [
            '{"step": 0, "eval/test_success_rate": 0.25, "eval/test_episode_length": 9.0}',
            '{"step": 0, "train/actor_loss": 0.5}',
            '{"step": 16, "eval/test_success_rate": 0.5}',
            '{"step": 17, "eval/test_succ',  # a write torn by the machine going away
        ],
    )
    _metrics(tmp_path / "webshop-s1" / "mc", ['{"step": 3, "train/actor_loss": 0.5}'])  # no evaluation yet
    unfinished = [("webshop", 0, "mc"), ("webshop", 1, "mc"), ("webshop", 2, "mc")]  # s2: no folder at all
    assert partial_curves(tmp_path, unfinished, rollout_size=64) == {"webshop": {"mc": {0: [(0, 0.25), (1024, 0.5)]}}}


def test_partial_comparison_pairs_seeds_at_the_last_point_all_reached() -> None:
    finished = {"webshop": {"digirl": {0: [(0, 0.1), (1024, 0.5), (2048, 0.9)], 1: [(0, 0.2), (1024, 0.6), (2048, 0.7)]}}}
    partial = {"webshop": {"mc": {0: [(0, 0.1), (1024, 0.25), (2048, 0.5)], 1: [(0, 0.2), (1024, 0.5)]}}}
    pairs = [("mc", "digirl"), ("fbc", "digirl"), ("digirl", "fbc")]  # no fbc runs: nothing to pair
    (row,) = partial_comparison(finished, partial, pairs)
    assert (row["a"], row["b"], row["at"], row["seeds"]) == ("mc", "digirl", 1024, [0, 1])  # s1 of mc stops at 1024
    assert row["a_by_seed"] == [0.25, 0.5] and row["b_by_seed"] == [0.5, 0.6]
    assert row["mean"] == pytest.approx(-0.175)  # (-0.25 - 0.1) / 2
    assert (row["wins"], row["losses"]) == (0, 2)
    assert partial_comparison(finished, {}, pairs) == []  # every run finished: the table says it all
    # only the start reached: nothing learned yet to compare
    assert partial_comparison(finished, {"webshop": {"mc": {0: [(0, 0.1)]}}}, pairs) == []


def test_partial_markdown_lists_each_seed_and_the_pairs() -> None:
    partial = {"webshop": {"mc": {1: [(0, 0.2), (1024, 0.5)], 0: [(0, 0.1)]}}}
    rows = partial_comparison({"webshop": {"digirl": {1: [(0, 0.2), (1024, 0.75)]}}}, partial, [("mc", "digirl")])
    md = partial_markdown(partial, rows)
    assert "- webshop · mc: s0 10.0@0; s1 20.0@0 / 50.0@1024" in md
    assert "| webshop | mc − digirl | 1024 | -25.0 |" in md
    assert partial_markdown({}, []) == ""
