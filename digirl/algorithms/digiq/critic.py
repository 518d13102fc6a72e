"""Digi-Q's critic: twin Q(s, a) and twin V(s) heads on stored features, trained by TD.

Inputs (released design): z_V(s) = [goal, previous action type, previous typed text, φ(s)] (+ the
step index, ``algo.digiq.time_feature``); z_Q(s, a) = [z_V(s), type(a), text(a), f(s, a)]. Text is a
bag of hashed words, types are embeddings; features are standardized with statistics of the
training transitions. Heads output logits; values are σ(logit) ∈ (0, 1), the discounted success.

:class:`DigiQCritic` satisfies :class:`~digirl.algorithms.critics.ActionCritic` (``value``,
``q_value`` on raw observations, through its feature backend); the training path works on
precomputed feature matrices (:class:`CriticInputs`).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from digirl.algorithms.base import finite_or_raise
from digirl.algorithms.digiq.action_features import ActionFeatureLevel, action_aware
from digirl.algorithms.digiq.functional import polyak_update, reduce_twins, td_target_q, td_target_v, value_loss
from digirl.core.actions import Action
from digirl.core.types import Observation
from digirl.policies.features import KIND_INDEX, KINDS, action_kind, word_id, words

if TYPE_CHECKING:
    from digirl.algorithms.digiq.config import DigiQConfig
    from digirl.algorithms.digiq.features import FeatureBackend

__all__ = ["CriticInputs", "DigiQCritic", "QVNet", "TDBatch", "action_inputs", "state_inputs"]

_BUCKETS = 4096
_GOAL_WORDS = 24
_TEXT_WORDS = 8
#: Kind ids: 0 = none (no previous action), 1..12 = the policy's kinds, 13 = invalid.
_N_KINDS = len(KINDS) + 2
_TIME_SCALE = 20.0


def _word_ids(text: str, n: int) -> list[int]:
    ids = [word_id(w, _BUCKETS) for w in words(text)[:n]]
    return ids + [0] * (n - len(ids))


def _kind_id(action: Action | None, obs: Observation | None) -> int:
    if action is None:
        return 0
    k = action_kind(action, obs)
    return len(KINDS) + 1 if k is None else KIND_INDEX[k] + 1


@dataclass
class CriticInputs:
    """Inputs of V (the state part) and, with ``kind``/``text``/``f``, of Q; tensors on one device."""

    goal: torch.Tensor  # [B, 24] word ids
    prev_kind: torch.Tensor  # [B]
    prev_text: torch.Tensor  # [B, 8]
    time: torch.Tensor  # [B] step / 20
    phi: torch.Tensor  # [B, D_s]
    kind: torch.Tensor | None = None  # [B]
    text: torch.Tensor | None = None  # [B, 8] typed text (+ [B, 8] the target element's words at action_features=element)
    f: torch.Tensor | None = None  # [B, D_a] (+ the action-aware numbers, algo.digiq.action_features)

    def index(self, idx: torch.Tensor) -> CriticInputs:
        def pick(t: torch.Tensor | None) -> torch.Tensor | None:
            return None if t is None else t[idx]

        return CriticInputs(
            self.goal[idx], self.prev_kind[idx], self.prev_text[idx], self.time[idx], self.phi[idx],
            pick(self.kind), pick(self.text), pick(self.f),
        )  # fmt: skip

    def with_action(self, kind: torch.Tensor, text: torch.Tensor, f: torch.Tensor) -> CriticInputs:
        return CriticInputs(self.goal, self.prev_kind, self.prev_text, self.time, self.phi, kind, text, f)


def state_inputs(observations: Sequence[Observation], phi: np.ndarray, device: torch.device) -> CriticInputs:
    """The state part of the critic's inputs for observations whose φ(s) rows are ``phi``."""
    prev = [o.history[-1] if o.history else None for o in observations]
    return state_inputs_of([o.instruction for o in observations], prev, [o.step for o in observations], phi, device)


def state_inputs_of(
    instructions: Sequence[str], prev: Sequence[Action | None], steps: Sequence[int], phi: np.ndarray, device: torch.device
) -> CriticInputs:
    """The state part from its pieces: the instruction, the action before (None at the start), the step
    index and φ(s) (for screens no stored observation holds, e.g. after an executed proposal)."""
    return CriticInputs(
        goal=torch.tensor([_word_ids(i, _GOAL_WORDS) for i in instructions], dtype=torch.long, device=device).view(
            -1, _GOAL_WORDS
        ),
        prev_kind=torch.tensor([_kind_id(a, None) for a in prev], dtype=torch.long, device=device),
        prev_text=torch.tensor(
            [_word_ids(a.text if a is not None and a.kind == "type" else "", _TEXT_WORDS) for a in prev],
            dtype=torch.long,
            device=device,
        ).view(-1, _TEXT_WORDS),
        time=torch.tensor([h / _TIME_SCALE for h in steps], dtype=torch.float32, device=device),
        phi=torch.from_numpy(np.asarray(phi, dtype=np.float32)).to(device),
    )


def action_inputs(
    observations: Sequence[Observation],
    actions: Sequence[Action],
    f: np.ndarray,
    device: torch.device,
    level: ActionFeatureLevel = "off",
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(type ids [B], typed-text word ids [B, 8], f(s, a) [B, D_a]) of actions taken in ``observations``.

    With ``level`` (``algo.digiq.action_features``) the action-aware numbers of
    :func:`~digirl.algorithms.digiq.action_features.action_aware` are appended to f, and at ``element``
    the target element's words to the text ids ([B, 16]: typed text, then the element's words)."""
    kind = torch.tensor([_kind_id(a, o) for o, a in zip(observations, actions)], dtype=torch.long, device=device)
    typed = [_word_ids(a.text if a.kind == "type" else "", _TEXT_WORDS) for a in actions]
    fx = np.asarray(f, dtype=np.float32).reshape(len(actions), -1)
    if level != "off":
        aware = [action_aware(o, a, level) for o, a in zip(observations, actions)]
        fx = np.concatenate([fx, np.stack([x for x, _ in aware]).reshape(len(actions), -1)], 1)
        if level == "element":
            typed = [ids + _word_ids(t, _TEXT_WORDS) for ids, (_, t) in zip(typed, aware)]
    text = torch.tensor(typed, dtype=torch.long, device=device).view(len(actions), -1)
    return kind, text, torch.from_numpy(fx).to(device)


def _mlp(d_in: int, hidden: int) -> nn.Module:
    return nn.Sequential(
        nn.LayerNorm(d_in), nn.Linear(d_in, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, 1)
    )


class QVNet(nn.Module):
    """One copy of the critic (online or target): shared input embeddings, twin V and twin Q heads."""

    phi_mean: torch.Tensor
    phi_std: torch.Tensor
    f_mean: torch.Tensor
    f_std: torch.Tensor

    def __init__(self, d_phi: int, d_f: int, cfg: DigiQConfig) -> None:
        super().__init__()
        e = cfg.text_dim
        self.use_time = cfg.time_feature
        self.element_words = cfg.action_features == "element"  # a second bag: the target element's words
        self.words = nn.Embedding(_BUCKETS, e, padding_idx=0)
        self.kinds = nn.Embedding(_N_KINDS, e)
        for name, d in (("phi", d_phi), ("f", d_f)):  # feature standardization (set from training data)
            self.register_buffer(f"{name}_mean", torch.zeros(d))
            self.register_buffer(f"{name}_std", torch.ones(d))
        d_v = 3 * e + d_phi + 1
        d_q = d_v + (3 if self.element_words else 2) * e + d_f
        self.v_heads = nn.ModuleList(_mlp(d_v, cfg.critic_hidden) for _ in range(2))
        self.q_heads = nn.ModuleList(_mlp(d_q, cfg.critic_hidden) for _ in range(2))

    def _bag(self, ids: torch.Tensor) -> torch.Tensor:
        m = (ids > 0).unsqueeze(-1).float()
        out: torch.Tensor = (self.words(ids) * m).sum(1) / m.sum(1).clamp(min=1.0)
        return out

    def z_v(self, x: CriticInputs) -> torch.Tensor:
        phi = (x.phi - self.phi_mean) / self.phi_std
        t = x.time.unsqueeze(-1) if self.use_time else torch.zeros_like(x.time).unsqueeze(-1)
        return torch.cat([self._bag(x.goal), self.kinds(x.prev_kind), self._bag(x.prev_text), phi, t], -1)

    def v(self, x: CriticInputs) -> torch.Tensor:
        """V logits [2, B]."""
        z = self.z_v(x)
        return torch.stack([h(z).squeeze(-1) for h in self.v_heads])

    def q(self, x: CriticInputs) -> torch.Tensor:
        """Q logits [2, B] (``x`` carries the action)."""
        assert x.kind is not None and x.text is not None and x.f is not None
        f = (x.f - self.f_mean) / self.f_std
        bags = [self._bag(x.text[:, :_TEXT_WORDS])]
        if self.element_words:
            bags.append(self._bag(x.text[:, _TEXT_WORDS:]))
        z = torch.cat([self.z_v(x), self.kinds(x.kind), *bags, f], -1)
        return torch.stack([h(z).squeeze(-1) for h in self.q_heads])

    def set_stats(self, phi: torch.Tensor, f: torch.Tensor) -> None:
        for name, x in (("phi", phi), ("f", f)):
            getattr(self, f"{name}_mean").copy_(x.mean(0))
            getattr(self, f"{name}_std").copy_(x.std(0).clamp(min=1e-3) if len(x) > 1 else torch.ones(x.shape[1]))


@dataclass
class TDBatch:
    """Every transition of the training data, as indices into one table of states."""

    states: CriticInputs  # all states s_h (and final observations), state part only
    s: torch.Tensor  # [T] index of s_h
    s_next: torch.Tensor  # [T] index of s_{h+1} (any valid index where done)
    kind: torch.Tensor  # [T] the dataset action's inputs
    text: torch.Tensor  # [T, 8] (16 at action_features=element)
    f: torch.Tensor  # [T, D_a]
    reward: torch.Tensor  # [T]
    done: torch.Tensor  # [T] float 0/1
    pairs: CriticInputs | None = None  # every (state, candidate) pair, for the conservative penalty
    cands: torch.Tensor | None = None  # [T, N] rows of ``pairs`` of each transition's candidates (-1: none)
    noop: torch.Tensor | None = None  # [T, N] bool: the candidate is a proposal labelled "No" (algo.digiq.noop_td)
    # executed proposals (algo.digiq.outcome_td): [T, N] row of each candidate's outcome (-1: none), and per row
    # the state it led to, its reward and whether it ended the episode
    outcome: torch.Tensor | None = None
    next_states: CriticInputs | None = None
    outcome_reward: torch.Tensor | None = None
    outcome_done: torch.Tensor | None = None


class DigiQCritic:
    """Twin Q / twin V with Polyak target copies; an :class:`~digirl.algorithms.critics.ActionCritic`."""

    def __init__(self, d_phi: int, d_f: int, cfg: DigiQConfig, *, gamma: float, device: torch.device,
                 backend: FeatureBackend | None = None) -> None:  # fmt: skip
        self.cfg = cfg
        self.gamma = gamma
        self.device = device
        self.backend = backend
        self.dims = (d_phi, d_f)
        self.net = QVNet(d_phi, d_f, cfg).to(device)
        self.target = copy.deepcopy(self.net)
        for p in self.target.parameters():
            p.requires_grad_(False)
        self.optimizer = torch.optim.AdamW(self.net.parameters(), lr=cfg.critic_lr)

    # ------------------------------------------------------------------ scoring (no gradients)
    @torch.no_grad()
    def _scored(self, head: str, x: CriticInputs, chunk: int) -> np.ndarray:
        self.net.eval()
        fn = self.net.v if head == "v" else self.net.q
        out = []
        for i in range(0, len(x.time), chunk):
            part = x.index(torch.arange(i, min(i + chunk, len(x.time)), device=self.device))
            out.append(reduce_twins(torch.sigmoid(fn(part)), self.cfg.twin))
        return torch.cat(out).cpu().numpy().astype(np.float64) if out else np.zeros(0)

    def v_of(self, x: CriticInputs, chunk: int = 4096) -> np.ndarray:
        """σ(V) reduced over twins [B] for precomputed inputs."""
        return self._scored("v", x, chunk)

    def q_of(self, x: CriticInputs, chunk: int = 4096) -> np.ndarray:
        """σ(Q) reduced over twins [B] for precomputed inputs (with the action part)."""
        return self._scored("q", x, chunk)

    def _need_backend(self) -> FeatureBackend:
        if self.backend is None:
            raise RuntimeError("this critic has no feature backend; score precomputed features with v_of / q_of")
        return self.backend

    def value(self, observations: Sequence[Observation]) -> torch.Tensor:
        """V(s) [B] on the CPU (features computed by the backend)."""
        phi = self._need_backend().state_features(observations)
        return torch.from_numpy(self.v_of(state_inputs(observations, phi, self.device)))

    def q_value(self, observations: Sequence[Observation], actions: Sequence[Action]) -> torch.Tensor:
        """Q(s, a) [B] on the CPU (features computed by the backend)."""
        b = self._need_backend()
        x = state_inputs(observations, b.state_features(observations), self.device)
        f = b.action_features(observations, actions)
        x = x.with_action(*action_inputs(observations, actions, f, self.device, self.cfg.action_features))
        return torch.from_numpy(self.q_of(x))

    # ------------------------------------------------------------------ TD training
    def fit(self, data: TDBatch, steps: int, rng: np.random.Generator) -> dict[str, float]:
        """``steps`` optimizer steps of in-sample TD (y_Q = r + γ(1 − done)·V̄(s′), y_V = Q̄(s, a_data))."""
        cfg = self.cfg
        n = len(data.s)
        if n == 0 or steps <= 0:
            return {}
        self.net.set_stats(data.states.phi, data.f)
        self.target.set_stats(data.states.phi, data.f)
        every = cfg.polyak_every or max(1, -(-n // cfg.critic_batch))  # 0: once per pass over the data
        self.net.train()
        q_losses, v_losses, qs, vs, gaps, noops, outs = [], [], [], [], [], [], []
        for step in range(1, steps + 1):
            idx = torch.from_numpy(rng.integers(0, n, size=min(cfg.critic_batch, n))).to(self.device)
            s = data.states.index(data.s[idx])
            sa = s.with_action(data.kind[idx], data.text[idx], data.f[idx])
            with torch.no_grad():
                v_next = reduce_twins(torch.sigmoid(self.target.v(data.states.index(data.s_next[idx]))), cfg.twin)
                y_q = td_target_q(data.reward[idx], data.done[idx], v_next, self.gamma)
                y_v = td_target_v(reduce_twins(torch.sigmoid(self.target.q(sa)), cfg.twin))
                if cfg.outcome_backup == "max" and cfg.outcome_td > 0 and data.outcome is not None:
                    y_v = self._max_over_executed(data, idx, y_v)
            q_logits, v_logits = self.net.q(sa), self.net.v(s)
            q_loss = sum(value_loss(h, y_q, cfg.loss) for h in q_logits)
            v_loss = sum(value_loss(h, y_v, cfg.loss) for h in v_logits)
            loss = q_loss + v_loss
            if cfg.conservative > 0 and data.pairs is not None and data.cands is not None:
                gap = self._candidate_gap(data.pairs, data.cands[idx], q_logits)
                loss = loss + cfg.conservative * gap
                gaps.append(float(gap.detach()))
            if cfg.outcome_td > 0 and data.outcome is not None:
                ol = self._outcome_loss(data, idx)
                if ol is not None:
                    loss = loss + cfg.outcome_td * ol
                    outs.append(float(ol.detach()) / 2)
            if cfg.noop_td > 0 and data.noop is not None:
                nl = self._noop_loss(data, idx)
                if nl is not None:
                    loss = loss + cfg.noop_td * nl
                    noops.append(float(nl.detach()) / 2)
            assert isinstance(loss, torch.Tensor) and isinstance(q_loss, torch.Tensor) and isinstance(v_loss, torch.Tensor)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()  # type: ignore[no-untyped-call]
            torch.nn.utils.clip_grad_norm_(self.net.parameters(), 1.0)
            self.optimizer.step()
            if step % every == 0:
                polyak_update(self.target.parameters(), self.net.parameters(), cfg.tau)
            q_losses.append(finite_or_raise("Q loss", float(q_loss.detach()) / 2))
            v_losses.append(finite_or_raise("V loss", float(v_loss.detach()) / 2))
            qs.append(float(y_q.mean()))
            vs.append(float(y_v.mean()))
        self.net.eval()
        tail = max(1, steps // 10)
        extra = {"critic/conservative_gap": float(np.mean(gaps[-tail:]))} if gaps else {}
        if noops:
            extra["critic/noop_td_loss"] = float(np.mean(noops[-tail:]))
        if outs:
            extra["critic/outcome_td_loss"] = float(np.mean(outs[-tail:]))
        return extra | {
            "critic/q_loss": float(np.mean(q_losses[-tail:])),
            "critic/v_loss": float(np.mean(v_losses[-tail:])),
            "critic/q_target_mean": float(np.mean(qs[-tail:])),
            "critic/v_target_mean": float(np.mean(vs[-tail:])),
            "critic/polyak_every": float(every),
        }

    def _noop_loss(self, data: TDBatch, idx: torch.Tensor) -> torch.Tensor | None:
        """TD on proposals that leave the screen unchanged: in a deterministic app such an action only spends a
        step, so Q(s, a_noop) = γ·V̄(s) (no reward). States whose dataset step ended the episode are skipped (a
        no-op there may end it by the horizon). Grounds Q on actions the data never took, per twin head."""
        assert data.noop is not None and data.cands is not None and data.pairs is not None
        m = data.noop[idx] & (data.done[idx] == 0).unsqueeze(1)
        if not bool(m.any()):
            return None
        rows = data.cands[idx][m]
        s = data.s[idx].unsqueeze(1).expand_as(m)[m]
        with torch.no_grad():
            y = self.gamma * reduce_twins(torch.sigmoid(self.target.v(data.states.index(s))), self.cfg.twin)
        logits = self.net.q(data.pairs.index(rows))
        out = sum(value_loss(h, y, self.cfg.loss) for h in logits)
        assert isinstance(out, torch.Tensor)
        return out

    def _outcome_loss(self, data: TDBatch, idx: torch.Tensor) -> torch.Tensor | None:
        """TD on the executed proposals of the minibatch's states: Q(s, a_j) = r_j + γ(1 − done_j)·V̄(s′_j), s′_j the
        screen a_j led to on a copy of s. What the data's own transitions do for a_data, for every proposal."""
        assert data.outcome is not None and data.cands is not None and data.pairs is not None
        assert data.next_states is not None and data.outcome_reward is not None and data.outcome_done is not None
        rows_all = data.outcome[idx]
        m = rows_all >= 0
        if not bool(m.any()):
            return None
        rows = rows_all[m]
        with torch.no_grad():
            v_next = reduce_twins(torch.sigmoid(self.target.v(data.next_states.index(rows))), self.cfg.twin)
            y = td_target_q(data.outcome_reward[rows], data.outcome_done[rows], v_next, self.gamma)
        logits = self.net.q(data.pairs.index(data.cands[idx][m]))
        out = sum(value_loss(h, y, self.cfg.loss) for h in logits)
        assert isinstance(out, torch.Tensor)
        return out

    @torch.no_grad()
    def _max_over_executed(self, data: TDBatch, idx: torch.Tensor, y_v: torch.Tensor) -> torch.Tensor:
        """max(Q̄(s, a_data), max_j Q̄(s, a_j) over the executed proposals of s): V's target as the best tried action."""
        assert data.outcome is not None and data.cands is not None and data.pairs is not None
        m = data.outcome[idx] >= 0
        if not bool(m.any()):
            return y_v
        q = reduce_twins(torch.sigmoid(self.target.q(data.pairs.index(data.cands[idx][m]))), self.cfg.twin)
        full = torch.full(m.shape, float("-inf"), device=q.device, dtype=q.dtype)
        full[m] = q
        return torch.maximum(y_v, full.max(-1).values)

    def _candidate_gap(self, pairs: CriticInputs, cands: torch.Tensor, data_logits: torch.Tensor) -> torch.Tensor:
        """CQL's regularizer over the candidate set: logsumexp_j Q(s, a_j) − Q(s, a_data), per head,
        averaged over states (Kumar et al., 2020). It pushes down proposals the data never tried."""
        ok = cands >= 0
        logits = self.net.q(pairs.index(cands[ok]))  # [2, P]
        full = torch.full((2, *cands.shape), float("-inf"), device=logits.device, dtype=logits.dtype)
        full[:, ok] = logits
        return (torch.logsumexp(full, -1) - data_logits).mean(-1).sum()

    # ------------------------------------------------------------------ checkpointing
    def state_dict(self) -> dict[str, Any]:
        return {
            "dims": list(self.dims),
            "net": self.net.state_dict(),
            "target": self.target.state_dict(),
            "optimizer": self.optimizer.state_dict(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.net.load_state_dict(state["net"])
        self.target.load_state_dict(state["target"])
        self.optimizer.load_state_dict(state["optimizer"])
