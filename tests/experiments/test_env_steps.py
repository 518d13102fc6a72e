"""Methods compared at equal env steps: the common budget, each run's success within it, paired rows."""

from __future__ import annotations

import pytest

from digirl.experiments.env_steps import equal_steps_comparison, equal_steps_markdown, success_at


def test_success_at_is_the_last_evaluation_within_the_budget() -> None:
    curve = [(0, 0.1), (100, 0.3), (250, 0.6)]
    assert success_at(curve, 0) == 0.1
    assert success_at(curve, 249) == 0.3
    assert success_at(curve, 250) == 0.6
    assert success_at([(10, 0.5)], 9) is None


def test_the_budget_is_the_fewest_env_steps_any_compared_run_ended_with() -> None:
    # branch executes extra steps per trajectory: its last evaluations lie beyond the others' budget
    curves = {
        "general": {
            "digirl": {0: [(0, 0.2), (300, 0.5), (600, 0.7)], 1: [(0, 0.1), (320, 0.4), (640, 0.6)]},
            "branch": {0: [(0, 0.2), (500, 0.6), (1000, 0.9)], 1: [(0, 0.1), (550, 0.7), (1100, 0.8)]},
        }
    }
    c = equal_steps_comparison(curves, [("branch", "digirl")])["general"]
    assert c["env_steps"] == 600
    assert c["success"] == {"branch": {0: 0.6, 1: 0.7}, "digirl": {0: 0.7, 1: 0.4}}
    (row,) = c["paired"]
    assert (row["a"], row["b"], row["seeds"]) == ("branch", "digirl", [0, 1])
    assert row["mean"] == pytest.approx(0.1)  # (-0.1 + 0.3) / 2
    assert row["wins"] == 1 and row["losses"] == 1 and not row["resolved"]
    md = equal_steps_markdown({"general": c})
    assert "600 online env steps" in md and "| branch − digirl | +10.0 |" in md
    assert "| digirl | 55.0 ± 21.2 | 2 |" in md  # sample std of 70 and 40


def test_methods_outside_the_pairs_do_not_set_the_budget() -> None:
    curves = {"webshop": {"a": {0: [(0, 0.0), (90, 1.0)]}, "b": {0: [(0, 0.0), (80, 0.5)]}, "c": {0: [(0, 0.0), (5, 0.0)]}}}
    c = equal_steps_comparison(curves, [("a", "b")])["webshop"]
    assert c["env_steps"] == 80 and c["success"] == {"a": {0: 0.0}, "b": {0: 0.5}}
    assert equal_steps_comparison({}, [("a", "b")]) == {}
