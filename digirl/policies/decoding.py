"""Greedy decoding that does not go round the same cycle forever (``eval.loop_escape``).

A greedy policy is deterministic: back on a screen with the same recent actions, it takes the
same action again. When that action changed nothing (a tap on an inert spot) or leads back to an
earlier screen (enter / tap / enter / tap), the episode loops until it runs out of steps: on three
Web Shopping SFT policies, 64-74 of 96 greedy test episodes end that way (the ``looping`` outcome
of the evaluation reports; benchmarks/results/loop_escape). Here the greedy action is kept unless
it would repeat the episode's last actions as a cycle once more; then that one observation's action
is sampled instead (at the given temperature), which tries something else in proportion to the
policy's own probabilities.
Works with any :class:`~digirl.policies.base.ActingPolicy`: it only calls ``act``.
"""

from __future__ import annotations

from collections.abc import Sequence

from digirl.core.actions import Action
from digirl.core.types import Observation
from digirl.policies.base import ActingPolicy, ActOutput

__all__ = ["MAX_CYCLE", "act_escaping_loops", "decode_actions", "repeats_cycle"]

#: Longest cycle of actions looked for (cycles of 1, 2 and 3 actions).
MAX_CYCLE = 3


def repeats_cycle(history: Sequence[Action], action: Action, max_period: int = MAX_CYCLE) -> bool:
    """Whether taking ``action`` after ``history`` goes round a cycle of actions again: the same
    action a third time in a row, or a cycle of 2..``max_period`` actions a second time in a row
    (a b a b, a b c a b c). Two equal actions in a row (scrolling twice) are not a cycle yet."""
    seq = [*history[-2 * max_period :], action]  # only the last two rounds of the longest cycle matter
    if len(seq) >= 3 and seq[-1] == seq[-2] == seq[-3]:
        return True
    return any(len(seq) >= 2 * p and seq[-p:] == seq[-2 * p : -p] for p in range(2, max_period + 1))


def act_escaping_loops(policy: ActingPolicy, observations: Sequence[Observation], *, temperature: float) -> list[ActOutput]:
    """Greedy actions, except where one would go round a cycle again (:func:`repeats_cycle` on the
    observation's action history): those are sampled at ``temperature`` (one more ``act`` call,
    only for them, in batch order)."""
    out = list(policy.act(observations, greedy=True, temperature=temperature))
    stuck = [i for i, (obs, o) in enumerate(zip(observations, out)) if repeats_cycle(obs.history, o.action)]
    if stuck:
        resampled = policy.act([observations[i] for i in stuck], greedy=False, temperature=temperature)
        for i, o in zip(stuck, resampled):
            out[i] = o
    return out


def decode_actions(
    policy: ActingPolicy, observations: Sequence[Observation], *, greedy: bool, temperature: float, loop_escape: bool = False
) -> list[ActOutput]:
    """The policy's actions under one decoding: sampled, greedy, or greedy escaping cycles
    (``loop_escape`` applies to greedy decoding only). Every act function decodes through here."""
    if greedy and loop_escape:
        return act_escaping_loops(policy, observations, temperature=temperature)
    return list(policy.act(observations, greedy=greedy, temperature=temperature))
