"""What every success judge returns and raises, and the protocol envs call."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from digirl.core.actions import Action
from digirl.core.errors import EnvFailure
from digirl.core.types import TaskSpec

__all__ = ["JudgeError", "JudgeUnavailable", "JudgeVerdict", "SuccessJudge"]


class JudgeError(EnvFailure):
    """The judge cannot work as configured (bad request, wrong key, unknown model).

    An :class:`EnvFailure`: an episode that could not be judged is not a task failure.
    """


class JudgeUnavailable(JudgeError):
    """The judge endpoint kept failing (rate limits, 5xx, timeouts) through every retry."""


@dataclass(frozen=True)
class JudgeVerdict:
    """A judgement of one screen. ``success`` is ``None`` when the answer could not be parsed
    (*undecided*): a distinct outcome that is counted, never silently a failure."""

    success: bool | None
    reason: str = ""
    #: The model's raw answer (of the deciding vote).
    raw: str = ""
    #: Reused without a call: same (task, screen) in the LRU cache, or an unchanged screen.
    cached: bool = False
    #: Individual votes when voting (``None`` entries are undecided votes).
    votes: tuple[bool | None, ...] = ()
    #: HTTP requests made for this verdict (retries included; 0 when cached).
    calls: int = 0
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def undecided(self) -> bool:
        return self.success is None

    @property
    def label(self) -> str:
        return "undecided" if self.success is None else ("success" if self.success else "failure")

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.label,
            "success": self.success,
            "reason": self.reason,
            "raw": self.raw,
            "cached": self.cached,
            "votes": [None if v is None else bool(v) for v in self.votes],
            "calls": self.calls,
            "latency_s": round(self.latency_s, 4),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


class SuccessJudge(Protocol):
    """Decides whether ``screenshot`` shows ``task`` accomplished."""

    def judge(
        self,
        task: TaskSpec | str,
        screenshot: np.ndarray,
        *,
        previous: np.ndarray | None = None,
        actions: Sequence[Action | str] = (),
        episode_id: str | None = None,
    ) -> JudgeVerdict: ...

    def end_episode(self, episode_id: str) -> None:
        """Forget per-episode state (the last judged screen)."""
        ...
