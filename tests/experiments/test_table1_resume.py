"""Resuming a Table 1 run: a second invocation in the same folder runs only what is missing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from digirl.core.actions import Action
from digirl.core.errors import DataError
from digirl.core.types import Observation, Step, TaskSpec, Trajectory
from digirl.experiments import table1
from digirl.experiments.table1 import Table1Config, run_table1
from digirl.experiments.table1_resume import CONFIG_FILE, portable_args


def _report(rate: float) -> dict[str, Any]:
    return {"split": "test", "episodes": 4, "success_rate": rate, "per_family": {"web": {"episodes": 4, "success_rate": rate}}}


class FakeCli:
    """Stands in for the ``digirl`` subprocesses: writes what each command leaves on disk, records the calls."""

    def __init__(self, fail: set[str] | None = None) -> None:
        self.calls: list[str] = []
        self.fail = fail or set()

    def __call__(self, args: list[str], log_file: Path, gpu: int | None = None, threads: int | None = None) -> dict[str, Any]:
        cmd, target = args[0], Path(args[args.index("--out") + 1] if args[0] == "eval" else args[1])
        self.calls.append(f"{cmd} {target.parent.name}/{target.name}")
        if cmd == "sft":
            (target / "policy").mkdir(parents=True)
            (target / "policy" / "policy.json").write_text('{"kind": "default"}')
            return {"policy": str(target / "policy")}
        if cmd == "eval":
            target.mkdir(parents=True)
            ev = {"test": _report(0.25)}
            (target / "eval.json").write_text(json.dumps(ev))
            return ev
        if cmd == "collect":
            from digirl.data.store import TrajectoryStore

            n = int(next(a for a in args if a.startswith("trajectories=")).split("=")[1])
            step = Step(Observation(np.zeros((4, 4, 3), np.uint8), "x"), Action.complete(), "", 1.0, True, False)
            trajs = [Trajectory(TaskSpec("x", family="web"), [step], traj_id=f"t{i}") for i in range(n)]
            TrajectoryStore(target, info={"env_id": "digirl/sim-general-v0"}).append(trajs)
            return {"trajectories": n}
        assert cmd == "train"
        if target.name in self.fail:
            raise RuntimeError(f"{target.name} failed")
        rate = 0.5 if "fbc" in target.name else 0.75
        evaluation = {"online_trajectories": 0, "eval/test_success_rate": 0.25}
        if target.name == "digirl_off2on":  # as with eval.sampled=true
            evaluation["eval/test_sampled_success_rate"] = 0.5
        return {"final": [_report(rate)], "history": [evaluation]}


CFG = dict(sets=["general"], seeds=[0, 1], iterations=1, rollout_size=2, offline_trajectories=2, test_tasks=4, train_tasks=0)


def _cfg(**kw: Any) -> Table1Config:
    return Table1Config(**{**CFG, "only": ["fbc_off2on", "digirl_off2on"], **kw})  # type: ignore[arg-type]


def test_a_second_invocation_runs_only_what_is_missing(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "t1"
    first = FakeCli(fail={"digirl_off2on"})
    monkeypatch.setattr(table1, "run_cli", first)
    s1 = run_table1(_cfg(), out)
    assert sorted(s1["failed_runs"]) == ["general-s0/digirl_off2on", "general-s1/digirl_off2on"]
    assert s1["reused_runs"] == []
    assert sum(c.startswith("sft") for c in first.calls) == 2
    # the saved result names its arguments with OUT written as $OUT
    saved = json.loads((out / "general-s0" / "fbc_off2on.json").read_text())
    assert "offline_dataset=$OUT/general-s0/offline-small" in saved["args"]
    assert saved["machine"]["cpus"] >= 1 and "torch" in saved["machine"]

    second = FakeCli()
    monkeypatch.setattr(table1, "run_cli", second)
    s2 = run_table1(_cfg(parallel=1), out)  # scheduling settings may change
    assert sorted(second.calls) == ["train general-s0/digirl_off2on", "train general-s1/digirl_off2on"]
    assert s2["failed_runs"] == []
    assert s2["reused_runs"] == ["general-s0/fbc_off2on", "general-s1/fbc_off2on"]
    assert s2["test_by_seed"]["general"] == {
        "sft": {0: 0.25, 1: 0.25},
        "fbc_off2on": {0: 0.5, 1: 0.5},
        "digirl_off2on": {0: 0.75, 1: 0.75},
    }
    assert "Read back from an earlier invocation" in (out / "table1.md").read_text()
    # runs evaluated with sampled actions too keep that curve beside the greedy one
    assert s2["sampled_curves_by_seed"] == {"general": {"digirl_off2on": {0: [(0, 0.5)], 1: [(0, 0.5)]}}}
    assert s2["curves_by_seed"]["general"]["digirl_off2on"] == {0: [(0, 0.25)], 1: [(0, 0.25)]}
    (cmp,) = s2["sampled_vs_greedy"]["general"]
    assert cmp["method"] == "digirl_off2on" and cmp["sampled_minus_greedy"]["mean"] == 0.25
    assert "Greedy vs sampled actions" in (out / "table1.md").read_text()

    # everything finished: a third invocation runs nothing, not even SFT (its evaluation is read back)
    third = FakeCli()
    monkeypatch.setattr(table1, "run_cli", third)
    shutil.rmtree(out / "general-s1" / "sft")
    s3 = run_table1(_cfg(), out)
    assert third.calls == []
    assert s3["test_by_seed"] == s2["test_by_seed"]

    # a grown table (an ablation row) needs the missing SFT policy again, and its data (made again)
    fourth = FakeCli()
    monkeypatch.setattr(table1, "run_cli", fourth)
    run_table1(_cfg(ablations=True, only=["fbc_off2on", "digirl_off2on", "digirl_off2on_mc"]), out)
    assert sorted(fourth.calls) == [
        "collect general-s1/offline-large",
        "eval general-s1/sft-eval",
        "sft general-s1/sft",
        "train general-s0/digirl_off2on_mc",
        "train general-s1/digirl_off2on_mc",
    ]


def test_other_settings_in_the_same_folder_are_refused(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "t1"
    monkeypatch.setattr(table1, "run_cli", FakeCli())
    run_table1(_cfg(), out)
    with pytest.raises(ValueError, match=r"other settings \(sft_steps: 60 there, 61 now\)"):
        run_table1(_cfg(sft_steps=61), out)
    # a variant's row redefined under the same key: its finished run no longer matches
    run_table1(_cfg(variants=["v|digirl|off2on|algo.lr=1e-4"]), out)
    with pytest.raises(ValueError, match=r"v\.json is a run with other arguments \('algo.lr=1e-4' → 'algo.lr=2e-4'\)"):
        run_table1(_cfg(variants=["v|digirl|off2on|algo.lr=2e-4"]), out)
    # results without a record of their settings (an older version made them) are not mixed in
    (out / CONFIG_FILE).unlink()
    with pytest.raises(ValueError, match=r"no table1-config\.json"):
        run_table1(_cfg(), out)


def test_a_corrupt_result_names_its_file(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "t1"
    monkeypatch.setattr(table1, "run_cli", FakeCli())
    run_table1(_cfg(seeds=[0]), out)
    (out / "general-s0" / "fbc_off2on.json").write_text('{"final": [')
    with pytest.raises(DataError, match=r"fbc_off2on\.json: not valid JSON"):
        run_table1(_cfg(seeds=[0]), out)
    (out / "general-s0" / "fbc_off2on.json").write_text('{"history": []}')
    with pytest.raises(DataError, match="not a finished train run"):
        run_table1(_cfg(seeds=[0]), out)


def test_incomplete_offline_data_is_collected_again(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "t1"
    monkeypatch.setattr(table1, "run_cli", FakeCli(fail={"fbc_off2on", "digirl_off2on"}))
    run_table1(_cfg(seeds=[0]), out)
    from digirl.data.store import TrajectoryStore

    shutil.rmtree(out / "general-s0" / "offline-large")
    (out / "general-s0" / "offline-large").mkdir()  # cut short before the store's metadata
    run_table1(_cfg(seeds=[0]), out)  # collected again; the runs fail again
    shutil.rmtree(out / "general-s0" / "offline-large")
    TrajectoryStore(out / "general-s0" / "offline-large", info={})  # an empty store: collection was cut short
    again = FakeCli()
    monkeypatch.setattr(table1, "run_cli", again)
    run_table1(_cfg(seeds=[0]), out)
    assert sorted(again.calls) == [
        "collect general-s0/offline-large",
        "train general-s0/digirl_off2on",
        "train general-s0/fbc_off2on",
    ]
    assert len(TrajectoryStore(out / "general-s0" / "offline-small", create=False)) == 2


def test_portable_args_write_out_as_a_mark() -> None:
    assert portable_args(["x=/a/b/c", "/a/bc", "y"], Path("/a/b")) == ["x=$OUT/c", "/a/bc", "y"]
    assert portable_args(["general-s0/x"], Path(".")) == ["general-s0/x"]


def test_report_only_runs_nothing_and_lists_the_unfinished_runs(tmp_path: Path, monkeypatch) -> None:
    from digirl.cli.main import main

    out = tmp_path / "t1"
    monkeypatch.setattr(table1, "run_cli", FakeCli(fail={"digirl_off2on"}))
    run_table1(_cfg(), out)
    (out / "general-s1" / "digirl_off2on").mkdir()  # a run cut short: its folder, no result
    (out / "general-s1" / "digirl_off2on" / "metrics.jsonl").write_text(
        '{}\n{"step": 0, "eval/test_success_rate": 0.25}\n{"step": 1, "train/actor_loss": 1.0}\n'
    )
    nothing = FakeCli()
    monkeypatch.setattr(table1, "run_cli", nothing)
    overrides = ["sets=[general]", "seeds=[0,1]", "iterations=1", "rollout_size=2", "offline_trajectories=2"]
    overrides += ["test_tasks=4", "train_tasks=0", "only=[fbc_off2on,digirl_off2on]"]
    assert main(["bench", "table1", str(out), *overrides, "--report-only"]) == 0
    assert nothing.calls == []
    s = json.loads((out / "table1.json").read_text())
    assert s["unfinished_runs"] == ["general-s0/digirl_off2on", "general-s1/digirl_off2on"]
    assert s["failed_runs"] == []
    assert s["test_by_seed"]["general"]["fbc_off2on"] == {"0": 0.5, "1": 0.5}
    assert "Not finished (reported without them" in (out / "table1.md").read_text()
    assert s["partial_curves_by_seed"] == {"general": {"digirl_off2on": {"1": [[0, 0.25]]}}}  # as far as it got
    assert "- general · digirl_off2on: s1 25.0@0" in (out / "table1.md").read_text()
    assert (out / "general-s1" / "digirl_off2on" / "metrics.jsonl").is_file()  # report-only touches nothing
    # running it: a run folder without a checkpoint starts again (its metrics are not appended to)
    seen: list[bool] = []

    def train_sees(args: list[str], log_file: Path, gpu: int | None = None, threads: int | None = None) -> dict[str, Any]:
        seen.append(Path(args[1]).exists())
        return nothing(args, log_file, gpu, threads)

    monkeypatch.setattr(table1, "run_cli", train_sees)
    run_table1(_cfg(), out)
    assert seen == [False, False]
    with pytest.raises(ValueError, match="nothing to report"):
        run_table1(_cfg(), tmp_path / "none", report_only=True)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="holds no Table 1 run"):
        run_table1(_cfg(), tmp_path / "empty", report_only=True)


def test_a_run_folder_with_a_checkpoint_is_left_for_train_to_continue(tmp_path: Path) -> None:
    from digirl.experiments.table1_resume import start_run

    run = tmp_path / "digirl_off2on"
    (run / "checkpoints" / "iter-000003").mkdir(parents=True)
    (run / "checkpoints" / "LATEST").write_text("iter-000003")
    start_run(run)
    assert (run / "checkpoints" / "iter-000003").is_dir()
    (run / "checkpoints" / "LATEST").unlink()
    start_run(run)
    assert not run.exists()
    start_run(run)  # nothing there: nothing to do
