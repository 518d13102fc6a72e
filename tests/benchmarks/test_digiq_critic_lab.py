"""``benchmarks/studies/digiq_critic_lab.py``: what an extraction cloned, the row order, and the seed summary."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchmarks.studies.digiq_critic_lab import _cloned, rows_of, summarize


def test_cloned_counts_noise_proposals_and_true_best():
    trajs = {"a": SimpleNamespace(metadata={"noisy_steps": [1]}), "b": SimpleNamespace(metadata={})}
    cands = {("a", 0): [0, 1], ("a", 1): [0, 1, 2], ("b", 0): [0]}
    true = {("a", 0, 0): 0.5, ("a", 0, 1): 0.9, ("a", 1, 0): 0.2, ("a", 1, 1): 0.2, ("a", 1, 2): 0.1, ("b", 0, 0): 1.0}
    # a/0 picks the proposal (true best), a/1 the noisy dataset action (tied best), b/0 has one candidate
    got = _cloned([("a", 0, 1), ("a", 1, 0), ("b", 0, 0)], trajs, cands, true)
    assert got["samples"] == 3.0
    assert got["noisy_dataset_action"] == pytest.approx(1 / 3)
    assert got["proposal"] == pytest.approx(1 / 3)
    assert got["best_true_value"] == 1.0 and got["true_regret"] == 0.0
    got = _cloned([("a", 0, 0)], trajs, cands, true)
    assert got["best_true_value"] == 0.0 and got["true_regret"] == pytest.approx(0.4)
    # a state without every candidate's true value counts in samples but not in the true-value shares
    got = _cloned([("a", 0, 0)], trajs, cands, {})
    assert got["samples"] == 1.0 and got["best_true_value"] != got["best_true_value"]  # NaN


def test_rows_start_with_baselines_and_n16_and_end_with_digirl():
    args = argparse.Namespace(extract_critics="base,element", digirl=True)
    rows = rows_of(args)
    assert rows[:6] == ["start", "fbc", "base:released-n16", "base:guard-n16", "element:released-n16", "element:guard-n16"]
    assert rows[-1] == "digirl" and len(rows) == 2 + 2 * 3 * 4 + 1 and len(set(rows)) == len(rows)


def test_summary_reads_every_seed(tmp_path: Path):
    for seed, (rho, val) in enumerate(((0.2, 0.5), (0.4, 0.25))):
        root = tmp_path / f"seed-{seed}"
        (root / "rows").mkdir(parents=True)
        keys = ("oracle/spearman", "oracle/spearman_within_state", "oracle/top1_agreement", "oracle/top1_dataset_action",
                "oracle/top1_random", "oracle/value_chosen", "oracle/value_dataset_action", "oracle/value_best")  # fmt: skip
        (root / "critic-base.json").write_text(json.dumps({k: rho for k in keys}))
        (root / "rows" / "fbc.json").write_text(json.dumps({"row": "fbc", "validation": val}))
    s = summarize(tmp_path, [0, 1], argparse.Namespace())
    assert s["critics"]["base"]["oracle/spearman_within_state"] == [0.2, 0.4]
    assert s["validation"] == {"fbc": [0.5, 0.25]} and s["train_tasks"] == {}


def test_render_writes_both_tables():
    from benchmarks.studies.digiq_critic_lab import render

    m = {k: [0.5, 0.25] for k in ("oracle/spearman_within_state", "oracle/top1_agreement", "oracle/top1_dataset_action",
                                  "oracle/top1_random", "oracle/spearman")}  # fmt: skip
    md = render({"critics": {"element": m}, "validation": {"start": [0.125]}})
    assert "| element (`algo.digiq.action_features=element`) | 0.50 / 0.25 (mean 0.38) |" in md
    assert "| start | 0.12 |" in md
    assert "| element | — | — | — | — |" in md  # no extractable figures recorded: said, not invented
    m |= {"oracle/extractable/spearman_within_state": [0.5, float("nan")]}
    md = render({"critics": {"element": m}, "validation": {}})
    assert "| element | 0.50 | — | — | — |" in md
