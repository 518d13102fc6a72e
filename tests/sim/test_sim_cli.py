"""``digirl sim render`` and ``digirl sim play``."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from digirl.cli.main import main
from digirl.cli.sim import parse_command
from digirl.core.actions import ActionType


def test_render_writes_frames_gif_and_outcome(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(
        [
            "sim",
            "render",
            "--task",
            "Set an alarm for 6:45 pm",
            "--out",
            str(tmp_path),
            "--seed",
            "2",
            "--perturbation",
            "1",
            "--json",
        ]
    )
    assert rc == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["success"] and out["intent"]["family"] == "set_alarm"
    pngs = sorted(tmp_path.glob("frame_*.png"))
    assert len(pngs) == out["steps"] + 1 and (tmp_path / "episode.gif").stat().st_size > 0


def test_render_unknown_instruction_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "render", "--task", "plorb the zax", "--out", str(tmp_path)]) == 2
    assert "error:" in capsys.readouterr().err


def test_parse_command_forms() -> None:
    assert parse_command("tap 0.5 0.3").touch == (0.5, 0.3)
    assert parse_command("swipe up").swipe_direction is not None
    assert parse_command("type hello world").text == "hello world"
    assert parse_command("back").type is ActionType.PRESS_BACK
    assert parse_command('{"action_type": "PRESS_HOME"}').type is ActionType.PRESS_HOME
    assert not parse_command("tap 2 3").is_valid
    assert not parse_command("dance").is_valid


def test_play_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("elements\nstate\nfoo\ntype x\nexpert\nexpert\nexpert\n"))
    rc = main(["sim", "play", "--task", "What is the capital of Peru?", "--out", str(tmp_path), "--perturbation", "0"])
    out = capsys.readouterr().out
    assert rc == 0 and (tmp_path / "screen.png").exists()
    assert "no_focus" in out and "episode over (success)" in out


def test_render_a_phone_task_and_a_user_family(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "render", "--task", "Take a selfie", "--out", str(tmp_path / "a"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["success"] and out["intent"] == {"family": "take_photo", "slots": {"mode": "selfie"}}
    spec = tmp_path / "fam.yaml"
    spec.write_text(
        "families:\n"
        "  - name: stopwatch_tab_render\n"
        "    phrasings: ['show the stopwatch tab']\n"
        "    success: [{state: clock.tab, equals: Stopwatch}, {state: app, equals: clock}]\n"
        "    plan: [{open_app: Clock}, {tap: clock.tab.stopwatch}]\n",
        encoding="utf-8",
    )
    args = ["sim", "render", "--task", "Show the stopwatch tab", "--families", str(spec), "--out", str(tmp_path / "b"), "--json"]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["success"]
