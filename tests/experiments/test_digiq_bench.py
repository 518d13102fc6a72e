"""``digirl bench digiq``: the smoke preset end to end, and the table/interval helpers."""

import json
from pathlib import Path

import pytest

from digirl.cli.main import main
from digirl.experiments.digiq_bench import DigiQBenchConfig, methods, seed_interval, table_markdown


def test_seed_interval():
    assert seed_interval([0.5]) == (0.5, 0.5)
    lo, hi = seed_interval([0.4, 0.5, 0.6])  # mean .5, sd .1, t(2) = 4.30 → ± .248
    assert lo == pytest.approx(0.5 - 4.30 * 0.1 / 3**0.5) and hi == pytest.approx(0.5 + 4.30 * 0.1 / 3**0.5)


def test_table_lists_every_method_with_intervals():
    cfg = DigiQBenchConfig(sets=["general"], seeds=[0, 1])
    raw = {"general": {"sft": {"test": [0.1, 0.2]}, "digiq_offline": {"test": [0.5, 0.7], "train": [0.6, 0.6]}}}
    counts = {"general": {"digiq_offline": {"test": [[48, 96], [67, 96]]}}}
    oracle = {"general": {"digiq_offline": [{"oracle/spearman": 0.4, "oracle/states": 200}]}}
    md = table_markdown(raw, counts, oracle, cfg)
    assert "| Offline · Digi-Q | 60.0 ± 14.1 [" in md  # sample std of 50 and 70 and "Ablation · Digi-Q, random features" in md
    assert "| general | digiq_offline | 200 | 0.400 |" in md
    assert len(methods(cfg)) == 7 and len(methods(DigiQBenchConfig(ablations=False))) == 3


@pytest.mark.slow
def test_digiq_smoke_preset(tmp_path: Path, capsys):
    assert main(["bench", "digiq", str(tmp_path / "b"), "--preset", "digiq-smoke", "--json"]) == 0
    s = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert s["failed_runs"] == []
    rows = s["results"]["general"]
    assert set(rows) == {
        "sft",
        "fbc_offline",
        "digirl_offline",
        "digiq_offline",
        "digiq_no_repft",
        "digiq_n1",
        "digiq_n4",
        "digiq_random",
    }
    assert all(len(r["test"]) == 1 for r in rows.values())
    assert set(s["oracle"]["general"]) == {"digiq_offline", "digiq_no_repft", "digiq_n1", "digiq_n4", "digiq_random"}
    assert "bench digiq" in s["command"] or s["command"]
    md = (tmp_path / "b" / "digiq.md").read_text()
    assert "Offline · Digi-Q" in md and "Critic against ground truth" in md
    assert (tmp_path / "b" / "curves.png").is_file()
    cell = tmp_path / "b" / "general-s0"
    # the ablations got their overrides and all Digi-Q runs shared one stage folder
    assert "repft: false" in (cell / "digiq_no_repft" / "config.yaml").read_text()
    assert "encoder_init: random" in (cell / "digiq_random" / "config.yaml").read_text()
    assert len(list((cell / "digiq-stages" / "features").iterdir())) == 3  # fine-tuned, base, random


def test_variants_add_digiq_rows_and_reject_bad_specs():
    cfg = DigiQBenchConfig(ablations=False, variants=["digiq_n1_d0|algo.digiq.extract_candidates=1 algo.digiq.delta=0"])
    rows = methods(cfg)
    assert rows[-1] == (
        "digiq_n1_d0",
        "Variant · Digi-Q, algo.digiq.extract_candidates=1 algo.digiq.delta=0",
        "digiq",
        ("algo.digiq.extract_candidates=1", "algo.digiq.delta=0"),
    )
    for bad in ("no_bar", "digiq_n1|x=1", "|x=1", "a b|x=1"):
        with pytest.raises(ValueError, match="variants"):
            methods(DigiQBenchConfig(variants=[bad]))


def test_second_invocation_reuses_cells_and_runs_and_refuses_other_settings(tmp_path: Path, monkeypatch):
    import digirl.experiments.digiq_bench as bench

    cfg = DigiQBenchConfig(sets=["general"], seeds=[0], ablations=False, oracle_states=0)
    bench._check_resume(cfg, tmp_path)
    cell = tmp_path / "general-s0"
    cell.mkdir()
    (cell / "prepared.json").write_text(json.dumps({"sft_eval": [], "policy": "P", "env": ["e"], "data": "D"}))
    done = {"final": [{"split": "test", "successes": 3, "episodes": 4}], "overrides": ["algo.name=filtered_bc"]}
    (cell / "fbc_offline.json").write_text(json.dumps(done))

    def no_cli(*a, **k):
        raise AssertionError("nothing may run again")

    monkeypatch.setattr(bench, "run_cli", no_cli)
    prep = bench._prepare(cfg, tmp_path, "general", 0, None)
    assert prep["policy"] == "P" and prep["dir"] == cell
    res = bench._run(cfg, prep, "general", 0, "fbc_offline", "train", ("algo.name=filtered_bc",), None)
    assert res is not None and res["final"][0]["successes"] == 3
    with pytest.raises(ValueError, match="new KEY"):  # the same key asked with other overrides is not reused
        bench._run(cfg, prep, "general", 0, "fbc_offline", "train", ("algo.name=filtered_bc", "x=1"), None)
    # rows and cells may change between invocations; what shaped the data may not
    bench._check_resume(DigiQBenchConfig(sets=["webshop"], seeds=[1, 2], ablations=False, oracle_states=0), tmp_path)
    bench._check_resume(DigiQBenchConfig(sets=["general"], seeds=[0], ablations=True, oracle_states=0), tmp_path)
    with pytest.raises(ValueError, match="offline_trajectories"):
        bench._check_resume(
            DigiQBenchConfig(sets=["general"], seeds=[0], ablations=False, oracle_states=0, offline_trajectories=9), tmp_path
        )
