"""The ``encoder`` feature backend: the default policy's screen encoder, fine-tuned on Yes/No labels.

The architecture (and, with ``algo.digiq.encoder_init=policy``, the starting weights) is the
behaviour policy's :class:`~digirl.policies.default.ScreenEncoder`. The action reaches it twice, as a
VLM would see it: drawn on the screenshot (cursor / arrow) and as words before the goal; taps and typing
also select the state of the element they act on (the element under the cursor, the focused field).

f(s, a) = [CLS state, acted-on element state] (2·dim); φ(s) = CLS state of the plain screen (dim).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from digirl.algorithms.digiq.features import draw_action, untouched_action_words
from digirl.algorithms.digiq.finetune import YesNoFinetuning
from digirl.core.actions import Action, ActionType
from digirl.core.errors import DataError
from digirl.core.types import Observation
from digirl.policies.config import EncoderConfig
from digirl.policies.default import ScreenEncoder, batch_to_tensors
from digirl.policies.features import element_under, featurize

if TYPE_CHECKING:
    from digirl.algorithms.digiq.config import DigiQConfig
    from digirl.policies.base import Policy

__all__ = ["EncoderBackend"]

log = logging.getLogger(__name__)


def _prompt_words(action: Action) -> str:
    """The action as words for the hashed-word encoder (tap coordinates are drawn, not written)."""
    t = action.type
    if t is ActionType.DUAL_POINT:
        d = action.swipe_direction
        return f"swipe {d.value}" if d is not None else "tap"
    return untouched_action_words(action, complete="status complete", impossible="status impossible", other="invalid")


def _target(obs: Observation, action: Action, limit: int) -> int:
    """Index of the element the action acts on among the first ``limit`` (-1: none)."""
    els = tuple(obs.elements or ())[:limit]
    if action.type is ActionType.DUAL_POINT and action.is_tap:
        assert action.touch is not None
        e = element_under(els, *action.touch)
        return -1 if e is None else e
    if action.type in (ActionType.TYPE, ActionType.PRESS_ENTER):
        for i, el in enumerate(els):
            if el.focused:
                return i
    return -1


def drawn_observation(obs: Observation, action: Action) -> Observation:
    """What the encoder reads for (s, a): the drawn screenshot, the action's words before the goal."""
    return Observation(
        screenshot=draw_action(obs.screenshot, action),
        instruction=f"{_prompt_words(action)} {obs.instruction}",
        step=obs.step,
        history=obs.history,
        elements=obs.elements,
        previous_screenshot=obs.previous_screenshot,
    )


class _RepNet(nn.Module):
    def __init__(self, cfg: EncoderConfig) -> None:
        super().__init__()
        d = cfg.dim
        self.encoder = ScreenEncoder(cfg)
        self.yes = nn.Sequential(nn.Linear(2 * d, d), nn.GELU(), nn.Linear(d, 1))

    def action_states(self, t: dict[str, torch.Tensor], target: torch.Tensor) -> torch.Tensor:
        cls, _, elem = self.encoder(t)
        rows = torch.arange(len(target), device=target.device)
        picked = elem[rows, target.clamp(min=0)] * (target >= 0).unsqueeze(-1).to(elem.dtype)
        return torch.cat([cls, picked], -1)

    def state(self, t: dict[str, torch.Tensor]) -> torch.Tensor:
        cls, _, _ = self.encoder(t)
        out: torch.Tensor = cls
        return out


class EncoderBackend(YesNoFinetuning):
    """See the module docstring. Implements :class:`~digirl.algorithms.digiq.features.FeatureBackend`."""

    name = "encoder"

    def __init__(self, cfg: EncoderConfig, *, device: torch.device, init: str, chunk: int = 64, seed: int = 0) -> None:
        torch.manual_seed(seed)
        self.cfg = cfg
        self.device = device
        self.net = _RepNet(cfg).to(device)
        self.net.eval()
        self.init = init
        self.finetuned = False
        self.chunk = chunk

    # ------------------------------------------------------------------ construction
    @classmethod
    def build(cls, cfg: DigiQConfig, policy: Policy | None, *, seed: int) -> EncoderBackend:
        """The policy's encoder architecture (and weights with ``encoder_init=policy``) when the policy
        is the default kind; else ``algo.digiq.encoder`` with random weights."""
        net = getattr(policy, "net", None)
        source = getattr(net, "encoder", None)
        device = policy.device if policy is not None else torch.device("cpu")
        if isinstance(source, ScreenEncoder):
            enc_cfg = source.cfg
        else:
            enc_cfg = cfg.encoder.encoder()  # the critic's own keys, as the policy's encoder reads them
            if cfg.encoder_init == "policy":
                log.warning("the policy has no default screen encoder; the encoder backend starts from random weights")
        init = "policy" if cfg.encoder_init == "policy" and isinstance(source, ScreenEncoder) else "random"
        backend = cls(enc_cfg, device=device, init=init, chunk=cfg.feature_batch, seed=seed)
        if init == "policy":
            assert isinstance(source, ScreenEncoder)
            backend.net.encoder.load_state_dict(source.state_dict())
        return backend

    @classmethod
    def load(cls, path: str | Path, cfg: DigiQConfig, policy: Policy | None) -> EncoderBackend:
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        p = Path(path)
        try:
            meta = json.loads((p / "backend.json").read_text())
            enc_cfg = EncoderConfig.from_dict(meta["encoder"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise DataError(f"{p / 'backend.json'}: bad encoder backend config ({e})") from e
        device = policy.device if policy is not None else torch.device("cpu")
        backend = cls(enc_cfg, device=device, init=str(meta.get("init", "?")), chunk=cfg.feature_batch)
        try:
            backend.net.load_state_dict(load_file(str(p / "model.safetensors")))
        except (SafetensorError, OSError, RuntimeError) as e:
            raise DataError(f"{p / 'model.safetensors'}: corrupt weights or not this config ({e})") from e
        backend.finetuned = bool(meta.get("finetuned", False))
        return backend

    def save(self, path: str | Path) -> None:
        from safetensors.torch import save_file

        p = Path(path)
        p.mkdir(parents=True, exist_ok=True)
        save_file({k: v.detach().cpu().contiguous() for k, v in self.net.state_dict().items()}, str(p / "model.safetensors"))
        meta = {"name": self.name, "encoder": asdict(self.cfg), "init": self.init, "finetuned": self.finetuned}
        (p / "backend.json").write_text(json.dumps(meta, indent=2))

    def identity(self) -> dict[str, Any]:
        h = hashlib.sha256()
        for k, v in sorted(self.net.state_dict().items()):
            h.update(k.encode())
            h.update(v.detach().cpu().float().numpy().tobytes())
        return {"name": self.name, "init": self.init, "finetuned": self.finetuned, "weights": h.hexdigest()[:16]}

    # ------------------------------------------------------------------ features
    def _action_batch(
        self, observations: Sequence[Observation], actions: Sequence[Action]
    ) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
        drawn = [drawn_observation(o, a) for o, a in zip(observations, actions)]
        t = batch_to_tensors(featurize(drawn, self.cfg.features), self.device)
        target = torch.tensor([_target(o, a, self.cfg.max_elements) for o, a in zip(observations, actions)], device=self.device)
        return t, target

    @torch.no_grad()
    def action_features(self, observations: Sequence[Observation], actions: Sequence[Action]) -> np.ndarray:
        self.net.eval()
        out = [
            self.net.action_states(*self._action_batch(observations[i : i + self.chunk], actions[i : i + self.chunk]))
            .float()
            .cpu()
            for i in range(0, len(observations), self.chunk)
        ]
        return torch.cat(out).numpy() if out else np.zeros((0, 2 * self.cfg.dim), np.float32)

    @torch.no_grad()
    def state_features(self, observations: Sequence[Observation]) -> np.ndarray:
        self.net.eval()
        out = [
            self.net.state(batch_to_tensors(featurize(observations[i : i + self.chunk], self.cfg.features), self.device))
            .float()
            .cpu()
            for i in range(0, len(observations), self.chunk)
        ]
        return torch.cat(out).numpy() if out else np.zeros((0, self.cfg.dim), np.float32)

    # ------------------------------------------------------------------ representation fine-tuning
    # ------------------------------------------------------------------ fine-tuning hooks (YesNoFinetuning)
    def _repft_targets(self, labels: Sequence[bool]) -> np.ndarray:
        return np.asarray(labels, dtype=np.float32)

    def _repft_begin(self, y_train: np.ndarray) -> list[torch.nn.Parameter]:
        """Binary cross-entropy on the Yes logit, classes balanced by ``pos_weight`` (clamped to [0.1, 10])."""
        pos = float(y_train.mean())
        self._pos_weight = torch.tensor(min(10.0, max(0.1, (1 - pos) / max(pos, 1e-6))), device=self.device)
        self.net.train()
        return list(self.net.parameters())

    def _repft_loss(
        self, observations: Sequence[Observation], actions: Sequence[Action], y: np.ndarray
    ) -> tuple[torch.Tensor, float]:
        logit = self._logits(observations, actions)
        target = torch.from_numpy(y).to(self.device)
        loss = nn.functional.binary_cross_entropy_with_logits(logit, target, pos_weight=self._pos_weight)
        return loss, float(((logit > 0).float() == target).float().mean())

    def _repft_predict(self, observations: Sequence[Observation], actions: Sequence[Action]) -> np.ndarray:
        out: np.ndarray = (self._logits(observations, actions).cpu() > 0).numpy()
        return out

    def _repft_end(self) -> None:
        self.net.eval()
        self.finetuned = True

    def _logits(self, observations: Sequence[Observation], actions: Sequence[Action]) -> torch.Tensor:
        out: torch.Tensor = self.net.yes(self.net.action_states(*self._action_batch(observations, actions))).squeeze(-1)
        return out
