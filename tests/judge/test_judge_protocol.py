"""One judge protocol: SuccessJudge; a plain judge function (the browser's seam) is adapted to it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from digirl.core.actions import Action
from digirl.core.types import TaskSpec
from digirl.judge.base import FunctionJudge, JudgeVerdict, SuccessJudge, as_success_judge


class _Fixed:
    def judge(self, task, screenshot, *, previous=None, actions=(), episode_id=None) -> JudgeVerdict:
        return JudgeVerdict(True, reason="fixed")

    def end_episode(self, episode_id: str) -> None:
        pass


def test_a_success_judge_is_used_as_it_is():
    j = _Fixed()
    assert isinstance(j, SuccessJudge) and as_success_judge(j, url="ignored") is j


def test_a_judge_function_becomes_a_success_judge_with_the_envs_context():
    calls: list[dict[str, Any]] = []
    answers = iter([True, False, None])

    def fn(task: TaskSpec, screenshot: np.ndarray, **kw: Any) -> bool | None:
        calls.append({"task": task, "shape": screenshot.shape, **kw})
        return next(answers)

    j = as_success_judge(fn, url="http://app/index.html")
    assert isinstance(j, FunctionJudge) and isinstance(j, SuccessJudge)
    task = TaskSpec("Open the second page", task_id="t")
    shot = np.zeros((4, 3, 3), dtype=np.uint8)
    done = Action.complete()
    verdicts = [j.judge(task, shot, actions=[done]) for _ in range(3)]
    assert [v.success for v in verdicts] == [True, False, None]
    assert [v.label for v in verdicts] == ["success", "failure", "undecided"]
    assert calls[0] == {"task": task, "shape": (4, 3, 3), "url": "http://app/index.html", "history": (done,)}
    v = as_success_judge(lambda t, s, **kw: t.instruction == "go").judge("go", shot)  # a bare instruction is a task
    assert v.success is True
    j.end_episode("e")  # nothing to forget, and no error


def test_a_judge_function_must_answer_true_false_or_none():
    with pytest.raises(TypeError, match="returns True, False or None, got str"):
        as_success_judge(lambda t, s, **kw: "yes").judge("x", np.zeros((1, 1, 3), dtype=np.uint8))
    with pytest.raises(TypeError, match="a judge is a SuccessJudge"):
        as_success_judge(42)  # type: ignore[arg-type]
