"""The Table 1 recipe presets are the configs of the recorded runs they cite."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest

from digirl.config.core import load_config
from digirl.experiments.table1 import Table1Config

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "table1"


@pytest.mark.parametrize(
    ("preset", "record"),
    [
        ("table1-recipe-general", "round2_gpu_3072_app_flags_stratified"),
        ("table1-recipe-webshop", "round2_gpu_3072_webshop_stratified"),
    ],
)
def test_recipe_preset_is_the_recorded_config(preset: str, record: str) -> None:
    path = RESULTS / record / "table1.json"
    if not path.is_file():
        pytest.skip(f"{path} is not in this checkout")
    recorded = json.loads(path.read_text())["config"]
    cfg = asdict(load_config(Table1Config, preset=preset))
    # Keys added after the record: validation evaluated beside test (evaluation only: training is the
    # same), the observation switch (auto: as the SFT flags say, as then), and the split the recipe was
    # chosen on (test, then: recorded so its test numbers are not read as held-out estimates), and the
    # method variants are compared with (DigiRL off2on, as then).
    added = {k: cfg.pop(k) for k in set(cfg) - set(recorded)}
    assert added == {"val_tasks": 96, "observation": "auto", "selection_split": "test", "baseline": "digirl_off2on"}
    assert cfg == recorded


def test_webshop_recipe_keeps_the_general_budget_and_drops_the_policy_flags() -> None:
    general = load_config(Table1Config, preset="table1-recipe-general")
    webshop = load_config(Table1Config, preset="table1-recipe-webshop")
    assert (webshop.sets, webshop.demos, webshop.sft_steps, webshop.sft_extra) == (["webshop"], 3, 45, [])
    assert (webshop.iterations, webshop.rollout_size, webshop.extra) == (general.iterations, general.rollout_size, general.extra)
    assert general.sft_extra and general.demo_sampling == webshop.demo_sampling == "stratified"


def test_online_variants_run_from_the_sft_policy_without_offline_data(tmp_path: Path) -> None:
    from digirl.experiments.table1 import Table1Config, _train_args, _variant, comparison_pairs, methods

    key, label, algo, mode, extra = _variant("grpo|grpo|online|group_size=4")
    assert (key, algo, mode, extra) == ("grpo", "grpo", "online", ("group_size=4",)) and label.startswith("Online · grpo")
    with pytest.raises(ValueError, match="offline, off2on or online"):
        _variant("x|ppo|onpolicy|")
    cfg = Table1Config(only=["sft"], baseline="digirl_online", variants=["digirl_online|digirl|online|", "ppo|ppo|online|"])
    assert [m[0] for m in methods(cfg)] == ["sft", "digirl_online", "ppo"]
    assert comparison_pairs(cfg) == [("ppo", "digirl_online")]
    args = _train_args(cfg, tmp_path, [], "ppo", "ppo", "online", 3, ())
    assert "mode=online" in args and f"iterations={cfg.iterations}" in args
    assert not any(a.startswith("offline_dataset=") for a in args)


def test_a_result_folder_from_before_a_new_setting_still_resumes(tmp_path: Path) -> None:
    import json

    from digirl.experiments import table1_resume as resume
    from digirl.experiments.table1 import Table1Config

    cfg = Table1Config().__dict__
    resume.check_config(tmp_path, cfg, defaults=cfg)
    path = tmp_path / resume.CONFIG_FILE
    old = json.loads(path.read_text())
    del old["baseline"]  # written before the setting existed
    path.write_text(json.dumps(old))
    resume.check_config(tmp_path, cfg, defaults=Table1Config().__dict__)  # its default: the same run
    with pytest.raises(ValueError, match="baseline"):
        resume.check_config(tmp_path, {**cfg, "baseline": "ppo"}, defaults=Table1Config().__dict__)


def test_a_result_folder_grows_by_more_seeds_and_sets_but_not_by_other_changes(tmp_path: Path) -> None:
    from digirl.experiments import table1_resume as resume

    base = Table1Config(sets=["general"], seeds=[0, 1]).__dict__
    resume.check_config(tmp_path, base)
    resume.check_config(tmp_path, {**base, "seeds": [0, 1, 2], "sets": ["general", "webshop"]})
    recorded = json.loads((tmp_path / resume.CONFIG_FILE).read_text())
    assert recorded["seeds"] == [0, 1, 2] and recorded["sets"] == ["general", "webshop"]
    with pytest.raises(ValueError, match="seeds"):  # dropping a seed is not growing
        resume.check_config(tmp_path, {**base, "seeds": [0, 2, 3], "sets": ["general", "webshop"]})
    with pytest.raises(ValueError, match="iterations"):
        resume.check_config(tmp_path, {**base, "seeds": [0, 1, 2, 3], "sets": ["general", "webshop"], "iterations": 99})
