"""``env.runner=ray``: the vector runner's scheduler, with each env in a Ray actor anywhere in a cluster.

:class:`RayRunner` is a :class:`~digirl.envs.vector.VectorRunner` whose env slots are Ray actors
(:class:`~digirl.distributed.actor.EnvActor`) instead of worker processes, so everything the process
runner promises holds here too: policy inference batched in this process (one ``act_fn`` call over
every env waiting for an action), the same episode records, and the same failure semantics. An actor
that dies (its process or its whole node), hangs past ``step_timeout_s`` or raises is killed and
replaced by a fresh actor, and its episode restarts from scratch with the same seed; after
``max_episode_retries`` it is yielded with ``env_failure=True`` — never scored as the agent's
failure, never lost, never yielded twice. In deterministic mode (the default of the training
commands) a Ray run gives the same trajectories as the process runner for the same jobs and policy.
"""

from __future__ import annotations

import logging
import math
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import replace
from multiprocessing.shared_memory import SharedMemory
from typing import Any, cast

import numpy as np

from digirl.core.types import Observation
from digirl.distributed.acting import ExpertActing
from digirl.distributed.actor import ACTOR_KEYS, current_node_id
from digirl.distributed.config import RayConfig
from digirl.distributed.session import RaySession, import_ray
from digirl.envs._vector_worker import EnvFn, Handle, fault_of, unlink_block
from digirl.envs.collector import Collector, CollectorSpec
from digirl.envs.vector import VectorRunner, _Episode, _RunSpec, env_factory

__all__ = ["RayHandle", "RayRunner", "make_ray_collector"]

log = logging.getLogger(__name__)


class RayHandle:
    """One env slot held by a Ray actor; a fresh actor is started lazily on the next request."""

    def __init__(self, index: int, start_actor: Callable[[], Any]) -> None:
        self.index = index
        self._start_actor = start_actor
        self.actor: Any = None
        self.ref: Any = None
        self.starts = 0
        self.pids: list[int] = []
        self.pid: int | None = None
        self.node: str | None = None
        self.cmd: str | None = None
        self.deadline = math.inf
        self.timeout = 0.0
        self.sent = 0.0
        self._closing: Any = None
        self._unused = False  # an actor started ahead (prestart) that has had no request yet
        self.turn = 0  # starts sent to this actor (EnvActor.play plays them in this order)
        self.next: tuple[Any, float] | None = None  # a start sent ahead: (its ref, its timeout)
        # inference=actor, actor on this machine: play replies put their frames in one of two blocks (two
        # calls can be in flight: the running episode's and the one sent ahead; each uses the other block)
        self.keys: list[str] = []  # the ActorActing keys this slot's actor holds
        self.local = False
        self.blocks: list[SharedMemory | None] = [None, None]
        self._block_of: dict[str, int | None] = {"cur": None, "next": None}

    def waitable(self) -> Any:
        return self.ref

    def _drain_stale(self) -> None:
        """A run abandoned mid-request leaves a reply in flight: wait for it (until its deadline) or kill."""
        ray = import_ray()
        ready, _ = ray.wait([self.ref], timeout=max(0.0, self.deadline - time.monotonic()))
        if ready:
            try:
                ray.get(ready[0])
                self.cmd, self.ref = None, None
                return
            except ray.exceptions.RayError:
                pass
        self.kill()

    def prestart(self) -> None:
        """Start the actor now: its process boots (imports, env construction) while the caller does other work."""
        if self.actor is None:
            self._new_actor()

    def _new_actor(self) -> None:
        self.actor = self._start_actor()
        self.starts += 1
        self.pid = self.node = None
        self.turn = 0
        self.keys = []
        self._unused = True

    def request(self, cmd: str, payload: Any, timeout: float) -> bool:
        """Send a command; returns whether a fresh actor had to be started for it."""
        if self.cmd is not None and self.actor is not None:
            self._drain_stale()
        started = self.actor is None or self._unused
        if self.actor is None:
            self._new_actor()
        self._unused = False
        self.cmd, self.timeout, self.sent = cmd, timeout, time.monotonic()
        self.deadline = self.sent + timeout
        if cmd in ("play", "play_more"):  # inference=actor: a chunk of an episode, played by the actor
            self.ref = self._play(cmd, payload)
        else:
            self.ref = self.actor.execute.remote(cmd, payload)
        return started

    def _play(self, cmd: str, payload: tuple[Any, int], role: str = "cur") -> Any:
        other = self._block_of["next" if role == "cur" else "cur"]
        idx = 0 if other != 0 else 1
        self._block_of[role] = idx
        name = None
        if self.local:
            if self.blocks[idx] is None:
                self._grow(idx, 4 * 2**20)
            block = self.blocks[idx]
            name = block.name if block is not None else None
        turn = None
        if cmd == "play":
            self.turn += 1
            turn = self.turn - 1
            start, n = payload
            key = start[3]
            if key in self.keys:  # the actor holds it already: passing a nested object ref costs every call
                payload = ((*start[:4], None), n)
            else:  # mirror the actor's cache (EnvActor._acting: the 4 first fetched)
                self.keys.append(key)
                del self.keys[:-ACTOR_KEYS]
        return self.actor.play.remote(*payload, turn, name)

    def _grow(self, idx: int, size: int) -> None:
        """Make block ``idx`` at least ``size`` bytes (a new one: the actor attaches by name)."""
        old = self.blocks[idx]
        if old is not None and old.size >= size:
            return
        self.blocks[idx] = None
        unlink_block(old)
        # The resource tracker registers it: unlinked even if this process is killed.
        name = f"digirl_ray_{os.getpid()}_{self.index}_{idx}_{secrets.token_hex(4)}"
        self.blocks[idx] = SharedMemory(name=name, create=True, size=size)

    def request_next(self, cmd: str, payload: tuple[Any, int], timeout: float) -> None:
        """Send the start of the episode after the running one now (it waits on the actor for its turn)."""
        assert self.actor is not None and self.next is None and cmd == "play"
        self.next = (self._play(cmd, payload, "next"), timeout)

    def promote(self) -> None:
        """The episode sent ahead is this slot's running one now; its timeout counts from here."""
        assert self.next is not None and self.cmd is None
        self.ref, self.timeout = self.next
        self._block_of["cur"], self._block_of["next"] = self._block_of["next"], None
        self.next = None
        self.cmd, self.sent = "play", time.monotonic()
        self.deadline = self.sent + self.timeout

    def receive(self) -> tuple[str, Any]:
        """The reply to the outstanding command: ``("ok", out)``, ``("err", Fault)`` or ``("crash", why)``."""
        ray = import_ray()
        cmd, ref = self.cmd, self.ref
        self.cmd, self.ref = None, None
        # ActorUnavailableError (a restarting or unreachable actor) only exists in newer Ray versions.
        died = (ray.exceptions.RayActorError, getattr(ray.exceptions, "ActorUnavailableError", ray.exceptions.RayActorError))
        try:
            reply, where = ray.get(ref)
        except died as e:
            return ("crash", f"Ray actor died during {cmd}: {_first_line(e)}")
        except ray.exceptions.RayTaskError as e:  # raised outside the env's own error handling
            return ("err", fault_of("env", e))
        except ray.exceptions.RayError as e:  # the reply was lost with its node, for instance
            return ("crash", f"Ray lost the reply to {cmd}: {_first_line(e)}")
        self.pid, self.node = where.get("pid"), where.get("node")
        if self.pid is not None and self.pid not in self.pids:
            self.pids.append(self.pid)
        if cmd in ("play", "play_more"):
            idx, self._block_of["cur"] = self._block_of["cur"], None
            self.local = self.node is not None and self.node == current_node_id()
            return self._take_played(reply, idx)
        return _own_arrays(reply)

    def _take_played(self, reply: tuple[str, Any], idx: int | None) -> tuple[str, Any]:
        """A play reply with its frames back (copied out of the block or of the object store), 6 elements."""
        status, out = reply
        if status != "ok":
            return reply
        *out, frames = out
        if frames is None or idx is None:
            return _own_played((status, tuple(out)))
        if frames[0] == "want":
            self._grow(idx, int(frames[1]))
            return _own_played((status, tuple(out)))
        block = self.blocks[idx]
        assert block is not None
        first, _, _, steps, *_ = out
        observations = ([first] if first is not None else []) + [s[5] for s in steps]
        for i, field, shape, dtype, offset in frames[1]:
            view: np.ndarray = np.ndarray(shape, np.dtype(dtype), buffer=block.buf, offset=offset)
            setattr(observations[i], field, view.copy())
            del view  # no view may outlive the copy (the block could not be closed)
        return (status, tuple(out))

    def kill(self) -> None:
        """Stop the actor now; the next request starts a fresh one."""
        actor, self.actor, self.ref, self.cmd, self.next = self.actor, None, None, None, None
        self._block_of = {"cur": None, "next": None}
        if actor is not None:
            ray = import_ray()
            try:
                ray.kill(actor, no_restart=True)
            except Exception:  # already gone, or Ray itself is shutting down
                log.debug("ray.kill failed", exc_info=True)

    def begin_close(self) -> None:
        if self.actor is not None:
            try:
                self._closing = self.actor.close.remote()
            except Exception:
                self._closing = None

    def finish_close(self, deadline: float) -> None:
        if self._closing is not None and self.cmd is None:
            ray = import_ray()
            try:
                ray.wait([self._closing], timeout=max(0.0, deadline - time.monotonic()))
            except Exception:
                log.debug("waiting for an actor to close failed", exc_info=True)
        self._closing = None
        self.kill()
        for i, block in enumerate(self.blocks):
            self.blocks[i] = None
            unlink_block(block)


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _own_arrays(reply: tuple[str, Any]) -> tuple[str, Any]:
    """Copy screenshots out of Ray's object store: a zero-copy view would pin store memory for as long
    as the trajectory lives (a replay buffer keeps thousands)."""
    status, out = reply
    if status != "ok":
        return reply
    obs = out[0]
    shot, prev = obs.screenshot, obs.previous_screenshot
    if not shot.flags.writeable or (prev is not None and not prev.flags.writeable):
        obs = replace(obs, screenshot=np.array(shot), previous_screenshot=None if prev is None else np.array(prev))
        out = (obs, *out[1:])
    return (status, out)


def _own_obs(obs: Observation) -> Observation:
    shot, prev = obs.screenshot, obs.previous_screenshot
    if shot.flags.writeable and (prev is None or prev.flags.writeable):
        return obs
    return replace(obs, screenshot=np.array(shot), previous_screenshot=None if prev is None else np.array(prev))


def _own_played(reply: tuple[str, Any]) -> tuple[str, Any]:
    """:func:`_own_arrays` for the reply of an actor that played steps itself (several observations)."""
    status, out = reply
    if status != "ok":
        return reply
    first, dedup, task, steps, end, meta = out
    steps = [(*s[:5], _own_obs(s[5]), s[6]) for s in steps]
    return (status, (None if first is None else _own_obs(first), dedup, task, steps, end, meta))


class RayRunner(VectorRunner):
    """A :class:`VectorRunner` whose ``num_envs`` env slots are Ray actors (see the module docs)."""

    MODES = ("ray",)

    def __init__(
        self,
        env_fn: EnvFn,
        num_envs: int,
        *,
        options: RayConfig | None = None,
        step_timeout_s: float = 30.0,
        reset_timeout_s: float = 60.0,
        max_episode_retries: int = 2,
        reset_batch_wait_s: float = 1.0,
    ) -> None:
        self.options = options or RayConfig()
        if self.options.devices and len(self.options.devices) < num_envs:
            raise ValueError(f"env.ray.devices lists {len(self.options.devices)} devices for {num_envs} actors (env.num_envs)")
        self.session = RaySession(self.options, num_envs)
        self._acting_refs: dict[str, Any] = {}  # ActorActing key -> its object ref
        self._warned_central = False
        try:
            super().__init__(
                env_fn,
                num_envs,
                mode="ray",
                step_timeout_s=step_timeout_s,
                reset_timeout_s=reset_timeout_s,
                max_episode_retries=max_episode_retries,
                reset_batch_wait_s=reset_batch_wait_s,
            )
        except BaseException:
            self.session.close()
            raise
        if self.options.prestart:
            for h in self._handles:
                cast(RayHandle, h).prestart()

    def _make_handles(self, env_fn: EnvFn, start_method: str | None) -> list[Handle]:
        from digirl.distributed.actor import EnvActor

        ray = import_ray()
        cfg = self.options
        remote_cls = ray.remote(EnvActor)
        opts: dict[str, Any] = {"num_cpus": cfg.num_cpus_per_actor, "max_restarts": 0, "max_task_retries": 0}
        if cfg.resources:
            opts["resources"] = dict(cfg.resources)
        if cfg.spread:
            opts["scheduling_strategy"] = "SPREAD"
        if cfg.inference == "actor":  # a start sent ahead waits in the second thread (EnvActor.play)
            opts["max_concurrency"] = 2
        pool = (cfg.device_kwarg, cfg.device_pool_var) if cfg.device_pool_var else None

        def starter(slot: int) -> Callable[[], Any]:
            device = (cfg.device_kwarg, cfg.devices[slot]) if cfg.devices else None
            return lambda: remote_cls.options(**opts).remote(env_fn, device, pool)

        return [cast(Handle, RayHandle(i, starter(i))) for i in range(self.num_envs)]

    def _can_send_ahead(self) -> bool:
        return self.options.inference == "actor"

    def _worker_acting(self, ep: _Episode, spec: _RunSpec) -> tuple[str, Any, int] | None:
        """``env.ray.inference=actor``: the actor plays the episode with the expert or with the act function's
        :class:`~digirl.distributed.acting.ActorActing` (``act_fn.actor_acting(job)``), sent once per key
        through the object store."""
        if self.options.inference != "actor":
            return None
        if spec.expert:
            acting: Any = ExpertActing(spec.expert_eps, spec.expert_seed, spec.expert_text)
        else:
            make = getattr(spec.act_fn, "actor_acting", None)
            if make is None:
                if not self._warned_central:
                    self._warned_central = True
                    log.warning(
                        "env.ray.inference=actor: this act function (%s) has no actor_acting(job), so it acts here, "
                        "batched, with a Ray round trip per step",
                        type(spec.act_fn).__name__,
                    )
                return None
            acting = make(ep.job)
        key = str(acting.key)
        ref = self._acting_refs.pop(key, None)
        if ref is None:
            ref = import_ray().put(acting)
        self._acting_refs[key] = ref  # most recently used last
        while len(self._acting_refs) > 8:
            self._acting_refs.pop(next(iter(self._acting_refs)))
        return key, ref, self.options.steps_per_call

    @staticmethod
    def _wait(waitables: list[Any], timeout: float) -> list[Any]:
        ray = import_ray()
        ready, rest = ray.wait(waitables, num_returns=1, timeout=None if math.isinf(timeout) else timeout)
        if ready and rest:  # everything else that is in as well, without waiting
            more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
            ready += more
        return list(ready)

    def close(self) -> None:
        """Stop every actor, then release the Ray session (a private local Ray stops with its last user)."""
        try:
            super().close()
        finally:
            self.session.close()


def make_ray_collector(spec: CollectorSpec) -> Collector:
    """The ``ray`` backend of :func:`~digirl.envs.collector.make_collector`; ``options`` are ``env.ray.*``."""
    try:
        cfg = RayConfig(**spec.options)
    except TypeError as e:
        raise ValueError(f"unknown env.ray option: {e}") from None
    return RayRunner(env_factory(spec.env_id, **spec.env_kwargs), spec.num_envs, options=cfg, **spec.episode_runner_kwargs())
