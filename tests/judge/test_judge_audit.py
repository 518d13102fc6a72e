"""Judge audit (cases from a deterministic env's expert) and the `digirl judge` commands."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from digirl.cli import judge as judge_cli
from digirl.judge import VLMJudge
from digirl.judge.audit import run_audit
from digirl.judge.episodes import expert_cases
from digirl.testing.fake_openai import USAGE, FakeOpenAI


def _has_actions(req: dict[str, Any]) -> str:
    """An 'oracle' for toy tap tasks: a positive case is the screen after the expert's tap."""
    return "success" if "Recent actions:" in req["messages"][-1]["content"][0]["text"] else "failure"


def test_expert_cases_are_labelled_from_the_env() -> None:
    cases = expert_cases("digirl/toy-mixed-v0", 6, seed=3)
    assert [c.label for c in cases] == [True, False, True, False, True, False]
    for c in cases:
        assert c.screenshot.dtype == np.uint8
        if c.label:
            assert c.kind == "expert_success" and len(c.actions) == c.step >= 1
        else:
            assert c.kind == "early_stop" and c.step < 2 and len(c.actions) == c.step
    assert [c.seed for c in expert_cases("digirl/toy-mixed-v0", 6, seed=3)] == [c.seed for c in cases]


def test_audit_metrics_and_cost() -> None:
    cases = expert_cases("digirl/toy-tap-v0", 8, seed=0)
    with FakeOpenAI(default=_has_actions) as srv:
        # A toy tap does not change the screen, so a positive and a negative case can show the same
        # screen; the oracle answers from the actions, hence no (task, screen) cache here.
        judge = VLMJudge(srv.base_url, "m", examples="none", api_key_env="NO_SUCH_KEY_VAR", cache_size=0)
        rep = run_audit(judge, cases, concurrency=3, price_in_per_1k=0.01, price_out_per_1k=0.03)
    d = rep.to_dict()
    assert d["accuracy"] == 1.0 and d["precision"] == 1.0 and d["recall"] == 1.0 and d["undecided_rate"] == 0.0
    calls = d["calls"]
    assert calls == 8 and d["cache_hits"] == 0
    assert d["prompt_tokens"] == calls * USAGE["prompt_tokens"]
    assert d["estimated_cost_usd"] == pytest.approx(calls * (1.2 * 0.01 + 0.03 * 0.03))

    with FakeOpenAI(default="success") as srv:  # a judge that always says yes
        rep = run_audit(VLMJudge(srv.base_url, "m", examples="none"), cases)
    m = rep.metrics()
    assert m["precision"] == 0.5 and m["recall"] == 1.0 and m["accuracy"] == 0.5

    with FakeOpenAI(default="garbage") as srv:
        rep = run_audit(VLMJudge(srv.base_url, "m", examples="none"), cases)
    m = rep.metrics()
    assert m["undecided_rate"] == 1.0 and m["accuracy"] == 0.0 and m["precision"] is None and m["recall"] == 0.0

    with FakeOpenAI(default=503) as srv:
        rep = run_audit(VLMJudge(srv.base_url, "m", examples="none", max_retries=0), cases[:2])
    assert rep.metrics()["errors"] == 2 and rep.per_case[0]["verdict"] == "error"


def _run_cli(argv: list[str]) -> int:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers()
    judge_cli.add_commands(sub)
    args = p.parse_args(argv)
    return int(args.func(args))


def test_cli_audit_and_ask(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    img = tmp_path / "shot.png"
    Image.fromarray(np.full((64, 32, 3), 200, np.uint8)).save(img)
    with FakeOpenAI(default=_has_actions) as srv:
        common = ["--base-url", srv.base_url, "--model", "m", "--examples", "none", "--cache-size", "0"]
        rc = _run_cli(
            [
                "judge",
                "audit",
                *common,
                "--env",
                "digirl/toy-tap-v0",
                "--episodes",
                "4",
                "--price-in-per-1k",
                "0.001",
                "--json",
                "--call-log",
                str(tmp_path / "calls.jsonl"),
            ]
        )
        out = json.loads(capsys.readouterr().out)
        assert rc == 0 and out["cases"] == 4 and out["accuracy"] == 1.0 and out["estimated_cost_usd"] > 0
        assert len((tmp_path / "calls.jsonl").read_text().splitlines()) == out["calls"]
        rc = _run_cli(["judge", "audit", *common, "--env", "digirl/toy-tap-v0", "--episodes", "2", "--per-case"])
        text = capsys.readouterr().out
        assert rc == 0 and "precision" in text and "[ok ]" in text
        srv.default = "success"
        rc = _run_cli(["judge", "ask", *common, "--image", str(img), "--task", "Open the settings", "--json"])
        out = json.loads(capsys.readouterr().out)
        assert rc == 0 and out["verdict"] == "success" and out["requests"] == 1
        srv.default = "garbage"
        assert _run_cli(["judge", "ask", *common, "--image", str(img), "--task", "Open it"]) == 3
        assert capsys.readouterr().out.startswith("undecided")
    with pytest.raises(ValueError, match="cannot read image"):
        _run_cli(["judge", "ask", *common, "--image", str(tmp_path / "missing.png"), "--task", "x"])
    with pytest.raises(ValueError, match="--base-url and --model"):
        _run_cli(["judge", "ask", "--base-url", "", "--model", "", "--image", str(img), "--task", "x"])
