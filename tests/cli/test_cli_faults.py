"""OS faults and bad input on the command line: one line naming the path and the problem, a non-zero
exit, and nothing left behind (no partial shard, no lock file, no half-made run or dataset folder).

Full disks and read-only file systems are simulated by monkeypatching the OS calls (chmod does not
stop root).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from digirl.cli.common import one_line_error
from digirl.cli.main import main
from digirl.data import shard as sh
from digirl.data.store import TrajectoryStore

TOY = ["expert=true", "env.id=digirl/toy-mixed-v0", "env.runner=inline", "trajectories=3", "shard_size=2"]


def _err_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return [ln for ln in capsys.readouterr().err.splitlines() if not ln.startswith(("INFO ", "WARNING "))]


def _enospc(*_a: object, **_k: object) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_one_line_for_os_errors() -> None:
    assert one_line_error(OSError(errno.EROFS, os.strerror(errno.EROFS), "/runs/x")) == "/runs/x: Read-only file system"
    e = OSError(errno.EXDEV, os.strerror(errno.EXDEV), "/a", None, "/b")
    assert one_line_error(e) == "/a: Invalid cross-device link (-> /b)"
    assert one_line_error(FileNotFoundError(errno.ENOENT, "No such file or directory", "f.yaml")) == (
        "f.yaml: No such file or directory"
    )
    assert one_line_error(ConnectionRefusedError("server at :8000 refused")) == "server at :8000 refused"
    assert one_line_error(RuntimeError("a bug")) is None  # bugs keep their traceback


def test_collect_on_a_full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "data"
    monkeypatch.setattr(sh, "write_parquet", _enospc)
    assert main(["collect", str(out), *TOY]) == 2
    assert _err_lines(capsys) == [
        f"error: {out / 'shards' / '000000'}: cannot write shard 000000 (2 trajectories): No space left on device"
    ]
    assert not out.exists()  # it stored nothing: the folder it made is gone
    monkeypatch.undo()
    assert main(["collect", str(out), *TOY]) == 0
    monkeypatch.setattr(sh, "write_parquet", _enospc)
    assert main(["collect", str(out), *TOY[:-2], "trajectories=5", "shard_size=2"]) == 2  # more of it: the disk fills
    assert _err_lines(capsys)[-1] == (
        f"error: {out / 'shards' / '000002'}: cannot write shard 000002 (2 trajectories): No space left on device"
    )
    assert sorted(p.name for p in (out / "shards").iterdir()) == ["000000", "000001"]  # no partial shard, no temp folder
    monkeypatch.undo()
    assert main(["collect", str(out), *TOY[:-2], "trajectories=5", "shard_size=2"]) == 0  # once there is room
    assert len(TrajectoryStore(out, create=False)) == 5


def test_collect_on_a_read_only_file_system(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = os.mkdir

    def mkdir(path: object, *a: object, **k: object) -> None:
        if str(path).startswith(str(tmp_path)):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        real(path, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "mkdir", mkdir)
    assert main(["collect", str(tmp_path / "data"), *TOY]) == 2
    assert _err_lines(capsys) == [f"error: {tmp_path / 'data'}: cannot create the dataset: Read-only file system"]
    assert os.listdir(tmp_path) == []


def test_collect_under_a_file_or_with_a_shards_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "afile").write_text("")
    assert main(["collect", str(tmp_path / "afile" / "data"), *TOY]) == 2
    assert _err_lines(capsys) == [f"error: {tmp_path / 'afile' / 'data'}: cannot create the dataset: Not a directory"]

    out = tmp_path / "data"
    assert main(["collect", str(out), *TOY]) == 0
    for shard in (out / "shards").iterdir():
        for f in sorted(shard.rglob("*"), reverse=True):
            f.unlink() if f.is_file() else f.rmdir()
        shard.rmdir()
    (out / "shards").rmdir()
    (out / "shards").write_text("")
    capsys.readouterr()
    assert main(["collect", str(out), *TOY]) == 2
    assert _err_lines(capsys) == [f"error: {out / 'shards'}: not a directory, cannot hold the dataset's shards"]
    assert sorted(p.name for p in out.iterdir()) == ["collect-config.yaml", "meta.json", "shards"]  # no .lock


def test_collect_noise_out_of_range_names_the_users_key_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "data"
    assert main(["collect", str(out), *TOY, "expert_noise=2.5"]) == 2
    err = _err_lines(capsys)
    assert err == ["error: CollectConfig: expert_noise must be in [0, 1] (a probability), got 2.5"]
    assert not out.exists()
    assert main(["sft", str(tmp_path / "sft"), "sft.expert_noise=-0.5"]) == 2
    assert _err_lines(capsys) == ["error: sft: expert_noise must be in [0, 1] (a probability), got -0.5"]
    assert not (tmp_path / "sft").exists()


def test_train_with_a_missing_or_corrupt_offline_dataset_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    args = ["train", str(run), "mode=offline", "env.id=digirl/toy-mixed-v0"]
    assert main([*args, f"offline_dataset={tmp_path / 'nope'}"]) == 2
    assert _err_lines(capsys) == [
        f"error: offline_dataset={tmp_path / 'nope'}: {tmp_path / 'nope' / 'meta.json'}: missing; "
        f"{tmp_path / 'nope'} is not a digirl dataset"
    ]
    bad = tmp_path / "bad"
    TrajectoryStore(bad)  # an empty dataset
    assert main([*args, f"offline_dataset={bad}"]) == 2
    assert _err_lines(capsys) == [f"error: offline_dataset={bad}: the dataset holds no trajectories"]
    assert main(["collect", str(bad), *TOY]) == 0
    steps = bad / "shards" / "000001" / "steps.parquet"
    steps.write_bytes(steps.read_bytes()[:100])  # truncated
    capsys.readouterr()
    assert main([*args, f"offline_dataset={bad}"]) == 2
    (line,) = _err_lines(capsys)
    assert line.startswith(f"error: offline_dataset={bad}: {steps}: corrupt or truncated Parquet file")
    assert not run.exists()  # no config.yaml, no data/
    assert main(["sft", str(tmp_path / "sft"), f"sft.dataset={bad}"]) == 2
    assert not (tmp_path / "sft").exists()
