"""Greedy vs sampled test success in Table 1 results (digirl/experiments/table1_sampled.py)."""

from __future__ import annotations

import pytest

from digirl.experiments.table1_sampled import sampled_comparison, sampled_markdown

GREEDY = {"webshop": {"digirl_off2on": {0: [(0, 0.25), (1024, 0.5)], 1: [(0, 0.5), (1024, 0.25)], 2: [(0, 0.5)]}}}
SAMPLED = {"webshop": {"digirl_off2on": {0: [(0, 0.5), (1024, 0.75)], 1: [(0, 0.5), (1024, 0.75)]}}}


def test_paired_over_seeds_with_both_protocols_at_shared_points() -> None:
    (row,) = sampled_comparison(GREEDY, SAMPLED)["webshop"]
    assert row["seeds"] == [0, 1]  # seed 2 has no sampled evaluation
    assert row["curve"] == [
        {"online_trajectories": 0, "greedy": 0.375, "sampled": 0.5},
        {"online_trajectories": 1024, "greedy": 0.375, "sampled": 0.75},
    ]
    d = row["sampled_minus_greedy"]
    assert d["online_trajectories"] == 1024 and d["n"] == 2
    assert d["mean"] == pytest.approx(0.375)  # (0.25 + 0.5) / 2
    assert (d["wins"], d["losses"]) == (2, 0)
    # sd of (0.25, 0.5) is 0.1768, its standard error 0.125; t(1) = 12.706: half-width 1.588 → not resolved
    assert d["ci_low"] == pytest.approx(0.375 - 12.706 * 0.125, abs=1e-3)
    assert not d["resolved"]
    assert row["final_greedy_by_seed"] == {0: 0.5, 1: 0.25}


def test_only_points_every_seed_evaluated_both_ways_count() -> None:
    sampled = {"webshop": {"digirl_off2on": {0: [(0, 0.5)], 1: [(0, 0.5), (1024, 0.75)]}}}
    (row,) = sampled_comparison(GREEDY, sampled)["webshop"]
    assert [p["online_trajectories"] for p in row["curve"]] == [0]
    assert row["sampled_minus_greedy"]["online_trajectories"] == 0


def test_markdown_and_empty_inputs() -> None:
    assert sampled_comparison(GREEDY, {}) == {} and sampled_markdown({}) == ""
    assert sampled_comparison({}, SAMPLED) == {}  # no greedy curve to pair with
    md = sampled_markdown(sampled_comparison(GREEDY, SAMPLED))
    assert "| 1024 | 37.5 | 75.0 |" in md
    assert "Sampled − greedy at 1024: +37.5 points" in md and "2 / 0 seeds" in md and "not resolved" in md
