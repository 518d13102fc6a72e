"""Records that flow from env to collector to store to learner to evaluator to viewer.

``Observation`` → ``Step`` → ``Trajectory``. They are plain dataclasses with numpy screenshots;
nothing here imports torch. :data:`SCHEMA_VERSION` is written with every stored dataset.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from digirl.core.actions import Action

__all__ = [
    "SCHEMA_VERSION",
    "Observation",
    "Step",
    "TaskSpec",
    "Trajectory",
    "UIElement",
    "mc_returns",
]

#: Version of the Step/Trajectory schema. Bump on any change to stored fields.
#: 2: ``Trajectory.policy_version`` (datasets of version 1 read it as ``None``).
SCHEMA_VERSION = 2

JSONDict = dict[str, Any]


@dataclass(frozen=True, slots=True)
class UIElement:
    """A visible UI element: normalized bounds ``(x0, y0, x1, y1)``, its text and kind."""

    bounds: tuple[float, float, float, float]
    text: str = ""
    kind: str = "view"  # button, text, input, icon, list_item, image, ...
    clickable: bool = True
    focused: bool = False
    #: Backend-specific identifier (simulator node id, DOM ref, resource id).
    ref: str = ""

    @property
    def center(self) -> tuple[float, float]:
        x0, y0, x1, y1 = self.bounds
        return ((x0 + x1) / 2, (y0 + y1) / 2)

    def contains(self, x: float, y: float) -> bool:
        x0, y0, x1, y1 = self.bounds
        return x0 <= x <= x1 and y0 <= y <= y1

    def to_dict(self) -> JSONDict:
        return {
            "bounds": list(self.bounds),
            "text": self.text,
            "kind": self.kind,
            "clickable": self.clickable,
            "focused": self.focused,
            "ref": self.ref,
        }

    @classmethod
    def from_dict(cls, d: JSONDict) -> UIElement:
        b = d["bounds"]
        return cls(
            bounds=(float(b[0]), float(b[1]), float(b[2]), float(b[3])),
            text=str(d.get("text", "")),
            kind=str(d.get("kind", "view")),
            clickable=bool(d.get("clickable", True)),
            focused=bool(d.get("focused", False)),
            ref=str(d.get("ref", "")),
        )


@dataclass(frozen=True, slots=True)
class TaskSpec:
    """What an episode asks for. ``family`` groups tasks for per-family metrics."""

    instruction: str
    task_id: str = ""
    family: str = ""
    split: str = ""  # train | test | ""
    horizon: int = 10
    env_id: str = ""
    #: Backend-specific parameters (intent slots, start URL, JS predicate ...); JSON-serializable.
    params: JSONDict = field(default_factory=dict)

    def to_dict(self) -> JSONDict:
        return {
            "instruction": self.instruction,
            "task_id": self.task_id,
            "family": self.family,
            "split": self.split,
            "horizon": self.horizon,
            "env_id": self.env_id,
            "params": dict(self.params),
        }

    @classmethod
    def from_dict(cls, d: JSONDict) -> TaskSpec:
        return cls(
            instruction=str(d["instruction"]),
            task_id=str(d.get("task_id", "")),
            family=str(d.get("family", "")),
            split=str(d.get("split", "")),
            horizon=int(d.get("horizon", 10)),
            env_id=str(d.get("env_id", "")),
            params=dict(d.get("params") or {}),
        )


@dataclass(slots=True)
class Observation:
    """What the agent sees before acting.

    ``screenshot`` is uint8 H×W×3. ``previous_screenshot`` (the frame before, as DigiRL stacks two)
    is filled by the env and by the store on load; it is not stored twice.
    """

    screenshot: np.ndarray
    instruction: str
    step: int = 0
    history: tuple[Action, ...] = ()
    elements: tuple[UIElement, ...] | None = None
    previous_screenshot: np.ndarray | None = None

    def __post_init__(self) -> None:
        s = self.screenshot
        if not isinstance(s, np.ndarray) or s.dtype != np.uint8 or s.ndim != 3 or s.shape[2] != 3:
            raise ValueError(
                "Observation.screenshot must be a uint8 array of shape (H, W, 3), got "
                f"{getattr(s, 'dtype', type(s))} {getattr(s, 'shape', '')}"
            )

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) in pixels."""
        return (int(self.screenshot.shape[1]), int(self.screenshot.shape[0]))


@dataclass(slots=True)
class Step:
    """One transition: the observation, the action taken from it and what followed."""

    observation: Observation
    action: Action
    #: The raw text the policy produced (what a codec parsed into ``action``).
    action_text: str
    reward: float
    terminated: bool
    truncated: bool
    info: JSONDict = field(default_factory=dict)
    #: Log-probability of the action under the behaviour policy, when known.
    log_prob: float | None = None


@dataclass(slots=True)
class Trajectory:
    """One episode. ``env_failure`` episodes are kept out of training and counted in metrics."""

    task: TaskSpec
    steps: list[Step] = field(default_factory=list)
    #: Observation after the last step (needed for V(s_{H+1}) when an episode is truncated).
    final_observation: Observation | None = None
    env_failure: bool = False
    failure_reason: str = ""
    seed: int | None = None
    metadata: JSONDict = field(default_factory=dict)
    traj_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    #: Version of the policy weights that acted (the learner's update count), when known: what an
    #: asynchronous learner needs to bound staleness and correct off-policy data.
    policy_version: int | None = None

    @property
    def reward(self) -> float:
        """Trajectory reward: the sum of step rewards (1.0 for a success under 0/1 rewards)."""
        return float(sum(s.reward for s in self.steps))

    @property
    def success(self) -> bool:
        return (not self.env_failure) and self.reward > 0

    @property
    def length(self) -> int:
        return len(self.steps)

    @property
    def terminated(self) -> bool:
        return bool(self.steps) and self.steps[-1].terminated

    @property
    def truncated(self) -> bool:
        return bool(self.steps) and self.steps[-1].truncated and not self.steps[-1].terminated

    def mc_returns(self, gamma: float) -> list[float]:
        """Discounted Monte-Carlo return from each step to the end of the episode."""
        return mc_returns([s.reward for s in self.steps], gamma)


def mc_returns(rewards: Sequence[float], gamma: float) -> list[float]:
    """``G_t = r_t + gamma * G_{t+1}``, computed backwards; ``G`` after the last step is 0."""
    if not (0.0 <= gamma <= 1.0) or math.isnan(gamma):
        raise ValueError(f"gamma must be in [0, 1], got {gamma}")
    out = [0.0] * len(rewards)
    g = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        g = float(rewards[t]) + gamma * g
        out[t] = g
    return out
