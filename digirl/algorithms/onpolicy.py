"""What the on-policy algorithms (GRPO, PPO) share: the fresh batch, the frozen reference policy,
and the clipped policy-gradient update.

One update of either algorithm reads:

    the newest trajectories  →  an advantage per step (the algorithm's own)  →  log π_old (and log π_ref)
    of every step, scored once  →  minibatch steps on −min(ρA, clip(ρ)A) + β·KL − c·entropy

Everything goes through :meth:`~digirl.policies.base.Policy.log_prob_with_mask` (log π of a *given*
action, with gradients), so every trainable policy kind works: the default policy, Hugging Face VLMs
with or without LoRA. The policy is scored in evaluation mode (dropout off) both for π_old and
during the update, so the ratio compares one function at two parameter values.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import torch

from digirl.algorithms.base import ActorAlgorithm, NonFiniteLoss, Phase
from digirl.algorithms.configs import PolicyGradientConfig
from digirl.algorithms.policy_gradient import clipped_surrogate, kl_k3, sampled_entropy
from digirl.core.actions import Action
from digirl.core.errors import ConfigError
from digirl.core.types import Observation, Trajectory
from digirl.data.annotations import StepAnnotation
from digirl.policies.base import Policy
from digirl.utils import distributed as dist
from digirl.utils.transfer import to_device

__all__ = [
    "OnPolicyAlgorithm",
    "PGSample",
    "ReferencePolicy",
    "clipped_policy_update",
    "clipped_update",
    "fresh_trajectories",
    "online_batch",
    "pg_batch",
    "score_log_probs",
    "update_step_count",
]

#: Samples scored per forward pass when log π_old / log π_ref are computed (no gradients).
SCORE_CHUNK = 128


@dataclass
class PGSample:
    """One step of the policy update: the state, the action taken, its advantage and loss weight,
    and (filled in before the update) log π_old(a|s) and log π_ref(a|s) (NaN: not expressible)."""

    observation: Observation
    action: Action
    advantage: float
    weight: float = 1.0
    old_log_prob: float = float("nan")
    ref_log_prob: float = float("nan")


def fresh_trajectories(trajectories: Sequence[Trajectory]) -> list[Trajectory]:
    """The trajectories the newest policy version collected (on-policy data): those with the largest
    ``policy_version`` (all of them when no version is known); env failures and empty ones are left out.

    The training loop passes the whole replay buffer; an on-policy method learns from the last
    iteration only (the synchronous loop tags it with the update count it was collected at)."""
    usable = [t for t in trajectories if not t.env_failure and t.steps]
    versions = [t.policy_version for t in usable if t.policy_version is not None]
    if not versions:
        return usable
    newest = max(versions)
    return [t for t in usable if t.policy_version == newest]


def online_batch(name: str, trajectories: Sequence[Trajectory], phase: Phase) -> list[Trajectory]:
    """:func:`fresh_trajectories` of an on-policy algorithm's update; offline data is a config error."""
    if phase == "offline":
        raise ConfigError(f"{name} learns on-policy: use mode=online (start from an SFT policy with policy.init=DIR)")
    return fresh_trajectories(trajectories)


PGCfgT = TypeVar("PGCfgT", bound=PolicyGradientConfig)


class OnPolicyAlgorithm(ActorAlgorithm[PGCfgT], ABC):
    """GRPO and PPO: each update learns from the newest iteration's trajectories only."""

    def update(
        self, trajectories: Sequence[Trajectory], phase: Phase, *, step_weights: Mapping[str, Sequence[float]] | None = None
    ) -> dict[str, float]:
        batch = online_batch(self.name, trajectories, phase)
        if not batch:
            return {}
        return self.learn(batch, trajectories, step_weights)

    @abstractmethod
    def learn(
        self, batch: list[Trajectory], trajectories: Sequence[Trajectory], step_weights: Mapping[str, Sequence[float]] | None
    ) -> dict[str, float]:
        """One update on ``batch`` (:func:`online_batch` of ``trajectories``, the whole replay buffer)."""


def update_step_count(n_samples: int, epochs: float, batch_size: int, grad_accum: int, cap: int) -> int:
    """Optimizer steps for ``epochs`` passes over ``n_samples`` in minibatches of ``batch_size`` × ``grad_accum``,
    at most ``cap`` (0 when there is nothing to learn from)."""
    if n_samples == 0 or cap <= 0:
        return 0
    per_step = min(batch_size, n_samples) * grad_accum
    return min(cap, max(1, math.ceil(epochs * n_samples / per_step - 1e-9)))


@torch.no_grad()
def score_log_probs(policy: Policy, observations: Sequence[Observation], actions: Sequence[Action]) -> np.ndarray:
    """log π(a|s) of each pair in evaluation mode (left so), without gradients; NaN where not expressible."""
    policy.train(False)
    out: list[np.ndarray] = []
    for i in range(0, len(observations), SCORE_CHUNK):
        lp, valid = policy.log_prob_with_mask(observations[i : i + SCORE_CHUNK], actions[i : i + SCORE_CHUNK])
        out.append(lp.detach().float().masked_fill(~valid.to(lp.device), float("nan")).cpu().numpy().astype(np.float64))
    return np.concatenate(out) if out else np.zeros(0)


class ReferencePolicy:
    """The KL reference: the policy's trainable parameters as they were when the algorithm was built
    (the SFT or initial policy), kept as a frozen copy of those tensors only.

    Scoring swaps them into the live policy for one no-grad pass and back, so a LoRA policy costs
    one copy of its adapters, not of the whole model. Saved with the algorithm's state, so a resumed
    run keeps the reference of the run's start.
    """

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.params = [p.detach().clone() for p in policy.parameters()]

    @torch.no_grad()
    def log_probs(self, observations: Sequence[Observation], actions: Sequence[Action]) -> np.ndarray:
        live = list(self.policy.parameters())
        if len(live) != len(self.params):
            raise ValueError(f"the policy has {len(live)} trainable tensors, the reference {len(self.params)}")
        saved = [p.detach().clone() for p in live]
        try:
            for p, r in zip(live, self.params):
                p.copy_(r)
            return score_log_probs(self.policy, observations, actions)
        finally:
            for p, s in zip(live, saved):
                p.copy_(s)

    def state_dict(self) -> list[torch.Tensor]:
        return [p.cpu() for p in self.params]

    def load_state_dict(self, state: Sequence[torch.Tensor]) -> None:
        if len(state) != len(self.params) or any(a.shape != b.shape for a, b in zip(state, self.params)):
            raise ValueError("the checkpoint's reference policy does not match the policy's trainable parameters")
        self.params = [s.to(p.device, p.dtype) for s, p in zip(state, self.params)]


def prepare_samples(policy: Policy, reference: ReferencePolicy | None, samples: list[PGSample]) -> list[PGSample]:
    """Fill in log π_old (the policy now) and log π_ref; keep only the samples the policy can express."""
    obs = [s.observation for s in samples]
    acts = [s.action for s in samples]
    old = score_log_probs(policy, obs, acts)
    ref = reference.log_probs(obs, acts) if reference is not None else np.full(len(samples), np.nan)
    out = []
    for s, o, r in zip(samples, old, ref):
        s.old_log_prob, s.ref_log_prob = float(o), float(r)
        if math.isfinite(s.old_log_prob):
            out.append(s)
    return out


@dataclass(frozen=True)
class ClipOptions:
    clip_eps: float
    kl_coef: float
    entropy_coef: float
    steps: int
    batch_size: int
    grad_accum: int
    max_grad_norm: float


def clipped_policy_update(
    policy: Policy,
    optimizer: torch.optim.Optimizer,
    samples: Sequence[PGSample],
    opts: ClipOptions,
    rng: np.random.Generator,
) -> dict[str, float]:
    """``opts.steps`` optimizer steps on random minibatches of the weighted loss

        Σ w·(−min(ρA, clip(ρ, 1−ε, 1+ε)A) + β·KL_k3(π‖π_ref) − c·Ĥ) / Σ w,

    with ρ = π/π_old (π_old from :func:`prepare_samples`). Data parallel as
    :func:`~digirl.algorithms.base.bc_update`: every rank draws the same minibatch and scores its slice."""
    usable = [s for s in samples if s.weight > 0 and math.isfinite(s.old_log_prob)]
    if not usable or opts.steps <= 0:
        return {"train/policy_loss": float("nan"), "train/actor_samples": float(len(usable))}
    use_kl = opts.kl_coef > 0
    sums: dict[str, list[float]] = {"loss": [], "kl": [], "clip": [], "entropy": [], "log_ratio": []}
    policy.train(False)  # the same function as π_old was scored with (see the module docstring)
    with dist.GradSync(policy.parameters()) as sync:
        for _ in range(opts.steps):
            optimizer.zero_grad(set_to_none=True)
            for m in range(opts.grad_accum):
                idx = rng.integers(0, len(usable), size=min(opts.batch_size, len(usable)))
                if m == opts.grad_accum - 1:
                    sync.arm()  # the last backward pass starts the gradients' all-reduces
                stats = _minibatch_backward(policy, dist.shard([usable[i] for i in idx]), opts, use_kl)
                for k, v in stats.items():
                    sums[k].append(v)
            loss = float(np.mean(sums["loss"][-opts.grad_accum :])) * opts.grad_accum
            if not math.isfinite(loss):
                raise NonFiniteLoss(f"policy loss is {loss} (check the learning rate and the data)")
            sync.finish()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), opts.max_grad_norm)
            optimizer.step()
    out = {
        "train/policy_loss": float(np.mean(sums["loss"])) * opts.grad_accum,
        "train/clip_fraction": float(np.mean(sums["clip"])),
        "train/approx_kl_old": float(np.mean(sums["log_ratio"])),
        "train/entropy_estimate": float(np.mean(sums["entropy"])),
        "train/actor_steps": float(opts.steps),
        "train/actor_samples": float(len(usable)),
    }
    if use_kl:
        out["train/kl_ref"] = float(np.mean(sums["kl"]))
    return out


def clipped_update(
    policy: Policy,
    optimizer: torch.optim.Optimizer,
    samples: list[PGSample],
    cfg: PolicyGradientConfig,
    rng: np.random.Generator,
    *,
    reference: ReferencePolicy | None = None,
    kl_coef: float = 0.0,
) -> dict[str, float]:
    """:func:`clipped_policy_update` of ``samples`` scored by :func:`prepare_samples`, with ``cfg``'s
    clipping, entropy bonus, minibatches and step count (``kl_coef``: the penalty to ``reference``)."""
    samples = prepare_samples(policy, reference, samples)
    steps = update_step_count(len(samples), cfg.update_epochs, cfg.batch_size, cfg.grad_accum, cfg.actor_steps)
    opts = ClipOptions(cfg.clip_eps, kl_coef, cfg.entropy_coef, steps, cfg.batch_size, cfg.grad_accum, cfg.max_grad_norm)
    return clipped_policy_update(policy, optimizer, samples, opts, rng)


def _minibatch_backward(policy: Policy, mb: list[PGSample], opts: ClipOptions, use_kl: bool) -> dict[str, float]:
    """One minibatch's backward pass (its share of the step); returns its numbers, summed over ranks."""
    if mb:
        lp, valid = policy.log_prob_with_mask([s.observation for s in mb], [s.action for s in mb])
    else:  # more ranks than samples: this rank joins the sums with nothing
        lp, valid = torch.zeros(0), torch.zeros(0, dtype=torch.bool)
    dev, dt = lp.device, lp.dtype

    def col(get: Callable[[PGSample], float]) -> torch.Tensor:
        return to_device(torch.tensor([get(s) for s in mb], dtype=dt), dev)

    old, adv, w = col(lambda s: s.old_log_prob), col(lambda s: s.advantage), col(lambda s: s.weight)
    w = w * valid.to(dt)
    lp = torch.where(valid, lp, old)  # a sample the policy stopped expressing adds nothing
    surrogate, clipped = clipped_surrogate(lp, old, adv, opts.clip_eps)
    per = surrogate
    kl = torch.zeros_like(lp)
    if use_kl:  # a step the reference cannot express (NaN) has no KL term
        ref = col(lambda s: s.ref_log_prob)
        known = torch.isfinite(ref)
        kl = torch.where(known, kl_k3(lp, torch.where(known, ref, lp.detach())), torch.zeros_like(lp))
        per = per + opts.kl_coef * kl
    ent = sampled_entropy(lp, old)
    if opts.entropy_coef > 0:
        per = per - opts.entropy_coef * ent
    denom = dist.all_sum(w.sum().detach()).clamp(min=1e-8)
    loss = (per * w).sum() / denom / opts.grad_accum
    # Summed over ranks before the backward pass, in one collective: none may follow a backward
    # pass that starts the gradients' all-reduces (GradSync).
    parts = [loss.detach()] + [(x.detach().to(dt) * w).sum() for x in (kl, clipped, ent, old - lp)]
    totals = dist.all_sum(torch.stack(parts))
    if loss.requires_grad:
        loss.backward()  # type: ignore[no-untyped-call]
    means = (totals[1:] / denom).tolist()  # weighted means over the global minibatch
    return dict(zip(("loss", "kl", "clip", "entropy", "log_ratio"), [float(totals[0]), *means]))


def pg_batch(
    trajs: Sequence[Trajectory],
    advantages: Sequence[np.ndarray],
    weights: Sequence[Sequence[float]],
    values: Sequence[np.ndarray] | None = None,
) -> tuple[list[PGSample], list[StepAnnotation]]:
    """The samples of a batch (its valid actions of positive weight) and every step's annotation:
    its advantage, V(s) when ``values`` are given, its weight and whether it was trained on."""
    samples: list[PGSample] = []
    notes: list[StepAnnotation] = []
    for k, (t, adv, w) in enumerate(zip(trajs, advantages, weights)):
        for i, (step, ai, wi) in enumerate(zip(t.steps, adv, w)):
            kept = step.action.is_valid and wi > 0
            if kept:
                samples.append(PGSample(step.observation, step.action, float(ai), wi))
            value = None if values is None else float(values[k][i])
            notes.append(StepAnnotation(t.traj_id, i, value=value, advantage=float(ai), kept=kept, weight=wi))
    return samples, notes


def weights_with_correction(
    traj: Trajectory, base: Sequence[float], step_weights: Mapping[str, Sequence[float]] | None
) -> list[float]:
    """Per-step loss weights: ``base`` times the asynchronous driver's off-policy correction, if any."""
    corr = (step_weights or {}).get(traj.traj_id)
    if corr is None:
        return [float(b) for b in base]
    return [float(b) * float(c) for b, c in zip(base, corr)]
