"""DigiRL's critics: a step-level value V(s_h, c) and an instruction-level value V_instruct(c).

Both output a logit of the probability that the episode succeeds and are trained with
cross-entropy on the Monte-Carlo success label (paper Eqs. 4.5–4.6). The step critic has its own
screen encoder (same architecture as the policy's) and twin heads; the instruction critic sees
only the instruction's words.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

import torch
from torch import nn

from digirl.algorithms.configs import CriticEncoderConfig
from digirl.core.actions import Action
from digirl.core.types import Observation
from digirl.policies.config import EncoderConfig
from digirl.policies.default import ScreenEncoder, batch_to_tensors
from digirl.policies.features import Batch, featurize, word_id, words

#: Observations per forward pass when a critic scores many. A memory bound, but also part of what a
#: deterministic run repeats: a GPU may round a batch of another size differently.
VALUE_CHUNK = 256


@runtime_checkable
class Critic(Protocol):
    """A learned state value V(s) over observations (DigiRL's step critic, Digi-Q's V heads)."""

    def value(self, observations: Sequence[Observation]) -> torch.Tensor:
        """V(s) [B] on the CPU, without gradients (evaluation mode; batched internally)."""
        ...


@runtime_checkable
class ActionCritic(Critic, Protocol):
    """A critic that also scores actions: Q(s, a) (Digi-Q)."""

    def q_value(self, observations: Sequence[Observation], actions: Sequence[Action]) -> torch.Tensor:
        """Q(s, a) [B] on the CPU, without gradients."""
        ...


class StepCritic(nn.Module):
    """V(s, c) with ``twin`` heads; ``value`` returns the min over heads (as the released code)."""

    def __init__(self, cfg: CriticEncoderConfig | EncoderConfig, twin: bool = True) -> None:
        super().__init__()
        if isinstance(cfg, CriticEncoderConfig):  # the critic's own keys, as the policy's encoder reads them
            cfg = cfg.encoder()
        self.cfg = cfg
        self.encoder = ScreenEncoder(cfg)
        n = 2 if twin else 1
        self.heads = nn.ModuleList(nn.Sequential(nn.Linear(cfg.dim, cfg.dim), nn.GELU(), nn.Linear(cfg.dim, 1)) for _ in range(n))

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    def logits(self, observations: Sequence[Observation]) -> torch.Tensor:
        """[n_heads, B] logits."""
        return self.batch_logits(featurize(observations, self.cfg.features))

    def batch_logits(self, batch: Batch) -> torch.Tensor:
        """[n_heads, B] logits of observations already featurized (with ``cfg.features``)."""
        cls, _, _ = self.encoder(batch_to_tensors(batch, self.device))
        return torch.stack([h(cls).squeeze(-1) for h in self.heads])

    def value(self, observations: Sequence[Observation], chunk: int = VALUE_CHUNK) -> torch.Tensor:
        """Success probability [B] (min over heads), evaluated in chunks without gradients."""
        spec = self.cfg.features
        return self.batch_values(featurize(observations[i : i + chunk], spec) for i in range(0, len(observations), chunk))

    @torch.no_grad()
    def batch_values(self, batches: Iterable[Batch]) -> torch.Tensor:
        """:meth:`value` of featurized chunks, concatenated in order."""
        was = self.training
        self.eval()
        out = [torch.sigmoid(self.batch_logits(b)).min(0).values for b in batches]
        self.train(was)
        return torch.cat(out).cpu() if out else torch.zeros(0)


class InstructionCritic(nn.Module):
    """V_instruct(c): a bag of hashed instruction words → MLP → logit."""

    def __init__(self, dim: int = 64, buckets: int = 4096) -> None:
        super().__init__()
        self.buckets = buckets
        self.emb = nn.EmbeddingBag(buckets, dim, mode="mean")
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, 1))

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    def logits(self, instructions: Sequence[str]) -> torch.Tensor:
        device = self.device
        ids: list[int] = []
        offsets: list[int] = []
        for text in instructions:
            offsets.append(len(ids))
            ids.extend([word_id(w, self.buckets) for w in words(text)[:32]] or [0])  # 0 = padding bucket
        t = torch.tensor(ids, dtype=torch.long, device=device)
        o = torch.tensor(offsets, dtype=torch.long, device=device)
        out: torch.Tensor = self.mlp(self.emb(t, o)).squeeze(-1)
        return out

    @torch.no_grad()
    def value(self, instructions: Sequence[str]) -> torch.Tensor:
        """P(success) [B] of each instruction, on the CPU."""
        return torch.sigmoid(self.logits(instructions)).cpu() if instructions else torch.zeros(0)
