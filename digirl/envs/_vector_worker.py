"""Worker processes and the parent's handles on them, for :mod:`digirl.envs.vector`.

A worker owns one env and answers ``(cmd, payload)`` messages on a Pipe: ``reset`` (seed, task,
attempt, want_cheat) and ``step`` (action, want_cheat), each replied with ``("ok", result)`` or
``("err", Fault)``; ``close`` or EOF ends it, and so does the death of its parent. The previous
frame inside an observation is not shipped again (the parent restores it). A handle hides whether
the env is in a process (:class:`ProcessHandle`) or in the caller (:class:`InlineHandle`).
"""

from __future__ import annotations

import logging
import math
import os
import signal
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from typing import Any, Protocol

import numpy as np

from digirl.core.errors import UnsupportedInstructionError
from digirl.core.types import Observation
from digirl.envs.base import DeviceEnv

logger = logging.getLogger("digirl.envs.vector")

EnvFn = Callable[[], DeviceEnv]


__all__ = [
    "EnvFn",
    "Fault",
    "Handle",
    "InlineHandle",
    "ProcessHandle",
    "fault_of",
    "preload_forkserver",
    "serve",
    "shutdown",
]


# --------------------------------------------------------------------------- worker side
@dataclass(frozen=True)
class Fault:
    """An exception inside a worker: ``kind`` is ``task`` (the job's fault), ``build`` or ``env``."""

    kind: str
    type_name: str
    message: str
    traceback: str


def fault_of(kind: str, e: BaseException) -> Fault:
    tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    return Fault(kind, type(e).__name__, str(e), tb)


def _execute(env: DeviceEnv, cmd: str, payload: Any) -> tuple[Any, ...]:
    """Run one command on the env; the first element of the result is always an Observation."""
    if cmd == "reset":
        seed, task, attempt, want_cheat = payload
        obs, info = env.reset(seed=seed, options={"task": task, "attempt": attempt})
        if not want_cheat:
            return (obs, info, env.task, None, None)
        return (obs, info, env.task, env.cheat(), (env.action_space, getattr(env, "action_codec", "json")))
    if cmd == "step":
        action, want_cheat = payload
        obs, reward, terminated, truncated, info = env.step(action)
        done = bool(terminated) or bool(truncated)
        cheat = env.cheat() if want_cheat and not done else None
        return (obs, float(reward), bool(terminated), bool(truncated), info, cheat)
    raise ValueError(f"unknown worker command {cmd!r}")


def _safe_execute(env: DeviceEnv, cmd: str, payload: Any) -> tuple[str, Any]:
    try:
        return ("ok", _execute(env, cmd, payload))
    except Exception as e:
        kind = "task" if cmd == "reset" and isinstance(e, UnsupportedInstructionError) else "env"
        return ("err", fault_of(kind, e))


def serve(env: DeviceEnv, cmd: str, payload: Any, last_shot: np.ndarray | None) -> tuple[tuple[str, Any], np.ndarray | None]:
    """Answer one command for a worker (process or Ray actor): ``(reply, frame to remember)``.

    The caller already holds the previous frame, so an observation whose ``previous_screenshot`` is
    the frame sent last time goes without it (``dedup`` in the reply; the caller restores it).
    """
    status, out = _safe_execute(env, cmd, payload)
    if status != "ok":
        return (status, out), last_shot
    obs: Observation = out[0]
    dedup = obs.previous_screenshot is not None and obs.previous_screenshot is last_shot
    shipped = replace(obs, previous_screenshot=None) if dedup else obs
    return (status, (shipped, dedup, *out[1:])), obs.screenshot


def _worker_main(conn: Connection, env_fn: EnvFn) -> None:
    """Worker process: own one env, answer commands until ``close`` or EOF."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle (it closes us)
    env: DeviceEnv | None = None
    build_fault: Fault | None = None
    try:
        env = env_fn()
    except Exception as e:
        build_fault = fault_of("build", e)  # reported on the first command; the parent decides
    last_shot: np.ndarray | None = None
    parent = os.getppid()
    try:
        while True:
            try:
                while not conn.poll(1.0):
                    if os.getppid() != parent:  # orphaned (the parent was killed): do not linger
                        return
                cmd, payload = conn.recv()
            except (EOFError, OSError):
                break
            if cmd == "close":
                break
            if env is None:
                assert build_fault is not None
                conn.send(("err", build_fault))
                continue
            reply, last_shot = serve(env, cmd, payload, last_shot)
            try:
                conn.send(reply)
            except (OSError, EOFError):
                break
            except Exception as e:  # an info dict that cannot be pickled, for instance
                conn.send(("err", fault_of("env", e)))
    finally:
        if env is not None:
            try:
                env.close()
            except Exception:
                logger.debug("env.close() failed in worker", exc_info=True)
        conn.close()


# --------------------------------------------------------------------------- parent-side handles
class ProcessHandle:
    """One worker slot in process mode; the process is (re)started lazily on the next request."""

    def __init__(self, index: int, env_fn: EnvFn, ctx: Any) -> None:
        self.index = index
        self._env_fn = env_fn
        self._ctx = ctx
        self.proc: Any = None
        self.conn: Connection | None = None
        self.starts = 0
        self.pids: list[int] = []
        self.cmd: str | None = None
        self.deadline = math.inf
        self.timeout = 0.0
        self.sent = 0.0
        self._broken = False

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def waitable(self) -> Connection | None:
        """What ``connection.wait`` can watch, or ``None`` when the reply is known already."""
        return None if self._broken else self.conn

    def _start(self) -> None:
        parent, child = self._ctx.Pipe(duplex=True)
        proc = self._ctx.Process(
            target=_worker_main, args=(child, self._env_fn), name=f"digirl-env-{self.index}", daemon=True
        )
        proc.start()
        child.close()
        self.proc, self.conn, self._broken = proc, parent, False
        self.starts += 1
        self.pids.append(proc.pid)

    def _drain_stale(self) -> None:
        """A run abandoned mid-request leaves a reply in flight: wait for it (until its deadline) or kill."""
        assert self.conn is not None
        try:
            if not self._broken and self.conn.poll(max(0.0, self.deadline - time.monotonic())):
                self.conn.recv()
                self.cmd = None
                return
        except (EOFError, OSError):
            pass
        self.kill()

    def request(self, cmd: str, payload: Any, timeout: float) -> bool:
        """Send a command; returns whether a fresh worker process had to be started for it."""
        if self.cmd is not None and self.proc is not None:
            self._drain_stale()
        started = self.proc is None
        if started:
            self._start()
        assert self.conn is not None
        self.cmd, self.timeout, self.sent = cmd, timeout, time.monotonic()
        self.deadline = self.sent + timeout
        try:
            self.conn.send((cmd, payload))
        except (OSError, ValueError):
            self._broken = True  # the receive below reports it as a crash
        return started

    def receive(self) -> tuple[str, Any]:
        """The reply to the outstanding command: ``("ok", out)``, ``("err", Fault)`` or ``("crash", why)``."""
        assert self.conn is not None and self.cmd is not None
        cmd, self.cmd = self.cmd, None
        if not self._broken:
            try:
                return self.conn.recv()  # type: ignore[no-any-return]
            except (EOFError, OSError):
                pass
            except Exception as e:  # the reply could not be unpickled here
                return ("err", fault_of("env", e))
        self.proc.join(1.0)
        return ("crash", f"worker process died during {cmd} (exit code {self.proc.exitcode})")

    def kill(self) -> None:
        """Stop the worker now (SIGTERM, then SIGKILL); the next request starts a fresh one."""
        proc, conn = self.proc, self.conn
        self.proc, self.conn, self.cmd, self._broken = None, None, None, False
        if proc is not None:
            if proc.is_alive():
                proc.terminate()
                proc.join(0.5)
            if proc.is_alive():
                proc.kill()
            proc.join(2.0)
        if conn is not None:
            conn.close()

    def begin_close(self) -> None:
        if self.conn is not None and self.proc is not None:
            try:
                self.conn.send(("close", None))
            except (OSError, ValueError):
                pass

    def finish_close(self, deadline: float) -> None:
        if self.proc is not None:
            self.proc.join(max(0.0, deadline - time.monotonic()))
        self.kill()


class InlineHandle:
    """One env in the calling process. Commands run on ``request``; no timeouts are possible."""

    def __init__(self, index: int, env_fn: EnvFn) -> None:
        self.index = index
        self._env_fn = env_fn
        self.env: DeviceEnv | None = None
        self.starts = 0
        self.pids: list[int] = []
        self.pid: int | None = None
        self.cmd: str | None = None
        self.deadline = math.inf
        self.timeout = 0.0
        self.sent = 0.0
        self._reply: tuple[str, Any] = ("ok", None)

    def waitable(self) -> Connection | None:
        return None

    def request(self, cmd: str, payload: Any, timeout: float) -> bool:
        started = self.env is None
        self.cmd = cmd
        if started:
            self.starts += 1
            try:
                self.env = self._env_fn()
            except Exception as e:
                self._reply = ("err", fault_of("build", e))
                return started
        assert self.env is not None
        status, out = _safe_execute(self.env, cmd, payload)
        self._reply = (status, (out[0], False, *out[1:]) if status == "ok" else out)  # same shape as a worker's
        return started

    def receive(self) -> tuple[str, Any]:
        self.cmd = None
        return self._reply

    def kill(self) -> None:
        env, self.env, self.cmd = self.env, None, None
        if env is not None:
            try:
                env.close()
            except Exception:
                logger.debug("env.close() failed", exc_info=True)

    def begin_close(self) -> None:
        pass

    def finish_close(self, deadline: float) -> None:
        self.kill()


class Handle(Protocol):
    """One env slot of a runner, whatever carries the commands (a process, the caller, a Ray actor).

    ``request`` sends a command (starting a fresh worker first when there is none) and says whether
    it had to start one; ``waitable`` is what the runner's wait function watches (``None``: the reply is
    known already); ``receive`` returns ``("ok", out)``, ``("err", Fault)`` or ``("crash", why)``.
    """

    index: int
    starts: int
    pids: list[int]
    cmd: str | None
    deadline: float
    timeout: float
    sent: float

    @property
    def pid(self) -> int | None: ...

    def waitable(self) -> Any: ...

    def request(self, cmd: str, payload: Any, timeout: float) -> bool: ...

    def receive(self) -> tuple[str, Any]: ...

    def kill(self) -> None: ...

    def begin_close(self) -> None: ...

    def finish_close(self, deadline: float) -> None: ...


def shutdown(handles: list[Handle], grace_s: float = 5.0) -> None:
    """Ask every worker to exit, wait up to ``grace_s`` in total, then kill what is left."""
    for h in handles:
        h.begin_close()
    deadline = time.monotonic() + grace_s
    for h in handles:
        h.finish_close(deadline)


_PRELOADED = False


def preload_forkserver(ctx: Any) -> None:
    """Import our modules once in the fork server, so a (re)started worker is a ~20 ms fork.

    Measured here: a toy worker restart took 0.3 s without this and 0.02-0.06 s with it. It only
    takes effect if the fork server is not running yet, and replaces an earlier preload list.
    """
    global _PRELOADED
    if not _PRELOADED:
        _PRELOADED = True
        ctx.set_forkserver_preload(["digirl.envs.vector", "digirl.envs._vector_worker", "digirl.envs.registry"])
