"""Greedy decoding that escapes cycles (digirl/policies/decoding.py, ``eval.loop_escape``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from digirl.core.actions import Action
from digirl.core.types import Observation
from digirl.distributed.acting import PolicyActing
from digirl.policies.base import ActOutput
from digirl.policies.decoding import act_escaping_loops, repeats_cycle
from digirl.training.common import policy_act_fn

A, B, C, D = Action.tap(0.1, 0.1), Action.enter(), Action.back(), Action.tap(0.5, 0.9)


@pytest.mark.parametrize(
    ("history", "action", "cycle"),
    [
        ([], A, False),
        ([A], A, False),  # twice in a row (scrolling twice) is not a cycle yet
        ([A, A], A, True),  # a third time
        ([B, A, A], A, True),
        ([A, B], A, False),  # a b a: not yet round twice
        ([A, B, A], B, True),  # a b a b
        ([C, A, B, A], B, True),
        ([A, B, C, A, B], C, True),  # a b c a b c
        ([A, B, C, A, B], A, False),
        ([A, B, C, D, A, B, C], D, False),  # cycles longer than 3 actions are not looked for
        ([Action.tap(0.1, 0.1), Action.tap(0.1, 0.1)], Action.tap(0.1, 0.2), False),  # another spot
    ],
)
def test_repeats_cycle(history: list[Action], action: Action, cycle: bool) -> None:
    assert repeats_cycle(history, action) is cycle


def _obs(history: Sequence[Action]) -> Observation:
    return Observation(np.zeros((8, 8, 3), np.uint8), "do it", step=len(history), history=tuple(history))


class _Fixed:
    """Greedy: always A; sampled: always B. Records each call's greedy flag and batch size."""

    kind = "fixed"

    def __init__(self) -> None:
        self.calls: list[tuple[bool, int]] = []

    def act(self, observations: Sequence[Observation], *, greedy: bool = False, temperature: float = 1.0) -> list[ActOutput]:
        self.calls.append((greedy, len(observations)))
        a = A if greedy else B
        return [ActOutput(a, "x", 0.0) for _ in observations]

    def save(self, path: str | Path) -> None:
        raise NotImplementedError


def test_only_observations_that_would_cycle_are_sampled_in_one_extra_call() -> None:
    policy = _Fixed()
    obs = [_obs([]), _obs([A, A]), _obs([B]), _obs([B, A, B, A, B])]  # the 2nd and 4th would cycle on A
    out = act_escaping_loops(policy, obs, temperature=1.0)
    assert [o.action for o in out] == [A, B, A, B]
    assert policy.calls == [(True, 4), (False, 2)]
    policy.calls.clear()
    assert [o.action for o in act_escaping_loops(policy, [_obs([]), _obs([A])], temperature=1.0)] == [A, A]
    assert policy.calls == [(True, 2)]  # nothing to escape: no sampling call


def test_act_fns_escape_only_when_greedy_and_asked() -> None:
    stuck = [_obs([A, A])]
    assert policy_act_fn(_Fixed(), greedy=True, temperature=1.0)(stuck)[0].action == A
    assert policy_act_fn(_Fixed(), greedy=True, temperature=1.0, loop_escape=True)(stuck)[0].action == B
    assert policy_act_fn(_Fixed(), greedy=False, temperature=1.0, loop_escape=True)(stuck)[0].action == B


def test_ray_actors_escape_too() -> None:
    """The acting shipped to Ray actors decodes like the act function (same rule, one observation)."""
    stuck = _obs([A, A])

    def episode(loop_escape: bool) -> Any:
        acting = PolicyActing(None, greedy=True, temperature=1.0, loop_escape=loop_escape, _policy=_Fixed())  # type: ignore[arg-type]
        return acting.episode(None, seed=0, attempt=1)  # type: ignore[arg-type]

    assert episode(False).act(stuck).action == A
    assert episode(True).act(stuck).action == B
    assert episode(True).act(_obs([A])).action == A
