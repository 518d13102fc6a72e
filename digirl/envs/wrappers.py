"""Env wrappers: change one behaviour of an env without touching the backend.

:class:`EnvWrapper` forwards everything (``reset``, ``step``, ``cheat``, ``close``, ``task``,
spaces, and any other attribute) to the wrapped env, so a wrapper is a :class:`DeviceEnv`
wherever one is expected (the vector runner, ``check_env``). :class:`MaxSteps` truncates
episodes like Gymnasium's ``TimeLimit``; :class:`RecordEpisode` keeps the episodes it sees as
:class:`~digirl.core.types.Trajectory` records; :class:`Latency` makes every reset and step take as
long as on a real phone.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from digirl.core.actions import Action
from digirl.core.types import Observation, Step, TaskSpec, Trajectory
from digirl.envs.base import DeviceEnv, StepResult

__all__ = ["EnvWrapper", "Latency", "MaxSteps", "RecordEpisode", "latency_range"]


class EnvWrapper(DeviceEnv):
    """Base wrapper: forwards every call and attribute to ``self.env``. Override what you change."""

    def __init__(self, env: DeviceEnv) -> None:
        # No DeviceEnv.__init__: the wrapper holds no episode state of its own; the inner env does.
        if not isinstance(env, DeviceEnv):
            raise TypeError(f"wrappers wrap a DeviceEnv, got {type(env).__name__}")
        self.env = env
        self.observation_space = env.observation_space
        self.action_space = env.action_space
        self.metadata = env.metadata
        self.action_codec = env.action_codec

    def __getattr__(self, name: str) -> Any:
        # Only reached for names not found on the wrapper: forward to the inner env.
        if name.startswith("__") or name == "env":
            raise AttributeError(name)
        return getattr(self.env, name)

    @property
    def unwrapped(self) -> DeviceEnv:
        """The innermost env."""
        env = self.env
        return env.unwrapped if isinstance(env, EnvWrapper) else env

    @property
    def task(self) -> TaskSpec | None:
        return self.env.task

    @property
    def horizon(self) -> int:
        return self.env.horizon

    @property
    def elapsed_steps(self) -> int:
        return self.env.elapsed_steps

    @property
    def np_random(self) -> np.random.Generator:
        return self.env.np_random

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Observation, dict[str, Any]]:
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Action | str) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        return self.env.step(action)

    def cheat(self) -> Action | None:
        return self.env.cheat()

    def parse_action(self, text: str) -> Action:
        return self.env.parse_action(text)

    def render(self) -> np.ndarray:
        return self.env.render()

    def close(self) -> None:
        self.env.close()

    def clone(self) -> DeviceEnv:
        """This wrapper's state copied around the inner env's own clone (which raises if it cannot)."""
        from digirl.envs.clone import copy_state

        return copy_state(self, replace={id(self.env): self.env.clone()})

    # The backend hooks are never called on a wrapper (its public methods forward); they exist so
    # the class is concrete, and forward in case a subclass calls them.
    def _reset(self, task: TaskSpec | str | None, rng: np.random.Generator) -> TaskSpec:
        return self.env._reset(task, rng)

    def _step(self, action: Action) -> StepResult:
        return self.env._step(action)

    def _screenshot(self) -> np.ndarray:
        return self.env._screenshot()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.env!r})"


class MaxSteps(EnvWrapper):
    """End episodes with ``truncated=True`` after ``max_steps`` steps, on top of the env's own horizon.

    Like Gymnasium's ``TimeLimit``: a step that terminates is reported as terminated, not truncated;
    ``info["max_steps_truncated"]`` marks truncations made by this wrapper; stepping after the end
    raises ``RuntimeError`` until the next ``reset``.
    """

    def __init__(self, env: DeviceEnv, max_steps: int) -> None:
        super().__init__(env)
        if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
            raise ValueError(f"max_steps must be an int >= 1, got {max_steps!r}")
        self.max_steps = max_steps
        self._elapsed = 0
        self._ended = True

    @property
    def horizon(self) -> int:
        return min(self.env.horizon, self.max_steps)

    @property
    def elapsed_steps(self) -> int:
        return self._elapsed

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Observation, dict[str, Any]]:
        out = self.env.reset(seed=seed, options=options)
        self._elapsed = 0
        self._ended = False
        return out

    def step(self, action: Action | str) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        if self._ended:
            raise RuntimeError("step() called after the episode ended (MaxSteps); call reset() first")
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._elapsed += 1
        if not terminated and not truncated and self._elapsed >= self.max_steps:
            truncated = True
            info = {**info, "max_steps_truncated": True}
        self._ended = terminated or truncated
        return obs, reward, terminated, truncated, info


class RecordEpisode(EnvWrapper):
    """Record the episodes this wrapper sees as Trajectories (for scripts and debugging).

    ``trajectory`` is the episode in progress (or the last one); finished episodes are appended to
    ``episodes``, which keeps the latest ``keep`` (``None``: all). Text actions are parsed here
    with the env's codec so the record holds both the typed action and the text.
    """

    def __init__(self, env: DeviceEnv, *, keep: int | None = 100) -> None:
        super().__init__(env)
        if keep is not None and keep < 1:
            raise ValueError(f"keep must be >= 1 or None, got {keep}")
        self.episodes: deque[Trajectory] = deque(maxlen=keep)
        self.trajectory: Trajectory | None = None
        self._obs: Observation | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Observation, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        task = self.env.task
        if task is None and isinstance(info.get("task"), dict):
            task = TaskSpec.from_dict(info["task"])
        self.trajectory = Trajectory(task=task or TaskSpec(instruction=obs.instruction), seed=seed)
        self._obs = obs
        return obs, info

    def step(self, action: Action | str) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        if self.trajectory is None or self._obs is None:
            raise RuntimeError("step() called before reset()")
        text = action if isinstance(action, str) else str(action)
        typed = self.env.parse_action(action) if isinstance(action, str) else action
        obs, reward, terminated, truncated, info = self.env.step(typed)
        self.trajectory.steps.append(Step(self._obs, typed, text, reward, terminated, truncated, dict(info)))
        self._obs = obs
        if terminated or truncated:
            self.trajectory.final_observation = obs
            self.episodes.append(self.trajectory)
        return obs, reward, terminated, truncated, info


class Latency(EnvWrapper):
    """Wait ``low``–``high`` seconds (uniform) in every ``reset`` and ``step``, as a real device does.

    A simulator step takes milliseconds; an Android phone or emulator takes 0.5–2 s (screenshot,
    input, settling). This makes the fast envs behave like slow ones, to measure and test what
    depends on env latency (overlapping envs, asynchronous learning) without a phone farm. The
    durations are drawn from the episode's reset seed, so a run repeats them; the wait happens before
    the inner call, and the env's own results are unchanged. ``sleep`` is replaceable for tests.
    Through the registry: ``make(env_id, latency_s=(0.5, 2.0))`` (config: ``env.latency_s=[0.5,2.0]``).
    """

    def __init__(
        self, env: DeviceEnv, low: float, high: float | None = None, *, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        super().__init__(env)
        high = low if high is None else high
        if not 0.0 <= low <= high:
            raise ValueError(f"latency needs 0 <= low <= high, got low={low}, high={high}")
        self.low, self.high = float(low), float(high)
        self._sleep = sleep
        self._rng = np.random.default_rng()
        self.waited_s = 0.0

    def _wait(self) -> None:
        d = self.low if self.high == self.low else float(self._rng.uniform(self.low, self.high))
        self.waited_s += d
        self._sleep(d)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Observation, dict[str, Any]]:
        self._rng = np.random.default_rng(None if seed is None else [int(seed), 0x1A7E])
        self._wait()
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Action | str) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        self._wait()
        return self.env.step(action)


def latency_range(value: float | Sequence[float]) -> tuple[float, float]:
    """``latency_s`` as given to ``make``/the config (one number, or ``[low, high]``) → ``(low, high)``."""
    if isinstance(value, (int, float)):
        return float(value), float(value)
    vals = [float(v) for v in value]
    if len(vals) != 2:
        raise ValueError(f"latency_s is one number of seconds or [low, high], got {list(value)}")
    return vals[0], vals[1]
