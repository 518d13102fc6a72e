"""Image features for Auto-UI: a local BLIP-2 vision encoder, precomputed feature files, and a cache.

Auto-UI and DigiRL feed the T5 the *pooled* output of BLIP-2's ViT-g vision tower (1408 values per
screenshot; ``pooler_output`` of ``Blip2VisionModel``). The vision tower is frozen, so features are a
pure function of the screenshot: they are looked up by an exact hash of the screenshot's pixels in an
in-memory LRU cache, then in a precomputed feature file, and only then computed.

A feature file is a ``.safetensors`` file with one tensor per screenshot, named by
:func:`screenshot_key`: ``[D]`` (pooled) or ``[N, D]`` (patch tokens). :func:`write_feature_file`
builds one from (screenshot, features) pairs, e.g. from a legacy DigiRL/Digi-Q dataset whose steps carry
``image_features`` next to their screenshots.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch

from digirl.core.errors import ConfigError, DataError

__all__ = ["Blip2VisionFeatures", "FeatureFile", "ImageFeatures", "screenshot_key", "write_feature_file"]

log = logging.getLogger(__name__)

# BLIP-2's image normalization (OpenAI CLIP's), used when a folder has no preprocessor_config.json.
_CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
_CLIP_STD = (0.26862954, 0.26130258, 0.27577711)


def screenshot_key(img: np.ndarray) -> str:
    """An exact content hash of a uint8 H×W×3 screenshot (its shape and every pixel)."""
    a = np.ascontiguousarray(img)
    return hashlib.blake2b(repr(a.shape).encode() + a.tobytes(), digest_size=16).hexdigest()


def _as_features(f: Any, image_dim: int | None, what: str) -> torch.Tensor:
    t = torch.as_tensor(np.asarray(f, dtype=np.float32))
    if t.dim() == 1 and image_dim and t.numel() != image_dim:
        if t.numel() % image_dim:
            raise ValueError(f"{what}: {t.numel()} values, not a multiple of image_dim={image_dim}")
        t = t[-image_dim:]  # DigiRL stacks [previous, current]; its actor reads the last image_dim values
    if t.dim() not in (1, 2) or not torch.isfinite(t).all():
        raise ValueError(f"{what}: features must be finite, shaped [D] or [N, D]; got {tuple(t.shape)}")
    return t.contiguous()


def write_feature_file(path: str | Path, items: Iterable[tuple[np.ndarray, Any]], *, image_dim: int | None = None) -> int:
    """Write (screenshot, features) pairs as a feature file (atomically); returns how many were written.

    Features are ``[D]`` or ``[N, D]``. With ``image_dim``, a 1-D vector of k·``image_dim`` values keeps
    its last ``image_dim`` (DigiRL's datasets stack the previous screen's features before the current's).
    """
    from safetensors.torch import save_file

    tensors: dict[str, torch.Tensor] = {}
    for i, (screen, feats) in enumerate(items):
        tensors[screenshot_key(screen)] = _as_features(feats, image_dim, f"item {i}")
    shapes = {tuple(t.shape) for t in tensors.values()}
    if len(shapes) > 1:
        raise ValueError(f"features of different shapes in one file: {sorted(shapes)[:4]}")
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    save_file(tensors, str(tmp), metadata={"format": "digirl-image-features", "count": str(len(tensors))})
    os.replace(tmp, out)
    return len(tensors)


class FeatureFile:
    """Read-only access to a feature file written by :func:`write_feature_file` (tensors read on demand)."""

    def __init__(self, path: str | Path) -> None:
        from safetensors import SafetensorError, safe_open

        self.path = Path(path)
        if not self.path.is_file():
            raise DataError(f"{self.path}: no such feature file (policy.autoui.features)")
        try:
            self._f: Any = cast(Any, safe_open(str(self.path), framework="pt"))
            self._keys = set(self._f.keys())
        except (SafetensorError, OSError) as e:
            raise DataError(f"{self.path}: corrupt or not a safetensors feature file ({e})") from e
        if not self._keys:
            raise DataError(f"{self.path}: holds no features")
        shape = self._f.get_slice(next(iter(self._keys))).get_shape()
        self.dim = int(shape[-1])

    def __len__(self) -> int:
        return len(self._keys)

    def get(self, key: str) -> torch.Tensor | None:
        """The features of the screenshot with this key, or ``None``."""
        if key not in self._keys:
            return None
        t: torch.Tensor = self._f.get_tensor(key)
        return t.float()


def blip_image_processor_class() -> Any:
    """BLIP's image processor class; transformers 5's PIL variant when present (it needs no torchvision)."""
    import transformers

    return getattr(transformers, "BlipImageProcessorPil", None) or transformers.BlipImageProcessor


def _processor(folder: Path, image_size: int) -> Any:
    Processor = blip_image_processor_class()
    if (folder / "preprocessor_config.json").is_file():
        return Processor.from_pretrained(str(folder))
    return Processor(size={"height": image_size, "width": image_size}, image_mean=_CLIP_MEAN, image_std=_CLIP_STD)


class Blip2VisionFeatures:
    """BLIP-2's vision tower from a local folder, frozen: screenshots → features [B, N, D].

    The folder is a full BLIP-2 checkpoint (``Blip2Model`` / ``Blip2ForConditionalGeneration``; only the
    ``vision_model.*`` tensors are read, from the shards that hold them) or a ``Blip2VisionModel`` save.
    ``tokens``: ``pooled`` (N = 1, the layer-normed class token, as Auto-UI/DigiRL) or ``patches``.
    """

    def __init__(self, folder: str | Path, *, device: torch.device, dtype: torch.dtype, tokens: str = "pooled") -> None:
        import transformers

        from digirl.policies.autoui_model import read_weights

        root = Path(folder)
        cfg_path = root / "config.json"
        if not cfg_path.is_file():
            raise DataError(f"{root}: no config.json (policy.autoui.vision_encoder must be a local BLIP-2 folder)")
        try:
            cfg = json.loads(cfg_path.read_text())
        except (OSError, ValueError) as e:
            raise DataError(f"{cfg_path}: not valid JSON ({e})") from e
        full = cfg.get("model_type") in ("blip-2", "blip_2")
        vision_cfg = cfg.get("vision_config") if full else cfg
        if not isinstance(vision_cfg, dict):
            raise DataError(f"{cfg_path}: no vision_config (not a BLIP-2 config)")
        prefix = "vision_model." if full else ""
        sd = read_weights(root, keep=lambda k: k.startswith(prefix))
        if full and not sd:  # a Blip2VisionModel saved with a blip-2 style config
            prefix, sd = "", read_weights(root)
        sd = {k[len(prefix) :]: v for k, v in sd.items()}
        hf: Any = transformers  # HF's decorated classes confuse mypy
        try:
            model = hf.Blip2VisionModel(hf.Blip2VisionConfig(**{k: v for k, v in vision_cfg.items() if k != "model_type"}))
        except (TypeError, ValueError) as e:
            raise DataError(f"{cfg_path}: not a usable BLIP-2 vision config ({e})") from e
        missing, unexpected = model.load_state_dict(sd, strict=False)
        if missing or unexpected:
            raise DataError(
                f"{root}: vision weights do not match its config (missing {missing[:5]}, unexpected {unexpected[:5]})"
            )
        self.model = model.to(device=device, dtype=dtype).eval().requires_grad_(False)
        self.processor = _processor(root, int(model.config.image_size))
        self.device, self.dtype, self.tokens = device, dtype, tokens
        self.dim = int(model.config.hidden_size)

    @torch.no_grad()
    def __call__(self, screens: Sequence[np.ndarray]) -> torch.Tensor:
        pixels = self.processor(images=list(screens), return_tensors="pt")["pixel_values"]
        out = self.model(pixel_values=pixels.to(device=self.device, dtype=self.dtype))
        feats: torch.Tensor = out.pooler_output.unsqueeze(1) if self.tokens == "pooled" else out.last_hidden_state
        return feats.float()


class ImageFeatures:
    """Features for a batch of screenshots: LRU cache → feature file → vision encoder (see module docstring)."""

    def __init__(
        self,
        *,
        image_dim: int,
        device: torch.device,
        encoder: Blip2VisionFeatures | None = None,
        file: FeatureFile | None = None,
        cache_size: int = 8192,
        batch_size: int = 16,
    ) -> None:
        if encoder is None and file is None:
            raise ConfigError(
                "Auto-UI needs image features: give policy.autoui.vision_encoder=BLIP2_DIR (a local BLIP-2 folder) "
                "and/or policy.autoui.features=FILE (precomputed features)"
            )
        for src, dim in (("vision encoder", encoder.dim if encoder else None), ("feature file", file.dim if file else None)):
            if dim is not None and dim != image_dim:
                raise ConfigError(f"the {src} gives {dim}-d features but the model's image_dense takes {image_dim}")
        self.image_dim, self.device, self.encoder, self.file = image_dim, device, encoder, file
        self.cache_size, self.batch_size = cache_size, batch_size
        self._cache: OrderedDict[str, torch.Tensor] = OrderedDict()
        self.counts = {"cache_hits": 0, "file_hits": 0, "computed": 0}

    def __call__(self, screens: Sequence[np.ndarray]) -> torch.Tensor:
        """[B, N, D] float32 features on the policy's device, in the order of ``screens``."""
        keys = [screenshot_key(s) for s in screens]
        found: dict[str, torch.Tensor] = {}
        todo: dict[str, np.ndarray] = {}
        for k, s in zip(keys, screens):
            if k in found or k in todo:
                continue
            hit = self._cache.get(k)
            if hit is not None:
                self._cache.move_to_end(k)
                self.counts["cache_hits"] += 1
            elif self.file is not None and (hit := self.file.get(k)) is not None:
                hit = (hit if hit.dim() == 2 else hit.unsqueeze(0)).to(self.device)
                self.counts["file_hits"] += 1
            if hit is None:
                todo[k] = s
            else:
                found[k] = hit
        if todo:
            if self.encoder is None:
                assert self.file is not None
                raise DataError(
                    f"{self.file.path}: no features for {len(todo)} screenshot(s) (first key {next(iter(todo))}) and no "
                    "vision encoder to compute them (policy.autoui.vision_encoder)"
                )
            items = list(todo.items())
            for i in range(0, len(items), self.batch_size):
                chunk = items[i : i + self.batch_size]
                feats = self.encoder([s for _, s in chunk]).to(self.device)
                for (k, _), f in zip(chunk, feats):
                    found[k] = f
            self.counts["computed"] += len(items)
        for k, f in found.items():
            if self.cache_size:
                self._cache[k] = f
                self._cache.move_to_end(k)
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        shapes = {tuple(found[k].shape) for k in keys}
        if len(shapes) > 1:
            raise DataError(
                f"image features of different shapes in one batch {sorted(shapes)}: the feature file and the "
                "vision encoder disagree (check policy.autoui.image_tokens)"
            )
        return torch.stack([found[k] for k in keys])
