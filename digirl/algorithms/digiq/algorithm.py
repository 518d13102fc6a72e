"""Digi-Q (``algo.name=digiq``): a TD critic on (fine-tuned) features, best-of-N policy extraction.

One ``update`` reads top to bottom:

1. propose N − 1 candidate actions per stored step with the behaviour policy (candidate 0 is the
   dataset action; de-duplicated);
2. label (screen, action) pairs "does this action change the screen?" — exact simulator labels
   written by ``digirl digiq label`` are used when present, the pixel heuristic fills the rest;
3. fine-tune the feature backend on those labels (once; ``algo.digiq.repft=false`` skips it);
4. extract f(s, a) for every candidate and φ(s) for every state, once, into float16 sidecars;
5. fit twin Q and twin V heads by in-sample TD with Polyak targets on the critic's trajectories
   (``algo.digiq.holdout`` of them are held out and only scored); with ``algo.digiq.outcome_td``, also
   TD on every proposal that the stage ``outcomes`` executed on a copy of its state;
6. for every state, A_j = Q(s, a_j) − V(s) over the candidates; behaviour-clone the best one where its
   advantage exceeds δ.

Stages write to ``algo.digiq.data`` (``digirl digiq`` commands set it) and resume from it; without
it they run in memory.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from digirl.algorithms.base import ActorAlgorithm, Phase, Sample
from digirl.algorithms.configs import DigiQAlgoConfig
from digirl.algorithms.digiq.config import DigiQConfig
from digirl.algorithms.digiq.critic import CriticInputs, DigiQCritic, TDBatch, action_inputs, state_inputs, state_inputs_of
from digirl.algorithms.digiq.features import FeatureBackend
from digirl.algorithms.digiq.functional import best_of_n
from digirl.algorithms.digiq.sidecar import Sidecar
from digirl.algorithms.digiq.stages import (
    Candidates,
    Features,
    Outcomes,
    featurize,
    label_pixel,
    load_candidates,
    load_labels,
    load_outcomes,
    observation_at,
    outcome_stage_name,
    propose,
    representation,
)
from digirl.core.codecs import action_to_dict
from digirl.core.types import Observation, Trajectory
from digirl.data.annotations import StepAnnotation
from digirl.policies.base import Policy

__all__ = ["Critique", "DigiQ", "critic_trains_on", "fold_of", "is_heldout"]

log = logging.getLogger(__name__)


def _hash01(traj_id: str) -> float:
    return int(hashlib.blake2b(traj_id.encode(), digest_size=4).hexdigest(), 16) / 2**32


def is_heldout(traj_id: str, fraction: float) -> bool:
    """With one critic: whether it never trains on this trajectory (a stable hash of its id)."""
    return fraction > 0 and _hash01(traj_id) < fraction


def fold_of(traj_id: str, folds: int) -> int:
    """The trajectory's fold (stable across runs and resumes); its states are scored by the critic
    trained on the other folds."""
    return min(folds - 1, int(_hash01(traj_id) * folds)) if folds > 1 else 0


def critic_trains_on(traj_id: str, fold: int, cfg: DigiQConfig) -> bool:
    """Whether critic ``fold`` learns from this trajectory."""
    if cfg.folds > 1:
        return fold_of(traj_id, cfg.folds) != fold
    return not is_heldout(traj_id, cfg.holdout)


class _Table:
    """States (s_h for h = 0..H, the last being the observation after the last step) and transitions."""

    def __init__(
        self, trajs: Sequence[Trajectory], feats: Features, cands: Candidates, device: torch.device, cfg: DigiQConfig
    ) -> None:
        self.trajs = list(trajs)
        self.state_pos: dict[tuple[str, int], int] = {}
        obs: list[Observation] = []
        rows: list[int] = []
        for t in self.trajs:
            for h in range(len(t.steps) + 1):
                self.state_pos[(t.traj_id, h)] = len(obs)
                obs.append(observation_at(t, h))
                rows.append(feats.phi_index[(t.traj_id, h, -1)])
        self.states = state_inputs(obs, feats.phi[rows].astype(np.float32), device)
        # candidates of every step, flattened: (state row, step's traj, h, j)
        self.pairs: list[tuple[int, Trajectory, int, int]] = []
        for t in self.trajs:
            for h in range(len(t.steps)):
                for j in range(len(cands[(t.traj_id, h)])):
                    self.pairs.append((self.state_pos[(t.traj_id, h)], t, h, j))
        p_obs = [t.steps[h].observation for _, t, h, _ in self.pairs]
        p_act = [cands[(t.traj_id, h)][j] for _, t, h, j in self.pairs]
        kind, text, f = action_inputs(
            p_obs, p_act, feats.f[[feats.f_index[(t.traj_id, h, j)] for _, t, h, j in self.pairs]], device, cfg.action_features
        )
        s_rows = torch.tensor([s for s, _, _, _ in self.pairs], dtype=torch.long, device=device)
        self.pair_inputs: CriticInputs = self.states.index(s_rows).with_action(kind, text, f)
        self.pair_valid = np.array([a.is_valid for a in p_act], dtype=bool)
        self.device = device
        self.outcome_of_pair: np.ndarray | None = None
        self.next_states: CriticInputs | None = None
        self.outcome_reward: torch.Tensor | None = None
        self.outcome_done: torch.Tensor | None = None

    def add_outcomes(self, out: Outcomes, cands: Candidates, bootstrap_truncated: bool) -> int:
        """The executed proposals' next states (φ of the screen each led to, the instruction, the proposal as the
        action before, the next step index), their rewards and ends; returns how many pairs have one."""
        rows: list[int] = []
        keys = []
        for p, (_, t, h, j) in enumerate(self.pairs):
            k = (t.traj_id, h, j)
            if j > 0 and k in out.phi_index:
                rows.append(p)
                keys.append(k)
        if not rows:
            return 0
        self.outcome_of_pair = np.full(len(self.pairs), -1, dtype=np.int64)
        self.outcome_of_pair[rows] = np.arange(len(rows))
        trajs = [self.pairs[p][1] for p in rows]
        self.next_states = state_inputs_of(
            [t.task.instruction for t in trajs],
            [cands[(k[0], k[1])][k[2]] for k in keys],
            [out.next_step[k] for k in keys],
            out.phi[[out.phi_index[k] for k in keys]].astype(np.float32).reshape(len(keys), -1),
            self.device,
        )
        dev = self.device
        self.outcome_reward = torch.tensor([out.reward[k] for k in keys], dtype=torch.float32, device=dev)
        ended = [out.terminated[k] or (out.truncated[k] and not bootstrap_truncated) for k in keys]
        self.outcome_done = torch.tensor(ended, dtype=torch.float32, device=dev)
        return len(rows)

    def score(self, critics: Sequence[DigiQCritic], cfg: DigiQConfig) -> tuple[np.ndarray, np.ndarray]:
        """(Q of every pair, V of every state), each from the critic of its trajectory's fold."""
        q = np.zeros(len(self.pairs))
        v = np.zeros(len(self.state_pos))
        pair_fold = np.array([fold_of(t.traj_id, cfg.folds) for _, t, _, _ in self.pairs])
        state_fold = np.zeros(len(self.state_pos), dtype=np.int64)
        for (tid, _), row in self.state_pos.items():
            state_fold[row] = fold_of(tid, cfg.folds)
        for f, c in enumerate(critics):
            pi = np.flatnonzero(pair_fold == f)
            si = np.flatnonzero(state_fold == f)
            if len(pi):
                q[pi] = c.q_of(self.pair_inputs.index(torch.from_numpy(pi).to(self.device)))
            if len(si):
                v[si] = c.v_of(self.states.index(torch.from_numpy(si).to(self.device)))
        return q, v

    def transitions(
        self,
        keep: Sequence[Trajectory],
        gamma_bootstrap_truncated: bool,
        labels: dict[tuple[str, int, int], bool] | None = None,
    ) -> TDBatch:
        """TD transitions (s_h, a_data, r_h, s_{h+1}, done) of the trajectories ``keep``; with ``labels``,
        which of each transition's proposals are labelled "No" (the screen does not change)."""
        ids = {t.traj_id for t in keep}
        sel = [i for i, (_, t, _, j) in enumerate(self.pairs) if j == 0 and t.traj_id in ids]
        s, s_next, reward, done = [], [], [], []
        for i in sel:
            row, t, h, _ = self.pairs[i]
            last = h == len(t.steps) - 1
            s.append(row)
            s_next.append(self.state_pos[(t.traj_id, h + 1)])
            reward.append(float(t.steps[h].reward))
            done.append(float(last and (t.terminated or not gamma_bootstrap_truncated)))
        idx = torch.tensor(sel, dtype=torch.long, device=self.device)
        rows_of: dict[int, list[int]] = {}
        for p, (row, _, _, _) in enumerate(self.pairs):
            rows_of.setdefault(row, []).append(p)
        width = max((len(v) for v in rows_of.values()), default=1)
        cands = torch.full((len(sel), width), -1, dtype=torch.long)
        for k, row in enumerate(s):
            ps = rows_of[row]
            cands[k, : len(ps)] = torch.tensor(ps)
        noop = None
        if labels is not None:
            noop = torch.zeros(cands.shape, dtype=torch.bool)
            for k, i in enumerate(sel):
                _, t, h, _ = self.pairs[i]
                for j in range(1, int((cands[k] >= 0).sum())):  # proposals only: a_data has its own transition
                    noop[k, j] = labels.get((t.traj_id, h, j)) is False
        x = self.pair_inputs
        assert x.kind is not None and x.text is not None and x.f is not None
        dev = self.device
        outcome = None
        if self.outcome_of_pair is not None:
            lut = torch.from_numpy(np.append(self.outcome_of_pair, -1))  # index -1 (no candidate) → no outcome
            outcome = lut[cands]
            outcome[:, 0] = -1  # the dataset action has its own transition
        return TDBatch(
            states=self.states,
            s=torch.tensor(s, dtype=torch.long, device=dev),
            s_next=torch.tensor(s_next, dtype=torch.long, device=dev),
            kind=x.kind[idx],
            text=x.text[idx],
            f=x.f[idx],
            reward=torch.tensor(reward, dtype=torch.float32, device=dev),
            done=torch.tensor(done, dtype=torch.float32, device=dev),
            pairs=self.pair_inputs,
            cands=cands.to(dev),
            noop=None if noop is None else noop.to(dev),
            outcome=None if outcome is None else outcome.to(dev),
            next_states=self.next_states,
            outcome_reward=self.outcome_reward,
            outcome_done=self.outcome_done,
        )


@dataclass
class Critique:
    """What the critics say about a dataset: per stored step (``steps``, in dataset order) Q of every
    candidate ``q`` [S, N] (0 past a state's candidates), V ``v`` [S], and which candidates best-of-N may
    pick ``valid`` [S, N] (valid actions, and with ``skip_unchanged`` not labelled "No")."""

    trajs: list[Trajectory]
    steps: list[tuple[Trajectory, int]]
    cands: Candidates
    labels: dict[tuple[str, int, int], bool]
    q: np.ndarray
    v: np.ndarray
    valid: np.ndarray
    v_all: np.ndarray  # V of every state of the table, final observations included
    table: _Table
    metrics: dict[str, float]


class DigiQ(ActorAlgorithm[DigiQAlgoConfig]):
    """See the module docstring. Implements :class:`~digirl.algorithms.base.Algorithm`.

    Annotations: per step, V(s), Q(s, a_data), the chosen candidate's advantage, kept; ``extra``: every
    candidate with its Q, advantage, validity and label. Step -1: V of the final observation.
    """

    name = "digiq"
    config_class = DigiQAlgoConfig

    def __init__(self, policy: Policy, cfg: DigiQAlgoConfig, *, seed: int = 0) -> None:
        # plain AdamW, and no broadcast of the weights: Digi-Q trains in one process
        super().__init__(policy, cfg, seed=seed, optimizer=torch.optim.AdamW(policy.parameters(), lr=cfg.lr))
        self.dq = cfg.digiq
        if self.dq.action_features == "element" and not self.dq.encoder.use_elements:
            raise ValueError(
                "algo.digiq.action_features=element reads the UI element list, but this run's Digi-Q sees the screenshot "
                "only (observation=screenshot / algo.digiq.encoder.use_elements=false); use action_features=action"
            )
        self.seed = seed
        self.device = policy.device
        self.sidecar = Sidecar(self.dq.data)
        self.backend: FeatureBackend | None = None
        #: One critic per fold (``algo.digiq.folds``); critic f never trains on fold f's trajectories.
        self.critics: list[DigiQCritic] = []

    def _make_critics(self, d_phi: int, d_f: int) -> list[DigiQCritic]:
        if len(self.critics) != self.dq.folds or any(c.dims != (d_phi, d_f) for c in self.critics):
            self.critics = [
                DigiQCritic(d_phi, d_f, self.dq, gamma=self.cfg.gamma, device=self.device) for _ in range(self.dq.folds)
            ]
        for c in self.critics:
            c.backend = self.backend
        return self.critics

    # ------------------------------------------------------------------ the update
    def critique(self, trajectories: Sequence[Trajectory]) -> Critique | None:
        """Stages 1-5 and the scores of every candidate: propose, label, fine-tune, featurize, fit the
        critics, then Q of every candidate and V of every state from the critic of its fold (None: no data)."""
        dq = self.dq
        trajs = [t for t in trajectories if not t.env_failure and t.steps]
        if not trajs:
            return None
        metrics: dict[str, float] = {}
        # 1-2. candidates from the behaviour policy; labels (exact ones from `digirl digiq label` when present)
        metrics |= propose(trajs, self.policy, dq, self.sidecar)
        cands = load_candidates(self.sidecar)
        metrics |= label_pixel(trajs, dq, self.sidecar)
        labels = load_labels(self.sidecar)
        # 3-4. representation fine-tuning (once), then features of every candidate and state
        if self.backend is None:
            self.backend, m = representation(trajs, cands, labels, self.policy, dq, self.sidecar, seed=self.seed)
            metrics |= m
        feats = featurize(trajs, cands, self.backend, self.sidecar)
        # 5. the critics: in-sample TD, one critic per fold, each on the other folds' trajectories
        table = _Table(trajs, feats, cands, self.device, dq)
        if dq.outcome_td > 0:
            n_out = table.add_outcomes(load_outcomes(self.sidecar, self.backend), cands, dq.bootstrap_truncated)
            if n_out == 0:
                raise ValueError(
                    f"algo.digiq.outcome_td={dq.outcome_td} needs executed proposals (stage {outcome_stage_name(self.backend)}"
                    f" in {dq.data}); run `digirl digiq outcomes` (or `digirl digiq train`) on the simulator dataset first"
                )
            metrics["train/digiq_outcome_pairs"] = float(n_out)
        assert table.pair_inputs.f is not None
        critics = self._make_critics(feats.phi.shape[1], table.pair_inputs.f.shape[1])
        parts = []
        for f, critic in enumerate(critics):
            train = [t for t in trajs if critic_trains_on(t.traj_id, f, dq)] or trajs
            data = table.transitions(train, dq.bootstrap_truncated, labels if dq.noop_td > 0 else None)
            parts.append(critic.fit(data, dq.critic_steps, self.rng))
        metrics |= {k: float(np.mean([p[k] for p in parts])) for k in parts[0]} if parts and parts[0] else {}
        # every state scored by the critic of its fold
        q_all, v_all = table.score(critics, dq)
        steps = [(t, h) for t in trajs for h in range(len(t.steps))]
        n_max = max(len(cands[(t.traj_id, h)]) for t, h in steps)
        q = np.zeros((len(steps), n_max))
        valid = np.zeros((len(steps), n_max), dtype=bool)
        row_of = {(t.traj_id, h): i for i, (t, h) in enumerate(steps)}
        for p, (_, t, h, j) in enumerate(table.pairs):
            q[row_of[(t.traj_id, h)], j] = q_all[p]
            valid[row_of[(t.traj_id, h)], j] = table.pair_valid[p]
        if dq.skip_unchanged:  # a candidate known not to change the screen is treated like an invalid one
            for i, (t, h) in enumerate(steps):
                for j in range(len(cands[(t.traj_id, h)])):
                    if labels.get((t.traj_id, h, j)) is False:
                        valid[i, j] = False
        v = np.array([v_all[table.state_pos[(t.traj_id, h)]] for t, h in steps])
        return Critique(trajs, steps, cands, labels, q, v, valid, v_all, table, metrics)

    def extractable(self, c: Critique) -> np.ndarray:
        """The candidates best-of-N may pick: ``c.valid``, within the first ``extract_candidates``."""
        valid: np.ndarray = c.valid.copy()
        if self.dq.extract_candidates > 1:  # best of the first k only
            valid[:, self.dq.extract_candidates :] = False
        return valid

    def extract(self, c: Critique) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """6. best-of-N over the critique's states with this config's δ, N, margin and fallback: (j*, A, keep)."""
        dq = self.dq
        return best_of_n(
            c.q, c.v, self.extractable(c), dq.delta, use_candidates=dq.extract_candidates != 1, margin=dq.margin,
            fallback=dq.fallback,
        )  # fmt: skip

    def update(self, trajectories: Sequence[Trajectory], phase: Phase) -> dict[str, float]:
        c = self.critique(trajectories)
        if c is None:
            return {}
        chosen, adv, keep = self.extract(c)
        samples = [
            Sample(t.steps[h].observation, c.cands[(t.traj_id, h)][int(j)]) for (t, h), j, k in zip(c.steps, chosen, keep) if k
        ]
        metrics = c.metrics | self._heldout_metrics(c.trajs, c.steps, c.q, c.v)
        kept = int(keep.sum())
        metrics |= {
            "train/digiq_kept_state_fraction": kept / len(c.steps),
            "train/digiq_kept_states": float(kept),
            "train/digiq_chosen_dataset_fraction": float((chosen[keep] == 0).mean()) if kept else 0.0,
            "train/digiq_best_adv_mean": float(adv[np.arange(len(chosen)), chosen].mean()),
            "train/digiq_adv_dataset_mean": float(adv[:, 0].mean()),
            "train/digiq_v_mean": float(c.v.mean()),
            "train/digiq_critic_folds": float(self.dq.folds),
        }
        self._annotate(c, adv, chosen, keep, self.extractable(c))
        return metrics | self.bc_actor(samples, phase)

    def _heldout(self, traj_id: str) -> bool:
        """Whether the critic that scores this trajectory never trained on it."""
        return not critic_trains_on(traj_id, fold_of(traj_id, self.dq.folds), self.dq)

    def _heldout_metrics(
        self, trajs: Sequence[Trajectory], steps: list[tuple[Trajectory, int]], q: np.ndarray, v: np.ndarray
    ) -> dict[str, float]:
        """Q(s, a_data) and V(s) against the discounted Monte-Carlo return of the behaviour policy (what
        in-sample TD estimates), on the critic's own and on held-out trajectories."""
        out: dict[str, float] = {}
        g = {(t.traj_id, h): r for t in trajs for h, r in enumerate(t.mc_returns(self.cfg.gamma))}
        for name, want in (("train", False), ("heldout", True)):
            idx = [i for i, (t, _) in enumerate(steps) if self._heldout(t.traj_id) == want]
            if len(idx) < 2:
                continue
            y = np.array([g[(steps[i][0].traj_id, steps[i][1])] for i in idx])
            for label, pred in (("q", q[idx, 0]), ("v", v[idx])):
                out[f"critic/{label}_mc_mse_{name}"] = float(np.mean((pred - y) ** 2))
                if y.std() > 0 and pred.std() > 0:
                    out[f"critic/{label}_mc_corr_{name}"] = float(np.corrcoef(pred, y)[0, 1])
        return out

    def _annotate(self, crit: Critique, adv: np.ndarray, chosen: np.ndarray, keep: np.ndarray, valid: np.ndarray) -> None:
        trajs, steps, cands, labels, q, v, v_all, table = (
            crit.trajs, crit.steps, crit.cands, crit.labels, crit.q, crit.v, crit.v_all, crit.table
        )  # fmt: skip
        notes: list[StepAnnotation] = []
        by_traj: dict[str, list[int]] = {}
        for i, (t, _) in enumerate(steps):
            by_traj.setdefault(t.traj_id, []).append(i)
        for t in trajs:
            held = self._heldout(t.traj_id)
            final_v = float(v_all[table.state_pos[(t.traj_id, len(t.steps))]])
            notes.append(StepAnnotation(t.traj_id, -1, value=final_v, extra={"final_state_value": True, "heldout": held}))
            for i in by_traj[t.traj_id]:
                h = steps[i][1]
                cs = cands[(t.traj_id, h)]
                j = int(chosen[i])
                extra = {
                    "heldout": held,
                    "chosen": j,
                    "candidates": [
                        {
                            "action": action_to_dict(a),
                            "q": float(q[i, c]),
                            "advantage": float(adv[i, c]),
                            "valid": bool(valid[i, c]),
                            "label": labels.get((t.traj_id, h, c)),
                        }
                        for c, a in enumerate(cs)
                    ],
                }
                notes.append(
                    StepAnnotation(
                        t.traj_id, h, value=float(v[i]), q=float(q[i, 0]), advantage=float(adv[i, j]),
                        kept=bool(keep[i]), weight=float(keep[i]), extra=extra,
                    )
                )  # fmt: skip
        self._annotations = notes

    # ------------------------------------------------------------------ checkpointing
    def state_dict(self) -> dict[str, Any]:
        return super().state_dict() | {"critics": [c.state_dict() for c in self.critics]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.critics = []
        for cs in state.get("critics") or []:
            d_phi, d_f = (int(x) for x in cs["dims"])
            c = DigiQCritic(d_phi, d_f, self.dq, gamma=self.cfg.gamma, device=self.device)
            c.load_state_dict(cs)
            self.critics.append(c)
        if self.critics and len(self.critics) != self.dq.folds:
            raise ValueError(f"the checkpoint has {len(self.critics)} critic fold(s) but algo.digiq.folds={self.dq.folds}")
