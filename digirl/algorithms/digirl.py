"""DigiRL (Bai et al., 2024): critics + doubly-robust step advantage + instruction curriculum + AWR.

One ``update`` reads top to bottom:

1. fit V_instruct(c) and V(s, c) with cross-entropy on the episode's success label (with
   ``critic_folds`` > 1: one pair of critics per fold, each trained on the other folds'
   trajectories, so the values that score a trajectory come from critics that never saw it);
2. (online phase) keep the trajectories in the top ``curriculum_top`` of r − V_instruct(c);
3. compute each step's advantage (paper Eq. 4.3, or the released code's variant, or MC only);
4. behaviour-clone the steps whose advantage exceeds 1/H (hard-filtered AWR, Eq. 4.2), or weight
   all steps by exp(A/β) (AWR ablation).

The offline phase skips the curriculum and trains on all trajectories, as the paper says.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from digirl.algorithms.base import ActorAlgorithm, Phase, Sample, finite_or_raise, state_keys
from digirl.algorithms.configs import DigiRLConfig
from digirl.algorithms.critics import VALUE_CHUNK, InstructionCritic, StepCritic
from digirl.algorithms.estimators import EstimatorOptions, advantage_estimator, value_loss
from digirl.algorithms.functional import awr_weights, hard_filter, instruction_curriculum
from digirl.core.types import Observation, Trajectory
from digirl.data.annotations import StepAnnotation
from digirl.policies.base import Policy
from digirl.policies.feature_cache import FeatureCache
from digirl.utils import distributed as dist


class DigiRL(ActorAlgorithm[DigiRLConfig]):
    """Annotations: per trajectory, V_instruct(c) (step -1); per step, V(s), the advantage, kept, weight."""

    name = "digirl"
    config_class = DigiRLConfig

    def __init__(self, policy: Policy, cfg: DigiRLConfig, *, seed: int = 0) -> None:
        super().__init__(policy, cfg, seed=seed)
        self.device = policy.device
        self.folds = cfg.critic_folds
        self.critics = [StepCritic(cfg.critic, twin=cfg.twin_critic).to(self.device) for _ in range(self.folds)]
        self.instruct_critics = [InstructionCritic(buckets=cfg.critic.buckets).to(self.device) for _ in range(self.folds)]
        self.critic_opts = [torch.optim.AdamW(c.parameters(), lr=cfg.critic_lr) for c in self.critics]
        self.instruct_opts = [torch.optim.AdamW(c.parameters(), lr=cfg.critic_lr) for c in self.instruct_critics]
        self._value_loss = value_loss(cfg.value_loss)
        self._estimator = advantage_estimator(cfg.advantage)
        for module in (*self.critics, *self.instruct_critics):  # identical start on every rank
            dist.broadcast_parameters(module.parameters())
        # The step critics' inputs, featurized once per observation of the buffer (see FeatureCache).
        self._features = FeatureCache(cfg.critic.features)

    # ------------------------------------------------------------------ critics
    def fold(self, traj: Trajectory) -> int:
        """The trajectory's fold: stable across iterations and resumes (a hash of its id)."""
        if self.folds == 1:
            return 0
        return int(hashlib.blake2b(traj.traj_id.encode(), digest_size=4).hexdigest(), 16) % self.folds

    def _training_set(self, trajs: Sequence[Trajectory], f: int) -> list[Trajectory]:
        """What the critics of fold ``f`` learn from: every other fold (everything when unfolded)."""
        if self.folds == 1:
            return list(trajs)
        out = [t for t in trajs if self.fold(t) != f]
        return out or list(trajs)  # a tiny dataset with one fold only: fall back to in-sample

    def _fit_critics(self, trajs: Sequence[Trajectory], offline: bool) -> dict[str, float]:
        cfg = self.cfg
        parts: list[dict[str, float]] = []
        for f in range(self.folds):
            train = self._training_set(trajs, f)
            m = self._fit_instruct(f, train, cfg.instruct_critic_steps * (5 if offline else 1))
            m |= self._fit_step_critic(f, train, cfg.offline_critic_steps if offline else cfg.critic_steps)
            parts.append(m)
        metrics = {k: float(np.mean([p[k] for p in parts])) for k in parts[0]}
        if self.folds > 1:
            metrics |= self._heldout_accuracy(trajs)
        return metrics

    def _heldout_accuracy(self, trajs: Sequence[Trajectory]) -> dict[str, float]:
        """Accuracy of each trajectory's own (out-of-fold) critics on its success: honest critic quality."""
        y = np.array([t.success for t in trajs])
        v_ins = self.instruction_values(trajs)
        v_steps = self.step_values(trajs)
        step_hits = np.concatenate([(v[:-1] > 0.5) == s for v, s in zip(v_steps, y)])
        return {
            "critic/instruct_acc_heldout": float(((v_ins > 0.5) == y).mean()),
            "critic/step_acc_heldout": float(step_hits.mean()),
        }

    def _fit_instruct(self, f: int, trajs: Sequence[Trajectory], steps: int) -> dict[str, float]:
        critic, opt = self.instruct_critics[f], self.instruct_opts[f]
        instr = [t.task.instruction for t in trajs]
        labels = torch.tensor([float(t.success) for t in trajs], device=self.device)
        losses, accs = [], []
        critic.train()
        for _ in range(steps):
            idx = self.rng.integers(0, len(instr), size=min(self.cfg.critic_batch_size, len(instr)))
            local = dist.shard(idx.tolist())  # this rank's slice (all of it in one process)
            opt.zero_grad(set_to_none=True)
            if len(local):
                logits = critic.logits([instr[i] for i in local])
                y = labels[torch.tensor(local, device=self.device)]
                loss = self._value_loss(logits, y) * (len(local) / len(idx))  # this slice's share of the mean
                loss.backward()  # type: ignore[no-untyped-call]
                acc = float(((logits > 0).float() == y).float().sum())
            else:
                loss, acc = torch.zeros((), device=self.device), 0.0
            dist.sum_grads(critic.parameters())
            opt.step()
            losses.append(finite_or_raise("instruction-critic loss", float(dist.all_sum(loss.detach()))))
            accs.append(float(dist.all_sum(torch.tensor(acc))) / len(idx))
        return {"critic/instruct_loss": float(np.mean(losses)), "critic/instruct_acc": float(np.mean(accs))}

    def _fit_step_critic(self, f: int, trajs: Sequence[Trajectory], steps: int) -> dict[str, float]:
        critic, opt = self.critics[f], self.critic_opts[f]
        pairs = [(k, s.observation, float(t.success)) for t in trajs for k, s in zip(state_keys(t), t.steps)]
        losses, accs = [], []
        critic.train()
        heads = len(critic.heads)
        for _ in range(steps):
            idx = self.rng.integers(0, len(pairs), size=min(self.cfg.critic_batch_size, len(pairs)))
            local = dist.shard(idx.tolist())  # this rank's slice (all of it in one process)
            opt.zero_grad(set_to_none=True)
            if len(local):
                y = torch.tensor([pairs[i][2] for i in local], device=self.device)
                batch = self._features.batch([pairs[i][0] for i in local], [pairs[i][1] for i in local])
                logits = critic.batch_logits(batch)  # [heads, B]
                loss = sum(self._value_loss(head, y) for head in logits)
                assert isinstance(loss, torch.Tensor)
                loss = loss * (len(local) / len(idx))  # this slice's share of the mean
                loss.backward()  # type: ignore[no-untyped-call]
                acc = float(((logits[0] > 0).float() == y).float().sum())
            else:
                loss, acc = torch.zeros((), device=self.device), 0.0
            dist.sum_grads(critic.parameters())
            torch.nn.utils.clip_grad_norm_(critic.parameters(), self.cfg.max_grad_norm)
            opt.step()
            losses.append(finite_or_raise("step-critic loss", float(dist.all_sum(loss.detach())) / heads))
            accs.append(float(dist.all_sum(torch.tensor(acc))) / len(idx))
        return {"critic/step_loss": float(np.mean(losses)), "critic/step_acc": float(np.mean(accs))}

    # ------------------------------------------------------------------ advantages
    def instruction_values(self, trajs: Sequence[Trajectory]) -> np.ndarray:
        """V_instruct(c) of each trajectory, from the critic of its own fold."""
        out = np.zeros(len(trajs))
        for f in range(self.folds):
            idx = [i for i, t in enumerate(trajs) if self.fold(t) == f]
            if idx:
                v = self.instruct_critics[f].value([trajs[i].task.instruction for i in idx])
                out[idx] = v.numpy()
        return out

    def step_values(self, trajs: Sequence[Trajectory]) -> list[np.ndarray]:
        """V(s_1..s_H, s_{H+1}) of each trajectory ([H+1] values), from the critic of its own fold."""
        out: list[np.ndarray] = [np.zeros(0)] * len(trajs)
        for f in range(self.folds):
            idx = [i for i, t in enumerate(trajs) if self.fold(t) == f]
            obs: list[Observation] = []
            keys: list[tuple[str, int]] = []
            for i in idx:  # every step's observation and the final one, in one pass
                t = trajs[i]
                obs.extend(s.observation for s in t.steps)
                obs.append(t.final_observation if t.final_observation is not None else t.steps[-1].observation)
                keys.extend(state_keys(t))
            if not obs:
                continue
            spans = range(0, len(obs), VALUE_CHUNK)
            chunks = (self._features.batch(keys[i : i + VALUE_CHUNK], obs[i : i + VALUE_CHUNK]) for i in spans)
            v_all = self.critics[f].batch_values(chunks).numpy().astype(np.float64)
            pos = 0
            for i in idx:
                n = len(trajs[i].steps) + 1
                out[i] = v_all[pos : pos + n]
                pos += n
        return out

    def advantages(self, trajs: Sequence[Trajectory], values: list[np.ndarray] | None = None) -> list[np.ndarray]:
        """Per-trajectory step advantages under the configured estimator (``values``: from :meth:`step_values`)."""
        est, opts = self._estimator, EstimatorOptions(gamma=self.cfg.gamma, lam=self.cfg.lam)
        if est.needs_values and values is None:
            values = self.step_values(trajs)
        return [est.estimate(t, values[i] if values is not None else None, opts) for i, t in enumerate(trajs)]

    # ------------------------------------------------------------------ the update
    def _curriculum(self, trajs: list[Trajectory], v_ins: np.ndarray, metrics: dict[str, float]) -> list[Trajectory]:
        """The trajectories in the top ``curriculum_top`` of r − V_instruct(c) (paper Eq. 4.4); its numbers go to ``metrics``."""
        cfg = self.cfg
        rewards = np.array([t.reward for t in trajs], dtype=np.float64)
        score_keep = instruction_curriculum(rewards, v_ins, cfg.curriculum_top, keep_successes=cfg.curriculum_keep_successes)
        metrics["train/curriculum_cutoff"] = float((rewards - v_ins)[score_keep].min())
        won = rewards > 0  # what keep_successes keeps
        if won.any():  # below 1: the cut drops successes, and their tasks get no actor update
            metrics["train/curriculum_kept_success_fraction"] = float(score_keep[won].mean())
        return [t for t, k in zip(trajs, score_keep) if k]

    def _actor_samples(
        self,
        selected: list[Trajectory],
        advs: list[np.ndarray],
        values: list[np.ndarray] | None,
        iw: Mapping[str, Sequence[float]],
    ) -> tuple[list[Sample], dict[str, list[StepAnnotation]]]:
        """The steps the actor clones, weighted (hard filter or AWR, times the off-policy correction),
        and every selected step's annotation by trajectory."""
        cfg = self.cfg
        samples: list[Sample] = []
        notes: dict[str, list[StepAnnotation]] = {}
        for j, (t, a) in enumerate(zip(selected, advs)):
            corr = np.asarray(iw.get(t.traj_id, np.ones(len(a))), dtype=np.float64)  # off-policy correction
            if cfg.actor_weighting == "awr":
                w = awr_weights(a, cfg.awr_beta) * corr
                keep = np.ones(len(a), dtype=bool)
                samples.extend(Sample(s.observation, s.action, float(wi)) for s, wi in zip(t.steps, w))
            else:
                thr = cfg.threshold if cfg.threshold is not None else self._estimator.threshold(t)
                keep = hard_filter(a, thr)
                w = keep.astype(np.float64) * corr
                samples.extend(Sample(s.observation, s.action, float(wi)) for s, k, wi in zip(t.steps, keep, w) if k)
            v = values[j] if values is not None else None
            notes[t.traj_id] = [
                StepAnnotation(
                    t.traj_id,
                    i,
                    value=None if v is None else float(v[i]),
                    advantage=float(a[i]),
                    kept=bool(keep[i]),
                    weight=float(w[i]),
                )
                for i in range(len(t.steps))
            ]
        return samples, notes

    def update(
        self, trajectories: Sequence[Trajectory], phase: Phase, *, step_weights: Mapping[str, Sequence[float]] | None = None
    ) -> dict[str, float]:
        cfg = self.cfg
        trajs = [t for t in trajectories if not t.env_failure and t.steps]
        if not trajs:
            return {}
        offline = phase == "offline"
        metrics: dict[str, float] = {}
        self._features.retain(k for t in trajs for k in state_keys(t))
        metrics |= self._fit_critics(trajs, offline)

        v_ins = self.instruction_values(trajs)
        selected = self._curriculum(trajs, v_ins, metrics) if cfg.curriculum and not offline else trajs
        metrics["train/curriculum_kept_fraction"] = len(selected) / len(trajs)

        values = self.step_values(selected) if self._estimator.needs_values else None
        advs = self.advantages(selected, values)
        samples, notes = self._actor_samples(selected, advs, values, step_weights or {})
        self._annotations = []
        for t, vi in zip(trajs, v_ins):
            in_curriculum = t.traj_id in notes
            self._annotations.append(
                StepAnnotation(
                    t.traj_id, -1, value=float(vi), extra={"instruction_value": True, "curriculum_kept": in_curriculum}
                )
            )
            self._annotations += notes.get(t.traj_id) or [StepAnnotation(t.traj_id, i, kept=False) for i in range(t.length)]
        kept = sum(1 for ns in notes.values() for n in ns if n.kept)
        total = sum(len(t.steps) for t in selected)
        flat = np.concatenate(advs) if advs else np.zeros(1)
        metrics |= {
            "train/adv_mean": float(flat.mean()),
            "train/adv_std": float(flat.std()),
            "train/adv_min": float(flat.min()),
            "train/adv_max": float(flat.max()),
            "train/kept_step_fraction": kept / max(1, total),
            "train/kept_steps": float(kept),
        }
        return metrics | self.bc_actor(samples, phase)

    # ------------------------------------------------------------------ checkpointing
    def state_dict(self) -> dict[str, Any]:
        return super().state_dict() | {
            "critics": [c.state_dict() for c in self.critics],
            "critic_opts": [o.state_dict() for o in self.critic_opts],
            "instruct_critics": [c.state_dict() for c in self.instruct_critics],
            "instruct_opts": [o.state_dict() for o in self.instruct_opts],
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if "critic" in state:  # a checkpoint from before cross-fitting: one pair of critics
            state = {
                **state,
                "critics": [state["critic"]],
                "critic_opts": [state["critic_opt"]],
                "instruct_critics": [state["instruct_critic"]],
                "instruct_opts": [state["instruct_opt"]],
            }
        if len(state["critics"]) != self.folds:
            raise ValueError(
                f"the checkpoint has {len(state['critics'])} critic fold(s) but algo.critic_folds={self.folds}; "
                "resume with the run's own config"
            )
        super().load_state_dict(state)
        for f in range(self.folds):
            self.critics[f].load_state_dict(state["critics"][f])
            self.critic_opts[f].load_state_dict(state["critic_opts"][f])
            self.instruct_critics[f].load_state_dict(state["instruct_critics"][f])
            self.instruct_opts[f].load_state_dict(state["instruct_opts"][f])
