"""The policy seam: act on a batch of observations, score given actions, save and load.

The vector runner and collectors only need :class:`ActFn` (batched acting); learners need the
full :class:`Policy`. Model text crosses into the typed world once, through a codec.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from digirl.core.actions import Action
from digirl.core.types import Observation

__all__ = ["ActFn", "ActOutput", "Policy", "as_act_output"]


@dataclass(frozen=True, slots=True)
class ActOutput:
    """A sampled action, the raw text it was decoded from and its log-probability (if known)."""

    action: Action
    text: str
    log_prob: float | None = None


def as_act_output(o: Any) -> ActOutput:
    """Normalize what an act function returned: an ``ActOutput``, or a plain ``Action``."""
    if isinstance(o, ActOutput):
        return o
    if isinstance(o, Action):
        return ActOutput(o, str(o), None)
    raise TypeError(f"act_fn must return ActOutput (or Action) items, got {type(o).__name__}")


class ActFn(Protocol):
    """Batched acting: one output per observation, in order."""

    def __call__(self, observations: Sequence[Observation]) -> list[ActOutput]: ...


@runtime_checkable
class Policy(Protocol):
    """What the training loop needs from a policy."""

    def act(self, observations: Sequence[Observation], *, greedy: bool = False, temperature: float = 1.0) -> list[ActOutput]:
        """Sample (or take the mode of) an action for each observation."""
        ...

    def log_prob(self, observations: Sequence[Observation], actions: Sequence[Action]) -> Any:
        """Log-probabilities (a differentiable torch tensor of shape [B]) of the given actions."""
        ...

    def save(self, path: str | Path) -> None:
        """Write ``model.safetensors`` and ``policy.json`` into the folder ``path``."""
        ...
