"""SIGTERM stops a ``digirl`` command as Ctrl-C does: cleanly, also where SIGINT is ignored."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from digirl.cli.common import Terminated, stop_on_signals


def test_sigterm_raises_terminated_once_and_the_handler_is_put_back():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Terminated), stop_on_signals():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises long before this ends
    assert signal.getsignal(signal.SIGTERM) is before


def test_sigterm_inside_the_context_leaves_a_second_one_to_the_default():
    with stop_on_signals():
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        except Terminated:
            assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def test_with_sigint_ctrl_c_interrupts_even_where_it_was_ignored():
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a shell's background job starts
    try:
        with pytest.raises(KeyboardInterrupt), stop_on_signals(sigint=True):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN  # put back
    finally:
        signal.signal(signal.SIGINT, before)


def _ignore_sigint() -> None:  # as a shell's background job starts
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_a_training_run_stopped_by_sigterm_closes_its_env_workers(tmp_path: Path):
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "digirl", "train", str(out), "env.num_envs=2", "mode=online", "iterations=100"]
    cmd += ["rollout_size=2", "eval.test_tasks=0", "eval.train_tasks=0", "log.tensorboard=false"]
    env = dict(os.environ, DIGIRL_NO_PROGRESS="1")
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, env=env, preexec_fn=_ignore_sigint)
    try:
        deadline = time.monotonic() + 120
        while not (out / "metrics.jsonl").exists():  # an iteration has run: the env workers are up
            assert proc.poll() is None and time.monotonic() < deadline, "the run did not start"
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "terminated" in err
    assert "leaked" not in err  # the workers' shared memory was unlinked, not left to the resource tracker
