"""A tiny shipped env for tests and extensions: tap the named colored button, or type the shown word.

It renders in microseconds, has UI elements and a perfect ``cheat()``, so every layer (runner,
store, policies, algorithms) can be exercised on CPU in seconds without the simulator.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from digirl.core.actions import Action, ActionType
from digirl.core.types import TaskSpec, UIElement
from digirl.envs.base import DeviceEnv, StepResult
from digirl.envs.registry import register

COLORS: dict[str, tuple[int, int, int]] = {
    "red": (220, 50, 47),
    "green": (60, 170, 60),
    "blue": (38, 110, 210),
    "yellow": (230, 200, 40),
}
WORDS = ("hello", "world", "phone", "agent")


class ToyEnv(DeviceEnv):
    """``tap``: "Tap the <color> button" (4 buttons in shuffled slots).
    ``type``: "Type the word <w> and press enter" (a focused field; success on enter with the word typed).
    ``mixed``: either.
    """

    def __init__(self, mode: str = "tap", width: int = 64, height: int = 128, horizon: int = 4) -> None:
        super().__init__(width=width, height=height)
        if mode not in ("tap", "type", "mixed"):
            raise ValueError(f"mode must be tap, type or mixed, got {mode!r}")
        self.mode = mode
        self.default_horizon = horizon
        self._slots: list[str] = []
        self._typed = ""
        self._kind = "tap"
        self._target = ""

    def tasks(self) -> list[TaskSpec]:
        """Every task this env can pose."""
        out = []
        if self.mode in ("tap", "mixed"):
            out += [self._spec("tap", c) for c in COLORS]
        if self.mode in ("type", "mixed"):
            out += [self._spec("type", w) for w in WORDS]
        return out

    def _spec(self, kind: str, target: str) -> TaskSpec:
        text = f"Tap the {target} button" if kind == "tap" else f"Type the word {target} and press enter"
        return TaskSpec(
            instruction=text,
            task_id=f"toy-{kind}-{target}",
            family=kind,
            horizon=self.default_horizon,
            env_id=f"digirl/toy-{self.mode}-v0",
            params={"kind": kind, "target": target},
        )

    def _reset(self, task: TaskSpec | str | None, rng: np.random.Generator) -> TaskSpec:
        all_tasks = self.tasks()
        if task is None:
            spec = all_tasks[int(rng.integers(len(all_tasks)))]
        elif isinstance(task, str):
            matches = [t for t in all_tasks if t.instruction == task or t.task_id == task]
            if not matches:
                from digirl.core.errors import UnsupportedInstructionError

                raise UnsupportedInstructionError(f"toy env does not know the task {task!r}")
            spec = matches[0]
        else:
            spec = task
        self._kind = str(spec.params["kind"])
        self._target = str(spec.params["target"])
        self._slots = list(COLORS)
        rng.shuffle(self._slots)
        self._typed = ""
        return spec

    def _button_bounds(self, i: int) -> tuple[float, float, float, float]:
        y0 = 0.1 + i * 0.2
        return (0.15, y0, 0.85, y0 + 0.15)

    def _elements(self) -> tuple[UIElement, ...]:
        if self._kind == "tap":
            return tuple(UIElement(self._button_bounds(i), text=c, kind="button", ref=f"b{i}") for i, c in enumerate(self._slots))
        return (UIElement((0.1, 0.1, 0.9, 0.25), text=self._typed, kind="input", focused=True, ref="field"),)

    def _screenshot(self) -> np.ndarray:
        h, w = self.observation_space.screenshot.height, self.observation_space.screenshot.width
        img = np.full((h, w, 3), 245, dtype=np.uint8)
        for el in self._elements():
            x0, y0, x1, y1 = el.bounds
            color = COLORS.get(el.text, (200, 200, 200))
            img[int(y0 * h) : int(y1 * h), int(x0 * w) : int(x1 * w)] = color
        if self._kind == "type":  # one grey bar per typed character
            n = min(len(self._typed), 10)
            img[int(0.3 * h) : int(0.35 * h), : int(n * w / 10)] = 90
        return img

    def _step(self, action: Action) -> StepResult:
        if action.ends_episode:
            return StepResult(0.0, True)
        if self._kind == "tap" and action.is_tap:
            assert action.touch is not None
            for el in self._elements():
                if el.contains(*action.touch):
                    ok = el.text == self._target
                    return StepResult(1.0 if ok else 0.0, True, {"tapped": el.text})
        if self._kind == "type":
            if action.type is ActionType.TYPE:
                self._typed += action.text
            elif action.type is ActionType.PRESS_ENTER:
                ok = self._typed.strip().lower() == self._target
                return StepResult(1.0 if ok else 0.0, True)
        return StepResult(0.0, False)

    def cheat(self) -> Action | None:
        if self._kind == "tap":
            i = self._slots.index(self._target)
            return Action.tap(*UIElement(self._button_bounds(i)).center)
        if self._typed != self._target:
            return Action.type_text(self._target) if not self._typed else Action.back()
        return Action.enter()

    def _invalid_step(self, action: Action) -> StepResult:
        return StepResult(0.0, False, {"invalid_action": True, "error": action.error})

    def clone(self) -> ToyEnv:
        """An independent copy mid-episode (the ``state_clone`` capability)."""
        from digirl.envs.clone import copy_state

        return copy_state(self)


def _make(mode: str, **kw: Any) -> ToyEnv:
    return ToyEnv(mode=mode, **kw)


_META = {"state_clone": True, "state_replay": True}  # reset(seed) and the actions rebuild any state
register(
    "digirl/toy-tap-v0",
    "digirl.envs.toy:ToyEnv",
    description="Tap the named colored button (test env)",
    metadata=_META,
    mode="tap",
)
register(
    "digirl/toy-type-v0", "digirl.envs.toy:ToyEnv", description="Type the shown word (test env)", metadata=_META, mode="type"
)
register("digirl/toy-mixed-v0", "digirl.envs.toy:ToyEnv", description="Tap or type (test env)", metadata=_META, mode="mixed")
