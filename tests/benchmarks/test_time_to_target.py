"""``benchmarks/time_to_target.py``: a run stopped at its timeout gets Ctrl-C first, so it can clean up."""

from __future__ import annotations

import subprocess
import sys

import benchmarks.time_to_target as ttt

# Stands in for `digirl train`: waits, and on Ctrl-C writes what a clean exit would close.
_CHILD = """
import sys, time
try:
    time.sleep(60)
except KeyboardInterrupt:
    open(sys.argv[1], "w").write("closed")
    sys.exit(130)
"""
# Stands in for a run that finishes: a stray line, then its JSON result last.
_DONE = 'import json; print("noise"); print(json.dumps({"final": 1}))'


def test_timeout_interrupts_the_run_before_killing_it(tmp_path, monkeypatch):
    marker = tmp_path / "closed.txt"
    popen = subprocess.Popen

    def fake(cmd, **kw):
        return popen([sys.executable, "-c", _CHILD, str(marker)], **kw)

    monkeypatch.setattr(ttt.subprocess, "Popen", fake)
    assert ttt._cli(["train"], tmp_path / "log.txt", timeout=2.0) is None
    assert marker.read_text() == "closed"


def test_a_finished_run_returns_its_json(tmp_path, monkeypatch):
    popen = subprocess.Popen

    def fake(cmd, **kw):
        return popen([sys.executable, "-c", _DONE], **kw)

    monkeypatch.setattr(ttt.subprocess, "Popen", fake)
    assert ttt._cli(["train"], tmp_path / "log.txt") == {"final": 1}
