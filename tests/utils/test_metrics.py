"""MetricsLogger (JSONL + TensorBoard), read_metrics, timed(), progress() and the RNG state helpers."""

from __future__ import annotations

import importlib.util
import io
import json
import logging
import math
import random
import sys
from pathlib import Path

import numpy as np
import pytest

from digirl.utils.metrics import MetricsLogger, Timer, read_metrics, timed
from digirl.utils.progress import progress
from digirl.utils.rng import get_rng_state, seed_everything, set_rng_state


def test_jsonl_written_flushed_and_appended(tmp_path: Path) -> None:
    with MetricsLogger(tmp_path, tensorboard=False) as m:
        m.log({"train/loss": 0.5, "rollout/success_rate": 1}, step=1)
        # flushed per call: readable while the logger is still open
        assert read_metrics(tmp_path)[0]["train/loss"] == 0.5
        m.log({"eval/success_rate": np.float32(0.25)}, step=2)
    with MetricsLogger(tmp_path, tensorboard=False) as m:  # a resumed run appends
        m.log({"train/loss": 0.25}, step=3)
    recs = read_metrics(tmp_path / "metrics.jsonl")
    assert [r["step"] for r in recs] == [1, 2, 3]
    assert recs[0]["rollout/success_rate"] == 1.0 and recs[1]["eval/success_rate"] == 0.25
    assert all(isinstance(r["time"], float) for r in recs)


@pytest.mark.parametrize("key", ["loss", "charts/return", "train/", "Train/loss"])
def test_namespaces_enforced(tmp_path: Path, key: str) -> None:
    with MetricsLogger(tmp_path, tensorboard=False) as m, pytest.raises(ValueError, match="must start with"):
        m.log({key: 1.0}, step=0)
    assert not (tmp_path / "metrics.jsonl").exists() or read_metrics(tmp_path) == []


def test_non_numeric_values_rejected(tmp_path: Path) -> None:
    with MetricsLogger(tmp_path, tensorboard=False) as m, pytest.raises(ValueError, match="train/name"):
        m.log({"train/name": "abc"}, step=0)  # type: ignore[dict-item]


def test_nan_and_inf_become_null_with_one_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING), MetricsLogger(tmp_path, tensorboard=False) as m:
        m.log({"train/loss": math.nan, "train/grad_norm": math.inf, "train/ok": 1.0}, step=0)
        m.log({"train/loss": math.nan}, step=1)
    recs = read_metrics(tmp_path)
    assert recs[0]["train/loss"] is None and recs[0]["train/grad_norm"] is None and recs[0]["train/ok"] == 1.0
    assert sum("train/loss" in r.message for r in caplog.records) == 1
    for line in (tmp_path / "metrics.jsonl").read_text().splitlines():
        json.loads(line)  # strict JSON: no NaN tokens


def test_torn_last_line_tolerated_and_resume_stays_readable(tmp_path: Path) -> None:
    with MetricsLogger(tmp_path, tensorboard=False) as m:
        m.log({"train/loss": 1.0}, step=0)
    with (tmp_path / "metrics.jsonl").open("a") as fh:
        fh.write('{"step": 1, "train/lo')  # a crash mid-write
    assert [r["step"] for r in read_metrics(tmp_path)] == [0]
    with MetricsLogger(tmp_path, tensorboard=False) as m:
        m.log({"train/loss": 2.0}, step=1)
    assert [r["step"] for r in read_metrics(tmp_path)] == [0, 1]


@pytest.mark.skipif(importlib.util.find_spec("tensorboard") is None, reason="tensorboard not installed")
def test_tensorboard_event_file(tmp_path: Path) -> None:
    with MetricsLogger(tmp_path) as m:
        m.log({"train/loss": 0.5}, step=1)
    events = list((tmp_path / "tb").glob("events.out.tfevents.*"))
    assert events and events[0].stat().st_size > 0
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(tmp_path / "tb"))
    acc.Reload()
    (ev,) = acc.Scalars("train/loss")
    assert ev.step == 1 and ev.value == pytest.approx(0.5)


def test_log_after_close_fails(tmp_path: Path) -> None:
    m = MetricsLogger(tmp_path, tensorboard=False)
    m.close()
    m.close()  # idempotent
    with pytest.raises(RuntimeError):
        m.log({"train/loss": 1.0}, step=0)


def test_timed_accumulates_and_checks_namespace() -> None:
    metrics: dict[str, float] = {}
    for _ in range(2):
        with timed(metrics, "timing_s/collect") as t:
            assert isinstance(t, Timer)
    assert metrics["timing_s/collect"] >= 0.0
    with pytest.raises(ValueError, match="timing_s/"):
        with timed(metrics, "collect"):
            pass
    t = Timer()
    with pytest.raises(RuntimeError):
        t.stop()


def test_progress_logs_lines_when_not_a_tty(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", io.StringIO())  # not a TTY, even under `pytest -s`
    monkeypatch.delenv("CI", raising=False)
    with caplog.at_level(logging.INFO, logger="digirl.progress"):
        with progress(4, "collect", log_every_s=0.0) as p:
            for _ in range(4):
                p.advance()
    lines = [r.getMessage() for r in caplog.records]
    assert any("collect: 4/4 (100%)" in line for line in lines)
    with progress(None, "scan", enabled=False) as p:
        p.advance(3)
    assert "3 done" in p.status_line()


def test_rng_state_round_trip_is_json_safe() -> None:
    torch = pytest.importorskip("torch")
    seed_everything(123)
    state = get_rng_state()
    state = json.loads(json.dumps(state))  # JSON types only
    a = (random.random(), np.random.rand(), torch.rand(1).item())
    set_rng_state(state)
    assert (random.random(), np.random.rand(), torch.rand(1).item()) == a
    with pytest.raises(ValueError):
        seed_everything(-1)


def test_rng_state_loads_with_weights_only(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    seed_everything(5)
    torch.save({"rng": get_rng_state()}, tmp_path / "ckpt.pt")
    loaded = torch.load(tmp_path / "ckpt.pt", weights_only=True)
    x = torch.rand(2)
    set_rng_state(loaded["rng"])
    assert torch.equal(torch.rand(2), x)
