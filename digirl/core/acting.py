"""What a collector calls to act: :class:`ActFn` (batched acting) and what it returns, :class:`ActOutput`.

Envs and collectors need only this, not the policy seam (:mod:`digirl.policies.base`, which re-exports
these names): any callable from observations to actions drives an env.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from digirl.core.actions import Action
from digirl.core.types import Observation

__all__ = ["ActFn", "ActOutput", "as_act_output"]


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

    def __call__(self, observations: Sequence[Observation], /) -> list[ActOutput]: ...
