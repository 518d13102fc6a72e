"""The algorithm seam and the behaviour-cloning update the algorithms share.

An algorithm owns the policy's optimizer (and its critics); the training loop calls
``update(trajectories, phase)`` and logs the metrics it returns, then stores what
``annotations()`` reports about the steps it just scored (values, advantages, which were kept) for
the viewer. ``state_dict`` / ``load_state_dict`` cover everything a checkpoint must restore.
Algorithms are registered by name in :mod:`digirl.algorithms.registry`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np
import torch

from digirl.algorithms.digiq.config import DigiQConfig
from digirl.core.actions import Action
from digirl.core.errors import DigirlError
from digirl.core.types import Observation, Trajectory
from digirl.data.annotations import StepAnnotation
from digirl.policies.base import Policy
from digirl.policies.config import EncoderConfig
from digirl.utils import distributed as dist
from digirl.utils.transfer import HostCopy, to_device


def _f(default: Any, help: str) -> Any:
    return field(default=default, metadata={"help": help})


@dataclass
class AlgoConfig:
    """Hyperparameters of Filtered BC and DigiRL (paper Table 6 values noted where they differ)."""

    name: str = _f("digirl", "algorithm: filtered_bc, digirl, or another registered name (`digirl config keys train`)")
    lr: float = _f(1e-3, "actor learning rate (paper: 3e-3 for AutoUI)")
    batch_size: int = _f(64, "actor minibatch size in steps (paper: 128)")
    grad_accum: int = _f(1, "gradient accumulation steps per optimizer step")
    max_grad_norm: float = _f(1.0, "gradient clipping norm (paper: 0.01 for AutoUI)")
    actor_steps: int = _f(40, "actor optimizer steps per online iteration (paper: 20)")
    offline_actor_steps: int = _f(200, "actor optimizer steps in the offline phase")
    actor_epochs: float | None = _f(
        None,
        "scale the actor's optimizer steps with the data it clones: this many passes over the samples per update, "
        "at most actor_steps (offline_actor_steps offline); null = always the fixed count. Fixed counts on a few "
        "hundred kept steps made DigiRL's pointer certain of actions it never tried (benchmarks/results/table1)",
    )
    gamma: float = _f(0.95, "discount for Monte-Carlo returns (released code: 0.95)")
    fbc_quantile: float = _f(0.9, "Filtered BC keeps trajectories at or above this reward quantile (released: 0.9)")
    # --- DigiRL
    advantage: Literal["dr", "released", "mc"] = _f(
        "dr", "step advantage: dr (paper Eq. 4.3), released (code variant), mc (ablation: MC return only)"
    )
    lam: float = _f(0.5, "λ of the doubly-robust advantage (paper: 0.5)")
    threshold: float | None = _f(None, "keep steps with advantage > threshold; null = 1/H (paper), 0 for the released variant")
    actor_weighting: Literal["hard", "awr"] = _f("hard", "hard filter (paper Eq. 4.2) or exponential AWR weights (ablation)")
    awr_beta: float = _f(0.5, "temperature of exponential AWR")
    curriculum: bool = _f(True, "instruction-level curriculum (paper Eq. 4.4) in the online phase")
    curriculum_top: float = _f(0.5, "fraction of trajectories kept by the curriculum (released code: 0.1)")
    curriculum_keep_successes: bool = _f(
        False,
        "the curriculum also keeps every successful trajectory below its cut, so it drops failures only "
        "(false: the paper's top fraction, which stops training the easiest tasks once most episodes succeed)",
    )
    critic_lr: float = _f(1e-3, "learning rate of both critics")
    critic_steps: int = _f(40, "step-critic optimizer steps per online iteration (paper: 5 epochs)")
    offline_critic_steps: int = _f(200, "step-critic optimizer steps in the offline phase")
    instruct_critic_steps: int = _f(40, "instruction-critic optimizer steps per iteration")
    critic_batch_size: int = _f(128, "critic minibatch size")
    value_loss: Literal["bce", "mse"] = _f("bce", "critic loss: cross-entropy on success (paper) or regression (ablation)")
    twin_critic: bool = _f(True, "twin step-critic heads, min taken (released code)")
    critic_folds: int = _f(
        1,
        "cross-fitting: with K > 1 folds each trajectory's values come from critics trained on the other "
        "folds, never on it, and held-out critic accuracy is logged (1 = the paper's in-sample fit)",
    )
    critic: EncoderConfig = field(
        default_factory=EncoderConfig, metadata={"help": "the step critic's own screen encoder (not the policy's)"}
    )
    # --- Digi-Q
    digiq: DigiQConfig = field(default_factory=DigiQConfig, metadata={"help": "Digi-Q (algo.name=digiq): its own options"})

    def __post_init__(self) -> None:
        from digirl.algorithms.registry import algorithm_names

        if self.name not in algorithm_names():
            raise ValueError(f"algo.name {self.name!r} is not registered; known: {', '.join(algorithm_names())}")
        if not 0.0 <= self.lam <= 1.0:
            raise ValueError(f"algo.lam must be in [0, 1], got {self.lam}")
        if self.batch_size < 1 or self.grad_accum < 1:
            raise ValueError("algo.batch_size and algo.grad_accum must be >= 1")
        if not 0.0 < self.curriculum_top <= 1.0:
            raise ValueError(f"algo.curriculum_top must be in (0, 1], got {self.curriculum_top}")
        if self.critic_folds < 1:
            raise ValueError(f"algo.critic_folds must be >= 1, got {self.critic_folds}")
        if self.actor_epochs is not None and not self.actor_epochs > 0:
            raise ValueError(f"algo.actor_epochs must be > 0 or null, got {self.actor_epochs}")
        for key, enc in (("algo.critic", self.critic), ("algo.digiq.encoder", self.digiq.encoder)):
            if enc.screen_match:
                raise ValueError(f"{key}.screen_match: a policy option (it feeds the action-kind head); critics have none")


Phase = Literal["offline", "online"]


class Algorithm(Protocol):
    """What the training loop calls. Build one with :func:`digirl.algorithms.registry.make_algorithm`."""

    name: str

    def update(self, trajectories: Sequence[Trajectory], phase: Phase) -> dict[str, float]:
        """One iteration of learning on the replay data; returns metrics (``train/…``, ``critic/…``).

        Algorithms that can correct off-policy data also accept ``step_weights``: traj_id → one weight
        per step (truncated importance weights, from the asynchronous driver), multiplied into each
        step's actor loss; steps of trajectories not in the mapping weigh 1.
        """
        ...

    def annotations(self) -> list[StepAnnotation]:
        """What the last ``update`` computed per step (values, advantages, kept or not), for the viewer.

        Empty when the algorithm has nothing to report or has not updated yet.
        """
        ...

    def state_dict(self) -> dict[str, Any]:
        """Everything a checkpoint must restore (optimizers, critics, RNG); tensors and plain data only."""
        ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


class NonFiniteLoss(DigirlError):
    """A loss became NaN/inf; training stops and the last good checkpoint is kept."""


@dataclass
class Sample:
    observation: Observation
    action: Action
    weight: float = 1.0


def actor_step_count(cfg: AlgoConfig, phase: Phase, samples: Sequence[Sample]) -> int:
    """Actor optimizer steps of one :func:`bc_update` on ``samples``.

    The phase's fixed count, or with ``actor_epochs`` that many passes over the valid samples (a
    step draws ``min(batch_size, n)`` of them per accumulation), capped by the fixed count.
    """
    cap = cfg.offline_actor_steps if phase == "offline" else cfg.actor_steps
    n = sum(1 for s in samples if s.action.is_valid)
    if cfg.actor_epochs is None or n == 0:
        return cap
    per_step = min(cfg.batch_size, n) * cfg.grad_accum
    # the epsilon keeps float noise (e.g. 3.0000000000000004 passes) from adding a step
    return min(cap, max(1, math.ceil(cfg.actor_epochs * n / per_step - 1e-9)))


def bc_update(
    policy: Policy,
    optimizer: torch.optim.Optimizer,
    samples: Sequence[Sample],
    *,
    steps: int,
    batch_size: int,
    grad_accum: int,
    max_grad_norm: float,
    rng: np.random.Generator,
) -> dict[str, float]:
    """(Weighted) behaviour cloning: minimize −Σ w·log π(a|s) / Σ w over random minibatches.

    Data parallel (:mod:`digirl.utils.distributed`): every rank draws the same minibatch, scores
    its slice, divides by the global weight sum, and gradients are summed over ranks before
    clipping, so the step equals the one-process step on the whole minibatch.
    """
    usable = [s for s in samples if s.action.is_valid]
    if not usable or steps <= 0:
        return {"train/actor_loss": float("nan"), "train/actor_samples": float(len(usable))}
    policy.train(True)
    losses: list[float] = []
    dropped = 0

    def take(copy: HostCopy) -> None:
        nonlocal dropped
        vals = copy.get().tolist()
        step_losses = [x * grad_accum for x in vals[:grad_accum]]
        bad = next((x for x in step_losses if not math.isfinite(x)), None)
        if bad is not None:
            raise NonFiniteLoss(f"actor loss is {bad / grad_accum} (check the learning rate and the data)")
        losses.extend(step_losses)
        dropped += int(sum(vals[grad_accum:]))

    pending: HostCopy | None = None
    try:
        for _ in range(steps):
            optimizer.zero_grad(set_to_none=True)
            # Losses and counts stay on the device until the step's backward passes are queued: reading
            # them earlier would make the host wait for each forward pass before launching its backward.
            totals: list[torch.Tensor] = []
            invalid: list[torch.Tensor] = []
            for _ in range(grad_accum):
                idx = rng.integers(0, len(usable), size=min(batch_size, len(usable)))
                mb = dist.shard([usable[i] for i in idx])
                if mb:
                    lp, valid = policy.log_prob_with_mask([s.observation for s in mb], [s.action for s in mb])
                else:  # more ranks than samples: this rank contributes nothing but joins the sums
                    lp, valid = torch.zeros(0), torch.zeros(0, dtype=torch.bool)
                w = to_device(torch.tensor([s.weight for s in mb], dtype=lp.dtype), lp.device) * valid.to(lp.dtype)
                invalid.append((~valid).sum().to(lp.dtype))
                denom = dist.all_sum(w.sum()).clamp(min=1e-8)
                loss = -(torch.where(valid, lp, torch.zeros_like(lp)) * w).sum() / denom / grad_accum
                totals.append(dist.all_sum(loss.detach()))
                if loss.requires_grad:
                    loss.backward()  # type: ignore[no-untyped-call]
            stats = torch.stack([*totals, *invalid])
            if _skips_on_device(optimizer, stats):
                # The GPU path never waits for this step: the fused optimizer skips the update on the
                # device when a loss is non-finite (as under a GradScaler), and the losses are read one
                # step later, while the next step runs; a non-finite one raises before that step's update.
                optimizer.found_inf = (~torch.isfinite(stats[:grad_accum]).all()).float()  # type: ignore[attr-defined]
                copy = HostCopy(stats)
                if pending is not None:
                    take(pending)
                pending = copy
            else:  # before the optimizer step: a non-finite loss never reaches the weights
                take(HostCopy(stats))
            dist.sum_grads(policy.parameters())
            torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
            optimizer.step()
        if pending is not None:
            take(pending)
    finally:
        if hasattr(optimizer, "found_inf"):
            del optimizer.found_inf
    policy.train(False)
    dropped = int(dist.all_sum(torch.tensor(float(dropped))))
    return {
        "train/actor_loss": float(np.mean(losses)),
        "train/actor_steps": float(steps),
        "train/actor_samples": float(len(usable)),
        "train/actor_unexpressible": float(dropped) / max(1, steps * grad_accum * batch_size),
    }


def _skips_on_device(optimizer: torch.optim.Optimizer, stats: torch.Tensor) -> bool:
    """Whether ``optimizer`` can skip a step on the GPU itself: fused Adam/AdamW read ``found_inf``."""
    return stats.is_cuda and isinstance(optimizer, torch.optim.Adam | torch.optim.AdamW) and bool(optimizer.defaults.get("fused"))


def make_optimizer(params: Any, lr: float) -> torch.optim.Optimizer:
    """AdamW over ``params`` (the trainable parameters); the fused CUDA kernel when they are on a GPU."""
    ps = list(params)
    fused = bool(ps) and all(p.is_cuda for p in ps)
    return torch.optim.AdamW(ps, lr=lr, fused=fused or None)


def steps_of(trajectories: Sequence[Trajectory]) -> list[tuple[Trajectory, int]]:
    return [(t, i) for t in trajectories for i in range(len(t.steps))]


def finite_or_raise(name: str, value: float) -> float:
    if not math.isfinite(value):
        raise NonFiniteLoss(f"{name} is {value}; stopping (the last good checkpoint is kept)")
    return value
