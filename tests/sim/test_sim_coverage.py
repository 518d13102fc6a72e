"""coverage_report: parse-only mode, the expert loop (with a scripted stand-in env), skipping, CLI."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from digirl.cli.sim_coverage import add_coverage_parser
from digirl.core.actions import Action
from digirl.core.types import TaskSpec
from digirl.sim import coverage
from digirl.sim.coverage import coverage_report

LINES = [
    "# a comment",
    "Set an alarm for 6pm",
    "",
    "Water the plants",
    "What's the weather like in Oslo?",
    "Go to ebay.com",
]
REASON = "no task family does 'Water the plants' on the simulated phone, and it is not a question to search for"


def test_parse_only() -> None:
    r = coverage_report(LINES, run_expert=False)
    assert r["lines"] == 4 and r["parsed"] == 3 and r["parse_rate"] == pytest.approx(0.75)
    assert r["unsupported"] == [{"line": 4, "text": "Water the plants", "reason": REASON}]
    assert r["families"]["set_alarm"]["lines"] == 1 and set(r["families"]) == {
        "set_alarm",
        "web_search",
        "shop_goto",
    }
    assert r["expert"]["ran"] is False and "not requested" in r["expert"]["skipped_reason"]
    assert r["solved"] is None and r["solve_rate"] is None
    json.dumps(r)  # JSON-serializable
    assert coverage_report(LINES, run_expert=False, max_lines=1)["lines"] == 1
    with pytest.raises(ValueError):
        coverage_report(LINES, taskset="nope")


class _ScriptedEnv:
    """Stands in for the simulator: the 'expert' needs 2 steps; alarm tasks never succeed."""

    def __init__(self) -> None:
        self.task: TaskSpec | None = None
        self.t = 0
        self.closed = False

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[None, dict[str, Any]]:
        self.task, self.t = (options or {})["task"], 0
        return None, {}

    def cheat(self) -> Action | None:
        return Action.home()

    def step(self, action: Action) -> tuple[None, float, bool, bool, dict[str, Any]]:
        assert self.task is not None
        self.t += 1
        if self.task.family == "set_alarm":
            return None, 0.0, False, self.t >= self.task.horizon, {}
        return None, float(self.t == 2), self.t == 2, False, {}

    def close(self) -> None:
        self.closed = True


def test_expert_loop_counts_successes_and_failures(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[tuple[str, int]] = []

    def fake_make(env_id: str, perturbation: int) -> tuple[Any, str]:
        made.append((env_id, perturbation))
        return _ScriptedEnv(), ""

    monkeypatch.setattr(coverage, "_make_env", fake_make)
    r = coverage_report(LINES, perturbation=2, seeds=(0, 1))
    assert sorted(made) == [("digirl/sim-general-v0", 2), ("digirl/sim-webshop-v0", 2)]
    assert r["expert"]["ran"] and r["expert"]["episodes"] == 6 and r["expert"]["successes"] == 4
    assert r["solved"] == 2 and r["solve_rate"] == pytest.approx(0.5)
    assert r["families"]["set_alarm"] == {"lines": 1, "solved": 0, "episodes": 2, "successes": 0}
    assert [f["line"] for f in r["failures"]] == [2, 2]
    assert "horizon (10 steps)" in r["failures"][0]["reason"]


def test_expert_skipped_when_env_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    from digirl.envs import registry

    def missing(env_id: str, **kw: Any) -> Any:
        raise KeyError(f"unknown env id {env_id!r}")

    monkeypatch.setattr(registry, "make", missing)
    r = coverage_report(LINES)
    assert r["expert"]["ran"] is False and "not available" in r["expert"]["skipped_reason"]
    assert r["parsed"] == 3 and r["failures"] == [] and r["solved"] is None


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = argparse.ArgumentParser()
    sub = root.add_subparsers()
    add_coverage_parser(sub)
    f = tmp_path / "t.txt"
    f.write_text("\n".join(LINES), encoding="utf-8")
    args = root.parse_args(["coverage", "--task-file", str(f), "--no-expert", "--json"])
    assert args.func(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["parsed"] == 3 and out["task_file"] == str(f)
    args = root.parse_args(["coverage", "--task-file", "general_test", "--no-expert"])
    assert args.func(args) == 0
    text = capsys.readouterr().out
    assert "432 instructions" in text and "web_search" in text
    with pytest.raises(FileNotFoundError):
        bad = root.parse_args(["coverage", "--task-file", str(tmp_path / "nope.txt")])
        bad.func(bad)
