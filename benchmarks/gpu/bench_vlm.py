"""GPU throughput of the hf policy at a real size: actor updates (samples/s, tokens/s, MFU, memory)
and batched acting on the simulator (env steps/s, latency).

The model is a randomly initialised Qwen2.5-VL-3B (the published configuration, built in code: no
download; 4.07 B parameters, 0.67 B in the vision tower), bf16 weights, SDPA. Observations are
simulator screens rendered at 448×952 (the pixel count of a 952×448 screenshot: 544 image tokens)
with a ~100-token text part; the tokenizer is the tiny BPE of ``digirl.testing.tiny_vlm`` (ids are
a subset of the model's 151,936-entry vocabulary, whose full LM head is computed on the action
tokens).

Update variants (each a real ``bc_update`` on ``HFPolicy.log_prob_with_mask``, AdamW, clipping):

- ``hf_baseline``: full fine-tuning as plain Hugging Face code runs it: the vision tower's
  per-window attention loop, gradient checkpointing, unfused AdamW (the issue's baseline);
- ``full``: + one batched SDPA call per window size in the vision tower, fused AdamW;
- ``full_nogc``: the same without gradient checkpointing;
- ``frozen_vision``: the language model trains, the vision tower is frozen and its features cached;
- ``lora`` / ``lora_cached``: LoRA (r=16) on the language model's projections, vision features
  computed every step / cached;
- ``*_compiled``: + ``torch.compile`` of each decoder layer; ``*_accum2``: + two micro-batches of
  ``--batches`` per optimizer step (samples/s and MFU count both).

MFU = model FLOPs of the update / step time / peak bf16 FLOP/s. Model FLOPs per sample: for each
linear layer 2·params·tokens forward; attention 4·S²·d per layer forward (2·S²·d for causal
language-model attention; vision windows and images are counted per window / image); the LM head
only at the scored action tokens. Backward: 2× forward for parts whose weights train; 1× for frozen
parts that gradients flow through (LoRA's frozen base: activation gradients only); 0 for frozen
parts gradients do not reach (the vision tower under LoRA / freeze_vision) — and a cached vision
tower costs nothing. Recomputation by gradient checkpointing is not counted (it is overhead).

    PYTHONPATH=. python benchmarks/gpu/bench_vlm.py --out results.json           # on a GPU
    PYTHONPATH=. python benchmarks/gpu/bench_vlm.py --model tiny --device cpu    # smoke test
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

# Dense bf16 peak (TFLOP/s) by device name fragment.
PEAKS = {"H100 PCIe": 756.0, "H100": 989.4, "H200": 989.4, "A100": 312.0, "L40S": 362.0, "4090": 165.2}

VARIANTS = {
    "hf_baseline": {"fast_vision_attention": False, "gradient_checkpointing": True, "fused": False},
    "full": {"gradient_checkpointing": True},
    "full_nogc": {"gradient_checkpointing": False},
    "full_vgc": {"gradient_checkpointing": False, "vision_checkpointing": True},
    "frozen_vision": {"freeze_vision": True, "gradient_checkpointing": False},
    "lora": {"lora_r": 16, "vision_cache": 0, "gradient_checkpointing": False},
    "lora_cached": {"lora_r": 16, "gradient_checkpointing": False},
    # torch.compile on each language-model decoder layer (fuses RMSNorm, rotary, SwiGLU elementwise ops)
    "frozen_vision_compiled": {"freeze_vision": True, "gradient_checkpointing": False, "compile_lm": True},
    "lora_cached_compiled": {"lora_r": 16, "gradient_checkpointing": False, "compile_lm": True},
    # two micro-batches per optimizer step: the step's fixed costs (AdamW, clipping) over twice the samples
    "frozen_vision_compiled_accum2": {
        "freeze_vision": True,
        "gradient_checkpointing": False,
        "compile_lm": True,
        "grad_accum": 2,
    },
    # the same with Qwen-VL's position ids computed inside forward on the device (the model's default)
    "frozen_vision_compiled_devpos": {
        "freeze_vision": True,
        "gradient_checkpointing": False,
        "compile_lm": True,
        "host_positions": False,
    },
    # padded-length classes: 1 = pad to the longest sample only (several shapes per run), 64 = coarser
    "frozen_vision_compiled_pad1": {
        "freeze_vision": True,
        "gradient_checkpointing": False,
        "compile_lm": True,
        "pad_to_multiple": 1,
    },
    "frozen_vision_compiled_pad64": {
        "freeze_vision": True,
        "gradient_checkpointing": False,
        "compile_lm": True,
        "pad_to_multiple": 64,
    },
    # the update step reading its losses back before the optimizer step (the host drains the device each step)
    "frozen_vision_compiled_sync": {
        "freeze_vision": True,
        "gradient_checkpointing": False,
        "compile_lm": True,
        "readback": "sync",
    },
    "lora_cached_compiled_accum2": {"lora_r": 16, "gradient_checkpointing": False, "compile_lm": True, "grad_accum": 2},
}


def qwen25_vl_3b_config(tf: Any) -> Any:
    """Qwen2.5-VL-3B-Instruct's published architecture (config.json of the release)."""
    text = {
        "vocab_size": 151936,
        "hidden_size": 2048,
        "intermediate_size": 11008,
        "num_hidden_layers": 36,
        "num_attention_heads": 16,
        "num_key_value_heads": 2,
        "max_position_embeddings": 128000,
        "rms_norm_eps": 1e-6,
        "tie_word_embeddings": True,
        "rope_parameters": {"rope_type": "default", "rope_theta": 1e6, "mrope_section": [16, 24, 24]},
        "bos_token_id": None,
        "eos_token_id": 2,
        "pad_token_id": 0,
    }
    vision = {
        "depth": 32,
        "hidden_size": 1280,
        "intermediate_size": 3420,
        "num_heads": 16,
        "out_hidden_size": 2048,
        "patch_size": 14,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
        "window_size": 112,
        "fullatt_block_indexes": [7, 15, 23, 31],
        "hidden_act": "silu",
    }
    ids = {"image_token_id": 5, "video_token_id": 6, "vision_start_token_id": 3, "vision_end_token_id": 4}
    cfg = tf.Qwen2_5_VLConfig(text_config=text, vision_config=vision, tie_word_embeddings=True, **ids)
    cfg.bos_token_id, cfg.eos_token_id, cfg.pad_token_id = None, 2, 0
    return cfg


def build_model(kind: str, device: torch.device, dtype: torch.dtype) -> tuple[Any, Any]:
    from digirl.policies.hf.loading import hf
    from digirl.testing.tiny_vlm import build_tiny_processor, tiny_config

    tf = hf()
    processor = build_tiny_processor("qwen2_5_vl", min_pixels=56 * 56, max_pixels=28 * 28 * 16384)
    if kind == "tiny":
        cfg = tiny_config("qwen2_5_vl", vocab_size=len(processor.tokenizer), window_size=112)
    else:
        cfg = qwen25_vl_3b_config(tf)
    cfg._attn_implementation = "sdpa"
    torch.manual_seed(0)
    with torch.device(device):
        model = tf.Qwen2_5_VLForConditionalGeneration._from_config(cfg, dtype=dtype)
    return model.eval(), processor


def observations(n: int, size: tuple[int, int]) -> list[tuple[Any, Any]]:
    """(observation, expert action) pairs from the simulator rendered at ``size``."""
    from digirl.envs.registry import make
    from digirl.sim.tasks.tasksets import load_taskset

    env = make("digirl/sim-general-v0", width=size[0], height=size[1])
    tasks = load_taskset("general", "train")
    out: list[tuple[Any, Any]] = []
    i = 0
    while len(out) < n:
        obs, _ = env.reset(seed=i, options={"task": tasks[(7 * i) % len(tasks)]})
        done = False
        while not done and len(out) < n:
            a = env.cheat()
            if a is None:
                break
            out.append((obs, a))
            obs, _, term, trunc, _ = env.step(a)
            done = term or trunc
        i += 1
    return out


def param_counts(model: Any) -> dict[str, int]:
    c = {"vision": 0, "vision_merger": 0, "lm_dense": 0, "embed": 0, "total": 0}
    for name, p in model.named_parameters():
        c["total"] += p.numel()
        if "visual.merger" in name:
            c["vision_merger"] += p.numel()
        elif "visual" in name:
            c["vision"] += p.numel()
        elif "embed_tokens" in name or "lm_head" in name:
            c["embed"] += p.numel()
        else:
            c["lm_dense"] += p.numel()
    return c


def flops_per_sample(model_cfg: Any, counts: dict[str, int], geo: dict[str, Any], variant: dict[str, Any]) -> dict[str, float]:
    """Model FLOPs of one sample's update, by part (see the module docstring)."""
    t, v = model_cfg.text_config, model_cfg.vision_config
    seq, kept, patches = geo["seq_len"], geo["scored_tokens"], geo["patches"]
    window_lens, n_full = geo["window_lens"], len(v.fullatt_block_indexes)
    d_attn = t.num_attention_heads * (t.hidden_size // t.num_attention_heads)
    lm_fwd = 2 * counts["lm_dense"] * seq + t.num_hidden_layers * 2 * seq * seq * d_attn  # causal attention: half of 4·S²·d
    head_fwd = 2 * t.hidden_size * t.vocab_size * kept
    vis_lin = 2 * counts["vision"] * patches + 2 * counts["vision_merger"] * patches // 4  # the merger sees merged tokens
    vis_att = (v.depth - n_full) * sum(4 * w * w * v.hidden_size for w in window_lens) + n_full * 4 * patches**2 * v.hidden_size
    vis_fwd = vis_lin + vis_att
    lora = variant.get("lora_r", 0) > 0
    frozen_vision = lora or variant.get("freeze_vision", False)
    cached = frozen_vision and variant.get("vision_cache", 2048) > 0
    lm_mult = 2 if lora else 3  # LoRA: forward + activation gradients; full: + weight gradients
    vis = 0.0 if cached else vis_fwd * (1 if frozen_vision else 3)
    return {
        "lm": lm_fwd * lm_mult,
        "lm_head": head_fwd * lm_mult,
        "vision": vis,
        "total": lm_fwd * lm_mult + head_fwd * lm_mult + vis,
    }


def window_lengths(grid_h: int, grid_w: int, merge: int, window: int, patch: int) -> list[int]:
    """Patches per attention window of one image (Qwen2.5-VL windows of ``window`` pixels)."""
    per = window // merge // patch  # merged units per window side
    mh, mw = grid_h // merge, grid_w // merge
    out = []
    for r in range(0, mh, per):
        for c in range(0, mw, per):
            out.append(min(per, mh - r) * min(per, mw - c) * merge * merge)
    return out


@contextlib.contextmanager
def sdpa_counter() -> Iterator[dict[str, int]]:
    """Counts calls of torch's scaled_dot_product_attention (the vision tower's kernel launches)."""
    import torch.nn.functional as F

    counts = {"sdpa_calls": 0}
    orig = F.scaled_dot_product_attention

    def counting(*a: Any, **k: Any) -> Any:
        counts["sdpa_calls"] += 1
        return orig(*a, **k)

    F.scaled_dot_product_attention = counting  # type: ignore[assignment]
    torch.nn.functional.scaled_dot_product_attention = counting  # type: ignore[assignment]
    try:
        yield counts
    finally:
        F.scaled_dot_product_attention = orig  # type: ignore[assignment]
        torch.nn.functional.scaled_dot_product_attention = orig  # type: ignore[assignment]


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def reset_model(model: Any) -> Any:
    """The plain model again after a variant: adapters removed, no gradients, everything trainable,
    default vision attention, no gradient checkpointing."""
    if hasattr(model, "peft_config"):
        model = model.unload()
    for p in model.parameters():
        p.grad = None
        p.requires_grad_(True)
    model.gradient_checkpointing_disable()
    model.model.visual.gradient_checkpointing_disable()
    model.model.visual.config._attn_implementation = "sdpa"
    for layer in model.model.language_model.layers:
        layer._compiled_call_impl = None  # undo nn.Module.compile
    torch._dynamo.reset()  # each variant compiles afresh (compilations count against one recompile limit)
    return model


def bench_update(
    name: str,
    holder: dict[str, Any],
    processor: Any,
    pairs: list[tuple[Any, Any]],
    batch: int,
    steps: int,
    warmup: int,
    device: torch.device,
    args: Any,
) -> dict[str, Any]:
    """One update variant on ``holder["model"]`` (put back, plain, afterwards, also on failure)."""
    try:
        return _bench_update(name, holder, processor, pairs, batch, steps, warmup, device, args)
    finally:
        holder["model"] = reset_model(holder.pop("policy").model if "policy" in holder else holder["model"])


def _bench_update(
    name: str,
    holder: dict[str, Any],
    processor: Any,
    pairs: list[tuple[Any, Any]],
    batch: int,
    steps: int,
    warmup: int,
    device: torch.device,
    args: Any,
) -> dict[str, Any]:
    from digirl.algorithms.base import Sample, bc_update
    from digirl.policies.config import HFPolicyConfig
    from digirl.policies.hf.policy import HFPolicy

    v = VARIANTS[name]
    model = holder["model"]
    cfg = HFPolicyConfig(
        prompt=args.prompt,
        max_new_tokens=args.max_new_tokens,
        **{k: val for k, val in v.items() if k in HFPolicyConfig.__dataclass_fields__},
    )
    cfg = replace(cfg, lora_targets="q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj")
    policy = HFPolicy.from_model(model, processor, cfg, device=device)
    holder["policy"] = policy
    if v.get("host_positions") is False:
        policy._rope_index = None
    params = list(policy.parameters())
    fused = v.get("fused", True) and device.type == "cuda"
    opt = torch.optim.AdamW(params, lr=1e-5, fused=fused or None, foreach=None if fused else True)
    if v.get("readback") == "sync":  # bc_update then reads losses before each optimizer step (the step stays fused)
        opt.defaults["fused"] = False
    samples = [Sample(o, a) for o, a in pairs]
    t0 = time.perf_counter()
    encs = [policy.encode(o) for o, _ in pairs]
    encode_s = (time.perf_counter() - t0) / len(pairs)
    text = [len(e.prompt_ids) for e in encs]
    targets = [len(policy.tokenizer(policy.action_text(e, a))["input_ids"]) + 1 for e, (_, a) in zip(encs, pairs)]
    expressible = float(np.mean([t <= args.max_new_tokens for t in targets]))
    if expressible < 1.0:
        raise ValueError(f"only {expressible:.0%} of the actions fit in --max-new-tokens {args.max_new_tokens}")
    grid = encs[0].images["image_grid_thw"][0].tolist()
    mcfg = policy.model.config if not policy.is_lora else policy.model.base_model.model.config
    vc = mcfg.vision_config
    geo = {
        "seq_len": float(np.mean([t + g for t, g in zip(text, targets)])),
        "image_tokens": int(grid[1] * grid[2] // 4),
        "text_tokens": float(np.mean([t - grid[1] * grid[2] // 4 for t in text]) + np.mean(targets)),
        "scored_tokens": float(np.mean(targets)),
        "patches": int(grid[1] * grid[2]),
        "window_lens": window_lengths(grid[1], grid[2], vc.spatial_merge_size, vc.window_size, vc.patch_size),
    }
    counts = param_counts(policy.model if not policy.is_lora else policy.model.base_model.model)
    flops = flops_per_sample(mcfg, counts, geo, v)
    rng = np.random.default_rng(0)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    accum = int(v.get("grad_accum", 1))
    kw = {"batch_size": batch, "grad_accum": accum, "max_grad_norm": 1.0, "rng": rng}
    if policy._vision is not None:  # an update revisits its samples: measure the steady state
        with torch.no_grad():
            for i in range(0, len(pairs), batch):
                policy.log_prob_with_mask([o for o, _ in pairs[i : i + batch]], [a for _, a in pairs[i : i + batch]])
        policy._vision.hits = policy._vision.misses = 0
    t0 = time.perf_counter()
    bc_update(policy, opt, samples, steps=warmup, **kw)  # warm up (kernels, allocator, compilation)
    sync(device)
    warmup_s = time.perf_counter() - t0
    calls: dict[str, int | None] = {"sdpa_calls": None}
    if not v.get("compile_lm"):  # counting patches SDPA, which compiled layers would guard on and recompile
        with sdpa_counter() as counted:
            bc_update(policy, opt, samples, steps=1, **kw)
            sync(device)
        calls = dict(counted)
    # Each step timed on its own: minibatches differ in padded length, and a rare slow step (a new
    # shape compiled, the allocator growing) shows in the mean but not in the median.
    graphs0 = _compiled_graphs()
    gpu0 = _gpu_state(device)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        bc_update(policy, opt, samples, steps=1, **kw)
        sync(device)
        times.append(time.perf_counter() - t0)
    # As a training loop runs it: all steps in one call, no synchronisation between them (the host
    # prepares step i + 1 while the device runs step i).
    t0 = time.perf_counter()
    bc_update(policy, opt, samples, steps=steps, **kw)
    sync(device)
    loop_s = (time.perf_counter() - t0) / steps
    dt = float(np.mean(times))
    med = float(np.median(times))
    profile = None
    if args.profile and f"{name}:{batch}" in args.profile and device.type == "cuda":
        profile = profile_step(policy, opt, samples, kw)
    peak = PEAKS_TFLOPS * 1e12
    n = batch * accum  # samples per optimizer step
    out = {
        "variant": name,
        "settings": v,
        "batch": batch,
        "grad_accum": accum,
        "step_s": dt,
        "samples_per_s": n / dt,
        "tokens_per_s": n * geo["seq_len"] / dt,
        "model_tflops_per_step": flops["total"] * n / 1e12,
        "flops_by_part_per_sample_tflop": {k: x / 1e12 for k, x in flops.items()},
        "mfu": flops["total"] * n / dt / peak,
        "step_s_median": med,
        "loop_step_s": loop_s,
        "samples_per_s_loop": n / loop_s,
        "mfu_loop": flops["total"] * n / loop_s / peak,
        "graphs_compiled_while_timed": _compiled_graphs() - graphs0,
        "gpu_before": gpu0,
        "gpu_after": _gpu_state(device),
        "step_s_all": times,
        "samples_per_s_median_step": n / med,
        "mfu_median_step": flops["total"] * n / med / peak,
        "peak_mem_gib": torch.cuda.max_memory_allocated() / 2**30 if device.type == "cuda" else None,
        "sdpa_calls_per_step": calls["sdpa_calls"],
        "trainable_params": sum(p.numel() for p in params),
        "encode_ms_per_sample": 1e3 * encode_s,
        "geometry": {k: val for k, val in geo.items() if k != "window_lens"} | {"windows_per_image": len(geo["window_lens"])},
    }
    if policy._vision is not None:
        out["vision_cache"] = {"hits": policy._vision.hits, "misses": policy._vision.misses}
        policy._vision.store.clear()
    out["vision_attention"] = mcfg.vision_config._attn_implementation
    out["warmup_s"] = warmup_s
    if profile is not None:
        out["profile"] = profile
    return out


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (variant, batch) over repeats: MFU of every repeat (mean of its steps), their median, min and max."""
    groups: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["variant"], r["batch"]), []).append(r)
    out = []
    for (variant, batch), rs in groups.items():
        mfu = [r["mfu"] for r in rs]
        out.append(
            {
                "variant": variant,
                "batch": batch,
                "repeats": len(rs),
                "mfu_each": mfu,
                "mfu_median": float(np.median(mfu)),
                "mfu_min": min(mfu),
                "mfu_max": max(mfu),
                "samples_per_s_median": float(np.median([r["samples_per_s"] for r in rs])),
                "mfu_median_step_each": [r["mfu_median_step"] for r in rs],
                "mfu_loop_each": [r["mfu_loop"] for r in rs],
                "mfu_loop_median": float(np.median([r["mfu_loop"] for r in rs])),
                "samples_per_s_loop_median": float(np.median([r["samples_per_s_loop"] for r in rs])),
            }
        )
    return out


def _compiled_graphs() -> int:
    """Graphs torch.compile has produced so far in this process (a recompile while timed shows here)."""
    from torch._dynamo.utils import counters

    return int(counters["stats"]["unique_graphs"])


def _gpu_state(device: torch.device) -> str | None:
    """SM clock, memory clock, power, temperature and active throttle reasons, as nvidia-smi reports them."""
    if device.type != "cuda":
        return None
    q = "clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active"
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader", f"--id={device.index or 0}"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        return out.stdout.strip() or out.stderr.strip()
    except (OSError, subprocess.SubprocessError) as e:
        return f"nvidia-smi: {e}"


def profile_step(policy: Any, opt: Any, samples: list[Any], kw: dict[str, Any]) -> dict[str, Any]:
    """One update step under torch.profiler: GPU busy time vs wall time, and the top kernels."""
    from torch.profiler import ProfilerActivity, profile

    from digirl.algorithms.base import bc_update

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        t0 = time.perf_counter()
        bc_update(policy, opt, samples, steps=1, **kw)
        torch.cuda.synchronize()
        wall = time.perf_counter() - t0
    # Host side: where the host thread spends its time, and the calls that make it wait for the device.
    host = [e for e in prof.key_averages() if e.device_type.name == "CPU"]
    host_top = [
        {"op": e.key[:120], "self_cpu_ms": e.self_cpu_time_total / 1e3, "calls": e.count}
        for e in sorted(host, key=lambda e: e.self_cpu_time_total, reverse=True)[:20]
    ]
    waits = {
        e.key: e.count
        for e in host
        if "Synchronize" in e.key or e.key in ("cudaMemcpy", "aten::item", "aten::_local_scalar_dense")
    }
    # Device rows only (kernels, copies); the aten:: rows carry the same time again as "self device time".
    events = [e for e in prof.key_averages() if e.device_type.name == "CUDA"]
    # Kernels and copies only: op rows (aten::mm) and annotations (Optimizer.step#AdamW.step) repeat their time.
    events = [e for e in events if not e.key.startswith("aten::") and "#" not in e.key]
    kernels = sorted(events, key=lambda e: getattr(e, "self_device_time_total", 0), reverse=True)
    gpu = sum(getattr(e, "self_device_time_total", 0) for e in kernels) / 1e6
    top = [
        {"kernel": e.key[:120], "gpu_ms": getattr(e, "self_device_time_total", 0) / 1e3, "calls": e.count} for e in kernels[:25]
    ]
    return {
        "wall_s": wall,
        "gpu_kernel_s": gpu,
        "kernel_launches": sum(e.count for e in kernels),
        "top_kernels": top,
        "host_top": host_top,
        "host_waits": waits,
    }


def bench_vision_tower(
    model: Any, processor: Any, pairs: list[tuple[Any, Any]], n: int, device: torch.device
) -> list[dict[str, Any]]:
    """Forward + backward of the vision tower alone on ``n`` screenshots: per-window loop vs batched."""
    from digirl.policies.hf.geometry import prepare_image
    from digirl.policies.hf.vision import enable_fast_vision_attention

    imgs = [prepare_image(o.screenshot)[0] for o, _ in pairs[:n]]
    enc = processor.image_processor(images=imgs, return_tensors="pt")
    pix = enc["pixel_values"].to(device, torch.bfloat16 if device.type == "cuda" else torch.float32)
    grid = enc["image_grid_thw"].to(device)
    visual = model.model.visual
    out = []
    for mode in ("hf_per_window", "batched_windows"):
        if mode == "batched_windows":
            enable_fast_vision_attention(model)
        else:
            visual.config._attn_implementation = "sdpa"
        times = []
        with sdpa_counter() as calls:
            for i in range(4):
                sync(device)
                t0 = time.perf_counter()
                o = visual(pix, grid_thw=grid)
                feats = o.pooler_output if getattr(o, "pooler_output", None) is not None else o
                feats = feats if torch.is_tensor(feats) else torch.cat(list(feats))
                feats.float().square().mean().backward()
                sync(device)
                if i:
                    times.append(time.perf_counter() - t0)
                else:
                    calls["sdpa_calls"] = 0
        for p in visual.parameters():
            p.grad = None
        out.append({"mode": mode, "screenshots": n, "fwd_bwd_s": float(np.median(times)), "sdpa_calls": calls["sdpa_calls"] // 3})
    visual.config._attn_implementation = "sdpa"
    return out


def bench_acting(
    policy: Any, n_envs: int, size: tuple[int, int], episodes_per_env: int, *, greedy: bool = False
) -> dict[str, Any]:
    """Env steps/s and act latency of ``policy`` on ``n_envs`` simulator processes (sampled, as in
    collection; ``greedy`` decodes as evaluation does)."""
    from digirl.envs.collector import make_collector
    from digirl.envs.vector import EpisodeJob
    from digirl.sim.tasks.tasksets import load_taskset

    tasks = load_taskset("general", "train")
    lat: list[float] = []

    def act(obs: Any) -> Any:
        t0 = time.perf_counter()
        out = policy.act(obs, greedy=greedy, temperature=1.0)
        lat.append(time.perf_counter() - t0)
        return out

    runner = make_collector(
        "digirl/sim-general-v0", runner="process", num_envs=n_envs, env_kwargs={"width": size[0], "height": size[1]}
    )
    try:
        warm = [EpisodeJob(replace(tasks[i], horizon=2), seed=i) for i in range(n_envs)]
        list(runner.run(act, warm))  # start the workers, warm up the kernels
        lat.clear()
        jobs = [EpisodeJob(tasks[i % len(tasks)], seed=1000 + i) for i in range(n_envs * episodes_per_env)]
        t0 = time.perf_counter()
        trajs = list(runner.run(act, jobs))
        dt = time.perf_counter() - t0
    finally:
        runner.close()
    steps = sum(t.length for t in trajs)
    return {
        "envs": n_envs,
        "decoding": "greedy" if greedy else "sampled",
        "episodes": len(trajs),
        "env_steps": steps,
        "seconds": dt,
        "env_steps_per_s": steps / dt,
        "act_calls": len(lat),
        "act_latency_s_median": float(np.median(lat)) if lat else None,
        "act_latency_s_p90": float(np.quantile(lat, 0.9)) if lat else None,
        "mean_batch": steps / max(1, len(lat)),
        "policy_share": sum(lat) / dt,
        "invalid_action_rate": sum(1 for t in trajs for s in t.steps if not s.action.is_valid) / max(1, steps),
    }


PEAKS_TFLOPS = 0.0


def run_acting(
    holder: dict[str, Any],
    processor: Any,
    size: tuple[int, ...],
    device: torch.device,
    args: Any,
    result: dict[str, Any],
    t_start: float,
    save: Any,
) -> None:
    """The acting benchmark for each ``--act-envs`` count (sampling, as in collection)."""
    from digirl.policies.config import HFPolicyConfig
    from digirl.policies.hf.policy import HFPolicy

    model = reset_model(holder["model"])
    for p in model.parameters():
        p.requires_grad_(False)
    acting = HFPolicy.from_model(
        model, processor, HFPolicyConfig(prompt=args.prompt, max_new_tokens=args.max_new_tokens), device=device
    )
    for n in args.act_envs:
        if time.perf_counter() - t_start > args.budget_s + args.act_budget_s:
            result["errors"].append({"acting_envs": n, "error": "skipped: time budget"})
            continue
        try:
            r = bench_acting(acting, n, size, args.act_episodes)
            result["acting"].append(r)
            print(
                f"acting {n:3d} envs: {r['env_steps_per_s']:6.1f} env steps/s, latency median {r['act_latency_s_median']:.2f} s "
                f"(batch {r['mean_batch']:.1f}, {args.max_new_tokens} new tokens max)",
                flush=True,
            )
        except Exception as e:
            result["errors"].append({"acting_envs": n, "error": f"{type(e).__name__}: {e}"[:500]})
            print(f"acting {n}: {type(e).__name__}: {e}", flush=True)
        save()
    for p in model.parameters():
        p.requires_grad_(True)
    holder["model"] = model


def main() -> int:
    global PEAKS_TFLOPS
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="qwen2.5-vl-3b", choices=["qwen2.5-vl-3b", "tiny"])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--variants", nargs="*", default=list(VARIANTS))
    ap.add_argument("--batches", nargs="*", type=int, default=[8, 16], help="update batch sizes (each variant)")
    ap.add_argument("--baseline-batches", nargs="*", type=int, default=[8])
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument(
        "--repeat", type=int, default=1, help="run the variant list this many times (interleaved), each from a fresh policy"
    )
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--pool", type=int, default=48, help="distinct (observation, action) samples the updates draw from")
    ap.add_argument("--screen", default="448x952", help="simulator screen WxH")
    ap.add_argument("--act-envs", nargs="*", type=int, default=[16, 64])
    ap.add_argument("--act-episodes", type=int, default=1, help="episodes per env in the acting benchmark")
    ap.add_argument("--max-new-tokens", type=int, default=48)
    ap.add_argument(
        "--prompt",
        default="You operate an Android phone. Task: {instruction}\nPrevious actions:\n{history}\nReply with one JSON action.",
    )
    ap.add_argument("--act-first", action="store_true", help="run the acting benchmark before the updates")
    ap.add_argument("--profile", nargs="*", default=[], help="VARIANT:BATCH pairs to profile (one step, torch.profiler)")
    ap.add_argument("--no-vision-tower", dest="vision_tower", action="store_false", help="skip the vision-tower micro-benchmark")
    ap.add_argument("--peak-tflops", type=float, default=0.0, help="override the device's dense bf16 peak")
    ap.add_argument("--budget-s", type=float, default=1e9, help="skip update variants that would start after this many seconds")
    ap.add_argument("--act-budget-s", type=float, default=120.0, help="acting may start until budget-s + this")
    ap.add_argument("--out", default="benchmarks/results/vlm/bench_vlm.json")
    args = ap.parse_args()
    t_start = time.perf_counter()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    device = torch.device(args.device)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or "cpu"
    PEAKS_TFLOPS = args.peak_tflops or next((v for k, v in PEAKS.items() if k in name), 0.0) or 1.0
    size = tuple(int(x) for x in args.screen.lower().split("x"))
    import transformers

    result: dict[str, Any] = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "device": name,
        "peak_bf16_tflops": PEAKS_TFLOPS,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "model": args.model,
        "screen": list(size),
        "update": [],
        "acting": [],
        "errors": [],
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)

    def save() -> None:
        result["elapsed_s"] = time.perf_counter() - t_start
        out.write_text(json.dumps(result, indent=2, default=str))

    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    t0 = time.perf_counter()
    model, processor = build_model(args.model, device, dtype)
    result["build_s"] = time.perf_counter() - t0
    result["params"] = param_counts(model)
    print(
        f"model: {result['params']['total'] / 1e9:.2f} B parameters ({result['params']['vision'] / 1e9:.2f} B vision), "
        f"built in {result['build_s']:.1f} s on {name}",
        flush=True,
    )
    pairs = observations(args.pool, size)
    holder: dict[str, Any] = {"model": model}
    save()
    if args.act_first:
        run_acting(holder, processor, size, device, args, result, t_start, save)
    if args.vision_tower:
        try:
            result["vision_tower"] = bench_vision_tower(model, processor, pairs, 8, device)
            for r in result["vision_tower"]:
                print(
                    f"vision tower, {r['mode']:16s}: fwd+bwd {r['fwd_bwd_s']:.3f} s for 8 screenshots, "
                    f"{r['sdpa_calls']} attention calls",
                    flush=True,
                )
        except Exception as e:
            result["errors"].append({"vision_tower": f"{type(e).__name__}: {e}"[:500]})
        gc.collect()
        save()
    # Repeats interleave the variants, so a drift of the host (clocks, temperature) touches all of them.
    runs = [
        (rep, v, b)
        for rep in range(args.repeat)
        for v in args.variants
        for b in (args.baseline_batches if v == "hf_baseline" else args.batches)
    ]
    for rep, variant, batch in runs:
        if time.perf_counter() - t_start > args.budget_s:
            result["errors"].append({"variant": variant, "batch": batch, "error": "skipped: time budget"})
            continue
        try:
            r = bench_update(variant, holder, processor, pairs, batch, args.steps, args.warmup, device, args)
            r["repeat"] = rep
            result["update"].append(r)
            result["summary"] = summarize(result["update"])
            print(
                f"{variant:14s} batch {batch:3d}x{r['grad_accum']}: {r['samples_per_s']:7.2f} samples/s "
                f"{r['tokens_per_s']:9.0f} tokens/s "
                f"MFU {100 * r['mfu']:5.1f}% (median step {100 * r['mfu_median_step']:5.1f}%, loop {100 * r['mfu_loop']:5.1f}%)  "
                f"peak {r['peak_mem_gib'] or 0:5.1f} GiB  "
                f"sdpa calls/step {r['sdpa_calls_per_step']}  graphs compiled while timed {r['graphs_compiled_while_timed']}",
                flush=True,
            )
        except torch.OutOfMemoryError as e:
            result["errors"].append({"variant": variant, "batch": batch, "error": f"out of memory: {str(e)[:200]}"})
            print(f"{variant} batch {batch}: out of memory", flush=True)
        except Exception as e:  # record and go on: one variant must not lose the others
            result["errors"].append({"variant": variant, "batch": batch, "error": f"{type(e).__name__}: {e}"[:500]})
            print(f"{variant} batch {batch}: {type(e).__name__}: {e}", flush=True)
        finally:
            gc.collect()
            if device.type == "cuda":
                torch.cuda.empty_cache()
            save()
    if not args.act_first:
        run_acting(holder, processor, size, device, args, result, t_start, save)
    save()
    print(f"wrote {out} ({result['elapsed_s']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
