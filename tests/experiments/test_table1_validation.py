"""bench table1 evaluates validation beside test, passes the observation switch to every stage, and
records observation / selection split / GPU / command in table1.json."""

from __future__ import annotations

from pathlib import Path

from digirl.experiments.table1 import Table1Config, _cell_env, _observation, _train_args, table_markdown


def test_every_stage_gets_validation_tasks_and_the_observation_switch(tmp_path: Path) -> None:
    cfg = Table1Config(val_tasks=24, observation="screenshot")
    env = _cell_env(cfg, "general")
    assert "observation=screenshot" in env
    args = _train_args(cfg, tmp_path, env, "digirl_off2on", "digirl", "off2on", 0, ())
    assert "eval.val_tasks=24" in args and "observation=screenshot" in args


def test_table_prints_validation_beside_test() -> None:
    cfg = Table1Config(sets=["general"], seeds=[0, 1], val_tasks=96, test_tasks=96)
    raw = {"general": {"sft": {"train": [0.5, 0.5], "validation": [0.25, 0.35], "test": [0.2, 0.4]}}}
    md = table_markdown(raw, cfg)
    assert "| Method | general train | general validation | general test |" in md
    assert "| Supervised (SFT) | 50.0 ± 0.0 | 30.0 ± " in md  # the validation column, then test
    assert "validation = first 96 validation tasks in order" in md


def test_observation_recorded_from_the_settled_run_configs(tmp_path: Path) -> None:
    assert _observation(tmp_path, Table1Config(observation="screenshot")) == "screenshot"
    assert _observation(tmp_path, Table1Config()) == "unrecorded"
    for run, obs in (("sft", "screenshot"), ("digirl_off2on", "screenshot")):
        (tmp_path / "general-s0" / run).mkdir(parents=True)
        (tmp_path / "general-s0" / run / "config.yaml").write_text(f"seed: 0\nobservation: {obs}  # what it saw\n")
    assert _observation(tmp_path, Table1Config()) == "screenshot"
    (tmp_path / "general-s0" / "fbc_off2on").mkdir()
    (tmp_path / "general-s0" / "fbc_off2on" / "config.yaml").write_text("observation: auto\n")
    assert _observation(tmp_path, Table1Config()) == "mixed (see the runs' use_elements flags) | screenshot"
