"""The ``digirl`` entry point, ``envs`` and ``config`` command groups (in-process, via ``main([...])``)."""

from __future__ import annotations

import importlib.util
import json
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from digirl.cli.main import main
from digirl.config import cfg_field
from digirl.config import sources as config_sources


@dataclass(frozen=True)
class DemoAlgo:
    lr: float = cfg_field(1e-4, "learning rate")
    name: str = cfg_field("digirl", "algorithm", choices=("digirl", "filtered_bc"))


@dataclass(frozen=True)
class DemoConfig:
    algo: DemoAlgo = cfg_field(DemoAlgo, "algorithm settings")
    steps: int = cfg_field(10, "training steps")
    api_key: str | None = cfg_field(None, "never printed")


@pytest.fixture
def demo_schema(monkeypatch: pytest.MonkeyPatch) -> str:
    import digirl.config as cfg_pkg

    monkeypatch.setattr(cfg_pkg, "CONFIG_SCHEMAS", {**cfg_pkg.CONFIG_SCHEMAS})
    cfg_pkg.register_schema("demo", f"{__name__}:DemoConfig")
    return "demo"


def test_top_level_help_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "envs" in out and "config" in out
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == __import__("digirl").__version__


def test_envs_list_json_parses(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["envs", "list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    ids = {e["id"] for e in data["envs"]}
    assert "digirl/toy-tap-v0" in ids and data["count"] == len(data["envs"])
    toy = next(e for e in data["envs"] if e["id"] == "digirl/toy-tap-v0")
    assert toy["installed"] is True and toy["requires"] == ""
    assert main(["envs", "list"]) == 0
    assert "digirl/toy-tap-v0" in capsys.readouterr().out


@pytest.mark.skipif(importlib.util.find_spec("digirl.envs.checker") is None, reason="checker not written yet")
def test_envs_check_toy_json(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["envs", "check", "digirl/toy-tap-v0", "--episodes", "1", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["env_id"] == "digirl/toy-tap-v0" and data["ok"] is True and rc == 0


def test_envs_check_unknown_id_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["envs", "check", "digirl/nope-v0"]) == 2
    assert "unknown env id" in capsys.readouterr().err


def test_config_show_with_overrides(demo_schema: str, capsys: pytest.CaptureFixture[str]) -> None:
    # overrides may come before or after options
    assert main(["config", "show", demo_schema, "algo.lr=3e-4", "--json", "steps=5", "api_key=sk-xyz"]) == 0
    out = capsys.readouterr().out
    data = json.loads(out)
    assert data["config"]["algo"] == {"lr": 3e-4, "name": "digirl"}
    assert data["config"]["steps"] == 5
    assert "sk-xyz" not in out and "api_key" not in data["config"]
    assert main(["config", "show", demo_schema, "algo.name=filtered_bc"]) == 0
    shown = yaml.safe_load(capsys.readouterr().out)  # the text form is a loadable config file
    assert shown["algo"]["name"] == "filtered_bc"


def test_config_show_errors_are_one_line(demo_schema: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "show", demo_schema, "algo.lrr=1"]) == 2
    assert "did you mean algo.lr?" in capsys.readouterr().err
    assert main(["config", "show", "no-such-schema"]) == 2
    assert "unknown config schema" in capsys.readouterr().err


def test_config_show_with_preset_file(demo_schema: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    preset = tmp_path / "fast.yaml"
    preset.write_text("steps: 2\nalgo:\n  lr: 0.01\n")
    assert main(["config", "show", demo_schema, "--preset", str(preset), "steps=3", "--json"]) == 0
    cfg = json.loads(capsys.readouterr().out)["config"]
    assert cfg["steps"] == 3 and cfg["algo"]["lr"] == 0.01


def test_config_keys_and_presets(
    demo_schema: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["config", "keys", demo_schema, "--json"]) == 0
    keys = {k["key"]: k for k in json.loads(capsys.readouterr().out)["keys"]}
    assert keys["algo.lr"]["type"] == "float" and keys["steps"]["help"] == "training steps"
    monkeypatch.setattr(config_sources, "_PRESET_DIRS", [tmp_path])
    (tmp_path / "quick.yaml").write_text("# a quick demo\nsteps: 1\n")
    assert main(["config", "presets", "--json"]) == 0
    presets = json.loads(capsys.readouterr().out)["presets"]
    assert presets == [{"name": "quick", "path": str(tmp_path / "quick.yaml"), "description": "a quick demo", "base": None}]


@pytest.mark.parametrize(
    ("behaviour", "rc", "ok"),
    [("pass", 0, True), ("verdict_fail", 1, False), ("assert_fail", 1, False)],
)
def test_envs_check_exit_codes(
    behaviour: str, rc: int, ok: bool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A stand-in checker, so the command's own logic is tested whatever the real checker reports.
    calls: list[dict[str, object]] = []

    def check_env(env: object, *, seeds: tuple[int, ...], check_expert: bool, max_tasks: int) -> dict[str, object]:
        calls.append({"seeds": seeds, "check_expert": check_expert, "max_tasks": max_tasks})
        if behaviour == "assert_fail":
            raise AssertionError("reset() is not deterministic")
        return {"ok": behaviour == "pass", "checks": 3}

    fake = types.ModuleType("digirl.envs.checker")
    fake.check_env = check_env  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "digirl.envs.checker", fake)
    assert main(["envs", "check", "digirl/toy-tap-v0", "--episodes", "3", "--no-expert", "--json"]) == rc
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is ok and data["env_id"] == "digirl/toy-tap-v0"
    assert calls == [{"seeds": (0, 1, 2), "check_expert": False, "max_tasks": 5}]
    if behaviour == "assert_fail":
        assert data["error"] == "reset() is not deterministic"
    else:
        assert data["report"]["checks"] == 3
