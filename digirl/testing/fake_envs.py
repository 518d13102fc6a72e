"""Envs that fail on purpose, for testing runners and collectors (yours too).

:class:`FlakyEnv` is the toy env (:class:`~digirl.envs.toy.ToyEnv`) plus one scripted fault:
the worker process dies (``crash``), blocks forever (``hang``), or ``reset``/``step`` raises
(``raise``); ``build`` makes the constructor raise. Whether an episode faults is a pure function
of its seed and attempt number, so a test can ask for a transient fault (only the first attempt)
or a persistent one (every attempt). The attempt comes from ``reset(options={"attempt": n})``,
which :class:`~digirl.envs.vector.VectorRunner` passes (n counts from 1).

:class:`SlowEnv` is the toy env with a fixed latency per reset and step, like a real device:
for timeout tests and for measuring how a runner overlaps envs.

In the main process (no worker around it) ``crash`` and ``hang`` raise :class:`SimulatedFault`
instead, so an inline run or a plain script never kills or blocks the test session.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from collections.abc import Iterable
from typing import Any, Literal

import numpy as np

from digirl.core.actions import Action
from digirl.core.types import Observation, TaskSpec
from digirl.envs.base import StepResult
from digirl.envs.toy import ToyEnv

__all__ = ["FaultKind", "FlakyEnv", "SimulatedFault", "SlowEnv"]

FaultKind = Literal["crash", "hang", "raise", "build", "none"]


class SimulatedFault(RuntimeError):
    """The exception a :class:`FlakyEnv` raises for a ``raise`` fault."""


class FlakyEnv(ToyEnv):
    """The toy env with a deterministic, configurable fault.

    Args:
        fault: ``crash`` (``os._exit``), ``hang`` (sleep forever), ``raise`` (:class:`SimulatedFault`),
            ``build`` (the constructor raises) or ``none``.
        at_step: fault when the ``at_step``-th step is taken (0 = the first step); ``None``: in ``reset``.
        seeds: fault only on these reset seeds (``None``: any seed).
        faulty_attempts: fault only on attempts ``1..faulty_attempts`` (``1`` = transient, the retry
            succeeds); ``None``: on every attempt (persistent).
        prob: fault with this probability, drawn from ``(seed, attempt)`` so reruns repeat it.
        **toy_kwargs: ``mode``, ``width``, ``height``, ``horizon`` of the toy env.
    """

    def __init__(
        self,
        fault: FaultKind = "raise",
        *,
        at_step: int | None = None,
        seeds: Iterable[int] | None = None,
        faulty_attempts: int | None = None,
        prob: float = 1.0,
        **toy_kwargs: Any,
    ) -> None:
        if fault not in ("crash", "hang", "raise", "build", "none"):
            raise ValueError(f"fault must be crash, hang, raise, build or none, got {fault!r}")
        if fault == "build":
            raise SimulatedFault("FlakyEnv(fault='build'): simulated failure to build the env")
        if not 0.0 <= prob <= 1.0:
            raise ValueError(f"prob must be in [0, 1], got {prob}")
        super().__init__(**toy_kwargs)
        self.fault = fault
        self.at_step = at_step
        self.seeds = None if seeds is None else frozenset(int(s) for s in seeds)
        self.faulty_attempts = faulty_attempts
        self.prob = prob
        self._armed = False

    def should_fault(self, seed: int | None, attempt: int) -> bool:
        """Whether the episode reset with ``seed`` on attempt ``attempt`` (from 1) faults."""
        if self.fault == "none":
            return False
        if self.seeds is not None and (seed is None or int(seed) not in self.seeds):
            return False
        if self.faulty_attempts is not None and attempt > self.faulty_attempts:
            return False
        if self.prob >= 1.0:
            return True
        draw = np.random.default_rng([0 if seed is None else int(seed), int(attempt), 7919]).random()
        return bool(draw < self.prob)

    def _trigger(self, where: str) -> None:
        in_worker = mp.parent_process() is not None
        if self.fault == "crash" and in_worker:
            os._exit(13)
        if self.fault == "hang" and in_worker:
            while True:  # a hung backend: only a signal ends this
                time.sleep(3600)
        raise SimulatedFault(f"FlakyEnv: simulated {self.fault} in {where}")

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Observation, dict[str, Any]]:
        attempt = int((options or {}).get("attempt", 1))
        self._armed = self.should_fault(seed, attempt)
        if self._armed and self.at_step is None:
            self._trigger("reset")
        return super().reset(seed=seed, options=options)

    def _step(self, action: Action) -> StepResult:
        if self._armed and self.at_step is not None and self.elapsed_steps == self.at_step:
            self._trigger(f"step {self.at_step}")
        return super()._step(action)

    def _invalid_step(self, action: Action) -> StepResult:
        if self._armed and self.at_step is not None and self.elapsed_steps == self.at_step:
            self._trigger(f"step {self.at_step}")
        return super()._invalid_step(action)


class SlowEnv(ToyEnv):
    """The toy env with ``reset_delay_s``/``step_delay_s`` of (sleeping) latency, like a device round trip."""

    def __init__(self, step_delay_s: float = 0.01, reset_delay_s: float = 0.0, **toy_kwargs: Any) -> None:
        if step_delay_s < 0 or reset_delay_s < 0:
            raise ValueError("delays must be >= 0")
        super().__init__(**toy_kwargs)
        self.step_delay_s = step_delay_s
        self.reset_delay_s = reset_delay_s

    def _reset(self, task: TaskSpec | str | None, rng: np.random.Generator) -> TaskSpec:
        time.sleep(self.reset_delay_s)
        return super()._reset(task, rng)

    def _step(self, action: Action) -> StepResult:
        time.sleep(self.step_delay_s)
        return super()._step(action)

    def _invalid_step(self, action: Action) -> StepResult:
        time.sleep(self.step_delay_s)
        return super()._invalid_step(action)
