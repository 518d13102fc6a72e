"""Registries of step-advantage estimators and critic value losses (``algo.advantage``, ``algo.value_loss``).

An estimator turns one trajectory (and, when it needs them, the step critic's values
V(s_0..s_H, s_{H+1})) into one advantage per step, and says which threshold a hard filter uses when
``algo.threshold`` is null. Register another with :func:`register_advantage_estimator`; the
algorithm asks only what the registry says (whether values are needed, the default threshold), so
a new estimator needs no branch anywhere else. The built-in ones are pure functions of
:mod:`digirl.algorithms.functional`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import torch

from digirl.algorithms.functional import (
    bce_value_loss,
    doubly_robust_advantage,
    mse_value_loss,
    released_code_advantage,
)
from digirl.core.types import Trajectory

__all__ = [
    "AdvantageEstimator",
    "EstimatorOptions",
    "ValueLoss",
    "advantage_estimator",
    "advantage_estimator_names",
    "register_advantage_estimator",
    "register_value_loss",
    "value_loss",
    "value_loss_names",
]

T = TypeVar("T")

#: (logits [B], success targets [B]) → scalar loss
ValueLoss = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class EstimatorOptions:
    """What an estimator may read besides the trajectory: the discount and the doubly-robust λ."""

    gamma: float
    lam: float


@dataclass(frozen=True)
class AdvantageEstimator:
    """``estimate(traj, values, options)``: one advantage per step. ``values`` are V(s_0..s_H, s_{H+1})
    ([H+2] floats) when ``needs_values``, else None. ``threshold(traj)``: the hard filter's default cut."""

    estimate: Callable[[Trajectory, np.ndarray | None, EstimatorOptions], np.ndarray]
    needs_values: bool
    threshold: Callable[[Trajectory], float]


def _next_values(t: Trajectory, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(V(s_h), V(s_{h+1})) per step, with no value after a terminal state."""
    v, nv = values[:-1], values[1:].copy()
    if t.terminated:
        nv[-1] = 0.0
    return v, nv


def _doubly_robust(t: Trajectory, values: np.ndarray | None, o: EstimatorOptions) -> np.ndarray:
    assert values is not None
    v, nv = _next_values(t, values)
    return doubly_robust_advantage([s.reward for s in t.steps], v, nv, t.reward, o.lam)


def _released(t: Trajectory, values: np.ndarray | None, o: EstimatorOptions) -> np.ndarray:
    assert values is not None
    v, nv = _next_values(t, values)
    return released_code_advantage([s.reward for s in t.steps], t.mc_returns(o.gamma), v, nv)


def _monte_carlo(t: Trajectory, values: np.ndarray | None, o: EstimatorOptions) -> np.ndarray:
    return np.asarray(t.mc_returns(o.gamma))


def _one_over_horizon(t: Trajectory) -> float:
    return 1.0 / max(1, t.task.horizon)


_ESTIMATORS: dict[str, AdvantageEstimator] = {
    # paper Eq. 4.3; keeps steps whose advantage beats 1/H
    "dr": AdvantageEstimator(_doubly_robust, needs_values=True, threshold=_one_over_horizon),
    # the released code's variant; keeps positive advantages
    "released": AdvantageEstimator(_released, needs_values=True, threshold=lambda t: 0.0),
    # ablation: the Monte-Carlo return alone, no critic
    "mc": AdvantageEstimator(_monte_carlo, needs_values=False, threshold=_one_over_horizon),
}

_VALUE_LOSSES: dict[str, ValueLoss] = {"bce": bce_value_loss, "mse": mse_value_loss}


def _lookup(table: dict[str, T], what: str, name: str) -> T:
    if name not in table:
        raise KeyError(f"unknown {what} {name!r}; known: {', '.join(sorted(table))}")
    return table[name]


def register_advantage_estimator(name: str, estimator: AdvantageEstimator) -> None:
    """Register (or replace) ``algo.advantage=name``."""
    _ESTIMATORS[name] = estimator


def register_value_loss(name: str, loss: ValueLoss) -> None:
    """Register (or replace) ``algo.value_loss=name``: ``loss(logits, targets)`` → a scalar tensor."""
    _VALUE_LOSSES[name] = loss


def advantage_estimator_names() -> list[str]:
    return sorted(_ESTIMATORS)


def value_loss_names() -> list[str]:
    return sorted(_VALUE_LOSSES)


def advantage_estimator(name: str) -> AdvantageEstimator:
    return _lookup(_ESTIMATORS, "advantage estimator", name)


def value_loss(name: str) -> ValueLoss:
    return _lookup(_VALUE_LOSSES, "value loss", name)
