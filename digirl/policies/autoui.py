"""Auto-UI as a trainable policy (``policy.kind=autoui``): DigiRL's actor, on transformers 5.x.

Input: the Auto-UI prompt ``Previous Actions: … Goal: <instruction></s>`` (:func:`autoui_prompt`) and
the image features of the current screenshot (:mod:`digirl.policies.autoui_features`). Output: Auto-UI
action text, parsed once by the ``autoui`` codec, so unreadable output is an INVALID action.

- ``act``: batched generation (greedy, or sampling at a temperature with no top-k/top-p truncation),
  at most ``max_new_tokens`` tokens; the recorded log-probability is that of the generated text under
  the distribution it was drawn from.
- ``log_prob_with_mask``: the summed token log-probabilities of each action's canonical Auto-UI text
  (``format_action(a, "autoui")``, end-of-sequence included), differentiable; an action is not
  expressible when it is INVALID, when its text does not survive the tokenizer (characters outside
  the vocabulary) or when it needs more than ``max_new_tokens`` tokens.
- ``save``/``load``: a folder that is itself an Auto-UI-Base-style checkpoint (``config.json``,
  ``model.safetensors`` under Auto-UI's parameter names, tokenizer files) plus ``policy.json``.

``policy.init`` is a local Auto-UI-Base-style folder (never a hub name; nothing is downloaded).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from digirl.core.actions import Action, ActionType
from digirl.core.codecs import format_action, parse_action
from digirl.core.errors import ConfigError, DataError
from digirl.core.types import Observation
from digirl.policies.autoui_features import Blip2VisionFeatures, FeatureFile, ImageFeatures
from digirl.policies.autoui_model import TOKENIZER_FILES, WEIGHT_FILES, AutoUIModel, autoui_state_dict, load_autoui_model
from digirl.policies.base import ActOutput, LogProbFromMask
from digirl.policies.config import AutoUIPolicyConfig, with_overrides
from digirl.policies.prompts import autoui_prompt
from digirl.policies.registry import POLICY_FILE, read_policy_meta, saved_kind_config

if TYPE_CHECKING:
    from digirl.policies.config import PolicyConfig

__all__ = ["AutoUIPolicy", "check_autoui_folder"]

log = logging.getLogger(__name__)

_WEIGHTS = "model.safetensors"


def check_autoui_folder(folder: str | Path) -> None:
    """Raise a :class:`DataError` listing what an Auto-UI-Base-style folder lacks."""
    root = Path(folder)
    if not root.is_dir():
        raise DataError(f"{root}: no such folder (policy.init for kind=autoui is a local Auto-UI-Base-style folder)")
    problems = []
    if not (root / "config.json").is_file():
        problems.append("config.json (the T5 config)")
    if not any((root / f).is_file() for f in WEIGHT_FILES):
        problems.append("weights (one of " + ", ".join(WEIGHT_FILES) + ")")
    if not any((root / f).is_file() for f in TOKENIZER_FILES):
        problems.append("a tokenizer (tokenizer.json, or spiece.model with the sentencepiece and protobuf packages)")
    if problems:
        raise DataError(f"{root} is not an Auto-UI-Base-style folder: missing " + "; ".join(problems))


def _dtype(name: str, device: torch.device) -> torch.dtype:
    if name == "auto":
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    return {"float32": torch.float32, "bfloat16": torch.bfloat16}[name]


class AutoUIPolicy(LogProbFromMask):
    """The Auto-UI multimodal T5 as a :class:`~digirl.policies.base.Policy` (see module docstring)."""

    kind = "autoui"

    def __init__(
        self,
        model: AutoUIModel,
        tokenizer: Any,
        cfg: AutoUIPolicyConfig,
        features: ImageFeatures,
        *,
        device: torch.device,
        config_dict: dict[str, Any],
    ) -> None:
        self.model: Any = model
        self.tokenizer = tokenizer
        self.cfg = cfg
        self.features = features
        self.device = device
        self.config_dict = config_dict
        eos = tokenizer.eos_token_id
        if eos is None:
            raise DataError("the tokenizer has no end-of-sequence token (T5 tokenizers use </s>)")
        self.eos_id = int(eos)
        pad = model.config.pad_token_id if model.config.pad_token_id is not None else tokenizer.pad_token_id
        self.pad_id = int(pad if pad is not None else 0)
        start = model.config.decoder_start_token_id
        self.start_id = int(start if start is not None else self.pad_id)
        self._expressible: dict[str, tuple[list[int], bool]] = {}

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_pretrained(
        cls, folder: str | Path, cfg: AutoUIPolicyConfig, *, device: torch.device, seed: int | None = None
    ) -> AutoUIPolicy:
        """Build from an Auto-UI-Base-style folder (``config.json`` + weights + tokenizer)."""
        from transformers import AutoTokenizer

        root = Path(folder)
        check_autoui_folder(root)
        try:
            config_dict = json.loads((root / "config.json").read_text())
        except (OSError, ValueError) as e:
            raise DataError(f"{root / 'config.json'}: not valid JSON ({e})") from e
        if not isinstance(config_dict, dict) or config_dict.get("model_type", "t5") != "t5":
            raise DataError(f"{root / 'config.json'}: model_type {config_dict.get('model_type')!r} is not 't5' (Auto-UI is a T5)")
        if seed is not None:
            torch.manual_seed(seed)
        model: Any = load_autoui_model(root, config_dict, image_dim=cfg.image_dim)  # HF's decorators confuse mypy
        model.to(device=device, dtype=_dtype(cfg.dtype, device)).eval()
        if cfg.gradient_checkpointing:
            model.gradient_checkpointing_enable()
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(root))
        except Exception as e:  # the tokenizer zoo raises many types; the message says what to do
            raise DataError(
                f"{root}: could not load the tokenizer ({type(e).__name__}: {e}); a T5 folder needs tokenizer.json, "
                "or spiece.model with the sentencepiece and protobuf packages (both in the hf extra)"
            ) from e
        tokenizer.truncation_side = "left"  # long histories lose their oldest actions, never the goal
        if tokenizer.pad_token is None:  # DigiRL pads Auto-UI prompts with the end token
            tokenizer.pad_token = tokenizer.eos_token
        encoder = (
            Blip2VisionFeatures(
                cfg.vision_encoder, device=device, dtype=_dtype(cfg.vision_dtype, device), tokens=cfg.image_tokens
            )
            if cfg.vision_encoder
            else None
        )
        file = FeatureFile(cfg.features) if cfg.features else None
        feats = ImageFeatures(
            image_dim=model.image_dim,
            device=device,
            encoder=encoder,
            file=file,
            cache_size=cfg.feature_cache,
            batch_size=cfg.vision_batch_size,
        )
        return cls(model, tokenizer, replace(cfg, image_dim=model.image_dim), feats, device=device, config_dict=config_dict)

    @classmethod
    def from_config(cls, cfg: PolicyConfig, *, device: torch.device, seed: int) -> AutoUIPolicy:
        """``policy.init`` (a local Auto-UI-Base-style folder) with ``policy.autoui.*``."""
        if not cfg.init:
            raise ConfigError(
                "policy.kind=autoui needs policy.init=DIR, a local Auto-UI-Base-style folder with config.json (T5), "
                f"weights ({' | '.join(WEIGHT_FILES)}) and a tokenizer ({' | '.join(TOKENIZER_FILES)}); "
                "see docs/policies-autoui-api.md"
            )
        return cls.from_pretrained(cfg.init, cfg.autoui, device=device, seed=seed)

    @classmethod
    def load(cls, path: str | Path, *, device: str | torch.device = "cpu", cfg: PolicyConfig | None = None) -> AutoUIPolicy:
        """A folder written by :meth:`save`. Options in ``cfg.autoui`` that differ from the defaults (given on
        the command line, e.g. a new ``vision_encoder`` path) override the saved ones."""
        saved = saved_kind_config(path, read_policy_meta(path, cls.kind), AutoUIPolicyConfig, cls.kind)
        dev = torch.device(device)
        return cls.from_pretrained(path, with_overrides(saved, cfg.autoui if cfg is not None else None), device=dev)

    def save(self, path: str | Path) -> None:
        """An Auto-UI-Base-style folder (config.json, model.safetensors, tokenizer) plus policy.json.

        The vision encoder is referenced by its path in policy.json, not copied (BLIP-2's is 1 B parameters).
        """
        from safetensors.torch import save_file

        p = Path(path)
        p.mkdir(parents=True, exist_ok=True)
        tmp = p / (_WEIGHTS + ".tmp")
        save_file(autoui_state_dict(self.model), str(tmp), metadata={"format": "pt"})
        tmp.replace(p / _WEIGHTS)
        (p / "config.json").write_text(json.dumps(self.config_dict, indent=2))  # as read: portable across versions
        self.tokenizer.save_pretrained(str(p))
        meta = {"kind": self.kind, "config": asdict(self.cfg)}
        (p / (POLICY_FILE + ".tmp")).write_text(json.dumps(meta, indent=2))
        (p / (POLICY_FILE + ".tmp")).replace(p / POLICY_FILE)

    # ------------------------------------------------------------------ Policy protocol
    def parameters(self) -> Iterator[nn.Parameter]:
        """The T5 and fusion parameters (the BLIP-2 vision tower stays frozen, as in Auto-UI)."""
        params: Iterator[nn.Parameter] = self.model.parameters()
        return params

    def train(self, mode: bool = True) -> None:
        self.model.train(mode)

    def _encode(self, observations: Sequence[Observation]) -> tuple[Any, torch.Tensor]:
        prompts = [autoui_prompt(o.instruction, o.history, self.cfg.history_len) for o in observations]
        enc = self.tokenizer(
            prompts, padding=True, truncation=True, max_length=self.cfg.max_input_tokens, return_tensors="pt"
        ).to(self.device)
        feats = self.features([o.screenshot for o in observations])
        return self.model.encode(enc["input_ids"], enc["attention_mask"], feats), enc["attention_mask"]

    @torch.no_grad()
    def act(self, observations: Sequence[Observation], *, greedy: bool = False, temperature: float = 1.0) -> list[ActOutput]:
        """One action per observation, in order; unreadable output becomes an INVALID action."""
        if not observations:
            return []
        was_training = self.model.training
        self.model.eval()
        try:
            enc, mask = self._encode(observations)
            kwargs: dict[str, Any] = {"do_sample": False}
            if not greedy:
                kwargs = {"do_sample": True, "temperature": max(float(temperature), 1e-4), "top_k": 0, "top_p": 1.0}
            out = self.model.generate(
                encoder_outputs=enc,
                attention_mask=mask,
                max_new_tokens=self.cfg.max_new_tokens,
                num_beams=1,
                decoder_start_token_id=self.start_id,
                eos_token_id=self.eos_id,
                pad_token_id=self.pad_id,
                return_dict_in_generate=True,
                output_scores=True,
                **kwargs,
            )
        finally:
            self.model.train(was_training)
        tokens = out.sequences[:, 1:]  # drop the decoder start token
        logp = torch.stack([torch.log_softmax(s.float(), -1) for s in out.scores], 1)  # [B, T, V]
        tok_lp = logp.gather(2, tokens[:, : logp.shape[1], None]).squeeze(2)
        # Count each sequence up to and including its first end-of-sequence token.
        ended = (tokens[:, : logp.shape[1]] == self.eos_id).long()
        live = (ended.cumsum(1) - ended) == 0
        seq_lp = (tok_lp * live).sum(1).tolist()
        results = []
        for row, lp in zip(tokens.tolist(), seq_lp):
            text = self.tokenizer.decode(row, skip_special_tokens=True).strip()
            results.append(ActOutput(parse_action(text, "autoui"), text, float(lp)))
        return results

    def _target(self, action: Action) -> tuple[list[int], bool]:
        """Token ids of the action's Auto-UI text (end token included) and whether the policy can produce it."""
        if action.type is ActionType.INVALID:
            return [self.eos_id], False
        text = format_action(action, "autoui")
        hit = self._expressible.get(text)
        if hit is None:
            ids = list(self.tokenizer(text, add_special_tokens=True)["input_ids"])
            if not ids or ids[-1] != self.eos_id:
                ids.append(self.eos_id)
            ok = (
                len(ids) <= self.cfg.max_new_tokens
                and parse_action(self.tokenizer.decode(ids, skip_special_tokens=True), "autoui") == action
            )
            hit = (ids, ok)
            if len(self._expressible) > 65_536:
                self._expressible.clear()
            self._expressible[text] = hit
        return hit

    def log_prob_with_mask(
        self, observations: Sequence[Observation], actions: Sequence[Action]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(Σ token log-probs of each action's Auto-UI text [B], expressible [B]); differentiable."""
        if len(observations) != len(actions):
            raise ValueError(f"{len(observations)} observations but {len(actions)} actions")
        targets = [self._target(a) for a in actions]
        T = max(len(ids) for ids, _ in targets)
        labels = torch.full((len(targets), T), self.pad_id, dtype=torch.long)
        lmask = torch.zeros((len(targets), T), dtype=torch.bool)
        for i, (ids, _) in enumerate(targets):
            labels[i, : len(ids)] = torch.tensor(ids)
            lmask[i, : len(ids)] = True
        labels, lmask = labels.to(self.device), lmask.to(self.device)
        dec_in = torch.cat([torch.full_like(labels[:, :1], self.start_id), labels[:, :-1]], 1)
        enc, mask = self._encode(observations)
        logits = self.model(encoder_outputs=enc, attention_mask=mask, decoder_input_ids=dec_in, use_cache=False).logits
        if logits.dtype not in (torch.float32, torch.float64):
            logits = logits.float()
        tok_lp = torch.log_softmax(logits, -1).gather(2, labels[..., None]).squeeze(2)
        lp = (tok_lp * lmask).sum(1)
        valid = torch.tensor([ok for _, ok in targets], dtype=torch.bool, device=self.device)
        return lp, valid
