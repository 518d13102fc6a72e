"""Auto-UI's multimodal T5 for transformers 5.x, and reading its checkpoints from local folders.

The model (Zhang & Zhang, arXiv 2309.11436; the policy of DigiRL) is a T5 encoder-decoder whose
encoder states are fused with projected image features before the decoder reads them::

    h   = T5Encoder(prompt)                                  [B, L, d]
    img = image_dense(features)                              [B, N, d]   (N = 1 for pooled BLIP-2 features)
    att = mha_layer(query=h, key=img, value=img)             single-head attention
    g   = sigmoid(gate_dense([h ; att]))
    h'  = (1 - g) * h + g * att                              what the decoder cross-attends to

Parameter names are those of Auto-UI-Base checkpoints (``docs/policies-autoui-api.md`` lists every
name and shape), so a user's local checkpoint loads as is:

- the T5 part: ``shared.weight`` [V, d], ``encoder.block.{i}.layer.0.SelfAttention.{q,k,v,o}.weight``,
  ``…relative_attention_bias.weight`` (block 0), ``…layer.1.DenseReluDense.{wi_0,wi_1,wo}.weight``
  (``wi`` for ReLU T5), layer norms, ``decoder.block.{i}.layer.{0,1,2}…`` (``EncDecAttention`` in
  ``layer.1``), ``encoder/decoder.final_layer_norm.weight``, ``lm_head.weight`` [V, d];
- the fusion: ``image_dense.{weight [d, D], bias [d]}``, ``mha_layer.{in_proj_weight [3d, d],
  in_proj_bias [3d], out_proj.weight [d, d], out_proj.bias [d]}``, ``gate_dense.{weight [d, 2d], bias [d]}``.

The seeds' class re-implemented ``T5ForConditionalGeneration.forward`` with helpers transformers 5
removed; this one only adds :meth:`AutoUIModel.encode` and passes the fused states to the stock
forward/generate as ``encoder_outputs``.
"""

from __future__ import annotations

import json
import logging
import pickle  # only for its error type: .bin files are read by torch.load(weights_only=True)
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn
from transformers import T5Config, T5ForConditionalGeneration
from transformers.modeling_outputs import BaseModelOutput

from digirl.core.errors import DataError

__all__ = [
    "FUSION_KEYS",
    "TOKENIZER_FILES",
    "WEIGHT_FILES",
    "AutoUIModel",
    "autoui_state_dict",
    "load_autoui_model",
    "read_weights",
]

log = logging.getLogger(__name__)

#: Weight files looked for in a checkpoint folder, in this order (``.bin`` is read with weights_only=True).
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json")
#: Any one of these makes a tokenizer (``spiece.model`` alone needs the ``sentencepiece`` package).
TOKENIZER_FILES = ("tokenizer.json", "spiece.model")
#: The parameters Auto-UI adds to T5.
FUSION_KEYS = (
    "image_dense.weight",
    "image_dense.bias",
    "mha_layer.in_proj_weight",
    "mha_layer.in_proj_bias",
    "mha_layer.out_proj.weight",
    "mha_layer.out_proj.bias",
    "gate_dense.weight",
    "gate_dense.bias",
)
# Tied to shared.weight in every T5; older checkpoints also carry a (unused) decoder relative bias.
_TIED = ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight")
_IGNORED = ("decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight",)


class AutoUIModel(T5ForConditionalGeneration):  # type: ignore[no-untyped-call]
    """T5 + Auto-UI's image fusion (``image_dense``, ``mha_layer``, ``gate_dense``); see the module docstring."""

    def __init__(self, config: T5Config, image_dim: int = 1408) -> None:
        super().__init__(config)
        d = config.d_model
        self.image_dim = image_dim
        self.image_dense = nn.Linear(image_dim, d)
        self.mha_layer = nn.MultiheadAttention(embed_dim=d, num_heads=1, batch_first=True)
        self.gate_dense = nn.Linear(2 * d, d)

    def fuse(self, hidden: torch.Tensor, image_features: torch.Tensor) -> torch.Tensor:
        """Encoder states [B, L, d] fused with image features [B, N, D] (or [B, D]) → [B, L, d]."""
        if image_features.dim() == 2:
            image_features = image_features.unsqueeze(1)
        img = self.image_dense(image_features.to(hidden.dtype))
        att, _ = self.mha_layer(hidden, img, img, need_weights=False)
        gate = torch.sigmoid(self.gate_dense(torch.cat([hidden, att], dim=-1)))
        fused: torch.Tensor = (1 - gate) * hidden + gate * att
        return fused

    def encode(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, image_features: torch.Tensor) -> BaseModelOutput:
        """The fused encoder output, ready for ``forward``/``generate`` as ``encoder_outputs``."""
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return BaseModelOutput(last_hidden_state=self.fuse(hidden, image_features))

    def forward(
        self,
        input_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        image_features: torch.Tensor | None = None,
        encoder_outputs: Any = None,
        **kwargs: Any,
    ) -> Any:
        """T5's forward; without ``encoder_outputs`` it encodes ``input_ids`` with ``image_features`` first."""
        if encoder_outputs is None:
            if input_ids is None or image_features is None:
                raise ValueError("AutoUIModel needs input_ids and image_features (or encoder_outputs from encode())")
            if attention_mask is None:
                attention_mask = torch.ones_like(input_ids)
            encoder_outputs = self.encode(input_ids, attention_mask, image_features)
        return super().forward(attention_mask=attention_mask, encoder_outputs=encoder_outputs, **kwargs)


# --------------------------------------------------------------------------- checkpoint files
def read_weights(folder: str | Path, keep: Callable[[str], bool] = lambda k: True) -> dict[str, torch.Tensor]:
    """The tensors of a checkpoint folder whose names pass ``keep`` (safetensors, sharded or not, or
    ``pytorch_model.bin`` read with ``weights_only=True``: no code in a checkpoint ever runs)."""
    from safetensors import SafetensorError, safe_open

    root = Path(folder)
    found = next((root / f for f in WEIGHT_FILES if (root / f).is_file()), None)
    if found is None:
        raise DataError(f"{root}: no weights (expected one of {', '.join(WEIGHT_FILES)})")
    if found.name.endswith(".index.json"):
        try:
            weight_map = json.loads(found.read_text())["weight_map"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise DataError(f"{found}: not a weight index (a JSON object with a 'weight_map'): {e}") from e
        files = sorted({v for k, v in weight_map.items() if keep(k)})
    else:
        files = [found.name]
    out: dict[str, torch.Tensor] = {}
    for name in files:
        path = root / name
        try:
            if name.endswith(".safetensors"):
                with safe_open(str(path), framework="pt") as f:
                    for k in f.keys():
                        if keep(k):
                            out[k] = f.get_tensor(k)
            else:
                sd = torch.load(str(path), map_location="cpu", weights_only=True, mmap=True)
                if not isinstance(sd, dict):
                    raise DataError(f"{path}: not a state dict")
                out.update({k: v for k, v in sd.items() if keep(k) and isinstance(v, torch.Tensor)})
        except (SafetensorError, OSError, RuntimeError, ValueError, EOFError, pickle.UnpicklingError) as e:
            raise DataError(f"{path}: corrupt or unreadable weights ({str(e)[:300]})") from e
    return out


def _strip_prefix(sd: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Keys as Auto-UI names them: a wrapper's prefix (``model.``, ``module.``) is removed, other keys dropped."""
    for anchor in ("image_dense.weight", "shared.weight"):
        hits = sorted((k for k in sd if k == anchor or k.endswith("." + anchor)), key=len)
        if hits:
            prefix = hits[0][: -len(anchor)]
            if not prefix:
                return sd
            kept = {k[len(prefix) :]: v for k, v in sd.items() if k.startswith(prefix)}
            log.info(
                "checkpoint keys carry the prefix %r; using its %d tensors, ignoring %d others",
                prefix,
                len(kept),
                len(sd) - len(kept),
            )
            return kept
    raise DataError("checkpoint has no 'shared.weight' (not a T5 / Auto-UI checkpoint)")


def load_autoui_model(folder: str | Path, config_dict: dict[str, Any], *, image_dim: int) -> AutoUIModel:
    """An :class:`AutoUIModel` with the weights of ``folder`` (float32, CPU).

    A checkpoint without the fusion layers (a plain T5 such as FLAN-Alpaca, where Auto-UI training
    starts) gets fresh ones of ``image_dim`` inputs; otherwise ``image_dim`` is read from the weights.
    A separate ``lm_head.weight`` is kept separate (transformers 5 ties it to the embeddings by default).
    """
    root = Path(folder)
    sd = _strip_prefix(read_weights(root))
    if "image_dense.weight" in sd:
        image_dim = int(sd["image_dense.weight"].shape[1])
    try:
        config = T5Config.from_dict(config_dict)
        model = AutoUIModel(config, image_dim=image_dim)
    except (TypeError, ValueError) as e:
        raise DataError(f"{root / 'config.json'}: not a usable T5 config ({e})") from e
    tied_head = model.lm_head.weight is model.shared.weight
    if "lm_head.weight" not in sd:
        model.lm_head.weight = model.shared.weight  # a checkpoint with tied embeddings stores them once
    elif tied_head and not torch.equal(sd["lm_head.weight"], sd["shared.weight"]):
        model.lm_head.weight = nn.Parameter(torch.empty_like(model.shared.weight))
        tied = getattr(model, "all_tied_weights_keys", None)
        if isinstance(tied, dict):  # so a later tie_weights() keeps them apart
            tied.pop("lm_head.weight", None)
    missing, unexpected = model.load_state_dict(sd, strict=False)
    fresh = [k for k in FUSION_KEYS if k in missing]
    if fresh and len(fresh) < len(FUSION_KEYS):
        raise DataError(f"{root}: the checkpoint has only some of Auto-UI's fusion weights (missing {fresh})")
    if fresh:
        log.warning(
            "%s has no image fusion weights (a plain T5?): image_dense/mha_layer/gate_dense start fresh (image_dim=%d)",
            root,
            image_dim,
        )
    bad_missing = [k for k in missing if k not in FUSION_KEYS and k not in _TIED and k != "lm_head.weight"]
    bad_unexpected = [k for k in unexpected if k not in _IGNORED]
    if bad_missing or bad_unexpected:
        raise DataError(
            f"{root}: weights do not match the T5 config in config.json "
            f"(missing {bad_missing[:6]}{'…' if len(bad_missing) > 6 else ''}, "
            f"unexpected {bad_unexpected[:6]}{'…' if len(bad_unexpected) > 6 else ''})"
        )
    return model


def autoui_state_dict(model: AutoUIModel) -> dict[str, torch.Tensor]:
    """The model's tensors under Auto-UI's names, each stored once (tied copies of ``shared.weight`` dropped)."""
    shared = model.shared.weight
    out: dict[str, torch.Tensor] = {}
    for k, v in model.state_dict().items():
        if k in _TIED or (k == "lm_head.weight" and model.lm_head.weight is shared):
            continue
        out[k] = v.detach().to("cpu").contiguous()
    return out
