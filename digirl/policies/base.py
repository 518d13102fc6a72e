"""The policy seam: act on a batch of observations, score given actions, save and load.

Collectors only need :class:`~digirl.core.acting.ActFn` (batched acting; it lives in core and is
re-exported here, with :class:`ActOutput`). Every policy kind is an :class:`ActingPolicy` (it
acts, saves itself and says its kind); kinds that learn are :class:`Policy` (they also score
actions differentiably and expose their trainable parameters), which is all SFT, Filtered BC,
DigiRL and Digi-Q call. Model text crosses into the typed world once, through a codec, inside ``act``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from digirl.core.acting import ActFn, ActOutput, as_act_output  # their home is core; re-exported here
from digirl.core.actions import Action
from digirl.core.types import Observation

if TYPE_CHECKING:  # torch stays out of light imports (collectors import this module)
    import torch

__all__ = [
    "ActFn",
    "ActOutput",
    "ActingPolicy",
    "LogProbFromMask",
    "OwnSampler",
    "Policy",
    "as_act_output",
    "is_trainable",
]


@runtime_checkable
class ActingPolicy(Protocol):
    """What collection, evaluation and serving need: every policy kind, API-served ones included."""

    #: The registered kind (``default``, ``hf``, ...); written into ``policy.json`` by ``save``.
    kind: str

    def act(self, observations: Sequence[Observation], *, greedy: bool = False, temperature: float = 1.0) -> list[ActOutput]:
        """One action per observation, in order: the mode (``greedy``) or a sample at ``temperature``.

        Output the policy cannot parse becomes an INVALID action carrying the raw text; never raises
        for bad model output.
        """
        ...

    def save(self, path: str | Path) -> None:
        """Write the policy into the folder ``path``: ``policy.json`` (kind + config) and its weights."""
        ...


@runtime_checkable
class Policy(ActingPolicy, Protocol):
    """A trainable policy: what the learners (SFT, Filtered BC, DigiRL, Digi-Q) call."""

    #: Where the trainable parameters live.
    device: torch.device

    def parameters(self) -> Iterator[torch.nn.Parameter]:
        """The parameters the optimizer updates (LoRA adapters only, when the policy uses LoRA)."""
        ...

    def train(self, mode: bool = True) -> None:
        """Training mode (dropout on) or evaluation mode; ``act`` always evaluates."""
        ...

    def log_prob_with_mask(
        self, observations: Sequence[Observation], actions: Sequence[Action]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(log π(a|s) [B], expressible [B] bool), differentiable in the parameters.

        ``expressible`` is False where the policy cannot produce the action at all (its log-probability
        is then meaningless and learners drop the sample). The value for a sample does not depend on
        the rest of the batch.
        """
        ...

    def log_prob(self, observations: Sequence[Observation], actions: Sequence[Action]) -> torch.Tensor:
        """log π(a|s) [B]; NaN where the action is not expressible."""
        ...


class LogProbFromMask:
    """``log_prob`` for a policy that defines ``log_prob_with_mask``: the same log-probabilities, NaN
    where the action is not expressible (one rule for every learning kind)."""

    def log_prob_with_mask(
        self, observations: Sequence[Observation], actions: Sequence[Action]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        raise NotImplementedError

    def log_prob(self, observations: Sequence[Observation], actions: Sequence[Action]) -> torch.Tensor:
        """log π(a|s) [B]; NaN where the action is not expressible."""
        lp, valid = self.log_prob_with_mask(observations, actions)
        return lp.masked_fill(~valid, float("nan"))


@runtime_checkable
class OwnSampler(Protocol):
    """A policy that samples from a random generator of its own, not from torch's global ones."""

    def sampling_state(self) -> torch.Tensor:
        """The generator's state, for :meth:`set_sampling_state`."""
        ...

    def set_sampling_state(self, state: torch.Tensor) -> None:
        """Put the generator back where :meth:`sampling_state` found it."""
        ...


def is_trainable(policy: ActingPolicy) -> bool:
    """Whether ``policy`` implements the trainable :class:`Policy` protocol."""
    return isinstance(policy, Policy)
