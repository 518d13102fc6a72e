"""Pure functions of the on-policy algorithms GRPO and PPO: returns, advantages and losses.

Notation: a trajectory has steps h = 0..H−1 (H = its length), a return R (its summed reward, or
the efficiency-shaped one below) and per-step log-probabilities log π(a_h|s_h).

* Group-relative advantages (GRPO; Shao et al., DeepSeekMath, arXiv 2402.03300, §4.1): G rollouts
  of the same task and seed form a group, and a trajectory's advantage is its return minus the
  group's mean, divided by the group's standard deviation.
* Generalised advantage estimation (PPO's baseline; Schulman et al., arXiv 1506.02438):
  A_h = Σ_k (γλ)^k δ_{h+k} with δ_h = r_h + γ V(s_{h+1}) − V(s_h).
* The clipped surrogate (Schulman et al., PPO, arXiv 1707.06347, Eq. 7) and the "k3" KL estimator
  (Schulman, "Approximating KL divergence", 2020; the one GRPO uses).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import NamedTuple

import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "GAE",
    "GroupAdvantages",
    "clipped_surrogate",
    "efficiency_return",
    "gae",
    "group_normalized_advantages",
    "group_step_advantages",
    "kl_k3",
    "sampled_entropy",
]

FloatArray = NDArray[np.float64]


def efficiency_return(reward: float, length: int, horizon: int, coef: float) -> float:
    """A success's return less ``coef·length/horizon``: R = r − coef·(r > 0)·L/H.

    Only successful episodes pay for their steps, so a quick failure never scores above a slow one
    (MobileGUI-RL's efficiency-aware reward has the same intent). With ``coef`` in [0, 1) and
    L ≤ H, a success still scores above any failure of reward 0.
    """
    if not 0.0 <= coef < 1.0:
        raise ValueError(f"efficiency coefficient must be in [0, 1), got {coef}")
    if horizon < 1 or length < 0:
        raise ValueError(f"need horizon >= 1 and length >= 0, got horizon {horizon}, length {length}")
    if reward <= 0:
        return float(reward)
    return float(reward) - coef * min(length, horizon) / horizon


class GroupAdvantages(NamedTuple):
    """Per trajectory: the advantage and the standard deviation of its group's returns (0: no signal)."""

    advantages: FloatArray
    group_std: FloatArray


def _group_index(groups: Sequence[Hashable]) -> tuple[NDArray[np.int64], int]:
    """Each item's group as 0..K−1 (in order of first appearance) and K."""
    ids: dict[Hashable, int] = {}
    idx = np.array([ids.setdefault(g, len(ids)) for g in groups], dtype=np.int64)
    return idx, len(ids)


def group_normalized_advantages(
    returns: ArrayLike, groups: Sequence[Hashable], *, scale: bool = True, eps: float = 1e-6
) -> GroupAdvantages:
    """A_i = (R_i − mean_g R) / (std_g R + eps) for trajectory i in group g (population std).

    ``scale=False`` leaves out the division (only the group mean is subtracted, as Dr. GRPO argues).
    A group whose returns are all equal gets advantage 0 for all its members.
    """
    r = np.asarray(returns, dtype=np.float64)
    if r.ndim != 1 or r.size != len(groups):
        raise ValueError(f"need one return per group label: {r.size} returns, {len(groups)} labels")
    idx, k = _group_index(groups)
    count = np.bincount(idx, minlength=k).astype(np.float64)
    mean = np.bincount(idx, weights=r, minlength=k) / np.maximum(count, 1.0)
    var = np.bincount(idx, weights=(r - mean[idx]) ** 2, minlength=k) / np.maximum(count, 1.0)
    std = np.sqrt(var)
    adv = r - mean[idx]
    if scale:
        adv = adv / (std[idx] + eps)
    adv = np.where(std[idx] > 0, adv, 0.0)  # float noise in an all-equal group stays 0
    return GroupAdvantages(adv, std[idx])


def group_step_advantages(
    returns: ArrayLike, lengths: Sequence[int], groups: Sequence[Hashable], *, gamma: float, scale: bool = True, eps: float = 1e-6
) -> tuple[list[FloatArray], FloatArray]:
    """The step-level variant: step h of trajectory i has the discounted return-to-go
    G_{i,h} = γ^{H_i−1−h}·R_i, normalised by the mean and std of all the steps of i's group:
    A_{i,h} = (G_{i,h} − mean_g G) / (std_g G + eps).

    Unlike the trajectory-level advantage, earlier steps of a success get less credit than later
    ones, and a long success less than a short one. Returns the per-trajectory step advantages and,
    per trajectory, the std of its group's step returns (0: the group carries no signal).
    """
    r = np.asarray(returns, dtype=np.float64)
    if not (r.size == len(lengths) == len(groups)):
        raise ValueError(f"need one return, length and group label per trajectory: {r.size}, {len(lengths)}, {len(groups)}")
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be in [0, 1], got {gamma}")
    step_returns = [r[i] * gamma ** np.arange(n - 1, -1, -1, dtype=np.float64) for i, n in enumerate(lengths)]
    idx, k = _group_index(groups)
    flat = np.concatenate(step_returns) if step_returns else np.zeros(0)
    flat_idx = np.repeat(idx, lengths)
    count = np.bincount(flat_idx, minlength=k).astype(np.float64)
    mean = np.bincount(flat_idx, weights=flat, minlength=k) / np.maximum(count, 1.0)
    std = np.sqrt(np.bincount(flat_idx, weights=(flat - mean[flat_idx]) ** 2, minlength=k) / np.maximum(count, 1.0))
    out: list[FloatArray] = []
    for i, g in enumerate(step_returns):
        a = g - mean[idx[i]]
        if scale:
            a = a / (std[idx[i]] + eps)
        out.append(np.where(std[idx[i]] > 0, a, 0.0))
    return out, std[idx]


class GAE(NamedTuple):
    """Per step: the advantage and the value target (advantage + V(s_h), the λ-return)."""

    advantages: FloatArray
    returns: FloatArray


def gae(rewards: ArrayLike, values: ArrayLike, bootstrap_value: float, *, gamma: float, lam: float) -> GAE:
    """Generalised advantage estimation over one trajectory, computed backwards:

        δ_h = r_h + γ V(s_{h+1}) − V(s_h),   A_h = δ_h + γλ A_{h+1},   A_H = 0,

    with V(s_H) = ``bootstrap_value`` after the last step (0 after a terminal state). λ = 1 gives
    the Monte-Carlo return minus V, λ = 0 the one-step TD error.
    """
    r = np.asarray(rewards, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    if r.shape != v.shape or r.ndim != 1:
        raise ValueError(f"need one value per reward: rewards {r.shape}, values {v.shape}")
    if not (0.0 <= gamma <= 1.0 and 0.0 <= lam <= 1.0):
        raise ValueError(f"need 0 <= gamma, lam <= 1, got gamma {gamma}, lam {lam}")
    next_v = np.append(v[1:], float(bootstrap_value))
    delta = r + gamma * next_v - v
    adv = np.zeros_like(r)
    carry = 0.0
    for h in range(r.size - 1, -1, -1):
        carry = delta[h] + gamma * lam * carry
        adv[h] = carry
    return GAE(adv, adv + v)


def clipped_surrogate(
    log_probs: torch.Tensor, old_log_probs: torch.Tensor, advantages: torch.Tensor, clip_eps: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """PPO's clipped objective as a per-sample loss: −min(ρA, clip(ρ, 1−ε, 1+ε)A), ρ = π/π_old.

    Returns (loss [B], clipped [B] bool: where the clipped term was the smaller one, i.e. the sample
    gives no gradient). Gradients flow through ``log_probs`` only.
    """
    if not clip_eps > 0:
        raise ValueError(f"clip_eps must be > 0, got {clip_eps}")
    ratio = torch.exp(log_probs - old_log_probs.detach())
    adv = advantages.detach().to(ratio.dtype)
    unclipped = ratio * adv
    clipped = ratio.clamp(1.0 - clip_eps, 1.0 + clip_eps) * adv
    return -torch.minimum(unclipped, clipped), (clipped < unclipped).detach()


def kl_k3(log_probs: torch.Tensor, ref_log_probs: torch.Tensor) -> torch.Tensor:
    """Per-sample estimate of KL(π ‖ π_ref) from actions drawn from π: e^{d} − d − 1 with
    d = log π_ref(a|s) − log π(a|s). Never negative; 0 where the two agree."""
    d = ref_log_probs.detach() - log_probs
    return torch.exp(d) - d - 1.0


def sampled_entropy(log_probs: torch.Tensor, old_log_probs: torch.Tensor) -> torch.Tensor:
    """Per-sample estimate of the policy's entropy from actions drawn from π_old: −ρ·log π(a|s).

    Its mean is unbiased for H(π) = E_{a∼π}[−log π(a|s)] and its gradient at π = π_old is the
    entropy's, so it needs only log-probabilities of given actions (any policy kind can give them).
    """
    ratio = torch.exp(log_probs - old_log_probs.detach())
    return -ratio * log_probs
