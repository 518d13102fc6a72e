"""Benchmarks' child runs: each stage of ``digirl bench`` is a ``digirl`` CLI call in its own process.

One home for how those processes start (environment, threads, GPU), how their JSON answer is read, and
how they stop with the benchmark: a benchmark that is killed (SIGTERM, SIGINT, SIGHUP) terminates the
runs it started instead of leaving them training in the background, and starts no new ones.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any, Protocol, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")
R = TypeVar("R")

_live: set[subprocess.Popen[str]] = set()
_lock = threading.Lock()
_stopping = threading.Event()


class StoppedError(Exception):
    """The benchmark was told to stop: no further child run starts."""


def child_env(gpu: int | None = None, threads: int | None = None) -> dict[str, str]:
    env = dict(os.environ, DIGIRL_NO_PROGRESS="1")
    if threads is not None and "OMP_NUM_THREADS" not in os.environ:
        env["OMP_NUM_THREADS"] = str(threads)  # many runs share the cores: no oversubscription
    if gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = str(gpu)
    return env


def run_cli(
    args: list[str],
    log_file: Path,
    gpu: int | None = None,
    threads: int | None = None,
    timeout: float | None = None,
    grace_s: float = 60.0,
    program: Sequence[str] | None = None,
) -> dict[str, Any]:
    """``digirl ARGS --json`` in a child process (stderr to ``log_file``); its last stdout line, parsed.
    After ``timeout`` seconds the run gets SIGTERM (``digirl`` then leaves as on Ctrl-C, closing its
    env workers; SIGINT would do nothing in a shell's background job), SIGKILL after ``grace_s``
    more, and :class:`subprocess.TimeoutExpired` is raised. ``program`` replaces ``python -m digirl``
    (a study's own stage, e.g. ``[sys.executable, SCRIPT]``), stopped with the benchmark as well."""
    cmd = [*(program or (sys.executable, "-m", "digirl")), *args, "--json"]
    with open(log_file, "w") as fh:
        with _lock:  # checked under the lock, so a stop cannot miss a child that is starting
            if _stopping.is_set():
                raise StoppedError(f"stopped before `{' '.join(cmd)}` started")
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=fh, text=True, env=child_env(gpu, threads))
            _live.add(proc)
        try:
            stdout, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.communicate(timeout=grace_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
            raise
        finally:
            with _lock:
                _live.discard(proc)
    if _stopping.is_set():
        raise StoppedError(f"`{' '.join(cmd)}` was stopped with the benchmark; see {log_file}")
    if proc.returncode != 0:
        raise RuntimeError(f"`{' '.join(cmd)}` failed (exit {proc.returncode}); see {log_file}")
    return json.loads(stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def stop_children(sig: int = signal.SIGTERM, grace_s: float = 10.0) -> int:
    """Start no more child runs, send ``sig`` to the running ones and wait for them to end (SIGKILL after
    ``grace_s``), so none outlives this process; how many were running."""
    with _lock:
        _stopping.set()
        live = list(_live)
    for proc in live:
        if proc.poll() is None:
            proc.send_signal(sig)
    deadline = time.monotonic() + grace_s
    for proc in live:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return len(live)


@contextmanager
def children_stop_with_me() -> Iterator[None]:
    """While inside, SIGTERM / SIGINT / SIGHUP stop every child run before this process exits (with
    128 + the signal's number). Only the main thread can install handlers; elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        n = stop_children(signal.SIGTERM)
        log.warning("%s: stopping %d child run(s)", signal.Signals(signum).name, n)
        raise SystemExit(128 + signum)

    signals = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
    before = {s: signal.signal(s, on_signal) for s in signals}
    _stopping.clear()
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def run_all(fn: Callable[[T], R], items: Iterable[T], workers: int) -> list[R]:
    """``fn`` over ``items`` on ``workers`` threads, results in order. The caller waits in short
    slices: a kill is delivered to any thread, but only the main thread runs the handler, and a main
    thread blocked on a future until some run ends would hold the stop off for hours."""
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = [pool.submit(fn, x) for x in items]
        while wait(futures, timeout=0.2).not_done:
            pass
        return [f.result() for f in futures]


class RunSpread(Protocol):
    """What a benchmark's config says about spreading its runs (Table 1, Digi-Q)."""

    parallel: int
    gpus: int | None
    device: str


def run_threads(cfg: RunSpread) -> int:
    """Torch threads per run: the cores shared by the runs that execute at once."""
    return max(1, (os.cpu_count() or 1) // max(1, cfg.parallel))


def visible_gpus(cfg: RunSpread) -> int:
    """How many GPUs to spread runs over (0: leave CUDA_VISIBLE_DEVICES alone)."""
    if cfg.gpus is not None:
        return max(0, cfg.gpus)
    if cfg.device == "cpu":
        return 0
    try:
        import torch

        return int(torch.cuda.device_count())
    except Exception:
        return 0
