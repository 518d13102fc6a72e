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
from digirl.sim.coverage import coverage_report, coverage_report_file
from tests.sim.conftest import aitw_dir

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


def test_expected_families_from_a_tsv_file(tmp_path: Path) -> None:
    f = tmp_path / "mine.tsv"
    f.write_text(
        "toggle_setting\tTurn off wifi\tsetting=wifi;state=off\n"
        "make_call\tCall Bob\tcontact=Robert\n"
        "open_app\tText Mom that I'm home\n"
        "web_search\tMake me a sandwich\n",
        encoding="utf-8",
    )
    r = coverage_report_file(f, run_expert=False)
    exp = r["expected"]
    assert exp["lines"] == 4 and exp["right_family"] == 2 and exp["rate"] == pytest.approx(0.5)
    assert [w["line"] for w in exp["wrong"]] == [3, 4] and exp["wrong"][0]["got"] == "send_message"
    assert "no task family" in exp["wrong"][1]["reason"]
    assert exp["slot_mismatches"] == [{"line": 2, "text": "Call Bob", "slots": {"contact": ["Robert", "Bob"]}}]
    assert r["families"]["open_app"] == {"lines": 0, "solved": 0, "episodes": 0, "successes": 0, "expected": 1, "right": 0}
    assert r["how"] == {"rule": 3, "normalized": 0, "question": 0}


def test_cli_families_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "fam.yaml"
    spec.write_text(
        "families:\n"
        "  - name: stopwatch_tab_cli\n"
        "    phrasings: ['show the stopwatch tab']\n"
        "    success: [{state: clock.tab, equals: Stopwatch}, {state: app, equals: clock}]\n"
        "    plan: [{open_app: Clock}, {tap: clock.tab.stopwatch}]\n",
        encoding="utf-8",
    )
    tasks = tmp_path / "t.txt"
    tasks.write_text("Show the stopwatch tab\nTurn on Bluetooth\nWater the plants\n", encoding="utf-8")
    root = argparse.ArgumentParser()
    add_coverage_parser(root.add_subparsers())
    args = root.parse_args(["coverage", "--task-file", str(tasks), "--families", str(spec), "--json", "--perturbation", "2"])
    assert args.func(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["parsed"] == 2 and out["solved"] == 2 and out["families"]["stopwatch_tab_cli"]["solved"] == 1
    assert out["unsupported"][0]["line"] == 3 and "no task family" in out["unsupported"][0]["reason"]
    args = root.parse_args(["coverage", "--task-file", str(tasks), "--families", str(spec), "--no-expert"])
    assert args.func(args) == 0
    text = capsys.readouterr().out
    assert "rejected" in text and "Water the plants" in text


@pytest.mark.skipif(aitw_dir() is None, reason="AitW reference lines not present (../shared/aitw or $DIGIRL_AITW_DIR)")
@pytest.mark.parametrize("name", ["general_train", "general_test", "webshop_train", "webshop_test"])
def test_aitw_reference_lines_parsed_and_solved(name: str) -> None:
    folder = aitw_dir()
    assert folder is not None
    r = coverage_report_file(folder / f"{name}.txt", perturbation=1, seeds=(0,))
    assert r["parse_rate"] >= 0.995 and r["solved"] / r["lines"] >= 0.995, (r["unsupported"], r["failures"])
