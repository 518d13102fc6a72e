"""The spine through the CLI: sft → collect → train → eval, the quick start and the Table-1 driver."""

import itertools
import json
from pathlib import Path

import pytest

from digirl.cli.main import main
from digirl.core.errors import ConfigError

TOY = [
    "env.id=digirl/toy-mixed-v0",
    "env.runner=inline",
    "env.num_envs=2",
    "policy.default.dim=32",
    "policy.default.layers=1",
    "policy.default.heads=2",
]


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_sft_collect_train_eval(tmp_path: Path, capsys):
    assert main(["sft", str(tmp_path / "sft"), *TOY, "sft.demos=8", "sft.steps=10", "--json"]) == 0
    res = _json(capsys)
    assert res["successful_demos"] == 8 and Path(res["policy"], "model.safetensors").is_file()
    pol = str(tmp_path / "sft" / "policy")
    assert main(["collect", str(tmp_path / "off"), *TOY, f"policy.init={pol}", "trajectories=6", "--json"]) == 0
    assert _json(capsys)["trajectories"] == 6
    args = [
        str(tmp_path / "run"),
        *TOY,
        "mode=off2on",
        f"offline_dataset={tmp_path / 'off'}",
        f"policy.init={pol}",
        "iterations=1",
        "rollout_size=3",
        "eval.test_tasks=0",
        "eval.train_tasks=3",
        "algo.offline_actor_steps=2",
        "algo.offline_critic_steps=2",
        "algo.actor_steps=2",
        "algo.critic_steps=2",
        "log.tensorboard=false",
        "--json",
    ]
    assert main(["train", *args]) == 0
    out = _json(capsys)
    assert out["iterations"] == 1 and out["final"][0]["episodes"] == 3
    assert (tmp_path / "run" / "config.yaml").is_file() and (tmp_path / "run" / "eval.md").is_file()
    # the online data says which policy version collected it; each update left its annotations
    from digirl.data.annotations import annotation_iterations, read_annotations
    from digirl.data.store import TrajectoryStore

    online = TrajectoryStore(tmp_path / "run" / "data", create=False).load(load_images=False)
    assert [t.policy_version for t in online] == [1, 1, 1]  # after the offline update
    assert annotation_iterations(tmp_path / "run" / "annotations") == [0, 1]
    notes = read_annotations(tmp_path / "run" / "annotations")
    assert {n.traj_id for n in notes} >= {t.traj_id for t in online}
    assert main(["eval", str(tmp_path / "run" / "policy"), *TOY, "eval.test_tasks=0", "eval.train_tasks=4", "--json"]) == 0
    assert _json(capsys)["train"]["episodes"] == 4
    # eval.sampled: the sampled evaluation beside the greedy one, in its own report
    ev = tmp_path / "ev"
    assert (
        main(
            [
                "eval",
                str(tmp_path / "run" / "policy"),
                *TOY,
                "eval.test_tasks=0",
                "eval.train_tasks=4",
                "eval.sampled=true",
                "--out",
                str(ev),
                "--json",
            ]
        )
        == 0
    )
    both = _json(capsys)
    assert both["train"]["episodes"] == both["train_sampled"]["episodes"] == 4
    assert (ev / "eval.json").is_file() and json.loads((ev / "eval-sampled.json").read_text())["train"]["episodes"] == 4
    # resuming a finished run is a no-op that still reports
    assert main(["train", str(tmp_path / "run"), "--json"]) == 0
    assert _json(capsys)["iterations"] == 1


def test_incompatible_modes_are_clear_errors(tmp_path: Path):
    with pytest.raises(ConfigError, match="offline_dataset"):
        main(["-vv", "train", str(tmp_path / "r"), *TOY, "mode=offline"])
    assert main(["train", str(tmp_path / "r2"), *TOY, "mode=offline"]) == 2  # one clear line, no traceback


def test_quickstart_tiny_budget(tmp_path: Path):
    from digirl.training.quickstart import quickstart

    s = quickstart(tmp_path / "qs", budget="tiny", num_envs=1)
    assert 0.0 <= s["sft_test_success"] <= 1.0 and 0.0 <= s["final_test_success"] <= 1.0
    assert (tmp_path / "qs" / "learning_curve.png").is_file() and (tmp_path / "qs" / "quickstart.json").is_file()


@pytest.mark.slow
def test_table1_smoke_preset(tmp_path: Path, capsys):
    args = [
        "ablations=true",
        "only=[fbc_off2on,digirl_off2on,digirl_off2on_mc]",
        "variants=[xfit|digirl|off2on|algo.critic_folds=2]",
    ]
    assert main(["bench", "table1", str(tmp_path / "t1"), "--preset", "table1-smoke", *args, "--json"]) == 0
    s = _json(capsys)
    rows = s["results"]["general"]
    assert set(rows) == {"sft", "fbc_off2on", "digirl_off2on", "digirl_off2on_mc", "xfit"}
    assert s["failed_runs"] == []
    # what decides whether the numbers repeat bit for bit on another host is recorded with them
    m = s["machine"]
    assert m["torch"] and m["torch_cpu_capability"] and m["cpu_model"] and m["cpus"] >= 1
    pairs = {(r["a"], r["b"]) for r in s["paired"]["general"]}
    assert pairs == {("digirl_off2on", "fbc_off2on"), ("digirl_off2on_mc", "digirl_off2on"), ("xfit", "digirl_off2on")}
    md = (tmp_path / "t1" / "table1.md").read_text()
    assert "Off-to-on · DigiRL" in md and "MC-return" in md and "Paired comparisons" in md
    assert (tmp_path / "t1" / "curves.png").is_file()
    # per-family test success: final (counts add up to each run's score) and along the off2on runs
    fams = s["test_families_by_seed"]["general"]
    assert set(fams) == set(rows)
    for key, by_seed in fams.items():
        for seed, per in by_seed.items():
            won, n = sum(k for k, _ in per.values()), sum(e for _, e in per.values())
            assert won / n == pytest.approx(s["test_by_seed"]["general"][key][seed])
    fam_curve = s["test_family_curves"]["general"]["digirl_off2on"]["0"]
    assert fam_curve and all(isinstance(per, dict) and per for _, per in fam_curve)
    assert "Test success per family (general" in md
    # the ablation runs really got their overrides (the resolved config is saved with each run)
    saved = (tmp_path / "t1" / "general-s0" / "digirl_off2on_mc" / "config.yaml").read_text()
    assert "advantage: mc" in saved
    assert "critic_folds: 2" in (tmp_path / "t1" / "general-s0" / "xfit" / "config.yaml").read_text()
    # the same command again reads every finished run back (the real CLI's arguments match) and runs nothing
    assert main(["bench", "table1", str(tmp_path / "t1"), "--preset", "table1-smoke", *args, "--json"]) == 0
    again = _json(capsys)
    assert again["reused_runs"] == sorted(f"general-s0/{k}" for k in rows if k != "sft")
    assert again["test_by_seed"] == s["test_by_seed"]


def test_table1_family_table_pools_seeds():
    from digirl.experiments.table1 import Table1Config, families_markdown

    cfg = Table1Config(sets=["general"], only=["fbc_off2on"])
    fams = {
        "general": {
            "sft": {0: {"web": [1, 4], "alarm": [0, 1]}, 1: {"web": [3, 4], "alarm": [1, 1]}},
            "fbc_off2on": {0: {"web": [4, 4], "alarm": [0, 1]}},
        }
    }
    md = families_markdown(fams, cfg)
    lines = md.strip().splitlines()
    assert lines[2] == "| family | sft | fbc_off2on |"
    assert lines[4] == "| web | 50% (8) | 100% (4) |"  # the most frequent family first
    assert lines[5] == "| alarm | 50% (2) | 0% (1) |"


def test_table1_spreads_runs_over_gpus():
    from digirl.experiments.subruns import child_env, visible_gpus
    from digirl.experiments.table1 import Table1Config

    assert child_env(3)["CUDA_VISIBLE_DEVICES"] == "3"
    assert visible_gpus(Table1Config(device="cpu")) == 0
    assert visible_gpus(Table1Config(gpus=4)) == 4


def test_bench_online_smoke_preset(tmp_path: Path, capsys):
    """``digirl bench online``: every online method from one SFT policy (pixels only), curves by trajectories
    and by env steps, paired rows against DigiRL online at equal env steps; a rerun reads every run back."""
    out = tmp_path / "online"
    assert main(["bench", "online", str(out), "--preset", "bench-online-smoke", "--json"]) == 0
    s = _json(capsys)
    keys = {"digirl_online", "fbc_online", "grpo", "ppo", "branch"}
    assert set(s["results"]["general"]) == {"sft", *keys} and s["failed_runs"] == []
    assert s["observation"] == "screenshot" and not (out / "general-s0" / "offline-large").exists()
    steps = s["env_step_curves_by_seed"]["general"]
    assert set(steps) == keys
    for key in keys:
        curve = steps[key]["0"]
        assert curve[0][0] == 0 and all(a[0] < b[0] for a, b in itertools.pairwise(curve))
    # branching executes extra env steps per trajectory: more steps for the same 8 trajectories
    assert steps["branch"]["0"][-1][0] > steps["grpo"]["0"][-1][0]
    eq = s["at_equal_env_steps"]["general"]
    assert eq["env_steps"] == min(c["0"][-1][0] for c in steps.values())
    assert {(r["a"], r["b"]) for r in eq["paired"]} == {(k, "digirl_online") for k in keys - {"digirl_online"}}
    assert "group_size: 2" in (out / "general-s0" / "grpo" / "config.yaml").read_text()
    md = (out / "online.md").read_text()
    assert "Online · ppo" in md and "At equal env steps" in md and (out / "curves_env_steps.png").is_file()
    assert main(["bench", "online", str(out), "--preset", "bench-online-smoke", "--json"]) == 0
    assert _json(capsys)["reused_runs"] == sorted(f"general-s0/{k}" for k in keys)
