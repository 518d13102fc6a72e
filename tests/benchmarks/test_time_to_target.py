"""``benchmarks/time_to_target.py``: a run stopped at its timeout gets SIGTERM first, so it can clean up."""

from __future__ import annotations

import signal
import subprocess
import sys

import benchmarks.time_to_target as ttt

# Stands in for `digirl train`: waits under digirl's SIGTERM handling, and records a clean exit.
_CHILD = """
import sys, time
from digirl.cli.common import Terminated, stop_on_signals
try:
    with stop_on_signals():
        time.sleep(60)
except Terminated:
    open(sys.argv[1], "w").write("closed")
    sys.exit(143)
"""
# Stands in for a run that finishes: a stray line, then its JSON result last.
_DONE = 'import json; print("noise"); print(json.dumps({"final": 1}))'


def _ignore_sigint() -> None:  # as a shell's background job starts (the device runs did)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_timeout_stops_the_run_cleanly_even_as_a_background_job(tmp_path, monkeypatch):
    marker = tmp_path / "closed.txt"
    popen = subprocess.Popen

    def fake(cmd, **kw):
        return popen([sys.executable, "-c", _CHILD, str(marker)], preexec_fn=_ignore_sigint, **kw)

    monkeypatch.setattr(ttt.subprocess, "Popen", fake)
    assert ttt._cli(["train"], tmp_path / "log.txt", timeout=3.0) is None
    assert marker.read_text() == "closed"


def test_a_finished_run_returns_its_json(tmp_path, monkeypatch):
    popen = subprocess.Popen

    def fake(cmd, **kw):
        return popen([sys.executable, "-c", _DONE], **kw)

    monkeypatch.setattr(ttt.subprocess, "Popen", fake)
    assert ttt._cli(["train"], tmp_path / "log.txt") == {"final": 1}
