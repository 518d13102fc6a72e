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
from typing import Any

import numpy as np

from digirl.envs._vector_worker import EnvFn, Fault, fault_of, serve
from digirl.envs.base import DeviceEnv

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
