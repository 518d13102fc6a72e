"""The store under OS faults: a full disk, a read-only file system, a path component that is a file.

Each fault is one ``StorageError`` (still an ``OSError``, with its errno) naming the path and the
problem, and leaves no partial shard, no temp file, no lock file and no half-made dataset. Faults
are injected by monkeypatching the OS calls (chmod does not stop root).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from trajfactory import build_traj

from digirl.core.errors import DataError, StorageError
from digirl.data import shard as sh
from digirl.data import store as st
from digirl.data.store import TrajectoryStore


def _enospc(*_a: object, **_k: object) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_a_normal_dataset_has_no_lock_file(tmp_path: Path) -> None:
    s = TrajectoryStore(tmp_path / "d")
    s.append([build_traj(seed=1, traj_id="a")])
    assert not (tmp_path / "d" / ".lock").exists()
    assert sorted(os.listdir(tmp_path / "d")) == ["meta.json", "shards"]


def test_full_disk_during_append_leaves_no_partial_shard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = TrajectoryStore(tmp_path / "d")
    s.append([build_traj(seed=1, traj_id="a")])
    before = _listing(tmp_path / "d")
    monkeypatch.setattr(sh, "write_parquet", _enospc)
    with pytest.raises(StorageError) as ei:
        s.append([build_traj(seed=2, traj_id="b")])
    msg = str(ei.value)
    assert msg == f"{tmp_path / 'd' / 'shards' / '000001'}: cannot write shard 000001 (1 trajectory): No space left on device"
    assert ei.value.errno == errno.ENOSPC and isinstance(ei.value, OSError)
    assert _listing(tmp_path / "d") == before  # no .tmp-*, no shard, no .lock
    monkeypatch.undo()
    assert TrajectoryStore(tmp_path / "d", create=False).trajectory_ids() == ["a"]


def test_full_disk_on_a_png_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = TrajectoryStore(tmp_path / "d", io_workers=2)
    monkeypatch.setattr(sh, "write_png", _enospc)
    with pytest.raises(StorageError, match="No space left on device"):
        s.append([build_traj(seed=2, traj_id="b")])
    assert _listing(tmp_path / "d") == ["meta.json", "shards"]


def test_read_only_file_system_when_creating(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_mkdir = os.mkdir

    def mkdir(path: object, *a: object, **k: object) -> None:
        if str(path).startswith(str(tmp_path / "ro")):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        real_mkdir(path, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "mkdir", mkdir)
    with pytest.raises(StorageError) as ei:
        TrajectoryStore(tmp_path / "ro" / "data")
    assert str(ei.value) == f"{tmp_path / 'ro' / 'data'}: cannot create the dataset: Read-only file system"
    assert ei.value.errno == errno.EROFS
    assert not (tmp_path / "ro").exists()


def test_full_disk_writing_meta_removes_every_folder_it_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(st.os, "replace", _enospc)
    with pytest.raises(StorageError, match=r"cannot create the dataset: No space left on device"):
        TrajectoryStore(tmp_path / "a" / "b" / "data")
    assert os.listdir(tmp_path) == []  # a/, a/b/, data/, shards/ and the meta temp file all gone


def test_a_failed_creation_keeps_a_folder_that_was_there(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "data").mkdir()
    monkeypatch.setattr(st.os, "replace", _enospc)
    with pytest.raises(StorageError):
        TrajectoryStore(tmp_path / "data")
    assert (tmp_path / "data").is_dir() and os.listdir(tmp_path / "data") == []


def test_parent_path_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    with pytest.raises(StorageError) as ei:
        TrajectoryStore(tmp_path / "afile" / "data")
    assert str(ei.value) == f"{tmp_path / 'afile' / 'data'}: cannot create the dataset: Not a directory"
    assert ei.value.errno == errno.ENOTDIR
    assert os.listdir(tmp_path) == ["afile"]


def test_shards_path_is_a_file_fails_at_open_and_leaves_no_lock(tmp_path: Path) -> None:
    TrajectoryStore(tmp_path / "d").append([build_traj(seed=1, traj_id="a")])
    shards = tmp_path / "d" / "shards"
    for p in shards.iterdir():
        for q in sorted(p.rglob("*"), reverse=True):
            q.unlink() if q.is_file() else q.rmdir()
        p.rmdir()
    shards.rmdir()
    shards.write_text("")
    with pytest.raises(DataError, match=r"shards: not a directory, cannot hold the dataset's shards"):
        TrajectoryStore(tmp_path / "d")
    assert sorted(os.listdir(tmp_path / "d")) == ["meta.json", "shards"]


def test_a_file_system_without_folder_locks_falls_back_to_a_lock_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import fcntl

    real = fcntl.flock

    def flock(fd: int, op: int) -> None:
        if os.path.isdir(f"/proc/self/fd/{fd}"):  # NFS: flock on a folder is EBADF
            raise OSError(errno.EBADF, os.strerror(errno.EBADF))
        real(fd, op)

    monkeypatch.setattr(st.fcntl, "flock", flock)
    s = TrajectoryStore(tmp_path / "d")
    assert s.append([build_traj(seed=1, traj_id="a")]) == 1
    assert (tmp_path / "d" / ".lock").is_file() and s.trajectory_ids() == ["a"]


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EDQUOT, errno.EIO])
def test_every_os_error_on_a_shard_is_one_line_with_its_errno(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    s = TrajectoryStore(tmp_path / "d")

    def fail(*_a: object, **_k: object) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(sh, "write_parquet", fail)
    with pytest.raises(StorageError) as ei:
        s.append([build_traj(seed=1, traj_id="a")])
    assert str(ei.value).endswith(f": cannot write shard 000000 (1 trajectory): {os.strerror(code)}")
    assert ei.value.errno == code and "\n" not in str(ei.value)
    assert _listing(tmp_path / "d") == ["meta.json", "shards"]
