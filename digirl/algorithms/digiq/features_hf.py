"""The ``hf`` feature backend: any local Hugging Face VLM (``AutoModelForImageTextToText``).

f(s, a): the model reads the screenshot with the action drawn on it and the Yes/No question about
the action (:func:`~digirl.algorithms.digiq.features.question`) through its chat template; the
hidden states of layer ``algo.digiq.hf.layer`` are pooled over the prompt's tokens (mean, or the last
token). φ(s): the same for the plain screenshot and a question about the task. Representation
fine-tuning is next-token cross-entropy on the answer ("Yes" / "No") after the prompt — the released
recipe — with every weight trained, or LoRA adapters (``algo.digiq.hf.lora_r``, merged before saving).
Models are only ever loaded from a local folder.
"""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from PIL import Image

from digirl.algorithms.digiq.features import draw_action, question
from digirl.algorithms.digiq.finetune import YesNoFinetuning
from digirl.core.actions import Action
from digirl.core.errors import ConfigError, DataError
from digirl.core.types import Observation
from digirl.utils.images import resize

if TYPE_CHECKING:
    from digirl.algorithms.digiq.config import DigiQConfig, HFFeatureConfig
    from digirl.policies.base import Policy

__all__ = ["HFBackend"]

log = logging.getLogger(__name__)


def _folder_fingerprint(path: Path) -> str:
    """Cheap identity of a model folder: its files' names, sizes and the config's text."""
    h = hashlib.sha256()
    for p in sorted(path.iterdir()):
        if p.is_file():
            h.update(f"{p.name}:{p.stat().st_size}".encode())
    if (path / "config.json").is_file():
        h.update((path / "config.json").read_bytes())
    return h.hexdigest()[:16]


class HFBackend(YesNoFinetuning):
    """See the module docstring. Implements :class:`~digirl.algorithms.digiq.features.FeatureBackend`."""

    name = "hf"

    def __init__(self, cfg: HFFeatureConfig, folder: Path, *, chunk: int, finetuned: bool = False, fingerprint: str = "") -> None:
        from digirl.policies.hf.loading import load_model, load_processor, resolve_dtype
        from digirl.policies.registry import resolve_device

        self.cfg = cfg
        self.folder = folder
        self.device = resolve_device(cfg.device)
        self.dtype = resolve_dtype(cfg.dtype, self.device)
        self.model = load_model(folder, dtype=self.dtype, device=self.device)
        self.model.eval()
        self.processor = load_processor(folder)
        self.chunk = chunk
        self.finetuned = finetuned
        self.fingerprint = fingerprint or _folder_fingerprint(folder)
        n_layers = len(self._hidden([self._plain(Image.new("RGB", (28, 28)), "x")]))
        if not -n_layers <= cfg.layer < n_layers:
            raise ConfigError(f"algo.digiq.hf.layer={cfg.layer} but the model has {n_layers} hidden-state layers")

    # ------------------------------------------------------------------ construction
    @classmethod
    def build(cls, cfg: DigiQConfig, policy: Policy | None, *, seed: int) -> HFBackend:
        if not cfg.hf.model:
            raise ConfigError("algo.digiq.features=hf needs algo.digiq.hf.model=DIR (a local model folder)")
        torch.manual_seed(seed)
        return cls(cfg.hf, Path(cfg.hf.model), chunk=cfg.feature_batch)

    @classmethod
    def load(cls, path: str | Path, cfg: DigiQConfig, policy: Policy | None) -> HFBackend:
        p = Path(path)
        try:
            meta = json.loads((p / "backend.json").read_text())
        except (OSError, ValueError) as e:
            raise DataError(f"{p / 'backend.json'}: not a saved hf backend ({e})") from e
        return cls(
            cfg.hf,
            p,
            chunk=cfg.feature_batch,
            finetuned=bool(meta.get("finetuned")),
            fingerprint=str(meta.get("fingerprint", "")),
        )

    def save(self, path: str | Path) -> None:
        p = Path(path)
        p.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(str(p), safe_serialization=True)
        self.processor.save_pretrained(str(p))
        for f in ("processor_config.json",):  # keep the family's processor class, as the source folder names it
            if (self.folder / f).is_file() and not (p / f).is_file():
                (p / f).write_text((self.folder / f).read_text())
        meta = {"name": self.name, "source": str(self.folder), "finetuned": self.finetuned, "fingerprint": self.fingerprint}
        (p / "backend.json").write_text(json.dumps(meta, indent=2))

    def identity(self) -> dict[str, Any]:
        c = self.cfg
        return {
            "name": self.name,
            "weights": self.fingerprint,
            "finetuned": self.finetuned,
            "layer": c.layer,
            "pool": c.pool,
            "image_scale": c.image_scale,
            "dtype": str(self.dtype),
        }

    # ------------------------------------------------------------------ inputs
    def _image(self, screenshot: np.ndarray) -> Image.Image:
        img = Image.fromarray(screenshot)
        if self.cfg.image_scale < 1.0:
            w, h = img.size
            img = resize(
                img, (max(28, int(w * self.cfg.image_scale)), max(28, int(h * self.cfg.image_scale))), Image.Resampling.BILINEAR
            )
        return img

    def _plain(self, image: Image.Image, text: str) -> tuple[Image.Image, str]:
        messages = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": text}]}]
        prompt = self.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        return image, prompt

    def _batch(self, items: Sequence[tuple[Image.Image, str]]) -> dict[str, torch.Tensor]:
        enc = self.processor(text=[t for _, t in items], images=[i for i, _ in items], return_tensors="pt", padding=True)
        out: dict[str, torch.Tensor] = {}
        for k, v in enc.items():
            if isinstance(v, torch.Tensor):
                out[k] = v.to(self.device, dtype=self.dtype) if v.is_floating_point() else v.to(self.device)
        return out

    def _hidden(
        self, items: Sequence[tuple[Image.Image, str]], batch: dict[str, torch.Tensor] | None = None
    ) -> tuple[torch.Tensor, ...]:
        b = batch if batch is not None else self._batch(items)
        hs: tuple[torch.Tensor, ...] = self.model(**b, output_hidden_states=True).hidden_states
        return hs

    def _pooled(self, items: Sequence[tuple[Image.Image, str]]) -> np.ndarray:
        out = []
        self.model.eval()
        with torch.no_grad():
            for i in range(0, len(items), self.chunk):
                batch = self._batch(items[i : i + self.chunk])
                h = self._hidden([], batch)[self.cfg.layer].float()
                mask = batch["attention_mask"].to(h.dtype)
                if self.cfg.pool == "mean":
                    pooled = (h * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True).clamp(min=1.0)
                else:  # the last real token, whatever side the tokenizer pads
                    last = (mask * torch.arange(mask.shape[1], device=mask.device)).argmax(1)
                    pooled = h[torch.arange(len(h), device=h.device), last]
                out.append(pooled.cpu())
        return torch.cat(out).numpy() if out else np.zeros((0, 0), np.float32)

    def _action_items(self, observations: Sequence[Observation], actions: Sequence[Action]) -> list[tuple[Image.Image, str]]:
        return [
            self._plain(self._image(draw_action(o.screenshot, a)), question(a, o.instruction))
            for o, a in zip(observations, actions)
        ]

    # ------------------------------------------------------------------ features
    def action_features(self, observations: Sequence[Observation], actions: Sequence[Action]) -> np.ndarray:
        return self._pooled(self._action_items(observations, actions))

    def state_features(self, observations: Sequence[Observation]) -> np.ndarray:
        items = [self._plain(self._image(o.screenshot), f"Task: {o.instruction}\nWhat is on this screen?") for o in observations]
        return self._pooled(items)

    # ------------------------------------------------------------------ representation fine-tuning
    def _answer_ids(self) -> tuple[int, int]:
        tok = self.processor.tokenizer
        yes = tok.encode("Yes", add_special_tokens=False)
        no = tok.encode("No", add_special_tokens=False)
        if not yes or not no or yes[0] == no[0]:
            raise DataError(f"{self.folder}: the tokenizer does not tell 'Yes' from 'No' by their first token")
        return int(yes[0]), int(no[0])

    def _answer_logits(self, items: Sequence[tuple[Image.Image, str]]) -> torch.Tensor:
        """Next-token logits after each prompt [B, vocab]."""
        batch = self._batch(items)
        logits = self.model(**batch).logits
        mask = batch["attention_mask"]
        last = (mask * torch.arange(mask.shape[1], device=mask.device)).argmax(1)
        out: torch.Tensor = logits[torch.arange(len(logits), device=logits.device), last].float()
        return out

    # ------------------------------------------------------------------ fine-tuning hooks (YesNoFinetuning)
    repft_default_lr = 2e-5

    def _repft_begin(self, y_train: np.ndarray) -> list[torch.nn.Parameter]:
        """Cross-entropy on the answer's first token (Yes or No); with ``lora_r`` > 0 only LoRA adapters train."""
        self._yes_no = self._answer_ids()
        model = self.model
        if self.cfg.lora_r > 0:
            from peft import LoraConfig, get_peft_model

            targets = sorted(
                {
                    name.rsplit(".", 1)[-1]
                    for name, m in model.named_modules()
                    if isinstance(m, torch.nn.Linear) and "proj" in name
                }
            )
            model = get_peft_model(model, LoraConfig(r=self.cfg.lora_r, lora_alpha=2 * self.cfg.lora_r, target_modules=targets))
            self.model = model
        model.train()
        return [p for p in model.parameters() if p.requires_grad]

    def _repft_loss(
        self, observations: Sequence[Observation], actions: Sequence[Action], y: np.ndarray
    ) -> tuple[torch.Tensor, float]:
        yes_id, no_id = self._yes_no
        logits = self._answer_logits(self._action_items(observations, actions))
        target = torch.tensor([yes_id if yi else no_id for yi in y], device=logits.device)
        loss = torch.nn.functional.cross_entropy(logits, target)
        return loss, float(((logits[:, yes_id] > logits[:, no_id]).cpu().numpy() == y).mean())

    def _repft_predict(self, observations: Sequence[Observation], actions: Sequence[Action]) -> np.ndarray:
        yes_id, no_id = self._yes_no
        lg = self._answer_logits(self._action_items(observations, actions))
        out: np.ndarray = (lg[:, yes_id] > lg[:, no_id]).cpu().numpy()
        return out

    def _repft_end(self) -> None:
        if self.cfg.lora_r > 0:
            self.model = self.model.merge_and_unload()
        self.model.eval()
        self.finetuned = True
        self.fingerprint = uuid.uuid4().hex[:16]  # these weights exist nowhere else
