"""``digirl data info | check | export-hf``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trajfactory import build_traj

from digirl.cli.main import main
from digirl.data.store import TrajectoryStore


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    store = TrajectoryStore(tmp_path / "ds", info={"env_id": "digirl/toy-tap-v0"})
    store.append([build_traj(2, seed=0, family="tap"), build_traj(3, seed=1, family="type", success=False)])
    store.append([build_traj(1, seed=2, family="tap", env_failure=True)])
    return tmp_path / "ds"


def test_info_json_and_table(dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "info", str(dataset), "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert (s["trajectories"], s["steps"], s["env_failures"], s["success_rate"]) == (3, 6, 1, 0.5)
    assert s["families"]["tap"]["trajectories"] == 2 and s["info"] == {"env_id": "digirl/toy-tap-v0"}
    assert main(["data", "info", str(dataset)]) == 0
    out = capsys.readouterr().out
    assert "success rate" in out and "50.0%" in out and "per family" in out


def test_info_on_a_missing_dataset_creates_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "info", str(tmp_path / "nope")]) == 2
    assert "meta.json: missing" in capsys.readouterr().err
    assert not (tmp_path / "nope").exists()


def test_check_reports_file_and_problem(dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "check", str(dataset)]) == 0
    assert "ok:" in capsys.readouterr().out
    victim = next((dataset / "shards" / "000001" / "images").glob("*.png"))
    victim.unlink()
    assert main(["data", "check", str(dataset)]) == 1
    err = capsys.readouterr().err
    assert f"{victim}: image file missing" in err and "1 problem(s)" in err
    assert main(["data", "check", str(dataset), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and len(report["problems"]) == 1


def test_export_hf_command(dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "hf"
    assert main(["data", "export-hf", str(dataset), str(out), "--exclude-failures", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["rows"], result["trajectories"]) == (5, 2)
    assert (out / "README.md").is_file() and list((out / "data").glob("train-*.parquet"))
    assert main(["data", "export-hf", str(dataset), str(out)]) == 2  # refuses a non-empty folder
    assert "not an empty folder" in capsys.readouterr().err


def test_info_warns_and_exits_1_on_a_duplicate_and_a_truncated_shard(dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    shards = dataset / "shards"
    shutil.copytree(shards / "000000", shards / "000002")  # both of shard 0's trajectories again
    steps = shards / "000001" / "steps.parquet"
    steps.write_bytes(steps.read_bytes()[: steps.stat().st_size // 2])
    assert main(["data", "info", str(dataset)]) == 1
    captured = capsys.readouterr()
    err = captured.err.splitlines()
    assert err[0].startswith(f"warning: {steps}: corrupt or truncated Parquet file")
    ids = TrajectoryStore(dataset, create=False)._shard_ids_of("000000")
    assert err[1:3] == [
        f"warning: {shards / '000002' / 'trajectories.parquet'}: traj_id {ids[0]!r} is also stored in shard 000000",
        f"warning: {shards / '000002' / 'trajectories.parquet'}: traj_id {ids[1]!r} is also stored in shard 000000",
    ]
    assert "3 problem(s) in 2 shard(s)" in err[3] and "digirl data check" in err[3]
    assert "success rate" in captured.out  # the summary of the sound shard is still shown
    assert main(["data", "info", str(dataset), "--json"]) == 1
    s = json.loads(capsys.readouterr().out)
    assert (s["shards"], s["trajectories"], s["steps"], len(s["problems"])) == (1, 2, 5, 3)
    assert main(["data", "check", str(dataset)]) == 1  # info warns on what check fails


def test_info_warns_when_steps_and_lengths_disagree(dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import pyarrow.parquet as pq

    path = dataset / "shards" / "000000" / "steps.parquet"
    table = pq.read_table(path)
    pq.write_table(table.slice(0, table.num_rows - 1), path)  # a step row lost
    assert main(["data", "info", str(dataset), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["problems"] == [f"{path}: 4 step rows, but the trajectories' lengths add up to 5"]
    assert main(["data", "check", str(dataset)]) == 1
