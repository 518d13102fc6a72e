"""Digi-Q's stage sidecars: atomic keyed parts, first-written-wins de-duplication, option checks."""

import numpy as np
import pytest

from digirl.algorithms.digiq.sidecar import Sidecar
from digirl.core.errors import DataError


@pytest.mark.parametrize("on_disk", [True, False])
def test_rows_and_arrays_round_trip(tmp_path, on_disk):
    sc = Sidecar(tmp_path / "dq" if on_disk else None)
    st = sc.stage("labels")
    st.write_rows({"traj_id": ["a", "a"], "step": [0, 1], "cand": [0, 0], "label": [True, None]})
    st.write_rows({"traj_id": ["a", "b"], "step": [0, 0], "cand": [0, 0], "label": [False, True]})  # (a,0,0) again
    rows = st.rows()
    assert [(r["traj_id"], r["step"], r["label"]) for r in rows] == [("a", 0, True), ("a", 1, None), ("b", 0, True)]
    assert st.keys() == {("a", 0, 0), ("a", 1, 0), ("b", 0, 0)}
    f = sc.stage("features/x")
    f.write_arrays("f", [("a", 0, 0), ("a", 0, 1)], np.array([[1.0, 2.0], [3.0, 4.0]]))
    f.write_arrays("f", [("a", 0, 1), ("b", 0, 0)], np.array([[9.0, 9.0], [5.0, 6.0]]))
    index, x = f.arrays("f")
    assert x.dtype == np.float16 and x.shape == (3, 2)
    assert x[index[("a", 0, 1)]].tolist() == [3.0, 4.0]  # the first written wins
    assert x[index[("b", 0, 0)]].tolist() == [5.0, 6.0]
    assert f.arrays("phi") == ({}, pytest.approx(np.zeros((0, 0))))
    if on_disk:  # a new process sees the same
        again = Sidecar(tmp_path / "dq").stage("features/x").arrays("f")
        assert again[0] == index


def test_stage_options_are_checked(tmp_path):
    st = Sidecar(tmp_path).stage("candidates")
    st.check_meta({"candidates": 16, "temperature": 1.2})
    st.check_meta({"candidates": 16, "temperature": 1.2})  # same options: fine
    with pytest.raises(DataError, match="candidates: 16 -> 8"):
        Sidecar(tmp_path).stage("candidates").check_meta({"candidates": 8, "temperature": 1.2})


def test_corrupt_part_names_the_file_and_temp_files_are_cleaned(tmp_path):
    st = Sidecar(tmp_path).stage("labels")
    st.write_rows({"traj_id": ["a"], "step": [0], "cand": [0], "label": [True]})
    bad = tmp_path / "labels" / "part-bad.parquet"
    bad.write_bytes(b"not parquet")
    with pytest.raises(DataError, match=r"part-bad\.parquet"):
        st.rows()
    bad.unlink()
    (tmp_path / "labels" / ".tmp-123-part-x.parquet").write_bytes(b"half written")
    with st.lock():
        pass
    assert not list((tmp_path / "labels").glob(".tmp-*"))
    assert len(st.rows()) == 1


def test_write_rows_validates():
    st = Sidecar(None).stage("x")
    with pytest.raises(ValueError):
        st.write_rows({"traj_id": ["a"], "step": [0]})
    with pytest.raises(ValueError):
        st.write_arrays("f", [("a", 0, 0)], np.zeros((2, 3)))
