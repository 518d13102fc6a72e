"""Benchmarks' child runs: a stopped or killed benchmark leaves no run behind and starts no new one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from digirl.experiments import subruns

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def _fake_digirl(tmp_path: Path) -> Path:
    """Stands in for ``python -m digirl ...``: records that it started and its pid, then trains forever."""
    script = tmp_path / "fake-python"
    script.write_text(f"#!/bin/sh\necho $$ >> {tmp_path / 'started'}\nexec sleep 600\n")
    script.chmod(0o755)
    return script


def _started(tmp_path: Path, n: int = 1, timeout: float = 20.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        f = tmp_path / "started"
        pids = [int(x) for x in f.read_text().split()] if f.is_file() else []
        if len(pids) >= n:
            return pids
        time.sleep(0.05)
    raise AssertionError("the child run never started")


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _in_thread(log: Path) -> tuple[threading.Thread, list[BaseException]]:
    """One child run in a worker thread, as the benchmarks run them; what it raised lands in the list."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            subruns.run_cli(["train"], log)
        except BaseException as e:
            errors.append(e)

    t = threading.Thread(target=run)
    t.start()
    return t, errors


def test_run_all_keeps_the_order_of_its_items() -> None:
    assert subruns.run_all(lambda x: x * x, range(7), 3) == [0, 1, 4, 9, 16, 25, 36]
    assert subruns.run_all(lambda x: x, [], 0) == []


@pytest.fixture(autouse=True)
def _fresh_state():
    subruns._stopping.clear()
    yield
    subruns._stopping.clear()


def test_run_cli_reads_the_last_stdout_line_and_names_the_log_on_failure(tmp_path, monkeypatch):
    ok = tmp_path / "ok"
    ok.write_text('#!/bin/sh\necho "progress"\necho \'{"success": 0.5}\'\n')
    ok.chmod(0o755)
    monkeypatch.setattr(subruns.sys, "executable", str(ok))
    assert subruns.run_cli(["eval"], tmp_path / "ok.log") == {"success": 0.5}
    bad = tmp_path / "bad"
    bad.write_text("#!/bin/sh\necho boom >&2\nexit 3\n")
    bad.chmod(0o755)
    monkeypatch.setattr(subruns.sys, "executable", str(bad))
    with pytest.raises(RuntimeError, match=r"failed \(exit 3\); see .*bad.log"):
        subruns.run_cli(["train"], tmp_path / "bad.log")
    assert (tmp_path / "bad.log").read_text() == "boom\n"


def test_stop_children_ends_running_runs_and_refuses_new_ones(tmp_path, monkeypatch):
    monkeypatch.setattr(subruns.sys, "executable", str(_fake_digirl(tmp_path)))
    t, errors = _in_thread(tmp_path / "run.log")
    (pid,) = _started(tmp_path)
    assert subruns.stop_children() == 1
    t.join(timeout=20)
    assert not t.is_alive()
    assert _gone(pid)
    assert len(errors) == 1 and isinstance(errors[0], subruns.StoppedError)
    with pytest.raises(subruns.StoppedError, match="stopped before"):
        subruns.run_cli(["train", "y"], tmp_path / "run2.log")
    assert len(_started(tmp_path)) == 1  # the second run never started


def test_stop_children_kills_a_run_that_ignores_sigterm(tmp_path, monkeypatch):
    stubborn = tmp_path / "stubborn"
    stubborn.write_text(f"#!/bin/sh\ntrap '' TERM\necho $$ >> {tmp_path / 'started'}\nwhile true; do sleep 0.1; done\n")
    stubborn.chmod(0o755)
    monkeypatch.setattr(subruns.sys, "executable", str(stubborn))
    t, errors = _in_thread(tmp_path / "run.log")
    (pid,) = _started(tmp_path)
    assert subruns.stop_children(grace_s=0.5) == 1
    t.join(timeout=20)
    assert _gone(pid)
    assert len(errors) == 1 and isinstance(errors[0], subruns.StoppedError)


def test_run_cli_timeout_stops_the_run_with_sigterm_first(tmp_path, monkeypatch):
    # SIGTERM, not SIGINT: a run started from a script's background job ignores SIGINT.
    marker = tmp_path / "closed"
    polite = tmp_path / "polite"
    polite.write_text(f"#!/bin/sh\ntrap 'echo closed > {marker}; exit 143' TERM\nwhile true; do sleep 0.1; done\n")
    polite.chmod(0o755)
    monkeypatch.setattr(subruns.sys, "executable", str(polite))
    with pytest.raises(subprocess.TimeoutExpired):
        subruns.run_cli(["train"], tmp_path / "run.log", timeout=1.0)
    assert marker.read_text() == "closed\n"  # it left on its own, not by SIGKILL


def test_run_cli_timeout_kills_a_run_that_ignores_sigterm(tmp_path, monkeypatch):
    stubborn = tmp_path / "stubborn"
    stubborn.write_text(f"#!/bin/sh\ntrap '' TERM\necho $$ >> {tmp_path / 'started'}\nwhile true; do sleep 0.1; done\n")
    stubborn.chmod(0o755)
    monkeypatch.setattr(subruns.sys, "executable", str(stubborn))
    with pytest.raises(subprocess.TimeoutExpired):
        subruns.run_cli(["train"], tmp_path / "run.log", timeout=1.0, grace_s=0.5)
    (pid,) = _started(tmp_path)
    assert _gone(pid)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_killed_benchmark_takes_its_runs_with_it(tmp_path, sig):
    """`kill` on a benchmark (SIGTERM, or SIGINT from outside a terminal) used to leave its runs training.
    The kernel may hand the signal to a worker thread: the main thread, waiting on the runs, must still
    run the handler (it once waited on a future until a run ended)."""
    fake = _fake_digirl(tmp_path)
    code = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from digirl.experiments import subruns

        sys.executable = {str(fake)!r}
        with subruns.children_stop_with_me():
            subruns.run_all(lambda i: subruns.run_cli(["train", str(i)], Path({str(tmp_path)!r}) / f"{{i}}.log"), range(4), 2)
        """
    )
    bench = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
    pids = _started(tmp_path, n=2)
    bench.send_signal(sig)
    _, err = bench.communicate(timeout=30)
    assert bench.returncode == 128 + sig, err
    assert "stopping 2 child run(s)" in err
    assert all(_gone(p) for p in pids)
    time.sleep(0.3)
    assert len(_started(tmp_path)) == 2  # the two queued runs never started


def test_run_cli_runs_another_program_with_json(tmp_path: Path) -> None:
    """``program`` replaces ``python -m digirl``: its arguments and ``--json`` follow it, its last line is the answer."""
    script = tmp_path / "stage.py"
    script.write_text("import json, sys\nprint('noise')\nprint(json.dumps({'argv': sys.argv[1:]}))\n")
    out = subruns.run_cli(["evaluate", "x=1"], tmp_path / "log", program=[sys.executable, str(script)])
    assert out == {"argv": ["evaluate", "x=1", "--json"]}
