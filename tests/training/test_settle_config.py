"""A saved config is what ran: a loaded policy fixes its architecture (an override that differs is an
error naming the key, the saved and the requested value, and nothing is created), the run's config
records the policy as loaded; ``observation=`` sets the policy, critics and Digi-Q encoder together."""

from __future__ import annotations

from pathlib import Path

import pytest

from digirl.cli.main import main
from digirl.config.core import load_config, load_config_file
from digirl.core.errors import ConfigError
from digirl.policies.config import KIND_CONFIGS, RUNTIME_KEYS, PolicyNetConfig
from digirl.policies.default import DefaultPolicy
from digirl.training.config import CollectConfig, EvalRunConfig, SFTRunConfig, TrainConfig
from digirl.training.settle import observation_of, settle_run_config

SMALL = dict(dim=16, layers=1, heads=2)


@pytest.fixture(scope="module")
def saved_with_elements(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pol") / "policy"
    DefaultPolicy(PolicyNetConfig(**SMALL, use_elements=True, word_dropout=0.3), device="cpu").save(path)  # type: ignore[arg-type]
    return path


@pytest.fixture(scope="module")
def saved_pixels_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pol") / "policy"
    DefaultPolicy(PolicyNetConfig(**SMALL, use_elements=False), device="cpu").save(path)  # type: ignore[arg-type]
    return path


def _settled(cls: type, overrides: list[str], **kw: object) -> object:
    return settle_run_config(load_config(cls, overrides=overrides), overrides=overrides, **kw)  # type: ignore[arg-type]


def test_cli_override_of_a_loaded_policys_architecture_fails_and_creates_nothing(
    saved_with_elements: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    rc = main(["train", str(run), f"policy.init={saved_with_elements}", "policy.default.use_elements=false", "iterations=0"])
    err = capsys.readouterr().err
    assert rc != 0
    assert "policy.default.use_elements=false" in err and "use_elements=true" in err and "requested false" in err
    assert not run.exists()
    out = tmp_path / "data"
    assert main(["collect", str(out), f"policy.init={saved_with_elements}", "policy.default.dim=32"]) != 0
    assert "saved with dim=16" in capsys.readouterr().err and not out.exists()
    assert main(["sft", str(tmp_path / "sft"), f"policy.init={saved_with_elements}", "observation=screenshot"]) != 0
    assert "observation=screenshot" in capsys.readouterr().err and not (tmp_path / "sft").exists()


def test_config_records_the_policy_as_loaded(saved_with_elements: Path) -> None:
    cfg = _settled(TrainConfig, [f"policy.init={saved_with_elements}", "policy.temperature=0.5"])
    assert isinstance(cfg, TrainConfig)
    assert (cfg.policy.default.dim, cfg.policy.default.layers, cfg.policy.default.word_dropout) == (16, 1, 0.3)
    assert cfg.policy.temperature == 0.5  # a run option of every kind
    assert cfg.observation == "screenshot+elements"
    # the same value as saved is no conflict
    same = _settled(EvalRunConfig, [f"policy.init={saved_with_elements}", "policy.default.dim=16"])
    assert same.policy.default.dim == 16  # type: ignore[attr-defined]


def test_observation_switch_sets_policy_critics_and_digiq_encoder() -> None:
    cfg = _settled(TrainConfig, ["observation=screenshot"])
    assert isinstance(cfg, TrainConfig)
    assert not cfg.policy.default.use_elements and not cfg.algo.critic.use_elements
    assert not cfg.algo.digiq.encoder.use_elements
    assert observation_of(cfg) == "screenshot" and cfg.observation == "screenshot"
    assert _settled(TrainConfig, []).observation == "screenshot+elements"  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match=r"observation=screenshot sets algo.critic.use_elements=false, but algo.critic"):
        _settled(TrainConfig, ["observation=screenshot", "algo.critic.use_elements=true"])
    with pytest.raises(ConfigError, match="must be one of auto, screenshot, screenshot\\+elements"):
        _settled(SFTRunConfig, ["observation=pixels"])


def test_auto_follows_the_loaded_policy_and_records_a_mixed_run(saved_pixels_only: Path) -> None:
    cfg = _settled(TrainConfig, [f"policy.init={saved_pixels_only}"])
    assert isinstance(cfg, TrainConfig)
    assert not cfg.algo.critic.use_elements and not cfg.algo.digiq.encoder.use_elements  # critics follow the policy
    assert cfg.observation == "screenshot"
    mixed = _settled(TrainConfig, [f"policy.init={saved_pixels_only}", "algo.critic.use_elements=true"])
    assert mixed.observation == "auto"  # type: ignore[attr-defined]
    assert observation_of(mixed) == "policy: screenshot; critics: screenshot+elements; digiq encoder: screenshot"
    with pytest.raises(ConfigError, match="saved with use_elements=false"):
        _settled(CollectConfig, [f"policy.init={saved_pixels_only}", "observation=screenshot+elements"])


def test_resumed_run_keeps_its_checkpoint_and_critics(saved_with_elements: Path, tmp_path: Path) -> None:
    from digirl.config.core import save_config

    run = tmp_path / "run"
    ckpt = run / "checkpoints" / "iter-000001"
    DefaultPolicy(PolicyNetConfig(**SMALL, use_elements=True), device="cpu").save(ckpt / "policy")  # type: ignore[arg-type]
    (run / "checkpoints" / "LATEST").write_text("iter-000001\n")
    first = _settled(TrainConfig, ["algo.critic.dim=32", "algo.critic.heads=2"])
    save_config(first, run / "config.yaml")
    saved = str(run / "config.yaml")

    def resume(*overrides: str) -> object:
        cfg = load_config(TrainConfig, preset=saved, overrides=list(overrides))
        return settle_run_config(cfg, preset=saved, overrides=list(overrides), run_dir=run)

    assert resume("iterations=20").policy.default.dim == 16  # type: ignore[attr-defined]  # as the checkpoint holds
    with pytest.raises(ConfigError, match=r"policy.default.layers=3: the policy in .*iter-000001/policy was saved with layers=1"):
        resume("policy.default.layers=3")
    with pytest.raises(ConfigError, match="resumes critics saved with dim=32"):
        resume("algo.critic.dim=64")
    assert load_config_file(TrainConfig, run / "config.yaml").algo.critic.dim == 32


def test_runtime_keys_are_one_list_of_real_fields() -> None:
    for kind, keys in RUNTIME_KEYS.items():
        cls = KIND_CONFIGS[kind][1]
        assert keys is None or set(keys) <= set(cls.__dataclass_fields__), kind
    assert RUNTIME_KEYS["default"] == ()


def test_a_saved_api_policy_is_recorded_with_its_kind_and_settings(tmp_path: Path) -> None:
    import json

    pol = tmp_path / "api"
    pol.mkdir()
    (pol / "policy.json").write_text(json.dumps({"kind": "api", "config": {"model": "served-vlm", "history_len": 2}}))
    cfg = _settled(EvalRunConfig, [f"policy.init={pol}", "policy.api.history_len=6"])
    assert isinstance(cfg, EvalRunConfig)
    assert cfg.policy.kind == "api" and cfg.policy.api.model == "served-vlm"
    assert cfg.policy.api.history_len == 6  # every api key is a run setting (no weights depend on it)
    assert cfg.observation == "screenshot"
    with pytest.raises(ConfigError, match="the run would see screenshot"):
        _settled(EvalRunConfig, [f"policy.init={pol}", "observation=screenshot+elements"])
