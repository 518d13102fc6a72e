"""PPO (Schulman et al., arXiv 1707.06347) with a learned value baseline and GAE (arXiv 1506.02438).

The standard point of comparison for the group-based methods. One ``update`` reads top to bottom:

1. take the newest iteration's trajectories (on-policy);
2. V(s) of every visited state and of each truncated episode's last screen, from the value network
   (its own screen encoder, ``algo.critic.*``; a linear value, not a success probability);
3. GAE(γ, λ) advantages and λ-return targets per trajectory (a success's last reward less
   ``efficiency_coef``·steps/horizon), advantages normalised over the batch;
4. minimise the clipped surrogate (optionally with an entropy bonus) over ``update_epochs`` passes;
5. regress V(s) on the λ-return targets (squared error) over ``value_epochs`` passes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from digirl.algorithms.base import finite_or_raise, state_keys
from digirl.algorithms.configs import PPOConfig
from digirl.algorithms.critics import VALUE_CHUNK, StepCritic
from digirl.algorithms.onpolicy import OnPolicyAlgorithm, clipped_update, pg_batch, update_step_count, weights_with_correction
from digirl.algorithms.policy_gradient import efficiency_return, gae
from digirl.core.types import Observation, Trajectory
from digirl.policies.base import Policy
from digirl.policies.feature_cache import FeatureCache
from digirl.utils import distributed as dist

__all__ = ["PPO", "shaped_rewards"]


def shaped_rewards(t: Trajectory, efficiency_coef: float) -> np.ndarray:
    """The step rewards, the last one lowered so that they sum to the efficiency-shaped return."""
    r = np.array([s.reward for s in t.steps], dtype=np.float64)
    if r.size:
        r[-1] += efficiency_return(t.reward, t.length, t.task.horizon, efficiency_coef) - t.reward
    return r


class PPO(OnPolicyAlgorithm[PPOConfig]):
    """Annotations: per step of the last batch, V(s), the (normalised) advantage, whether it was trained on."""

    name = "ppo"
    config_class = PPOConfig

    def __init__(self, policy: Policy, cfg: PPOConfig, *, seed: int = 0) -> None:
        super().__init__(policy, cfg, seed=seed)
        self.value_net = StepCritic(cfg.critic, twin=False).to(policy.device)
        dist.broadcast_parameters(self.value_net.parameters())
        self.value_opt = torch.optim.AdamW(self.value_net.parameters(), lr=cfg.value_lr)
        self._features = FeatureCache(cfg.critic.features)

    # ------------------------------------------------------------------ values
    def _predict(self, keys: Sequence[tuple[str, int]], observations: Sequence[Observation]) -> torch.Tensor:
        return self.value_net.batch_logits(self._features.batch(keys, observations))[0]

    @torch.no_grad()
    def values(self, trajs: Sequence[Trajectory]) -> list[np.ndarray]:
        """V(s_0..s_{H−1}, s_H) of each trajectory ([H+1] values; s_H = the screen after the last step)."""
        keys: list[tuple[str, int]] = []
        obs: list[Observation] = []
        for t in trajs:
            keys.extend(state_keys(t))
            obs.extend(s.observation for s in t.steps)
            obs.append(t.final_observation if t.final_observation is not None else t.steps[-1].observation)
        self.value_net.eval()
        flat = [
            self._predict(keys[i : i + VALUE_CHUNK], obs[i : i + VALUE_CHUNK]).float().cpu()
            for i in range(0, len(obs), VALUE_CHUNK)
        ]
        v = torch.cat(flat).numpy().astype(np.float64) if flat else np.zeros(0)
        out, pos = [], 0
        for t in trajs:
            out.append(v[pos : pos + t.length + 1])
            pos += t.length + 1
        return out

    def advantages(self, trajs: Sequence[Trajectory], values: Sequence[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Per trajectory: GAE advantages and λ-return targets (bootstrapped from V(s_H) unless terminated)."""
        advs, targets = [], []
        for t, v in zip(trajs, values):
            boot = 0.0 if t.terminated else float(v[-1])
            a, ret = gae(shaped_rewards(t, self.cfg.efficiency_coef), v[:-1], boot, gamma=self.cfg.gamma, lam=self.cfg.gae_lambda)
            advs.append(a)
            targets.append(ret)
        return advs, targets

    def _fit_values(self, trajs: Sequence[Trajectory], targets: Sequence[np.ndarray]) -> dict[str, float]:
        cfg = self.cfg
        rows = [(k, s.observation, float(g)) for t, ret in zip(trajs, targets) for k, s, g in zip(state_keys(t), t.steps, ret)]
        steps = update_step_count(len(rows), cfg.value_epochs, cfg.batch_size, 1, cfg.actor_steps)
        losses = []
        self.value_net.train()
        for _ in range(steps):
            idx = self.rng.integers(0, len(rows), size=min(cfg.batch_size, len(rows)))
            local = dist.shard(idx.tolist())
            self.value_opt.zero_grad(set_to_none=True)
            if local:
                pred = self._predict([rows[i][0] for i in local], [rows[i][1] for i in local])
                y = torch.tensor([rows[i][2] for i in local], dtype=pred.dtype, device=pred.device)
                loss = torch.nn.functional.mse_loss(pred, y) * (len(local) / len(idx))  # this slice's share of the mean
                loss.backward()  # type: ignore[no-untyped-call]
            else:
                loss = torch.zeros(())
            dist.sum_grads(self.value_net.parameters())
            torch.nn.utils.clip_grad_norm_(self.value_net.parameters(), cfg.max_grad_norm)
            self.value_opt.step()
            losses.append(finite_or_raise("value loss", float(dist.all_sum(loss.detach()))))
        self.value_net.eval()
        return {"critic/value_loss": float(np.mean(losses)) if losses else float("nan"), "critic/value_steps": float(steps)}

    # ------------------------------------------------------------------ the update
    def learn(
        self, batch: list[Trajectory], trajectories: Sequence[Trajectory], step_weights: Mapping[str, Sequence[float]] | None
    ) -> dict[str, float]:
        cfg = self.cfg
        self._features.retain(k for t in batch for k in state_keys(t))
        values = self.values(batch)
        advs, targets = self.advantages(batch, values)
        flat = np.concatenate(advs)
        mean, std = float(flat.mean()), float(flat.std())
        if cfg.normalize_advantages:
            advs = [(a - mean) / (std + 1e-8) for a in advs]
        weights = [weights_with_correction(t, [1.0] * t.length, step_weights) for t in batch]
        samples, self._annotations = pg_batch(batch, advs, weights, values)
        metrics = {
            "train/adv_mean": mean,
            "train/adv_std": std,
            "train/value_mean": float(np.mean(np.concatenate([v[:-1] for v in values]))),
            "train/batch_success_rate": float(np.mean([t.success for t in batch])),
        }
        metrics |= clipped_update(self.policy, self.optimizer, samples, cfg, self.rng)
        return metrics | self._fit_values(batch, targets)

    # ------------------------------------------------------------------ checkpointing
    def state_dict(self) -> dict[str, Any]:
        return super().state_dict() | {"value_net": self.value_net.state_dict(), "value_opt": self.value_opt.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.value_net.load_state_dict(state["value_net"])
        self.value_opt.load_state_dict(state["value_opt"])
