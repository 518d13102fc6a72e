"""The environment contract, shaped like Gymnasium's ``Env``.

Every backend (simulator, browser, Android) subclasses :class:`DeviceEnv` and implements
``_reset`` / ``_step``. The base class owns what is common and easy to get wrong: parsing text
actions once, refusing steps after the episode ended, the step counter and the horizon
(``truncated``), the action history and the previous frame in the observation.

``reset(seed=..., options={"task": TaskSpec | str})`` → ``(obs, info)``;
``step(action: Action | str)`` → ``(obs, reward, terminated, truncated, info)``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from digirl.core.actions import Action
from digirl.core.types import Observation, TaskSpec

__all__ = ["ActionSpace", "DeviceEnv", "ImageSpace", "ObservationSpace", "StepResult"]


@dataclass(frozen=True)
class ImageSpace:
    """uint8 images of shape (height, width, 3)."""

    height: int
    width: int

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.height, self.width, 3)

    def contains(self, x: Any) -> bool:
        return isinstance(x, np.ndarray) and x.dtype == np.uint8 and x.shape == self.shape


@dataclass(frozen=True)
class ObservationSpace:
    """Observations: a screenshot in ``screenshot`` plus text fields."""

    screenshot: ImageSpace

    def contains(self, obs: Any) -> bool:
        return (
            isinstance(obs, Observation)
            and self.screenshot.contains(obs.screenshot)
            and isinstance(obs.instruction, str)
            and isinstance(obs.step, int)
        )


@dataclass(frozen=True)
class ActionSpace:
    """The AitW action space: any valid :class:`Action` (text is parsed by a codec)."""

    def contains(self, a: Any) -> bool:
        return isinstance(a, Action) and a.is_valid

    def sample(self, rng: np.random.Generator) -> Action:
        """A uniformly random action over the kinds (for smoke tests and random agents)."""
        k = int(rng.integers(0, 8))
        if k < 4:
            return Action.tap(float(rng.random()), float(rng.random()))
        if k == 4:
            return Action.swipe((float(rng.random()), float(rng.random())), (float(rng.random()), float(rng.random())))
        if k == 5:
            return Action.type_text("hello")
        return [Action.back, Action.home, Action.enter][int(rng.integers(0, 3))]()


@dataclass
class StepResult:
    """What a backend's ``_step`` reports; the base class turns it into the Gymnasium tuple."""

    reward: float = 0.0
    terminated: bool = False
    info: dict[str, Any] | None = None


class DeviceEnv(ABC):
    """Base class of every digirl environment. Subclasses implement the underscored hooks."""

    metadata: dict[str, Any] = {"render_modes": ["rgb_array"]}
    #: Default horizon when the task does not give one.
    default_horizon: int = 10

    def __init__(self, *, width: int, height: int, action_codec: str = "json") -> None:
        self.observation_space = ObservationSpace(ImageSpace(height=height, width=width))
        self.action_space = ActionSpace()
        self.action_codec = action_codec
        self._task: TaskSpec | None = None
        self._steps = 0
        self._done = True
        self._history: list[Action] = []
        self._last_obs: Observation | None = None
        self._np_random = np.random.default_rng()

    # --------------------------------------------------------------- subclass hooks
    @abstractmethod
    def _reset(self, task: TaskSpec | str | None, rng: np.random.Generator) -> TaskSpec:
        """Start an episode (``task`` may be ``None``: sample one). Return the resolved task."""

    @abstractmethod
    def _step(self, action: Action) -> StepResult:
        """Apply a *valid* action. ``STATUS_TASK_*`` actions must report ``terminated=True``."""

    @abstractmethod
    def _screenshot(self) -> np.ndarray:
        """The current screen as uint8 H×W×3 of the declared size."""

    def _elements(self) -> tuple[Any, ...] | None:
        """Visible UI elements (``UIElement``), when the backend knows them."""
        return None

    def cheat(self) -> Action | None:
        """The scripted expert's next action from privileged state, or ``None`` if unavailable."""
        return None

    def _invalid_step(self, action: Action) -> StepResult:
        """What an invalid action does: nothing happens on the device, the step is spent."""
        return StepResult(0.0, False, {"invalid_action": True, "error": action.error})

    def close(self) -> None:  # noqa: B027 (optional hook: most backends have nothing to release)
        """Release resources. Safe to call twice."""

    def clone(self) -> DeviceEnv:
        """An independent copy of this env as it is now, mid-episode included (state cloning).

        The contract, checked for the simulator by ``tests/envs/test_clone*.py``: under the same
        actions the copy continues exactly as this env would (same screenshots, elements, rewards,
        ``terminated``/``truncated`` and infos), its random streams included, and stepping either one
        never changes the other. Backends that can, declare ``state_clone: True`` in their registry
        metadata (read with ``env_has(id, "state_clone")``); the rest raise
        :class:`~digirl.envs.clone.CloneUnsupportedError` here (a phone or a browser page cannot be copied).
        A pure-Python backend usually implements it as ``return copy_state(self, share=[its caches])``.
        """
        from digirl.envs.clone import CloneUnsupportedError

        raise CloneUnsupportedError(f"{type(self).__name__} cannot clone its state (it does not declare state_clone)")

    # --------------------------------------------------------------- public API
    @property
    def task(self) -> TaskSpec | None:
        return self._task

    @property
    def horizon(self) -> int:
        return self._task.horizon if self._task is not None and self._task.horizon > 0 else self.default_horizon

    @property
    def elapsed_steps(self) -> int:
        return self._steps

    @property
    def np_random(self) -> np.random.Generator:
        return self._np_random

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Observation, dict[str, Any]]:
        if seed is not None:
            self._np_random = np.random.default_rng(seed)
        task = (options or {}).get("task")
        self._task = self._reset(task, self._np_random)
        self._steps = 0
        self._done = False
        self._history = []
        self._last_obs = None
        obs = self._observe()
        return obs, {"task": self._task.to_dict()}

    def step(self, action: Action | str) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        if self._done:
            raise RuntimeError("step() called after the episode ended; call reset() first")
        if isinstance(action, str):
            action = self.parse_action(action)
        if not isinstance(action, Action):
            raise TypeError(f"step() takes an Action or model text, got {type(action).__name__}")
        result = self._step(action) if action.is_valid else self._invalid_step(action)
        self._steps += 1
        self._history.append(action)
        terminated = bool(result.terminated) or action.ends_episode
        truncated = (not terminated) and self._steps >= self.horizon
        self._done = terminated or truncated
        info = dict(result.info or {})
        info.setdefault("action_kind", action.kind)
        obs = self._observe()
        return obs, float(result.reward), terminated, truncated, info

    def parse_action(self, text: str) -> Action:
        """Parse model text with this env's codec; never raises."""
        from digirl.core.codecs import parse_action

        return parse_action(text, self.action_codec)

    def render(self) -> np.ndarray:
        return self._screenshot()

    def _observe(self) -> Observation:
        assert self._task is not None
        shot = self._screenshot()
        prev = self._last_obs.screenshot if self._last_obs is not None else None
        obs = Observation(
            screenshot=shot,
            instruction=self._task.instruction,
            step=self._steps,
            history=tuple(self._history),
            elements=self._elements(),
            previous_screenshot=prev,
        )
        self._last_obs = obs
        return obs

    def __enter__(self) -> DeviceEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


EnvFactory = Callable[..., DeviceEnv]
