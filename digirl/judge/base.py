"""What every success judge returns and raises, and the one protocol envs call (:class:`SuccessJudge`).

A plain function ``fn(task, screenshot, **context) -> bool | None`` (the browser envs' original
judge seam) is a judge too: :func:`as_success_judge` adapts it, so envs call one protocol only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from digirl.core.actions import Action
from digirl.core.errors import EnvFailure
from digirl.core.types import TaskSpec

__all__ = [
    "BaseJudge",
    "FunctionJudge",
    "JudgeError",
    "JudgeFunction",
    "JudgeQuery",
    "JudgeUnavailable",
    "JudgeVerdict",
    "SuccessJudge",
    "as_success_judge",
]


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


@runtime_checkable
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


class JudgeFunction(Protocol):
    """A judge as a plain function: ``fn(task, screenshot, history=..., **context)`` → True, False, or
    None when it cannot tell. Accept ``**kwargs``: envs may pass more context (the browser: ``url``)."""

    def __call__(self, task: TaskSpec, screenshot: np.ndarray, **kwargs: Any) -> bool | None: ...


@dataclass(frozen=True, eq=False)  # holds arrays: compared by identity
class JudgeQuery:
    """One :meth:`SuccessJudge.judge` call's arguments, as :class:`BaseJudge` hands them to ``_verdict``."""

    task: TaskSpec | str
    screenshot: np.ndarray
    previous: np.ndarray | None = None
    actions: Sequence[Action | str] = ()
    episode_id: str | None = None

    @property
    def instruction(self) -> str:
        return self.task if isinstance(self.task, str) else self.task.instruction


class BaseJudge:
    """A :class:`SuccessJudge` whose subclass only decides: :meth:`judge` (the protocol's signature,
    written once here) packs its arguments into a :class:`JudgeQuery` for ``_verdict``."""

    def judge(
        self,
        task: TaskSpec | str,
        screenshot: np.ndarray,
        *,
        previous: np.ndarray | None = None,
        actions: Sequence[Action | str] = (),
        episode_id: str | None = None,
    ) -> JudgeVerdict:
        return self._verdict(JudgeQuery(task, screenshot, previous, actions, episode_id))

    def _verdict(self, query: JudgeQuery) -> JudgeVerdict:
        raise NotImplementedError

    def end_episode(self, episode_id: str) -> None:
        """Forget per-episode state; none unless a subclass keeps some."""


class FunctionJudge(BaseJudge):
    """A :class:`JudgeFunction` as a :class:`SuccessJudge`: ``history`` is the episode's actions, plus
    the ``context`` the env gives (e.g. the page's ``url``); its answer becomes the verdict."""

    def __init__(self, fn: JudgeFunction, context: Mapping[str, Any] | None = None) -> None:
        self.fn = fn
        self.context = dict(context or {})

    def _verdict(self, query: JudgeQuery) -> JudgeVerdict:
        task = query.task
        if isinstance(task, str):
            task = TaskSpec(instruction=task, task_id=task)
        answer = self.fn(task, query.screenshot, history=tuple(query.actions), **self.context)
        if answer is not None and not isinstance(answer, bool | np.bool_):
            raise TypeError(f"a judge function returns True, False or None, got {type(answer).__name__}")
        return JudgeVerdict(None if answer is None else bool(answer), reason="judge function")

    def __repr__(self) -> str:
        return f"FunctionJudge({getattr(self.fn, '__qualname__', repr(self.fn))})"


def as_success_judge(judge: SuccessJudge | JudgeFunction, **context: Any) -> SuccessJudge:
    """``judge`` as a :class:`SuccessJudge`: itself when it is one, else a :class:`FunctionJudge` over
    it that passes ``context`` (what the env knows beyond the screen, e.g. ``url``) to the function."""
    if isinstance(judge, SuccessJudge):
        return judge
    if callable(judge):
        return FunctionJudge(judge, context)
    raise TypeError(f"a judge is a SuccessJudge (judge(), end_episode()) or a function, got {type(judge).__name__}")
