"""Screens whose ground truth is known, from an env's scripted expert.

The expert (``env.cheat()``) is run to success; its final screen is a *positive*. A *negative*
is the same episode stopped early: the screen after ``k`` expert steps, ``0 <= k < L`` where
``L`` steps solved the task (the env's own reward was 0 there). Used by ``digirl judge audit``
and to make screenshot few-shot examples.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from digirl.core.actions import Action
from digirl.core.types import TaskSpec

__all__ = ["JudgeCase", "expert_cases"]

log = logging.getLogger(__name__)


@dataclass
class JudgeCase:
    """A screen to judge with its true label. ``kind`` is ``expert_success`` or ``early_stop``."""

    task: TaskSpec
    screenshot: np.ndarray
    previous: np.ndarray | None
    actions: tuple[Action, ...]
    label: bool
    kind: str
    seed: int
    step: int


def _expert_episode(env: Any, seed: int) -> tuple[TaskSpec, list[np.ndarray], list[Action], bool]:
    """Run the expert; return (task, screens after 0..L steps, actions, solved)."""
    obs, info = env.reset(seed=seed)
    task = TaskSpec.from_dict(info["task"]) if isinstance(info.get("task"), dict) else env.task
    screens = [obs.screenshot]
    actions: list[Action] = []
    solved = False
    for _ in range(max(1, int(env.horizon))):
        a = env.cheat()
        if a is None:
            break
        obs, reward, terminated, truncated, _ = env.step(a)
        screens.append(obs.screenshot)
        actions.append(a)
        if reward > 0:
            solved = True
            break
        if terminated or truncated:
            break
    return task, screens, actions, solved


def expert_cases(
    env: str | Any,
    n: int,
    *,
    seed: int = 0,
    negative_every: int = 2,
    max_tries: int | None = None,
    env_kwargs: dict[str, Any] | None = None,
) -> list[JudgeCase]:
    """``n`` labelled screens from ``env`` (an env id or an env): every ``negative_every``-th
    case (1-based: the 2nd, 4th, ...) is an early stop, the rest are expert successes.

    Episodes the expert does not solve are skipped (at most ``max_tries``, default ``4 n``).
    """
    if n < 0:
        raise ValueError("n must be >= 0")
    own = isinstance(env, str)
    if isinstance(env, str):
        from digirl.envs.registry import make

        env = make(env, **(env_kwargs or {}))
    rng = np.random.default_rng(seed)
    out: list[JudgeCase] = []
    tries = 0
    limit = max_tries if max_tries is not None else 4 * n
    try:
        while len(out) < n and tries < limit:
            s = seed + tries
            tries += 1
            task, screens, actions, solved = _expert_episode(env, s)
            if not solved:
                log.info("expert did not solve seed %d (%s); skipped", s, task.instruction)
                continue
            negative = negative_every > 0 and (len(out) + 1) % negative_every == 0
            k = int(rng.integers(0, len(actions))) if negative else len(actions)
            out.append(
                JudgeCase(
                    task=task,
                    screenshot=screens[k],
                    previous=screens[k - 1] if k > 0 else None,
                    actions=tuple(actions[:k]),
                    label=not negative,
                    kind="early_stop" if negative else "expert_success",
                    seed=s,
                    step=k,
                )
            )
    finally:
        if own:
            env.close()
    if len(out) < n:
        log.warning("only %d of %d judge cases: the expert failed on the other seeds", len(out), n)
    return out
