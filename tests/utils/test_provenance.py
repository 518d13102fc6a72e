"""Every result JSON records how it was made: observation, selection split, GPU model, machine, command."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from digirl.training.evaluate import summarize, write_reports
from digirl.utils import provenance
from digirl.utils.provenance import gpu_name, result_metadata, run_context, set_run_context
from tests.data.trajfactory import build_traj


@pytest.fixture(autouse=True)
def _fresh_context() -> object:
    saved = run_context()
    yield
    provenance._CONTEXT.clear()
    provenance._CONTEXT.update(saved)


def test_result_metadata_fields() -> None:
    set_run_context(observation="screenshot", selection_split="validation")
    m = result_metadata(command=["digirl", "eval", "runs/p"])
    assert m["observation"] == "screenshot" and m["selection_split"] == "validation"
    assert m["command"] == ["digirl", "eval", "runs/p"]
    assert m["gpu"] == m["machine"]["gpu"] == gpu_name()
    assert {"platform", "python", "cpus", "cpu_model", "torch", "omp_num_threads"} <= set(m["machine"])
    assert result_metadata()["command"] == sys.argv
    assert result_metadata(observation="screenshot+elements", selection_split="test")["selection_split"] == "test"
    with pytest.raises(ValueError, match="selection_split must be one of"):
        set_run_context(selection_split="best")


def test_git_revision_is_recorded_and_can_be_given(monkeypatch: pytest.MonkeyPatch) -> None:
    provenance.git_revision.cache_clear()
    monkeypatch.setenv(provenance.REVISION_ENV, "abc1234")
    try:
        assert result_metadata()["git_revision"] == "abc1234"
        provenance.git_revision.cache_clear()
        monkeypatch.delenv(provenance.REVISION_ENV)
        rev = provenance.git_revision()
        if rev is None:
            pytest.skip("the tests run from a copy that is not a git checkout")
        # a 40-hex commit, maybe marked as having uncommitted changes
        assert len(rev.split("+")[0]) == 40 and rev.split("+")[1:] in ([], ["uncommitted"])
    finally:
        provenance.git_revision.cache_clear()


def test_gpu_name_is_the_device_model_or_none() -> None:
    import torch

    assert gpu_name() == (torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none")


def test_eval_json_carries_the_metadata(tmp_path: Path) -> None:
    trajs = [build_traj(2, seed=i, family="tap", success=i == 0) for i in range(3)]
    set_run_context(observation="screenshot", selection_split="validation")
    write_reports([summarize(trajs, "test"), summarize(trajs, "validation")], tmp_path)
    data = json.loads((tmp_path / "eval.json").read_text())
    assert data["test"]["split"] == "test" and data["validation"]["split"] == "validation"
    assert data["observation"] == "screenshot" and data["selection_split"] == "validation"
    assert data["gpu"] and data["machine"]["cpus"] >= 1 and isinstance(data["command"], list)


def test_the_cli_sets_the_context_from_the_settled_config() -> None:
    from digirl.config.core import load_config
    from digirl.core.errors import ConfigError
    from digirl.training.config import EvalRunConfig
    from digirl.training.settle import settle_run_config

    over = ["observation=screenshot", "eval.selection_split=validation"]
    settle_run_config(load_config(EvalRunConfig, overrides=over), overrides=over)
    assert run_context() == {"observation": "screenshot", "selection_split": "validation"}
    bad = ["eval.selection_split=best"]
    with pytest.raises(ConfigError, match=r"eval\.selection_split"):
        settle_run_config(load_config(EvalRunConfig, overrides=bad), overrides=bad)


def test_saved_observation_reads_settled_run_configs(tmp_path: Path) -> None:
    from digirl.utils.provenance import saved_observation

    a, b, c = tmp_path / "a.yaml", tmp_path / "b.yaml", tmp_path / "c.yaml"
    a.write_text("seed: 0\nobservation: screenshot  # what it saw\n")
    b.write_text("observation: 'screenshot+elements'\n")
    c.write_text("observation: auto\n")
    assert saved_observation([a]) == "screenshot"
    assert saved_observation([a, b]) == "screenshot | screenshot+elements"
    assert saved_observation([a, c]) == "mixed (see the runs' use_elements flags) | screenshot"
    assert saved_observation([tmp_path / "missing.yaml"]) == "unrecorded"
