"""The Ray actor that owns one env: the Ray counterpart of a vector runner's worker process.

It answers the same commands as a worker process (:func:`digirl.envs._vector_worker.serve`), so an
episode behaves the same whichever transport carries it. Every reply also says where it ran (pid,
node), which the runner records in the trajectory's metadata. Ray is imported by the caller only:
this module is plain Python and is imported by reference in the worker.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import replace
from multiprocessing import resource_tracker
from multiprocessing.shared_memory import SharedMemory
from typing import TYPE_CHECKING, Any

import numpy as np

from digirl.core.errors import UnsupportedInstructionError
from digirl.core.types import Observation
from digirl.envs._vector_worker import EnvFn, Fault, fault_of, pack_elements, serve
from digirl.envs.base import DeviceEnv

if TYPE_CHECKING:
    from digirl.distributed.acting import ActorActing, EpisodeActing

__all__ = ["ACTOR_KEYS", "EnvActor", "current_node_id"]

log = logging.getLogger(__name__)

#: How many ActorActing (policy versions) an actor keeps: an asynchronous run acts with at most k + 1 at once.
ACTOR_KEYS = 4


class EnvActor:
    """One env in a Ray worker process. Built lazily: a build failure is reported on the first command.

    ``device`` (optional) is ``(kwarg, value)``: the env is built with ``env_fn(**{kwarg: value})``,
    so each actor drives its own phone or emulator. ``device_pool`` is ``(kwarg, env var)``: the actor
    claims a free entry of the comma-separated list in that variable *on the machine it landed on*
    (one lock file per entry, released when the actor's process ends, however it ends).
    """

    def __init__(
        self,
        env_fn: EnvFn,
        device: tuple[str, str] | None = None,
        device_pool: tuple[str, str] | None = None,
    ) -> None:
        self.env: DeviceEnv | None = None
        self.build_fault: Fault | None = None
        self.last_shot: np.ndarray | None = None
        self.where = {"pid": os.getpid(), "node": current_node_id(), "host": socket.gethostname()}
        self._claim: Any = None
        self._actings: dict[str, ActorActing] = {}  # by key: each policy version is fetched once
        self._episode: EpisodeActing | None = None
        self._obs: Observation | None = None
        self._cond = threading.Condition()
        self._turn = 0  # the turn of the next start to play
        self._busy = False  # an episode is in progress
        self._blocks: dict[str, SharedMemory] = {}  # the caller's frame blocks, by name
        try:
            kwargs: dict[str, Any] = {}
            if device is not None:
                kwargs[device[0]] = device[1]
            elif device_pool is not None:
                from digirl.distributed.devices import claim_device

                value, self._claim = claim_device(device_pool[1])
                kwargs[device_pool[0]] = value
                self.where["device"] = value
            build: Callable[..., DeviceEnv] = env_fn
            self.env = build(**kwargs)
        except Exception as e:
            self.build_fault = fault_of("build", e)

    def execute(self, cmd: str, payload: Any) -> tuple[tuple[str, Any], dict[str, Any]]:
        """One command (``reset``/``step``): ``(reply, where it ran)``."""
        if self.env is None:
            assert self.build_fault is not None
            return ("err", self.build_fault), self.where
        reply, self.last_shot = serve(self.env, cmd, payload, self.last_shot)
        return reply, self.where

    def play(
        self, start: tuple[Any, ...] | None, max_steps: int, turn: int | None = None, block: str | None = None
    ) -> tuple[tuple[str, Any], dict[str, Any]]:
        """Play up to ``max_steps`` steps of an episode with an acting held here (``env.ray.inference=actor``).

        ``start`` is ``(seed, task, attempt, key, acting)`` to reset and begin an episode (``acting``: an
        :class:`~digirl.distributed.acting.ActorActing`, or an object ref to one, fetched only when
        ``key`` is new here), ``None`` to go on with the current one. The reply is ``("ok", (first
        observation or None, how it was shipped, task, steps, end, metadata))``: ``steps`` are ``(ActOutput,
        reward, terminated, truncated, info, next observation, how it was shipped)``, ``end`` is ``running``,
        ``done`` or ``no_action`` (the acting had no action: an expert without a script); observations
        whose previous frame is the one sent just before go without it, as in :meth:`execute`, and their
        UI elements as tuples (:func:`~digirl.envs._vector_worker.pack_elements`); ``(dedup, packed)`` says so.

        A start with a ``turn`` may be sent ahead, while the episode before it still plays (a threaded
        actor, ``max_concurrency=2``): it waits until that episode has ended and every start of a lower
        turn has begun, so the env is never reset under a running episode and the reply's transfer
        overlaps the next episode's steps.

        ``block`` names a shared-memory block of the caller's (on this machine): the reply's frames go
        there instead of through Ray's object store, whose fixed cost per reply is larger than a simulator
        episode's. A 7th element of the reply says where they are (:func:`_frames_to_block`).
        """
        if start is not None and turn is not None:
            with self._cond:
                self._cond.wait_for(lambda: self._turn == turn and not self._busy)
                self._turn += 1
                self._busy = True
        try:
            (status, out), where = self._play(start, max_steps)
            if status != "ok":
                return (status, out), where
            return (status, (*out, _frames_to_block(out, self._attach(block)))), where
        finally:
            with self._cond:
                self._busy = self._episode is not None
                self._cond.notify_all()

    def _play(self, start: tuple[Any, ...] | None, max_steps: int) -> tuple[tuple[str, Any], dict[str, Any]]:
        if self.env is None:
            assert self.build_fault is not None
            return ("err", self.build_fault), self.where
        env = self.env
        first: tuple[Observation | None, Any] = (None, None)
        task = None
        try:
            if start is not None:
                seed, job_task, attempt, key, acting = start
                self._episode = None
                try:
                    reset_obs, _info = env.reset(seed=seed, options={"task": job_task, "attempt": attempt})
                except UnsupportedInstructionError as e:
                    return ("err", fault_of("task", e)), self.where
                task = env.task
                self._episode = self._acting(key, acting).episode(env, seed, attempt)
                self._obs = reset_obs
                first = self._ship(reset_obs)
            episode, current = self._episode, self._obs
            if episode is None or current is None:
                raise RuntimeError("play(None, ...) without an episode in progress")
            obs: Observation = current
            steps: list[tuple[Any, ...]] = []
            end = "running"
            while len(steps) < max_steps:
                out = episode.act(obs)
                if out is None:
                    end = "no_action"
                    break
                obs, reward, terminated, truncated, info = env.step(out.action)
                steps.append((out, float(reward), bool(terminated), bool(truncated), info, *self._ship(obs)))
                if terminated or truncated:
                    end = "done"
                    break
            self._obs = obs
            meta = episode.metadata() if end != "running" else {}
            if end != "running":
                self._episode, self._obs = None, None
        except Exception as e:
            self._episode, self._obs = None, None
            return ("err", fault_of("env", e)), self.where
        return ("ok", (*first, task, steps, end, meta)), self.where

    def _attach(self, name: str | None) -> SharedMemory | None:
        if not name:
            return None
        block = self._blocks.get(name)
        if block is None:
            try:
                block = SharedMemory(name=name)
            except OSError:  # gone (the caller is closing): the frames go through Ray
                return None
            # The caller owns the block: this process's resource tracker must not unlink it when we exit.
            resource_tracker.unregister(block._name, "shared_memory")  # type: ignore[attr-defined]
            while len(self._blocks) >= 4:
                self._blocks.pop(next(iter(self._blocks))).close()
            self._blocks[name] = block
        return block

    def _acting(self, key: str, acting: Any) -> ActorActing:
        got = self._actings.get(key)
        if got is None:
            if acting is None:  # the caller believed we held it
                raise RuntimeError(f"acting {key!r} was not sent and is not held here")
            if not hasattr(acting, "episode"):  # an object ref: fetched once per key
                import ray

                acting = ray.get(acting)
            got = acting
            while len(self._actings) >= ACTOR_KEYS:
                self._actings.pop(next(iter(self._actings)))
            self._actings[key] = got
        return got

    def _ship(self, obs: Observation) -> tuple[Observation, tuple[bool, Any]]:
        """The observation without the frame sent just before it and with its UI elements as tuples:
        ``(observation, (dedup, packed elements))`` (the caller restores both)."""
        dedup = obs.previous_screenshot is not None and obs.previous_screenshot is self.last_shot
        self.last_shot = obs.screenshot
        # Always a copy: the reply's observations get their frames stripped in place (_frames_to_block).
        light, packed = pack_elements(replace(obs, previous_screenshot=None if dedup else obs.previous_screenshot))
        return light, (dedup, packed)

    def close(self) -> None:
        """Close the env, then give its device back."""
        env, self.env = self.env, None
        if env is not None:
            try:
                env.close()
            except Exception:
                log.debug("env.close() failed in a Ray actor", exc_info=True)
        claim, self._claim = self._claim, None
        if claim is not None:
            claim.close()
        for block in self._blocks.values():
            block.close()
        self._blocks.clear()


#: Where a play reply's frames are: ("shm", ((observation index, field, shape, dtype, offset), ...)),
#: ("want", bytes a block needs) when they did not fit (they travel in the reply), or None (no block).
FrameLayout = tuple[tuple[int, str, tuple[int, ...], str, int], ...]
_NO_FRAME = np.empty((0, 0, 3), np.uint8)  # stands in for a frame that travels through shared memory


def _frames_to_block(out: tuple[Any, ...], block: SharedMemory | None) -> tuple[str, Any] | None:
    """Move the frames of a play reply's observations (the first, then each step's) into ``block``, in place."""
    if block is None:
        return None
    first, _, _, steps, *_ = out
    observations = ([first] if first is not None else []) + [s[5] for s in steps]
    arrays = [
        (i, f, a)
        for i, o in enumerate(observations)
        for f in ("screenshot", "previous_screenshot")
        if isinstance(a := getattr(o, f), np.ndarray) and a.size
    ]
    need = sum(a.nbytes for *_, a in arrays)
    if need > block.size:
        return ("want", 2 * need)
    layout = []
    offset = 0
    for i, f, a in arrays:
        dst: np.ndarray = np.ndarray(a.shape, a.dtype, buffer=block.buf, offset=offset)
        dst[...] = a
        del dst  # no view may outlive the copy (the block could not be closed)
        layout.append((i, f, a.shape, a.dtype.str, offset))
        offset += a.nbytes
    for o in observations:  # the reply's own copies (EnvActor._ship): strip them in place
        o.screenshot = _NO_FRAME
        o.previous_screenshot = None
    return ("shm", tuple(layout))


def current_node_id() -> str | None:
    try:
        import ray

        return str(ray.get_runtime_context().get_node_id())
    except Exception:  # not inside Ray (unit tests build the class directly)
        return None
