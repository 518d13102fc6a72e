"""Worker processes and the parent's handles on them, for :mod:`digirl.envs.vector`.

A worker owns one env and answers ``(cmd, payload, frames)`` messages on a Pipe: ``reset`` (seed,
task, attempt, want_cheat) and ``step`` (action, want_cheat), each replied with ``("ok", result,
shipped)`` or ``("err", Fault, None)``; ``close`` or EOF ends it, and so does the death of its
parent. The previous frame inside an observation is not shipped again (the parent restores it).
A handle hides whether the env is in a process (:class:`ProcessHandle`) or in the caller
(:class:`InlineHandle`).

Screenshots do not go through the pipe: each slot has a shared-memory block that the parent
creates (``frames`` names it) and owns. The worker copies the frames of a reply into it and sends
their layout; the parent copies them out before it sends the next command, so the block is never
written while being read. Pickling a 270×600 frame and pushing it through a pipe cost more than
the env step itself. The first reply of a slot (no block yet) pickles its frames and says how
large a block to make. Blocks are unlinked when the runner closes; if the parent dies, Python's
resource tracker (which registered them) unlinks them.
"""

from __future__ import annotations

import logging
import math
import os
import secrets
import signal
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from multiprocessing.connection import Connection
from multiprocessing.shared_memory import SharedMemory
from typing import Any, Protocol

import numpy as np

from digirl.core.errors import UnsupportedInstructionError
from digirl.core.types import Observation, UIElement
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
    "pack_elements",
    "preload_forkserver",
    "serve",
    "shutdown",
    "unpack_elements",
]


# --------------------------------------------------------------------------- worker side
@dataclass(frozen=True)
class Fault:
    """An exception inside a worker: ``kind`` is ``task`` (the job's fault), ``build`` or ``env``."""

    kind: str
    type_name: str
    message: str
    traceback: str


def unlink_block(block: SharedMemory | None) -> None:
    """Close and unlink a frame block; a process that still has it mapped keeps its mapping, the name is gone at once."""
    if block is not None:
        block.close()
        try:
            block.unlink()
        except FileNotFoundError:
            pass


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


#: Where a reply's frames are: ((field, shape, dtype, offset), ...) in the slot's shared block.
Layout = tuple[tuple[str, tuple[int, ...], str, int], ...]
_FRAME_FIELDS = ("screenshot", "previous_screenshot")
_NO_FRAME = np.empty((0, 0, 3), np.uint8)  # stands in for a frame that travels through shared memory
_ELEMENT_FIELDS = tuple(f.name for f in fields(UIElement))  # UIElement(*values) rebuilds one


def _put_frames(obs: Observation, block: SharedMemory | None) -> tuple[Observation, tuple[Any, ...] | None]:
    """Move the observation's frames into ``block``: (observation without them, ("shm", layout,
    elements)), or, when there is no block or they do not fit, (observation as is, ("want", bytes
    needed)). UI elements travel as plain tuples (unpickling frozen dataclasses one by one cost
    the parent ~7 µs an element)."""
    arrays = [(f, a) for f in _FRAME_FIELDS if isinstance(a := getattr(obs, f), np.ndarray) and a.size]
    if not arrays:
        return obs, None
    need = sum(a.nbytes for _, a in arrays)
    if block is None or need > block.size:
        return obs, ("want", 2 * max(a.nbytes for _, a in arrays))  # room for both frames next time
    layout = []
    offset = 0
    for field, a in arrays:
        dst: np.ndarray = np.ndarray(a.shape, a.dtype, buffer=block.buf, offset=offset)
        dst[...] = a
        del dst  # no view may outlive the copy (the block could not be closed)
        layout.append((field, a.shape, a.dtype.str, offset))
        offset += a.nbytes
    gone: dict[str, Any] = {f: (_NO_FRAME if f == "screenshot" else None) for f, _ in arrays}
    packed = None
    if obs.elements and all(type(e) is UIElement for e in obs.elements):
        packed = tuple(tuple(getattr(e, n) for n in _ELEMENT_FIELDS) for e in obs.elements)
        gone["elements"] = None
    light = replace(obs, **gone)
    return light, ("shm", tuple(layout), packed)


def pack_elements(obs: Observation) -> tuple[Observation, tuple[tuple[Any, ...], ...] | None]:
    """The observation without its UI elements, and them as plain tuples (cheaper to pickle; see above)."""
    if obs.elements and all(type(e) is UIElement for e in obs.elements):
        return replace(obs, elements=None), tuple(tuple(getattr(e, n) for n in _ELEMENT_FIELDS) for e in obs.elements)
    return obs, None


def unpack_elements(obs: Observation, packed: tuple[tuple[Any, ...], ...] | None) -> Observation:
    """Undo :func:`pack_elements` (in place)."""
    if packed is not None:
        obs.elements = tuple(UIElement(*values) for values in packed)
    return obs


def _take_frames(obs: Observation, layout: Layout, packed: Any, block: SharedMemory) -> Observation:
    """The parent's side of :func:`_put_frames`: copies of the frames (and the elements), back in
    the observation."""
    restored: dict[str, Any] = {}
    for field, shape, dtype, offset in layout:
        view: np.ndarray = np.ndarray(shape, np.dtype(dtype), buffer=block.buf, offset=offset)
        restored[field] = view.copy()
        del view
    if packed is not None:
        restored["elements"] = tuple(UIElement(*values) for values in packed)
    return replace(obs, **restored)


def _attach(name: str | None, current: SharedMemory | None) -> SharedMemory | None:
    """The worker's handle on the block the parent named (re-attached when the name changes)."""
    if current is not None and current.name.lstrip("/") == (name or "").lstrip("/"):
        return current
    if current is not None:
        current.close()
    return SharedMemory(name=name) if name else None


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
    block: SharedMemory | None = None
    parent = os.getppid()
    try:
        while True:
            try:
                while not conn.poll(1.0):
                    if os.getppid() != parent:  # orphaned (the parent was killed): do not linger
                        return
                cmd, payload, block_name = conn.recv()
            except (EOFError, OSError):
                break
            if cmd == "close":
                break
            if env is None:
                assert build_fault is not None
                conn.send(("err", build_fault, None))
                continue
            (status, out), last_shot = serve(env, cmd, payload, last_shot)
            frames = None
            if status == "ok":
                try:
                    block = _attach(block_name, block)
                except OSError:  # the block is gone (the parent is closing): pickle this reply
                    block = None
                shipped, frames = _put_frames(out[0], block)
                out = (shipped, *out[1:])
            try:
                conn.send((status, out, frames))
            except (OSError, EOFError):
                break
            except Exception as e:  # an info dict that cannot be pickled, for instance
                conn.send(("err", fault_of("env", e), None))
    finally:
        if env is not None:
            try:
                env.close()
            except Exception:
                logger.debug("env.close() failed in worker", exc_info=True)
        if block is not None:
            block.close()
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
        self.block: SharedMemory | None = None  # this slot's frames; outlives worker restarts

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def waitable(self) -> Connection | None:
        """What ``connection.wait`` can watch, or ``None`` when the reply is known already."""
        return None if self._broken else self.conn

    def _start(self) -> None:
        parent, child = self._ctx.Pipe(duplex=True)
        proc = self._ctx.Process(target=_worker_main, args=(child, self._env_fn), name=f"digirl-env-{self.index}", daemon=True)
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
                self.conn.recv()  # its frames, if any, are simply overwritten by the next reply
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
            self.conn.send((cmd, payload, self.block.name if self.block is not None else None))
        except (OSError, ValueError):
            self._broken = True  # the receive below reports it as a crash
        return started

    def receive(self) -> tuple[str, Any]:
        """The reply to the outstanding command: ``("ok", out)``, ``("err", Fault)`` or ``("crash", why)``."""
        assert self.conn is not None and self.cmd is not None
        cmd, self.cmd = self.cmd, None
        if not self._broken:
            try:
                status, out, frames = self.conn.recv()
            except (EOFError, OSError):
                pass
            except Exception as e:  # the reply could not be unpickled here
                return ("err", fault_of("env", e))
            else:
                if frames is not None and frames[0] == "shm":
                    assert self.block is not None
                    out = (_take_frames(out[0], frames[1], frames[2], self.block), *out[1:])
                elif frames is not None and frames[0] == "want":
                    self._grow(int(frames[1]))
                return (status, out)
        self.proc.join(1.0)
        return ("crash", f"worker process died during {cmd} (exit code {self.proc.exitcode})")

    def _grow(self, size: int) -> None:
        """Make this slot's block at least ``size`` bytes (a new one: the worker re-attaches by name)."""
        if self.block is not None and self.block.size >= size:
            return
        self.release_block()
        # The resource tracker registers it: unlinked even if this process is killed.
        name = f"digirl_{os.getpid()}_{self.index}_{secrets.token_hex(4)}"
        self.block = SharedMemory(name=name, create=True, size=size)

    def release_block(self) -> None:
        """Unlink this slot's shared memory (at close; a worker that still has it mapped keeps its
        mapping until it exits, the name is gone at once)."""
        block, self.block = self.block, None
        unlink_block(block)

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
                self.conn.send(("close", None, None))
            except (OSError, ValueError):
                pass

    def finish_close(self, deadline: float) -> None:
        if self.proc is not None:
            self.proc.join(max(0.0, deadline - time.monotonic()))
        self.kill()
        self.release_block()


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
