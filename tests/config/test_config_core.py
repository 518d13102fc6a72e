"""Typed configs: defaults, presets with inheritance, dotted overrides, errors, secrets, round trips."""

# cfg_field() returns a dataclasses.Field, which RUF009 cannot know (until pyproject lists it in
# flake8-bugbear.extend-immutable-calls).

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Optional

import pytest
import yaml

from digirl.config import (
    CONFIG_SCHEMAS,
    cfg_field,
    config_help,
    config_to_dict,
    config_to_yaml,
    get_schema,
    list_presets,
    load_config,
    load_config_file,
    register_preset_dir,
    register_schema,
    save_config,
)
from digirl.config import sources as config_sources
from digirl.core.errors import ConfigError


class Device(enum.Enum):
    CPU = "cpu"
    CUDA = "cuda"


@dataclass(frozen=True)
class AlgoConfig:
    name: Literal["digirl", "filtered_bc"] = cfg_field("digirl", "algorithm to train")
    lr: float = cfg_field(1e-4, "learning rate")
    epochs: int = cfg_field(1, "passes over the buffer")
    hidden: list[int] = cfg_field([64, 64], "layer sizes")
    betas: tuple[float, float] = cfg_field((0.9, 0.999), "Adam betas")

    def __post_init__(self) -> None:
        if self.lr <= 0:
            raise ValueError(f"lr must be > 0, got {self.lr}")


@dataclass(frozen=True)
class EnvConfig:
    id: str = cfg_field("digirl/toy-tap-v0", "env id")
    perturbation: int = cfg_field(0, "perturbation level", choices=(0, 1, 2))
    kwargs: dict[str, int] = cfg_field({}, "extra env kwargs")


@dataclass(frozen=True)
class JudgeConfig:
    model: str = cfg_field("gpt-4o", "judge model")
    # typing.Optional must keep working, hence the old spelling
    api_key: Optional[str] = cfg_field(None, "judge API key", env="DEMO_JUDGE_KEY")  # noqa: UP045
    hf_token: str | None = cfg_field(None, "Hub token (no env var: dropped when saving)")
    password: str = cfg_field("", "a secret by metadata", secret=True)
    pad_token: str = cfg_field("<pad>", "not a secret despite the name", secret=False)


@dataclass(frozen=True)
class RunConfig:
    env: EnvConfig = cfg_field(EnvConfig, "environment")
    algo: AlgoConfig = cfg_field(AlgoConfig(lr=3e-4), "algorithm")
    judge: JudgeConfig = cfg_field(JudgeConfig, "judge")
    name: str = cfg_field("run", "run name")
    out_dir: Path = cfg_field(Path("runs"), "output directory")
    seed: int | None = cfg_field(0, "global seed (null: random)")
    compile: bool = cfg_field(False, "torch.compile the policy")
    device: Device = cfg_field(Device.CPU, "where to train")
    tags: tuple[str, ...] = cfg_field((), "free-form tags")


@pytest.fixture
def preset_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "presets"
    d.mkdir()
    monkeypatch.setattr(config_sources, "_PRESET_DIRS", [*config_sources._PRESET_DIRS])
    register_preset_dir(d)
    (d / "small.yaml").write_text("# a small run\nalgo:\n  lr: 1e-3\n  epochs: 2\nname: small\n")
    (d / "smaller.yaml").write_text("# inherits small\nbase: small\nalgo.epochs: 3\nenv:\n  perturbation: 1\n")
    return d


def test_defaults_and_nested_default_instance() -> None:
    cfg = load_config(RunConfig)
    assert cfg == RunConfig()
    assert cfg.algo.lr == 3e-4  # the parent's default instance, not the class default
    assert cfg.algo.hidden == [64, 64]
    assert RunConfig().algo.hidden is not RunConfig().algo.hidden  # mutable defaults are fresh copies


def test_preset_by_name_with_inheritance(preset_dir: Path) -> None:
    cfg = load_config(RunConfig, preset="smaller")
    assert cfg.algo.lr == 1e-3 and cfg.algo.epochs == 3  # base value, then child's dotted key
    assert cfg.name == "small" and cfg.env.perturbation == 1
    assert cfg.algo.hidden == [64, 64]  # untouched keys keep defaults
    names = {p.name: p for p in list_presets()}
    assert names["smaller"].base == "small" and names["small"].description == "a small run"


def test_preset_by_path_and_override_precedence(preset_dir: Path) -> None:
    cfg = load_config(RunConfig, preset=preset_dir / "small.yaml", overrides=["algo.lr=2e-5"])
    assert cfg.algo.lr == 2e-5 and cfg.algo.epochs == 2


def test_preset_errors(preset_dir: Path) -> None:
    with pytest.raises(ConfigError, match="did you mean small"):
        load_config(RunConfig, preset="smal")
    (preset_dir / "loop_a.yaml").write_text("base: loop_b\n")
    (preset_dir / "loop_b.yaml").write_text("base: loop_a\n")
    with pytest.raises(ConfigError, match="cycle"):
        load_config(RunConfig, preset="loop_a")
    (preset_dir / "bad.yaml").write_text("algo: [1, 2\n")
    with pytest.raises(ConfigError, match="invalid YAML"):
        load_config(RunConfig, preset="bad")
    with pytest.raises(ConfigError, match="not found"):
        load_config(RunConfig, preset=preset_dir / "missing.yaml")


def test_overrides_of_every_supported_type(tmp_path: Path) -> None:
    cfg = load_config(
        RunConfig,
        overrides=[
            "algo.lr=3e-4",  # YAML 1.1 reads this as a string; coerced to float
            "algo.epochs=4",
            "algo.name=filtered_bc",  # Literal
            "algo.hidden=[8,16]",  # list[int]
            "algo.betas=[0.5, 0.9]",  # fixed tuple
            "env.perturbation=1",
            "env.kwargs.mode=3",  # into a dict field
            "name=001",  # strings are taken as typed
            f"out_dir={tmp_path}",  # Path
            "seed=null",  # Optional
            "compile=yes",  # bool
            "device=cuda",  # Enum by value
            "tags=[a, b]",  # tuple[str, ...]
        ],
    )
    assert cfg.algo.lr == pytest.approx(3e-4) and isinstance(cfg.algo.lr, float)
    assert cfg.algo.epochs == 4 and cfg.algo.name == "filtered_bc"
    assert cfg.algo.hidden == [8, 16] and cfg.algo.betas == (0.5, 0.9)
    assert cfg.env.perturbation == 1 and cfg.env.kwargs == {"mode": 3}
    assert cfg.name == "001" and cfg.out_dir == tmp_path and isinstance(cfg.out_dir, Path)
    assert cfg.seed is None and cfg.compile is True and cfg.device is Device.CUDA
    assert cfg.tags == ("a", "b")
    assert load_config(RunConfig, overrides=["name=hello world", "seed=7"]).name == "hello world"


@pytest.mark.parametrize(
    ("override", "pattern"),
    [
        ("algo.lrr=1", r"unknown config key 'algo\.lrr'; did you mean algo\.lr\?"),
        ("alog.lr=1", r"unknown config key 'alog\.lr'; did you mean algo\.lr\?"),
        ("sede=1", r"did you mean seed\?"),
        ("algo.epochs=2.5", r"algo\.epochs: expected int, got '2\.5'"),
        ("algo.lr=fast", r"algo\.lr: expected float, got 'fast'"),
        ("compile=maybe", r"compile: expected bool"),
        ("algo.name=ppo", r"algo\.name: expected \{digirl,filtered_bc\}.*choose one of"),
        ("algo.hidden=8", r"algo\.hidden: expected list\[int\]"),
        ("algo.hidden=[8,x]", r"algo\.hidden\[1\]: expected int"),
        ("algo.betas=[0.5]", r"needs exactly 2 items"),
        ("name=null", r"name: expected str.*null"),
        ("env.perturbation=5", r"env\.perturbation: 5 is not one of 0, 1, 2"),
        ("algo.lr=-1", r"algo: lr must be > 0"),  # __post_init__ wrapped
        ("device=tpu", r"device: expected Device"),
        ("no_equals_sign", r"is not key=value"),
    ],
)
def test_override_errors_name_the_key(override: str, pattern: str) -> None:
    with pytest.raises(ConfigError, match=pattern):
        load_config(RunConfig, overrides=[override])


def test_wrong_type_in_preset_file(tmp_path: Path) -> None:
    p = tmp_path / "p.yaml"
    p.write_text("algo:\n  epochs: many\n")
    with pytest.raises(ConfigError, match=r"algo\.epochs: expected int, got 'many'"):
        load_config(RunConfig, preset=p)


def test_secrets_are_never_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = load_config(
        RunConfig,
        overrides=["judge.api_key=sk-live-123", "judge.hf_token=hf_abc", "judge.password=hunter2"],
    )
    assert cfg.judge.api_key == "sk-live-123"  # usable in memory
    saved = config_to_dict(cfg, for_save=True)["judge"]
    assert saved["api_key"] == "<from env DEMO_JUDGE_KEY>"
    assert "hf_token" not in saved and "password" not in saved
    assert saved["pad_token"] == "<pad>"  # secret=False overrides the name rule
    path = save_config(cfg, tmp_path / "config.yaml")
    text = path.read_text() + config_to_yaml(cfg)
    for secret in ("sk-live-123", "hf_abc", "hunter2"):
        assert secret not in text
    # the placeholder reads the variable back on load
    monkeypatch.setenv("DEMO_JUDGE_KEY", "sk-from-env")
    assert load_config_file(RunConfig, path).judge.api_key == "sk-from-env"
    monkeypatch.delenv("DEMO_JUDGE_KEY")
    assert load_config_file(RunConfig, path).judge.api_key is None


def test_save_load_round_trip(tmp_path: Path) -> None:
    cfg = load_config(
        RunConfig,
        overrides=[
            "name=multi\nline: 'x'",
            "algo.hidden=[1,2,3]",
            "tags=[yes, '1', '1e3', '2024-01-01', 'null']",
            "device=cuda",
            "seed=null",
        ],
    )
    path = save_config(cfg, tmp_path / "sub" / "config.yaml")
    assert not list(path.parent.glob(".*.tmp"))  # atomic write leaves no temp file
    text = path.read_text()
    assert "# learning rate" in text  # help text as comments
    assert isinstance(yaml.safe_load(text), dict)
    assert load_config_file(RunConfig, path) == cfg


def test_config_help_lists_leaf_keys() -> None:
    rows = {r[0]: r for r in config_help(RunConfig)}
    assert rows["algo.lr"][1:] == ("float", 3e-4, "learning rate")
    assert rows["seed"][1] == "int | null"
    assert rows["judge.api_key"][2] == "<from env DEMO_JUDGE_KEY>"
    assert "algo" not in rows and "env.kwargs" in rows


def test_schema_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("digirl.config.CONFIG_SCHEMAS", dict(CONFIG_SCHEMAS))
    register_schema("demo-run", f"{__name__}:RunConfig")
    assert get_schema("demo-run") is RunConfig
    with pytest.raises(ConfigError, match="unknown config schema"):
        get_schema("nope")
    with pytest.raises(ValueError, match="module:Class"):
        register_schema("bad", "no_colon")
