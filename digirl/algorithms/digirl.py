"""DigiRL (Bai et al., 2024): critics + doubly-robust step advantage + instruction curriculum + AWR.

One ``update`` reads top to bottom:

1. fit V_instruct(c) and V(s, c) with cross-entropy on the episode's success label;
2. (online phase) keep the trajectories in the top ``curriculum_top`` of r − V_instruct(c);
3. compute each step's advantage (paper Eq. 4.3, or the released code's variant, or MC only);
4. behaviour-clone the steps whose advantage exceeds 1/H (hard-filtered AWR, Eq. 4.2), or weight
   all steps by exp(A/β) (AWR ablation).

The offline phase skips the curriculum and trains on all trajectories, as the paper says.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from digirl.algorithms.base import AlgoConfig, Phase, Sample, bc_update, finite_or_raise
from digirl.algorithms.critics import InstructionCritic, StepCritic
from digirl.algorithms.functional import (
    awr_weights,
    bce_value_loss,
    doubly_robust_advantage,
    hard_filter,
    instruction_curriculum,
    mse_value_loss,
    released_code_advantage,
)
from digirl.core.types import Observation, Trajectory


class DigiRL:
    name = "digirl"

    def __init__(self, policy: Any, cfg: AlgoConfig, *, seed: int = 0) -> None:
        self.policy = policy
        self.cfg = cfg
        self.device = policy.device
        self.critic = StepCritic(policy.cfg, twin=cfg.twin_critic).to(self.device)
        self.instruct_critic = InstructionCritic(buckets=policy.cfg.buckets).to(self.device)
        self.optimizer = torch.optim.AdamW(policy.parameters(), lr=cfg.lr)
        self.critic_opt = torch.optim.AdamW(self.critic.parameters(), lr=cfg.critic_lr)
        self.instruct_opt = torch.optim.AdamW(self.instruct_critic.parameters(), lr=cfg.critic_lr)
        self.rng = np.random.default_rng(seed)
        self._value_loss = bce_value_loss if cfg.value_loss == "bce" else mse_value_loss

    # ------------------------------------------------------------------ critics
    def _fit_instruct(self, trajs: Sequence[Trajectory], steps: int) -> dict[str, float]:
        instr = [t.task.instruction for t in trajs]
        labels = torch.tensor([float(t.success) for t in trajs], device=self.device)
        losses, accs = [], []
        self.instruct_critic.train()
        for _ in range(steps):
            idx = self.rng.integers(0, len(instr), size=min(self.cfg.critic_batch_size, len(instr)))
            logits = self.instruct_critic.logits([instr[i] for i in idx], self.device)
            y = labels[torch.from_numpy(idx).to(self.device)]
            loss = self._value_loss(logits, y)
            self.instruct_opt.zero_grad(set_to_none=True)
            loss.backward()  # type: ignore[no-untyped-call]
            self.instruct_opt.step()
            losses.append(finite_or_raise("instruction-critic loss", float(loss.detach())))
            accs.append(float(((logits > 0).float() == y).float().mean()))
        return {"critic/instruct_loss": float(np.mean(losses)), "critic/instruct_acc": float(np.mean(accs))}

    def _fit_step_critic(self, trajs: Sequence[Trajectory], steps: int) -> dict[str, float]:
        pairs = [(s.observation, float(t.success)) for t in trajs for s in t.steps]
        losses, accs = [], []
        self.critic.train()
        for _ in range(steps):
            idx = self.rng.integers(0, len(pairs), size=min(self.cfg.critic_batch_size, len(pairs)))
            obs = [pairs[i][0] for i in idx]
            y = torch.tensor([pairs[i][1] for i in idx], device=self.device)
            logits = self.critic.logits(obs, self.device)  # [heads, B]
            loss = sum(self._value_loss(head, y) for head in logits)
            assert isinstance(loss, torch.Tensor)
            self.critic_opt.zero_grad(set_to_none=True)
            loss.backward()  # type: ignore[no-untyped-call]
            torch.nn.utils.clip_grad_norm_(self.critic.parameters(), self.cfg.max_grad_norm)
            self.critic_opt.step()
            losses.append(finite_or_raise("step-critic loss", float(loss.detach()) / len(logits)))
            accs.append(float(((logits[0] > 0).float() == y).float().mean()))
        return {"critic/step_loss": float(np.mean(losses)), "critic/step_acc": float(np.mean(accs))}

    # ------------------------------------------------------------------ advantages
    def advantages(self, trajs: Sequence[Trajectory]) -> list[np.ndarray]:
        """Per-trajectory step advantages under the configured estimator."""
        if self.cfg.advantage == "mc":
            return [np.asarray(t.mc_returns(self.cfg.gamma)) for t in trajs]
        # V on every step's observation and on each episode's final observation, in one pass.
        obs: list[Observation] = []
        for t in trajs:
            obs.extend(s.observation for s in t.steps)
            obs.append(t.final_observation if t.final_observation is not None else t.steps[-1].observation)
        v_all = self.critic.value(obs, self.device).cpu().numpy().astype(np.float64)
        out, pos = [], 0
        for t in trajs:
            n = len(t.steps)
            v = v_all[pos : pos + n]
            nv = v_all[pos + 1 : pos + n + 1].copy()
            pos += n + 1
            if t.terminated:  # no value after a terminal state
                nv[-1] = 0.0
            rewards = [s.reward for s in t.steps]
            if self.cfg.advantage == "dr":
                out.append(doubly_robust_advantage(rewards, v, nv, t.reward, self.cfg.lam))
            else:
                out.append(released_code_advantage(rewards, t.mc_returns(self.cfg.gamma), v, nv))
        return out

    # ------------------------------------------------------------------ the update
    def update(self, trajectories: Sequence[Trajectory], phase: Phase) -> dict[str, float]:
        cfg = self.cfg
        trajs = [t for t in trajectories if not t.env_failure and t.steps]
        if not trajs:
            return {}
        offline = phase == "offline"
        metrics: dict[str, float] = {}
        metrics |= self._fit_instruct(trajs, cfg.instruct_critic_steps * (5 if offline else 1))
        metrics |= self._fit_step_critic(trajs, cfg.offline_critic_steps if offline else cfg.critic_steps)

        selected = trajs
        if cfg.curriculum and not offline:
            v_ins = self.instruct_critic.value([t.task.instruction for t in trajs], self.device).cpu().numpy()
            score_keep = instruction_curriculum([t.reward for t in trajs], v_ins, cfg.curriculum_top)
            selected = [t for t, k in zip(trajs, score_keep) if k]
            scores = np.array([t.reward for t in trajs]) - v_ins
            metrics["train/curriculum_cutoff"] = float(scores[score_keep].min())
        metrics["train/curriculum_kept_fraction"] = len(selected) / len(trajs)

        advs = self.advantages(selected)
        samples: list[Sample] = []
        kept = total = 0
        for t, a in zip(selected, advs):
            if cfg.actor_weighting == "awr":
                w = awr_weights(a, cfg.awr_beta)
                samples.extend(Sample(s.observation, s.action, float(wi)) for s, wi in zip(t.steps, w))
                kept += len(t.steps)
            else:
                thr = (
                    cfg.threshold
                    if cfg.threshold is not None
                    else (0.0 if cfg.advantage == "released" else 1.0 / max(1, t.task.horizon))
                )
                keep = hard_filter(a, thr)
                samples.extend(Sample(s.observation, s.action) for s, k in zip(t.steps, keep) if k)
                kept += int(keep.sum())
            total += len(t.steps)
        flat = np.concatenate(advs) if advs else np.zeros(1)
        metrics |= {
            "train/adv_mean": float(flat.mean()),
            "train/adv_std": float(flat.std()),
            "train/adv_min": float(flat.min()),
            "train/adv_max": float(flat.max()),
            "train/kept_step_fraction": kept / max(1, total),
            "train/kept_steps": float(kept),
        }
        metrics |= bc_update(
            self.policy,
            self.optimizer,
            samples,
            steps=cfg.offline_actor_steps if offline else cfg.actor_steps,
            batch_size=cfg.batch_size,
            grad_accum=cfg.grad_accum,
            max_grad_norm=cfg.max_grad_norm,
            rng=self.rng,
        )
        return metrics

    # ------------------------------------------------------------------ checkpointing
    def state_dict(self) -> dict[str, Any]:
        return {
            "optimizer": self.optimizer.state_dict(),
            "critic": self.critic.state_dict(),
            "critic_opt": self.critic_opt.state_dict(),
            "instruct_critic": self.instruct_critic.state_dict(),
            "instruct_opt": self.instruct_opt.state_dict(),
            "rng": self.rng.bit_generator.state,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
        self.critic.load_state_dict(state["critic"])
        self.critic_opt.load_state_dict(state["critic_opt"])
        self.instruct_critic.load_state_dict(state["instruct_critic"])
        self.instruct_opt.load_state_dict(state["instruct_opt"])
        self.rng.bit_generator.state = state["rng"]


def make_algorithm(policy: Any, cfg: AlgoConfig, *, seed: int = 0) -> Any:
    from digirl.algorithms.filtered_bc import FilteredBC

    if cfg.name == "digirl":
        return DigiRL(policy, cfg, seed=seed)
    if cfg.name == "filtered_bc":
        return FilteredBC(policy, cfg, seed=seed)
    raise ValueError(f"unknown algorithm {cfg.name!r} (filtered_bc or digirl)")
