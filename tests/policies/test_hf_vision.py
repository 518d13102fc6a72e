"""Batched window attention for Qwen-VL vision towers equals transformers' per-window loop."""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("transformers")


@pytest.mark.parametrize("family", ["qwen2_vl", "qwen2_5_vl"])
def test_varlen_vision_attention_matches_the_reference_forward_and_backward(tiny_vlm, family):
    from PIL import Image

    from digirl.policies.hf.loading import load_model, load_processor
    from digirl.policies.hf.vision import VARLEN_NAME, enable_fast_vision_attention

    path = tiny_vlm(family)
    proc = load_processor(path)
    rng = np.random.default_rng(0)
    # Odd sizes: windows of several lengths (edge windows are partial) and images of different sizes.
    imgs = [Image.fromarray(rng.integers(0, 255, (h, w, 3), dtype=np.uint8)) for w, h in [(271, 601), (197, 143), (300, 300)]]
    enc = proc.image_processor(images=imgs, return_tensors="pt")
    outs, grads = [], []
    for fast in (False, True):
        model = load_model(path, dtype=torch.float32, device="cpu")
        if fast:
            assert enable_fast_vision_attention(model) == 1
            assert model.model.visual.config._attn_implementation == VARLEN_NAME
        pix = enc["pixel_values"].clone().requires_grad_(True)
        out = model.model.visual(pix, grid_thw=enc["image_grid_thw"])
        feats = out.pooler_output if hasattr(out, "pooler_output") and out.pooler_output is not None else out
        feats = feats if torch.is_tensor(feats) else torch.cat(list(feats))
        (feats * torch.linspace(-1, 1, feats.numel()).view_as(feats)).sum().backward()
        outs.append(feats.detach())
        grads.append(pix.grad.detach())
    torch.testing.assert_close(outs[1], outs[0], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(grads[1], grads[0], atol=1e-5, rtol=1e-5)


def test_varlen_sdpa_groups_segments_by_length():
    from digirl.policies.hf.vision import varlen_sdpa

    torch.manual_seed(0)
    lens = [5, 3, 5, 1, 3, 5]
    cu = torch.tensor([0, *np.cumsum(lens).tolist()])
    q, k, v = (torch.randn(1, 2, sum(lens), 4) for _ in range(3))
    got, _ = varlen_sdpa(None, q, k, v, scaling=0.5, cu_seq_lens_q=cu, cu_seq_lens_k=cu)
    want = []
    for s, e in zip(cu[:-1].tolist(), cu[1:].tolist()):
        w = torch.softmax(q[0, :, s:e] @ k[0, :, s:e].transpose(-1, -2) * 0.5, -1) @ v[0, :, s:e]
        want.append(w.transpose(0, 1))
    torch.testing.assert_close(got[0], torch.cat(want), atol=1e-6, rtol=1e-6)
