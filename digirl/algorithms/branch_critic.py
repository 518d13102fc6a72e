"""The action-value critic that scores branches where they cannot be executed (``branch_score=critic``).

On an env that cannot copy a state (a phone, a browser page) a sampled action at a visited state has
no outcome to measure; Android Coach scores it with a learned critic instead. :class:`ActionValueCritic`
is Q(s, a): DigiRL's step-critic screen encoder (the critic's own, ``algo.critic.*``) for s, joined
with features of the action (its type, and where a gesture starts and ends, with sinusoids so that a
small head can tell screen regions apart), through an MLP to a logit. It is fitted with
cross-entropy on the discounted return-to-go of the actions episodes took (a soft 0..1 label, as
DigiRL's critics on success), and of executed branches when there are any.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from digirl.algorithms.encoder_config import CriticEncoderConfig
from digirl.core.actions import Action, ActionType
from digirl.core.types import Observation
from digirl.policies.default import ScreenEncoder, batch_to_tensors
from digirl.policies.features import featurize

__all__ = ["ACTION_DIM", "ActionValueCritic", "action_features", "fit_action_values"]

_TYPES = list(ActionType)
_FREQS = (1.0, 2.0, 4.0)
_POINT_DIM = 2 + 4 * len(_FREQS)
#: Length of :func:`action_features`' rows.
ACTION_DIM = len(_TYPES) + 2 * _POINT_DIM


def _point(x: float, y: float) -> list[float]:
    out = [x, y]
    for f in _FREQS:
        out += [
            math.sin(2 * math.pi * f * x),
            math.cos(2 * math.pi * f * x),
            math.sin(2 * math.pi * f * y),
            math.cos(2 * math.pi * f * y),
        ]
    return out


def action_features(actions: Sequence[Action]) -> np.ndarray:
    """[B, ACTION_DIM] float32: one-hot type, then the touch and lift points (zeros for other kinds)."""
    rows = np.zeros((len(actions), ACTION_DIM), dtype=np.float32)
    for i, a in enumerate(actions):
        rows[i, _TYPES.index(a.type)] = 1.0
        if a.touch is not None and a.lift is not None:
            rows[i, len(_TYPES) :] = _point(*a.touch) + _point(*a.lift)
    return rows


class ActionValueCritic(nn.Module):
    """Q(s, a) as a logit; :meth:`q_value` gives sigmoid(Q) (a discounted success probability)."""

    def __init__(self, cfg: CriticEncoderConfig) -> None:
        super().__init__()
        enc = cfg.encoder()
        self.spec = enc.features
        self.encoder = ScreenEncoder(enc)
        d = enc.dim
        self.head = nn.Sequential(nn.Linear(d + ACTION_DIM, d), nn.GELU(), nn.Linear(d, d), nn.GELU(), nn.Linear(d, 1))

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    def logits(self, observations: Sequence[Observation], actions: Sequence[Action]) -> torch.Tensor:
        """[B] logits (with gradients)."""
        cls, _, _ = self.encoder(batch_to_tensors(featurize(observations, self.spec), self.device))
        feats = torch.from_numpy(action_features(actions)).to(self.device)
        out: torch.Tensor = self.head(torch.cat([cls, feats], dim=-1)).squeeze(-1)
        return out

    @torch.no_grad()
    def q_value(self, observations: Sequence[Observation], actions: Sequence[Action], chunk: int = 256) -> torch.Tensor:
        """sigmoid(Q(s, a)) [B] on the CPU, in evaluation mode."""
        was = self.training
        self.eval()
        parts = [
            torch.sigmoid(self.logits(observations[i : i + chunk], actions[i : i + chunk])).cpu()
            for i in range(0, len(observations), chunk)
        ]
        self.train(was)
        return torch.cat(parts) if parts else torch.zeros(0)


def fit_action_values(
    critic: ActionValueCritic,
    optimizer: torch.optim.Optimizer,
    observations: Sequence[Observation],
    actions: Sequence[Action],
    targets: Sequence[float],
    *,
    steps: int,
    batch_size: int,
    rng: np.random.Generator,
) -> dict[str, float]:
    """``steps`` minibatch steps of cross-entropy between sigmoid(Q(s, a)) and ``targets`` (in [0, 1])."""
    if not observations or steps <= 0:
        return {"critic/q_loss": float("nan")}
    y_all = torch.tensor([min(max(float(t), 0.0), 1.0) for t in targets])
    critic.train()
    losses = []
    for _ in range(steps):
        idx = rng.integers(0, len(observations), size=min(batch_size, len(observations)))
        logits = critic.logits([observations[i] for i in idx], [actions[i] for i in idx])
        loss = nn.functional.binary_cross_entropy_with_logits(logits, y_all[idx].to(logits.device))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        nn.utils.clip_grad_norm_(critic.parameters(), 1.0)
        optimizer.step()
        losses.append(float(loss.detach()))
    critic.eval()
    return {"critic/q_loss": float(np.mean(losses)), "critic/q_samples": float(len(observations))}
