"""``benchmarks/studies/summarize_nonstationary.py`` on the committed launcher-update runs: the README's figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.studies.summarize_nonstationary import summarize, to_markdown

_RUNS = Path(__file__).resolve().parents[2] / "benchmarks/results/nonstationary/launcher_update"


def _load(n: int) -> list[dict]:
    return [json.loads((_RUNS / f"seed{i}" / "nonstationary.json").read_text()) for i in range(n)]


def test_means_paired_differences_and_recovered_share() -> None:
    s = summarize(_load(5), [f"seed{i}" for i in range(5)])
    assert s["versions"] == [0, 1, 2]
    assert s["table"]["2"]["frozen"]["mean"] == pytest.approx(0.140, abs=5e-4)
    assert s["table"]["2"]["continued"]["mean"] == pytest.approx(0.492, abs=5e-4)
    two = s["paired"]["2"]
    assert two["frozen_minus_first"]["mean"] == pytest.approx(-0.554, abs=5e-4)
    assert two["frozen_minus_first"]["losses"] == 5 and two["frozen_minus_first"]["resolved"]
    assert two["continued_minus_frozen"]["mean"] == pytest.approx(0.352, abs=5e-4)
    assert two["recovered_share"] == pytest.approx(0.352 / 0.554, abs=2e-3)
    assert s["paired"]["1"]["recovered_share"] is None  # a 0.2-point loss: no share reported
    md = to_markdown(s)
    assert "**-55.4 points**" in md and "**64%**" in md


def test_runs_of_other_versions_are_refused() -> None:
    runs = _load(2)
    runs[1] = {**runs[1], "config": {**runs[1]["config"], "versions": [0, 3, 4]}}
    with pytest.raises(ValueError, match="different world versions"):
        summarize(runs, ["a", "b"])
