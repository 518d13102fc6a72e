"""``digirl quickstart --budget tiny``: fast, and it shows learning (an untrained policy vs SFT on the same tasks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from digirl.cli.main import build_parser, main


@pytest.mark.learning
def test_tiny_budget_shows_learning_from_demos(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    threads = torch.get_num_threads()
    assert main(["quickstart", "--budget", "tiny", "--out", str(tmp_path / "qs"), "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["budget"] == "tiny" and s["test_tasks"] == 8
    # Seed 0, deterministic: the untrained network solves none of the 8 test tasks, SFT on 16 demos 5.
    assert s["untrained"]["successes"] == 0 and s["untrained"]["episodes"] == 8
    assert s["sft"]["successes"] == 5 and s["sft_test_success"] == 0.625
    assert s["sft"]["mean_length"] < s["untrained"]["mean_length"] == 10.0
    assert 0.0 <= s["final_test_success"] <= 1.0
    assert (tmp_path / "qs" / "learning_curve.png").is_file()
    assert json.loads((tmp_path / "qs" / "quickstart.json").read_text())["untrained"]["successes"] == 0
    assert torch.get_num_threads() == threads  # the one-thread setting of tiny does not leak to the caller


def test_tiny_help_says_what_it_shows() -> None:
    p = build_parser()
    sub = next(a for a in p._actions if a.dest == "command")
    qs = sub.choices["quickstart"]  # type: ignore[attr-defined]
    budget = next(a for a in qs._actions if a.dest == "budget")
    assert "seconds (smoke test)" not in budget.help
    assert "untrained policy vs SFT" in budget.help and "smoke test" in budget.help
