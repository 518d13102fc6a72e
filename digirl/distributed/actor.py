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
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from digirl.core.errors import UnsupportedInstructionError
from digirl.core.types import Observation
from digirl.envs._vector_worker import EnvFn, Fault, fault_of, serve
from digirl.envs.base import DeviceEnv

if TYPE_CHECKING:
    from digirl.distributed.acting import ActorActing, EpisodeActing

__all__ = ["EnvActor"]

log = logging.getLogger(__name__)


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
        self.where = {"pid": os.getpid(), "node": _node_id(), "host": socket.gethostname()}
        self._claim: Any = None
        self._actings: dict[str, ActorActing] = {}  # by key: each policy version is fetched once
        self._episode: EpisodeActing | None = None
        self._obs: Observation | None = None
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

    def play(self, start: tuple[Any, ...] | None, max_steps: int) -> tuple[tuple[str, Any], dict[str, Any]]:
        """Play up to ``max_steps`` steps of an episode with an acting held here (``env.ray.inference=actor``).

        ``start`` is ``(seed, task, attempt, key, acting)`` to reset and begin an episode (``acting``: an
        :class:`~digirl.distributed.acting.ActorActing`, or an object ref to one, fetched only when
        ``key`` is new here), ``None`` to go on with the current one. The reply is ``("ok", (first
        observation or None, its dedup flag, task, steps, end, metadata))``: ``steps`` are ``(ActOutput,
        reward, terminated, truncated, info, next observation, dedup)``, ``end`` is ``running``,
        ``done`` or ``no_action`` (the acting had no action: an expert without a script); observations
        whose previous frame is the one sent just before go without it, as in :meth:`execute`.
        """
        if self.env is None:
            assert self.build_fault is not None
            return ("err", self.build_fault), self.where
        env = self.env
        first: tuple[Observation | None, bool] = (None, False)
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

    def _acting(self, key: str, acting: Any) -> ActorActing:
        got = self._actings.get(key)
        if got is None:
            if not hasattr(acting, "episode"):  # an object ref: fetched once per key
                import ray

                acting = ray.get(acting)
            got = acting
            while len(self._actings) >= 4:  # an asynchronous run acts with at most k + 1 versions at once
                self._actings.pop(next(iter(self._actings)))
            self._actings[key] = got
        return got

    def _ship(self, obs: Observation) -> tuple[Observation, bool]:
        """The observation without the frame sent just before it (the caller restores it)."""
        dedup = obs.previous_screenshot is not None and obs.previous_screenshot is self.last_shot
        self.last_shot = obs.screenshot
        return (replace(obs, previous_screenshot=None) if dedup else obs), dedup

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


def _node_id() -> str | None:
    try:
        import ray

        return str(ray.get_runtime_context().get_node_id())
    except Exception:  # not inside Ray (unit tests build the class directly)
        return None
