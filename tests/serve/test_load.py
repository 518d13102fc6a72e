"""A small run of ``benchmarks/throughput/load_serve.py``: 40 clients, 10 of them poisoned (every kind once), one
request each, against ``digirl serve`` in its own process holding 48 connections, 40 of them taken by
idle sockets first; then 8 clients at once with ~18 MB requests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.throughput.load_serve import POISON_KINDS, main


@pytest.mark.slow
def test_valid_requests_all_200_among_poisoned_ones(tmp_path: Path) -> None:
    out = tmp_path / "load.json"
    args = ["--clients", "40", "--poisoned", "0.25", "--requests", "1", "--small", "--heavy-clients", "8"]
    args += ["--idle-sockets", "40", "--max-connections", "48", "--out", str(out)]  # 80 sockets for 48 slots
    assert main(args) == 0
    r = json.loads(out.read_text())
    assert r["passed"] and r["complete"] and r["requests"] == 40
    assert r["valid_200"] == r["valid_requests"] == 30 and r["responses_5xx_or_broken"] == 0
    statuses = r["poisoned_status_by_kind"]
    assert sorted(statuses) == sorted(POISON_KINDS)
    assert statuses["oversized-body"] == {"413": 1} and statuses["bounds-1e999"] == {"400": 1}
    assert statuses["reset-mid-body"] == {"0": 1}  # no answer: the client reset the connection
    conns = r["server_stats"]["connections"]
    assert conns["aborted"] == 1 and r["server_log_tracebacks"] == 0
    # 40 of the 48 slots held by idle sockets: clients displaced them, none was refused, threads stayed capped
    assert conns["evicted_idle"] >= 1 and conns["refused"] == 0 and conns["threads"] <= 48 and r["idle_sockets"] == 40
    assert r["server_rss_mib"]["peak_vmhwm"] >= r["server_rss_mib"]["idle_before"] > 0
    heavy = r["heavy_phase"]  # 8 requests of ~85 MB each against a 512 MiB budget: some wait (503), all end 200
    assert heavy["answered_200"] == 8 and heavy["final_status"] == {"200": 8}
    assert 0 < heavy["inflight_bytes"]["peak"] <= heavy["inflight_bytes"]["budget"] == 512 << 20
    assert r["observation_mode"] and r["command"].startswith("python benchmarks/throughput/load_serve.py --clients 40")
