"""``digirl data export-video``: picked episodes become GIF/MP4 files; bad picks are one clear line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from digirl.cli.main import main
from digirl.data.store import TrajectoryStore
from tests.data.trajfactory import build_traj

iio = pytest.importorskip("imageio.v3")


def test_export_video_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ds = tmp_path / "ds"
    TrajectoryStore(ds, durable=False).append([build_traj(2 + i, seed=i, traj_id=f"t{i}", success=i != 1) for i in range(3)])
    assert main(["data", "export-video", str(ds), "--episodes", "failures,2", "--out", str(tmp_path / "v"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [v["traj_id"] for v in out["videos"]] == ["t1", "t2"] and out["videos"][0]["outcome"] == "failure"
    frames = iio.imread(tmp_path / "v" / "t2.gif", index=None)
    assert frames.shape[0] == 4 + 1  # 4 steps and the final screen
    assert main(["data", "export-video", str(ds), "--episodes", "9", "--out", str(tmp_path / "v")]) == 2
    assert "no such episode(s): 9" in capsys.readouterr().err
