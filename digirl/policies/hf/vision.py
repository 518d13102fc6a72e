"""Making the vision tower cheap: batched window attention and cached features of frozen towers.

**Window attention.** Qwen2-VL / Qwen2.5-VL / Qwen3-VL vision towers attend within windows
(Qwen2.5-VL: 112 px windows in most layers) or within each image. Without flash-attn, transformers
runs one attention call per window: a 952×448 screenshot has ~36 windows, so a batch of 8
screenshots through 32 layers makes thousands of tiny kernel launches per forward, and the step is
bound by the CPU launching them. :func:`varlen_sdpa` takes the packed sequence and its window
boundaries (``cu_seqlens``, the flash-attn "varlen" interface), groups the windows by length and
runs ONE ``scaled_dot_product_attention`` per distinct length (two or three per layer), with the
same result. It is registered with transformers' ``AttentionInterface`` under a name containing
"flash" so the vision blocks hand it the window boundaries; only the vision config uses it.

**Feature cache.** When the vision tower and its projector are frozen (LoRA on the language model,
or ``freeze_vision``), a screenshot's features never change during an update that revisits it
many times. :class:`VisionFeatureCache` wraps the model's ``get_image_features`` and serves them
from memory, keyed by the observation's content hash. The policy leaves pixel values on the host
while a cache is attached: only the screenshots the cache lacks are copied to the device (a batch
of eight 952×448 screenshots is 80 MB of float32 pixels, ~14 ms of copies per update step on an
H100 host, for features that are already on the GPU).
"""

from __future__ import annotations

import functools
import itertools
import logging
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from digirl.utils.transfer import to_device

__all__ = ["VARLEN_NAME", "VisionFeatureCache", "enable_fast_vision_attention", "varlen_sdpa"]

log = logging.getLogger(__name__)

#: The registered attention name ("flash" in it makes the vision blocks pass window boundaries).
VARLEN_NAME = "digirl_flash_varlen_sdpa"

# (cu_seqlens tensor, [(length, index [n, length])]) of the last few boundaries seen: the same
# tensor is passed to every layer of a forward, so its grouping is computed once.
_PLANS: list[tuple[torch.Tensor, list[tuple[int, torch.Tensor]], torch.Tensor]] = []


def _plan(cu: torch.Tensor) -> tuple[list[tuple[int, torch.Tensor]], torch.Tensor]:
    for t, groups, inverse in _PLANS:
        if t is cu:
            return groups, inverse
    bounds = cu.tolist()
    by_len: dict[int, list[int]] = {}
    for s, e in itertools.pairwise(bounds):
        if e > s:
            by_len.setdefault(e - s, []).append(s)
    groups = []
    for length, starts in by_len.items():
        idx = torch.tensor(starts, device=cu.device)[:, None] + torch.arange(length, device=cu.device)[None]
        groups.append((length, idx))
    order = torch.cat([idx.reshape(-1) for _, idx in groups])
    inverse = torch.empty_like(order)
    inverse[order] = torch.arange(len(order), device=cu.device)
    _PLANS.insert(0, (cu, groups, inverse))
    del _PLANS[4:]
    return groups, inverse


def varlen_sdpa(
    module: Any,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None = None,
    scaling: float | None = None,
    dropout: float = 0.0,
    cu_seq_lens_q: torch.Tensor | None = None,
    cu_seq_lens_k: torch.Tensor | None = None,
    is_causal: bool = False,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """Block-diagonal attention over a packed sequence: ``query``/``key``/``value`` [1, H, S, D],
    segments given by ``cu_seq_lens_q`` (== ``cu_seq_lens_k``). Returns ([1, S, H, D], None)."""
    if cu_seq_lens_q is None or query.shape[0] != 1 or is_causal:
        out = F.scaled_dot_product_attention(query, key, value, attn_mask=attention_mask, dropout_p=dropout, scale=scaling)
        return out.transpose(1, 2), None
    if cu_seq_lens_k is not None and cu_seq_lens_k is not cu_seq_lens_q and not torch.equal(cu_seq_lens_k, cu_seq_lens_q):
        raise ValueError("varlen_sdpa needs the same segments for queries and keys")
    groups, inverse = _plan(cu_seq_lens_q)
    q, k, v = query[0], key[0], value[0]  # [H, S, D]
    outs = []
    for _, idx in groups:
        # [H, n, L, D] -> [n, H, L, D]: each window is one batch element of one SDPA call.
        qg, kg, vg = (t[:, idx].transpose(0, 1) for t in (q, k, v))
        o = F.scaled_dot_product_attention(qg, kg, vg, dropout_p=dropout, scale=scaling)
        outs.append(o.permute(0, 2, 1, 3).reshape(-1, o.shape[1], o.shape[3]))  # [n·L, H, D]
    out = torch.cat(outs)[inverse]  # back to packed order
    return out.unsqueeze(0), None


def _register() -> None:
    from digirl.policies.hf.loading import hf

    hf().AttentionInterface.register(VARLEN_NAME, varlen_sdpa)


def enable_fast_vision_attention(model: Any) -> int:
    """Route the model's Qwen-VL vision attention through :func:`varlen_sdpa`; returns the blocks switched.

    Models whose vision tower is not packed (LLaVA, Idefics3, ...) are left alone (0). A tower
    already on flash-attn keeps it.
    """
    configs = {}
    for name, m in model.named_modules():
        if type(m).__name__.endswith("VisionAttention") and hasattr(m, "config") and "visual" in name:
            configs[id(m.config)] = m.config
    switched = 0
    for cfg in configs.values():
        current = getattr(cfg, "_attn_implementation", None)
        if current and "flash_attention" in current:
            continue
        _register()
        cfg._attn_implementation = VARLEN_NAME
        switched += 1
    return switched


def _subset(pixel_values: Any, args: tuple[Any, ...], kwargs: dict[str, Any], images: list[int], total: int) -> Any:
    """``get_image_features`` arguments for the listed images only, or ``None`` for an unknown layout.

    Qwen-VL: ``pixel_values`` packs each image's patches as rows (``image_grid_thw`` says how many);
    LLaVA-like: one image per leading index.
    """
    grid = kwargs.get("image_grid_thw")
    grid_pos = grid is None and bool(args) and torch.is_tensor(args[0]) and args[0].ndim == 2 and args[0].shape[-1] == 3
    if grid_pos:
        grid = args[0]
    if torch.is_tensor(grid):
        sizes = grid.prod(-1).tolist()
        if len(sizes) != total or sum(sizes) != pixel_values.shape[0]:
            return None
        offs = np.cumsum([0, *sizes])
        px = torch.cat([pixel_values[int(offs[i]) : int(offs[i + 1])] for i in images])
        g = grid[torch.tensor(images, device=grid.device)]
        if grid_pos:
            return px, (g, *args[1:]), kwargs
        return px, args, {**kwargs, "image_grid_thw": g}
    if torch.is_tensor(pixel_values) and pixel_values.shape[0] == total:
        idx = torch.tensor(images, device=pixel_values.device)
        kw = dict(kwargs)
        if torch.is_tensor(kw.get("image_sizes")):
            kw["image_sizes"] = kw["image_sizes"][idx.to(kw["image_sizes"].device)]
        return pixel_values[idx], args, kw
    return None


class VisionFeatureCache:
    """Image features of recently seen observations, served instead of running a frozen vision tower.

    The policy calls :meth:`expect` with the observation keys (and image counts) of the next forward;
    the wrapped ``get_image_features`` returns cached features when all of them are known, else runs
    the tower once (without gradients) and stores each observation's features.
    """

    def __init__(self, capacity: int, device: torch.device | None = None) -> None:
        self.capacity = capacity
        #: Where pixel values go before the tower runs (they may arrive on the host); ``None`` = leave them.
        self.device = device
        self.store: OrderedDict[str, list[torch.Tensor]] = OrderedDict()
        self.pending: list[tuple[str, int]] | None = None
        self.hits = 0
        self.misses = 0
        #: False once the model's output turned out not to be cacheable.
        self.enabled = True
        self._template: Any = None

    @classmethod
    def attach(cls, model: Any, capacity: int, device: torch.device | None = None) -> VisionFeatureCache | None:
        """Wrap the innermost ``get_image_features`` of ``model``; ``None`` when it has none.

        ``device``: the model's device, where pixel values passed on the host are moved before the
        tower runs on them.
        """
        owners = [m for m in model.modules() if hasattr(type(m), "get_image_features")]
        if not owners:
            log.info("no get_image_features on %s: vision features are not cached", type(model).__name__)
            return None
        cache = cls(capacity, device)
        inner = owners[-1]
        original = inner.get_image_features

        # generate() picks the arguments it passes by the function's signature: keep the original's.
        @functools.wraps(original)
        def get_image_features(pixel_values: Any, *args: Any, **kwargs: Any) -> Any:
            return cache._serve(original, pixel_values, *args, **kwargs)

        inner.get_image_features = get_image_features
        return cache

    def expect(self, keys: Sequence[tuple[str, int]] | None) -> None:
        """The (observation key, number of images) of the next forward, in batch order; ``None`` = no caching."""
        self.pending = list(keys) if keys is not None else None

    def _serve(self, original: Any, pixel_values: Any, *args: Any, **kwargs: Any) -> Any:
        keys = self.pending
        if keys is None or not self.enabled:
            return original(self._placed(pixel_values), *args, **kwargs)
        missing = [j for j, (k, _) in enumerate(keys) if k not in self.store]
        self.hits += len(keys) - len(missing)
        self.misses += len(missing)
        if missing:
            starts = np.cumsum([0] + [n for _, n in keys])
            images = [int(i) for j in missing for i in range(starts[j], starts[j + 1])]
            sub = None
            if len(missing) < len(keys) and self._template is not None:
                sub = _subset(pixel_values, args, kwargs, images, int(starts[-1]))
            if sub is None:  # the whole batch (first call, or a layout we cannot split)
                sub, images, missing = (pixel_values, args, kwargs), list(range(int(starts[-1]))), list(range(len(keys)))
            with torch.no_grad():
                out = original(self._placed(sub[0]), *sub[1], **sub[2])
            feats = self._unwrap(out)
            if feats is None or len(feats) != len(images):
                self.enabled = False
                return original(self._placed(pixel_values), *args, **kwargs)
            pos = 0
            for j in missing:
                k, n = keys[j]
                self.store[k] = [f.detach() for f in feats[pos : pos + n]]
                pos += n
        cached = [f for k, _ in keys for f in self.store[k]]
        for k, _ in keys:
            self.store.move_to_end(k)
        while len(self.store) > self.capacity:
            self.store.popitem(last=False)
        return self._wrap(cached)

    def _placed(self, pixel_values: Any) -> Any:
        if self.device is None or not torch.is_tensor(pixel_values):
            return pixel_values
        return to_device(pixel_values, self.device)

    def _unwrap(self, out: Any) -> list[torch.Tensor] | None:
        """Per-image features of a ``get_image_features`` result (a ModelOutput's ``pooler_output``)."""
        pooled = getattr(out, "pooler_output", None)
        extra = [f for f in ("deepstack_features",) if getattr(out, f, None) is not None]
        if not isinstance(pooled, (list, tuple)) or extra:
            log.info("unsupported get_image_features output %s: vision features are not cached", type(out).__name__)
            return None
        self._template = type(out)
        return list(pooled)

    def _wrap(self, feats: list[torch.Tensor]) -> Any:
        return self._template(pooler_output=tuple(feats))
