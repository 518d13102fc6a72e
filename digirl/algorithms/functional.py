"""Pure functions of DigiRL and Filtered BC: returns, advantages, filters and losses.

Notation follows the DigiRL paper (arXiv 2406.11896 v1, §4): an episode has steps h = 0..H
(H = index of the last step), step rewards r_h ∈ {0, 1} (1 on the step the task is solved),
final reward r(s_H, a_H, c) = the trajectory's outcome, V(s_h, c) the step-level value and
V_instruct(c) the instruction-level value, both predicting the probability of success.

Off-policy corrections for asynchronous learning (data collected by older policy versions):
truncated importance weights and V-trace targets (Espeholt et al., IMPALA, arXiv 1802.01561, §4.1),
whose trace coefficients c_i = λ·min(c̄, ρ_i) are also Retrace(λ)'s (Munos et al., arXiv 1606.02647),
and the replay priority that DistRL (arXiv 2410.14803) builds from them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "VTrace",
    "awr_weights",
    "bce_value_loss",
    "doubly_robust_advantage",
    "filtered_bc_keep",
    "hard_filter",
    "instruction_curriculum",
    "mse_value_loss",
    "released_code_advantage",
    "replay_priority",
    "truncated_importance_weights",
    "vtrace",
]

FloatArray = NDArray[np.float64]


def _aligned(rewards: ArrayLike, **per_step: ArrayLike) -> tuple[FloatArray, ...]:
    """``rewards`` and the ``per_step`` arrays as float64, which must all have the rewards' length."""
    r = np.asarray(rewards, dtype=np.float64)
    arrays = {k: np.asarray(x, dtype=np.float64) for k, x in per_step.items()}
    if any(a.size != r.size for a in arrays.values()):
        raise ValueError(f"lengths differ: rewards {r.size}, " + ", ".join(f"{k} {a.size}" for k, a in arrays.items()))
    return (r, *arrays.values())


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
    r, v, nv = _aligned(step_rewards, values=values, next_values=next_values)
    n = r.size
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


def instruction_curriculum(
    rewards: ArrayLike, v_instruct: ArrayLike, top_fraction: float, *, keep_successes: bool = False
) -> NDArray[np.bool_]:
    """DigiRL Eq. 4.4: rank trajectories by ``r − V_instruct(c)`` and keep the top fraction.

    Ties at the cut-off are kept (so the kept share can slightly exceed ``top_fraction``).
    ``keep_successes`` also keeps every successful trajectory (r > 0) below the cut: the cut then
    only drops failures. Without it, once more than ``top_fraction`` of the trajectories succeed,
    the successes of the tasks the critic deems easiest fall below the cut and those tasks get no
    actor update at all.
    """
    if not 0.0 < top_fraction <= 1.0:
        raise ValueError(f"top_fraction must be in (0, 1], got {top_fraction}")
    score = np.asarray(rewards, dtype=np.float64) - np.asarray(v_instruct, dtype=np.float64)
    if score.size == 0:
        return np.zeros(0, dtype=bool)
    k = max(1, int(np.ceil(top_fraction * score.size)))
    cut = np.sort(score)[::-1][k - 1]
    keep: NDArray[np.bool_] = score >= cut
    if keep_successes:
        keep |= np.asarray(rewards, dtype=np.float64) > 0
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


# --------------------------------------------------------------------------- off-policy corrections
def truncated_importance_weights(target_log_probs: ArrayLike, behaviour_log_probs: ArrayLike, rho_bar: float = 1.0) -> FloatArray:
    """ρ̂_t = min(ρ̄, π(a_t|s_t) / μ(a_t|s_t)) from log-probabilities of the learner (π) and the actor (μ).

    A step whose behaviour log-probability is unknown (NaN: an expert's or an old dataset's) gets 1,
    i.e. it is taken as on-policy; a step the learner cannot express (target NaN or −inf) gets 0.
    """
    if not rho_bar > 0:
        raise ValueError(f"rho_bar must be > 0, got {rho_bar}")
    lp = np.asarray(target_log_probs, dtype=np.float64)
    mu = np.asarray(behaviour_log_probs, dtype=np.float64)
    if lp.shape != mu.shape:
        raise ValueError(f"shapes differ: target {lp.shape}, behaviour {mu.shape}")
    with np.errstate(over="ignore", invalid="ignore"):
        rho = np.minimum(rho_bar, np.exp(np.minimum(lp - mu, 50.0)))  # capped exponent: no overflow warning
    rho = np.where(np.isnan(lp), 0.0, rho)
    out: FloatArray = np.where(np.isnan(mu), 1.0, rho)
    return out


class VTrace(NamedTuple):
    """V-trace targets ``vs`` of V(s_t) and the off-policy advantages ``pg_advantages`` of a_t."""

    vs: FloatArray
    pg_advantages: FloatArray


def vtrace(
    rewards: ArrayLike,
    values: ArrayLike,
    bootstrap_value: float,
    rhos: ArrayLike,
    *,
    gamma: float,
    rho_bar: float = 1.0,
    c_bar: float = 1.0,
    lam: float = 1.0,
) -> VTrace:
    """V-trace over one trajectory (IMPALA Eq. 1), from the importance ratios ``rhos`` = π/μ (untruncated).

    With ρ̂_t = min(ρ̄, ρ_t), c_t = λ·min(c̄, ρ_t) and δ_t = ρ̂_t (r_t + γ V(s_{t+1}) − V(s_t)):

        v_t = V(s_t) + δ_t + γ c_t (v_{t+1} − V(s_{t+1})),    computed backwards,
        A_t = ρ̂_t (r_t + γ v_{t+1} − V(s_t)),

    where V(s_T) = v_T = ``bootstrap_value`` after the last step (0 after a terminal state). With all
    ρ = 1 (on-policy) and λ = 1, v_t is the n-step return bootstrapped at the end.
    """
    r, v, rho = _aligned(rewards, values=values, rhos=rhos)
    n = r.size
    if not (0.0 <= gamma <= 1.0 and 0.0 <= lam <= 1.0) or rho_bar <= 0 or c_bar <= 0:
        raise ValueError("need 0 <= gamma, lam <= 1 and rho_bar, c_bar > 0")
    rho_t = np.minimum(rho_bar, rho)
    c = lam * np.minimum(c_bar, rho)
    next_v = np.append(v[1:], bootstrap_value)
    delta = rho_t * (r + gamma * next_v - v)
    vs = np.zeros(n)
    carry = 0.0  # v_{t+1} − V(s_{t+1}); 0 past the end (the bootstrap is taken as exact)
    for t in range(n - 1, -1, -1):
        carry = delta[t] + gamma * c[t] * carry
        vs[t] = v[t] + carry
    next_vs = np.append(vs[1:], bootstrap_value)
    adv: FloatArray = rho_t * (r + gamma * next_vs - v)
    return VTrace(vs, adv)


def replay_priority(td_errors: ArrayLike, rhos: ArrayLike, *, w_td: float = 1.0, w_rho: float = 1.0) -> float:
    """DistRL's trajectory priority without its entropy term: ``w_td·mean|δ| + w_rho·mean ρ̂``.

    δ are the trajectory's TD errors under the current policy (e.g. V-trace's ``vs − V``), ρ̂ its
    truncated importance weights. Surprising trajectories, and those the current policy still takes,
    are replayed more. An empty trajectory has priority 0.
    """
    d = np.asarray(td_errors, dtype=np.float64)
    w = np.asarray(rhos, dtype=np.float64)
    if d.size == 0 and w.size == 0:
        return 0.0
    return float(w_td * (np.abs(d).mean() if d.size else 0.0) + w_rho * (w.mean() if w.size else 0.0))
