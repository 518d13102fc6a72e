"""Pure functions of Digi-Q (Bai et al., 2025, arXiv 2502.15760; released code DigiRL-agent/digiq).

Notation: a transition (s, a, r, s′, done) of the offline data; Q(s, a) and V(s) predict the
discounted return in [0, 1] (rewards are 0/1, one reward per episode); Q̄ and V̄ are the
Polyak-averaged target networks. Candidates a_0..a_{N−1} of a state: a_0 is always the dataset
action, the others are proposals of the behaviour policy.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import Literal

import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray

from digirl.core.actions import Action, ActionType
from digirl.core.types import UIElement

__all__ = [
    "TwinReduce",
    "action_key",
    "best_of_n",
    "dedupe_candidates",
    "pixel_change",
    "polyak_update",
    "reduce_twins",
    "td_target_q",
    "td_target_v",
    "value_loss",
]

TwinReduce = Literal["min", "max", "mean"]


def td_target_q(rewards: torch.Tensor, dones: torch.Tensor, next_values: torch.Tensor, gamma: float) -> torch.Tensor:
    """y_Q = r + γ·(1 − done)·V̄(s′): no value after the episode ended."""
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be in [0, 1], got {gamma}")
    return rewards + gamma * (1.0 - dones.to(rewards.dtype)) * next_values


def td_target_v(q_data: torch.Tensor) -> torch.Tensor:
    """y_V = Q̄(s, a_data): in-sample (the dataset action's target-network Q, no max over actions)."""
    return q_data


def reduce_twins(x: torch.Tensor, how: TwinReduce) -> torch.Tensor:
    """Combine twin heads ``x`` of shape [2, ...] (min: pessimistic; max: the released code's choice)."""
    if how == "min":
        return x.min(0).values
    if how == "max":
        return x.max(0).values
    if how == "mean":
        return x.mean(0)
    raise ValueError(f"twin reduction must be min, max or mean, got {how!r}")


@torch.no_grad()
def polyak_update(target: Iterable[torch.Tensor], online: Iterable[torch.Tensor], tau: float) -> None:
    """θ̄ ← τ·θ + (1 − τ)·θ̄, in place (τ = 1 copies)."""
    if not 0.0 <= tau <= 1.0:
        raise ValueError(f"tau must be in [0, 1], got {tau}")
    for t, o in zip(target, online, strict=True):
        t.mul_(1.0 - tau).add_(o.detach(), alpha=tau)


def value_loss(logits: torch.Tensor, targets: torch.Tensor, kind: Literal["mse", "ce"]) -> torch.Tensor:
    """Loss of value logits against targets in [0, 1]: squared error of σ(logit) (Digi-Q's MSE), or
    cross-entropy with the soft target (``ce``)."""
    y = targets.to(logits.dtype).clamp(0.0, 1.0)
    if kind == "mse":
        return torch.nn.functional.mse_loss(torch.sigmoid(logits), y)
    if kind == "ce":
        return torch.nn.functional.binary_cross_entropy_with_logits(logits, y)
    raise ValueError(f"value loss must be mse or ce, got {kind!r}")


def best_of_n(
    q: ArrayLike,
    v: ArrayLike,
    valid: ArrayLike,
    delta: float,
    *,
    use_candidates: bool = True,
    margin: float = 0.0,
    fallback: bool = False,
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.bool_]]:
    """Best-of-N policy extraction over S states with N candidates each.

    A_j = Q(s, a_j) − V(s), 0 for invalid (or padding) candidates; j* = argmax_j A_j (ties go to the
    lowest index, so the dataset action a_0 wins a tie); the state is kept for behaviour cloning of
    a_{j*} when clamp(A_{j*}, 0, 1) > δ. The clamp only decides the weight; no probability is clamped.
    ``use_candidates=False`` is the N = 1 ablation: only the dataset action is considered.
    ``margin`` > 0 (not in the released code) keeps the dataset action unless a proposal's advantage
    exceeds it by more than ``margin``: a guard against proposals the critic overrates because the
    data never tried them (the argmax of N noisy estimates is biased upwards).
    ``fallback=True`` (not in the released code) keeps the dataset action wherever it would be kept on
    its own (valid, A_0 > δ) and takes the best proposal only where it would not: proposals fill the
    states whose dataset action is bad, instead of competing with good dataset actions through
    extrapolated Q values.

    Returns (j* [S], A [S, N], keep [S]).
    """
    qa = np.asarray(q, dtype=np.float64)
    va = np.asarray(v, dtype=np.float64)
    ok = np.asarray(valid, dtype=bool)
    if qa.ndim != 2 or ok.shape != qa.shape or va.shape != (qa.shape[0],):
        raise ValueError(f"shapes: q {qa.shape} and valid {ok.shape} must be [S, N], v {va.shape} must be [S]")
    if qa.shape[1] == 0:
        raise ValueError("best_of_n needs at least one candidate per state")
    if delta < 0 or margin < 0:
        raise ValueError(f"delta and margin must be >= 0 (an invalid candidate has advantage 0), got {delta}, {margin}")
    adv: NDArray[np.float64] = np.where(ok, qa - va[:, None], 0.0)
    scored = adv if use_candidates else adv[:, :1]
    chosen: NDArray[np.int64] = np.argmax(scored, axis=1).astype(np.int64)  # first maximum
    if margin > 0:
        rows = np.arange(len(chosen))
        stay = ok[:, 0] & (adv[rows, chosen] <= adv[:, 0] + margin)
        chosen[stay] = 0
    if fallback:
        chosen[ok[:, 0] & (adv[:, 0] > delta)] = 0
    best = np.clip(adv[np.arange(len(chosen)), chosen], 0.0, 1.0)
    keep: NDArray[np.bool_] = (best > delta) & ok[np.arange(len(chosen)), chosen]
    return chosen, adv, keep


def action_key(action: Action, elements: Sequence[UIElement] | None = None) -> Hashable:
    """What makes two actions the same choice: taps on the same UI element (the smallest under the
    point) are one action; other taps by their rounded point; swipes by direction; typing by text."""
    if action.type is ActionType.DUAL_POINT:
        if action.is_swipe:
            return ("swipe", action.swipe_direction)
        assert action.touch is not None
        x, y = action.touch
        if elements:
            best, area = None, float("inf")
            for i, el in enumerate(elements):
                if el.contains(x, y):
                    x0, y0, x1, y1 = el.bounds
                    a = (x1 - x0) * (y1 - y0)
                    if a < area:
                        best, area = i, a
            if best is not None:
                return ("tap_element", best)
        return ("tap", round(x, 2), round(y, 2))
    if action.type is ActionType.TYPE:
        return ("type", " ".join(action.text.lower().split()))
    return (action.type.value,)


def dedupe_candidates(
    dataset_action: Action, proposals: Iterable[Action], n: int, elements: Sequence[UIElement] | None = None
) -> list[Action]:
    """Candidate 0 is the dataset action; then the first valid proposals whose :func:`action_key`
    is new, up to ``n`` in all (fewer when the proposals run out). Fixes the released code's
    duplicates (it overwrote index 0 of the samples, so the dataset action could appear twice)."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    out = [dataset_action]
    seen = {action_key(dataset_action, elements)}
    for a in proposals:
        if len(out) >= n:
            break
        if not a.is_valid:
            continue
        k = action_key(a, elements)
        if k not in seen:
            seen.add(k)
            out.append(a)
    return out


def pixel_change(before: np.ndarray, after: np.ndarray, scale: float = 0.25) -> float:
    """Mean squared pixel difference (0–255 scale) of two screenshots downscaled by ``scale``: the
    released code's label is "Yes" when this exceeds 30."""
    if before.shape != after.shape:
        return float("inf")  # a different screen size is a change
    if scale < 1.0:
        h, w = before.shape[:2]
        sh, sw = max(1, int(h * scale)), max(1, int(w * scale))
        b, a = _downscale(before, sh, sw), _downscale(after, sh, sw)
    else:
        b, a = before.astype(np.float64), after.astype(np.float64)
    return float(np.mean((b - a) ** 2))


def _downscale(img: np.ndarray, h: int, w: int) -> np.ndarray:
    from PIL import Image

    from digirl.utils.images import resize_array

    return resize_array(img, (w, h), Image.Resampling.BILINEAR).astype(np.float64)
