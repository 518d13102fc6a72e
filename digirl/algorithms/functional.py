"""Pure functions of DigiRL and Filtered BC: returns, advantages, filters and losses.

Notation follows the DigiRL paper (arXiv 2406.11896 v1, §4): an episode has steps h = 0..H
(H = index of the last step), step rewards r_h ∈ {0, 1} (1 on the step the task is solved),
final reward r(s_H, a_H, c) = the trajectory's outcome, V(s_h, c) the step-level value and
V_instruct(c) the instruction-level value, both predicting the probability of success.
"""

from __future__ import annotations

import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "awr_weights",
    "bce_value_loss",
    "doubly_robust_advantage",
    "filtered_bc_keep",
    "hard_filter",
    "instruction_curriculum",
    "mse_value_loss",
    "released_code_advantage",
]

FloatArray = NDArray[np.float64]


def doubly_robust_advantage(
    step_rewards: ArrayLike,
    values: ArrayLike,
    next_values: ArrayLike,
    final_reward: float,
    lam: float,
) -> FloatArray:
    """DigiRL Eq. 4.3 for one trajectory of H+1 steps:

    A_h = λ^{H−h}·r_H + (1 − λ^{H−h}·r_H) · (V(s_{h+1}) + r_h − V(s_h))

    ``next_values[h]`` is V(s_{h+1}); pass 0 for a terminal next state. ``final_reward`` is
    r(s_H, a_H, c), the episode outcome.
    """
    r = np.asarray(step_rewards, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    nv = np.asarray(next_values, dtype=np.float64)
    n = r.size
    if not (v.size == nv.size == n):
        raise ValueError(f"lengths differ: rewards {n}, values {v.size}, next_values {nv.size}")
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lambda must be in [0, 1], got {lam}")
    last = n - 1
    mc = lam ** (last - np.arange(n, dtype=np.float64)) * float(final_reward)
    out: FloatArray = mc + (1.0 - mc) * (nv + r - v)
    return out


def released_code_advantage(
    step_rewards: ArrayLike,
    mc_returns: ArrayLike,
    values: ArrayLike,
    next_values: ArrayLike,
    *,
    offset: float = 0.05,
) -> FloatArray:
    """The released DigiRL code's step advantage: ``V(s') − V(s) − offset + r + mc_return``,
    clamped to [0, 1] (``digirl/algorithms/digirl/trainer.py``; V is the min over twin critics)."""
    r = np.asarray(step_rewards, dtype=np.float64)
    g = np.asarray(mc_returns, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    nv = np.asarray(next_values, dtype=np.float64)
    out: FloatArray = np.clip(nv - v - offset + r + g, 0.0, 1.0)
    return out


def hard_filter(advantages: FloatArray, threshold: float, *, strict: bool = True) -> NDArray[np.bool_]:
    """Keep steps whose advantage exceeds ``threshold`` (paper: 1/H; released code: > 0)."""
    a = np.asarray(advantages, dtype=np.float64)
    keep: NDArray[np.bool_] = a > threshold if strict else a >= threshold
    return keep


def awr_weights(advantages: FloatArray, beta: float, *, max_weight: float = 20.0) -> FloatArray:
    """Exponentially weighted AWR (Eq. 4.1): w = exp(A/β), clipped at ``max_weight``."""
    if beta <= 0:
        raise ValueError(f"beta must be > 0, got {beta}")
    w: FloatArray = np.minimum(np.exp(np.asarray(advantages, dtype=np.float64) / beta), max_weight)
    return w


def instruction_curriculum(rewards: ArrayLike, v_instruct: ArrayLike, top_fraction: float) -> NDArray[np.bool_]:
    """DigiRL Eq. 4.4: rank trajectories by ``r − V_instruct(c)`` and keep the top fraction.

    Ties at the cut-off are kept (so the kept share can slightly exceed ``top_fraction``).
    """
    if not 0.0 < top_fraction <= 1.0:
        raise ValueError(f"top_fraction must be in (0, 1], got {top_fraction}")
    score = np.asarray(rewards, dtype=np.float64) - np.asarray(v_instruct, dtype=np.float64)
    if score.size == 0:
        return np.zeros(0, dtype=bool)
    k = max(1, int(np.ceil(top_fraction * score.size)))
    cut = np.sort(score)[::-1][k - 1]
    keep: NDArray[np.bool_] = score >= cut
    return keep


def filtered_bc_keep(rewards: ArrayLike, quantile: float, *, only_successful: bool = True) -> NDArray[np.bool_]:
    """Filtered BC: keep trajectories whose reward is at or above the ``quantile`` of rewards
    (released code: 0.9, i.e. the top 10%), and (by default) only successful ones (reward > 0)."""
    r = np.asarray(rewards, dtype=np.float64)
    if r.size == 0:
        return np.zeros(0, dtype=bool)
    if not 0.0 <= quantile < 1.0:
        raise ValueError(f"quantile must be in [0, 1), got {quantile}")
    keep: NDArray[np.bool_] = r >= np.quantile(r, quantile)
    if only_successful:
        keep &= r > 0
    return keep


def bce_value_loss(pred_logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Cross-entropy on the Monte-Carlo success label (DigiRL Eqs. 4.5–4.6)."""
    return torch.nn.functional.binary_cross_entropy_with_logits(pred_logits, targets.to(pred_logits.dtype))


def mse_value_loss(pred_logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Regression ablation: squared error between sigmoid(pred) and the label."""
    return torch.nn.functional.mse_loss(torch.sigmoid(pred_logits), targets.to(pred_logits.dtype))
