"""Annotation sidecars: what a learner computed per step, one atomic Parquet file per iteration."""

from __future__ import annotations

import pytest

from digirl.core.errors import DataError
from digirl.data.annotations import StepAnnotation, annotation_iterations, read_annotations, write_annotations


def test_round_trip_and_latest(tmp_path):
    rows = [
        StepAnnotation("t1", -1, value=0.25, extra={"instruction_value": True}),
        StepAnnotation("t1", 0, value=0.5, advantage=0.125, kept=True, weight=1.0),
        StepAnnotation("t1", 1, q=0.75, extra={"candidates": [{"action": "tap", "q": 0.5}]}),
    ]
    write_annotations(tmp_path, 0, rows[:1])
    write_annotations(tmp_path, 3, rows)
    assert annotation_iterations(tmp_path) == [0, 3]
    assert read_annotations(tmp_path) == rows
    assert read_annotations(tmp_path, 0) == rows[:1]
    assert read_annotations(tmp_path / "none") == []
    assert not list(tmp_path.glob(".tmp-*"))


def test_errors_name_the_file(tmp_path):
    write_annotations(tmp_path, 1, [StepAnnotation("t", 0)])
    with pytest.raises(DataError, match="no annotations for iteration 2"):
        read_annotations(tmp_path, 2)
    (tmp_path / "iter-000001.parquet").write_bytes(b"not parquet")
    with pytest.raises(DataError, match=r"iter-000001\.parquet: corrupt"):
        read_annotations(tmp_path)
