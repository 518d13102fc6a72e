"""The algorithm seam and the behaviour-cloning update the algorithms share.

An algorithm owns the policy's optimizer (and its critics); the training loop calls
``update(trajectories, phase)`` and logs the metrics it returns, then stores what
``annotations()`` reports about the steps it just scored (values, advantages, which were kept) for
the viewer. ``state_dict`` / ``load_state_dict`` cover everything a checkpoint must restore.
Algorithms are registered by name in :mod:`digirl.algorithms.registry`, each with its own config
class (:mod:`digirl.algorithms.configs`; ``AlgoConfig``, the ``algo`` section, is re-exported here).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar

import numpy as np
import torch

from digirl.algorithms.configs import ActorConfig, AlgoConfig
from digirl.core.actions import Action
from digirl.core.errors import DigirlError
from digirl.core.types import Observation, Trajectory
from digirl.data.annotations import StepAnnotation
from digirl.policies.base import Policy
from digirl.utils import distributed as dist
from digirl.utils.transfer import HostCopy, to_device

__all__ = [
    "ActorAlgorithm",
    "AlgoConfig",
    "Algorithm",
    "NonFiniteLoss",
    "Phase",
    "Sample",
    "actor_step_count",
    "bc_update",
    "make_optimizer",
]


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


def actor_step_count(cfg: ActorConfig, phase: Phase, samples: Sequence[Sample]) -> int:
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
    clipping (:class:`~digirl.utils.distributed.GradSync`, during the step's last backward pass),
    so the step equals the one-process step on the whole minibatch.
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
        with dist.GradSync(policy.parameters()) as sync:
            for _ in range(steps):
                optimizer.zero_grad(set_to_none=True)
                stats = _accumulate_gradients(policy, usable, batch_size, grad_accum, rng, sync)
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
                sync.finish()
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


def _accumulate_gradients(
    policy: Policy,
    usable: Sequence[Sample],
    batch_size: int,
    grad_accum: int,
    rng: np.random.Generator,
    sync: dist.GradSync,
) -> torch.Tensor:
    """Backward passes of one optimizer step's ``grad_accum`` minibatches; returns, still on the device,
    each minibatch's loss (summed over ranks) then its count of actions the policy cannot express.
    The last backward pass starts ``sync``'s all-reduces (no other collective may follow it)."""
    # Losses and counts stay on the device until the step's backward passes are queued: reading
    # them earlier would make the host wait for each forward pass before launching its backward.
    totals: list[torch.Tensor] = []
    invalid: list[torch.Tensor] = []
    for k in range(grad_accum):
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
        if k == grad_accum - 1:
            sync.arm()
        if loss.requires_grad:
            loss.backward()  # type: ignore[no-untyped-call]
    return torch.stack([*totals, *invalid])


def _skips_on_device(optimizer: torch.optim.Optimizer, stats: torch.Tensor) -> bool:
    """Whether ``optimizer`` can skip a step on the GPU itself: fused Adam/AdamW read ``found_inf``."""
    return stats.is_cuda and isinstance(optimizer, torch.optim.Adam | torch.optim.AdamW) and bool(optimizer.defaults.get("fused"))


def make_optimizer(params: Any, lr: float) -> torch.optim.Optimizer:
    """AdamW over ``params`` (the trainable parameters); the fused CUDA kernel when they are on a GPU."""
    ps = list(params)
    fused = bool(ps) and all(p.is_cuda for p in ps)
    return torch.optim.AdamW(ps, lr=lr, fused=fused or None)


CfgT = TypeVar("CfgT", bound=ActorConfig)


class ActorAlgorithm(Generic[CfgT]):
    """What the algorithms that own a policy's optimizer share: the actor, its optimizer and RNG, the
    annotations of the last update, the behaviour-cloning step and the actor's part of a checkpoint.

    ``optimizer``: by default the fused AdamW of :func:`make_optimizer`, after the policy's weights are
    broadcast so every rank starts alike; an algorithm that passes its own also owns that setup.
    """

    name: str

    def __init__(self, policy: Policy, cfg: CfgT, *, seed: int = 0, optimizer: torch.optim.Optimizer | None = None) -> None:
        self.policy = policy
        self.cfg = cfg
        if optimizer is None:
            dist.broadcast_parameters(policy.parameters())  # identical start on every rank
            optimizer = make_optimizer(policy.parameters(), cfg.lr)
        self.optimizer = optimizer
        self.rng = np.random.default_rng(seed)
        self._annotations: list[StepAnnotation] = []

    def annotations(self) -> list[StepAnnotation]:
        """What the last update computed per step (the class docstring says what each algorithm fills in)."""
        return list(self._annotations)

    def bc_actor(self, samples: Sequence[Sample], phase: Phase) -> dict[str, float]:
        """:func:`bc_update` of the policy on ``samples`` with this config's batch, clipping and step count."""
        cfg = self.cfg
        return bc_update(
            self.policy,
            self.optimizer,
            samples,
            steps=actor_step_count(cfg, phase, samples),
            batch_size=cfg.batch_size,
            grad_accum=cfg.grad_accum,
            max_grad_norm=cfg.max_grad_norm,
            rng=self.rng,
        )

    def state_dict(self) -> dict[str, Any]:
        """The actor's optimizer and the RNG; an algorithm with critics adds theirs."""
        return {"optimizer": self.optimizer.state_dict(), "rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
        self.rng.bit_generator.state = state["rng"]


def state_keys(t: Trajectory) -> list[tuple[str, int]]:
    """The feature cache's keys of a trajectory's states: each step's observation, then the final one."""
    return [(t.traj_id, h) for h in range(len(t.steps) + 1)]


def steps_of(trajectories: Sequence[Trajectory]) -> list[tuple[Trajectory, int]]:
    return [(t, i) for t in trajectories for i in range(len(t.steps))]


def finite_or_raise(name: str, value: float) -> float:
    if not math.isfinite(value):
        raise NonFiniteLoss(f"{name} is {value}; stopping (the last good checkpoint is kept)")
    return value
