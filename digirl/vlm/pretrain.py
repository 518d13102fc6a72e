"""``pretrain``: a screen VLM trained from scratch on simulator data, written as a plain Hugging Face folder.

The run, top to bottom: train the tokenizer on the simulator's text (train-split instructions and
screens) and save the processor; build the model from its config; then optimise next-token loss on
the answers of :mod:`digirl.vlm.data`'s examples, which data processes generate on every CPU core
while the accelerator trains (batch ``b`` is a pure function of the seed and ``b``, so any number
of processes, and a resumed run, see the same data). Every ``checkpoint_every`` steps the weights,
the optimizer and the step are saved atomically under ``OUT/.pretrain``; a run killed at any point
(kill -9 included) and started again continues from there — to the same weights in deterministic
mode. At the end the model is saved with ``save_pretrained`` next to its processor, measured on
held-out tasks and screens (:mod:`digirl.vlm.evaluate`) and described in a model card.
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from digirl.config.core import config_to_dict, save_config
from digirl.core.errors import ConfigError, DataError
from digirl.policies.hf.vision import enable_fast_vision_attention
from digirl.vlm.config import RUNTIME_KEYS, PretrainConfig
from digirl.vlm.data import DataSpec, ExampleSource, data_spec, iter_examples
from digirl.vlm.model import Batch, Collator, build_model, build_processor, corpus_of

__all__ = ["data_spec", "pretrain"]

log = logging.getLogger(__name__)
_STATE = ".pretrain"
#: Dense bf16 peak of the cards MFU is reported against (FLOP/s, from the vendors' data sheets).
_PEAK_BF16 = {"H100": 989e12, "H200": 989e12, "A100": 312e12, "L40S": 362e12, "A10G": 125e12}


def _validate(cfg: PretrainConfig) -> None:
    for key in ("steps", "batch_size", "checkpoint_every", "log_every"):
        if getattr(cfg, key) < 1:
            raise ConfigError(f"{key} must be >= 1, got {getattr(cfg, key)}")
    if not (cfg.lr > 0 and math.isfinite(cfg.lr)):
        raise ConfigError(f"lr must be a finite number > 0, got {cfg.lr}")
    for key in ("noise", "rename"):
        if not 0 <= getattr(cfg, key) <= 1:
            raise ConfigError(f"{key} must be in [0, 1], got {getattr(cfg, key)}")
    if cfg.device not in ("auto", "cuda", "cpu"):
        raise ConfigError(f"device must be auto, cuda or cpu, got {cfg.device!r}")
    if cfg.device == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device=cuda, but no CUDA device is available")
    from digirl.sim.intents import HORIZONS

    for t in data_spec(cfg).tasksets:
        if t not in HORIZONS:
            raise ConfigError(f"tasksets: unknown simulator task set {t!r}; choose from {', '.join(HORIZONS)}")


class _Batches(torch.utils.data.Dataset[Batch]):
    """Batch ``b`` of the stream, made in whichever data process asks for it."""

    def __init__(self, spec: DataSpec, collator: Collator, batch_size: int, total: int) -> None:
        self.spec, self.collator, self.batch_size, self.total = spec, collator, batch_size, total
        self._source: ExampleSource | None = None

    def __len__(self) -> int:
        return self.total

    def __getitem__(self, index: int) -> Batch:
        if self._source is None:
            self._source = ExampleSource(self.spec)
        return self.collator(self._source.batch(index, self.batch_size))


def _batches(cfg: PretrainConfig, collator: Collator, start: int) -> Iterator[Batch]:
    ds = _Batches(data_spec(cfg), collator, cfg.batch_size, cfg.steps)
    workers = cfg.workers if cfg.workers >= 0 else max(1, (os.cpu_count() or 2) - 1)
    loader = torch.utils.data.DataLoader(
        ds,
        batch_size=None,
        sampler=range(start, cfg.steps),
        num_workers=workers,
        pin_memory=torch.cuda.is_available(),
        prefetch_factor=4 if workers else None,
        persistent_workers=False,
    )
    yield from loader


def _lr(cfg: PretrainConfig, step: int) -> float:
    warm = max(1, int(cfg.warmup * cfg.steps))
    if step < warm:
        return cfg.lr * (step + 1) / warm
    t = (step - warm) / max(1, cfg.steps - warm)
    return cfg.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, t))))


def _optimizer(model: Any, cfg: PretrainConfig, device: torch.device) -> torch.optim.Optimizer:
    decay = [p for p in model.parameters() if p.ndim >= 2]
    rest = [p for p in model.parameters() if p.ndim < 2]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": rest, "weight_decay": 0.0}]
    fused = device.type == "cuda"
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(0.9, 0.95), eps=1e-8, fused=fused)


# ---------------------------------------------------------------------------- checkpoints
def _save_state(out: Path, model: Any, opt: torch.optim.Optimizer, info: dict[str, Any]) -> None:
    """Weights, optimizer and progress, swapped in atomically (a kill leaves the previous one whole)."""
    from safetensors.torch import save_file

    root = out / _STATE
    tmp, cur, old = root / "tmp", root / "ckpt", root / "old"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    save_file({k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}, str(tmp / "model.safetensors"))
    torch.save(opt.state_dict(), tmp / "optimizer.pt")
    (tmp / "state.json").write_text(json.dumps(info))
    for f in tmp.iterdir():
        with open(f, "rb") as fh:
            os.fsync(fh.fileno())
    shutil.rmtree(old, ignore_errors=True)
    if cur.exists():
        cur.rename(old)
    tmp.rename(cur)
    shutil.rmtree(old, ignore_errors=True)


def _load_state(out: Path, model: Any, opt: torch.optim.Optimizer) -> dict[str, Any] | None:
    from safetensors.torch import load_file

    root = out / _STATE
    for name in ("ckpt", "old"):  # "old" is whole only when a kill fell between the two renames
        d = root / name
        if not (d / "state.json").is_file():
            continue
        try:
            info: dict[str, Any] = json.loads((d / "state.json").read_text())
            model.load_state_dict(load_file(str(d / "model.safetensors")))
            opt.load_state_dict(torch.load(d / "optimizer.pt", weights_only=True))
        except (OSError, ValueError, RuntimeError, KeyError) as e:
            raise DataError(f"{d}: unreadable pretraining checkpoint ({e}); delete it to start over") from e
        return info
    return None


# ---------------------------------------------------------------------------- the run
def _device(cfg: PretrainConfig) -> torch.device:
    if cfg.device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(cfg.device)


def _prepare(cfg: PretrainConfig, out: Path) -> Any:
    """The processor: trained and saved on the first start, read back on a resume."""
    from digirl.policies.hf.loading import load_processor

    if (out / "tokenizer.json").is_file():
        return load_processor(out)
    t0 = time.perf_counter()
    examples = list(iter_examples(replace(data_spec(cfg), stream=2), cfg.tokenizer_examples))
    processor = build_processor(cfg.model, corpus_of(examples), seed=cfg.seed)
    processor.save_pretrained(out)
    log.info("tokenizer: %d tokens from %d examples in %.1f s", len(processor.tokenizer), len(examples), time.perf_counter() - t0)
    return processor


def _flops_per_example(model: Any, collator: Collator, text_tokens: float) -> float:
    """Training FLOPs of one example, 6 · parameters · tokens for the language model (image tokens
    included) and the vision tower (its patches), the LM head counted at every position."""
    vision = sum(p.numel() for n, p in model.named_parameters() if ".visual." in f".{n}")
    embed = model.get_input_embeddings().weight.numel()
    lm = sum(p.numel() for p in model.parameters()) - vision - embed
    patches = collator.image_tokens * 4
    return float(6.0 * (lm * text_tokens + vision * patches))


def _peak(device: torch.device) -> float | None:
    if device.type != "cuda":
        return None
    name = torch.cuda.get_device_name(device)
    return next((float(v) for k, v in _PEAK_BF16.items() if k in name), None)


def _finished(cfg: PretrainConfig, out: Path) -> dict[str, Any] | None:
    """The summary of a finished run in ``out``; an error when ``out`` holds a run of other settings."""
    saved = out / "pretrain.yaml"
    if not saved.is_file():
        return None
    from digirl.config.core import load_config_file

    before = config_to_dict(load_config_file(PretrainConfig, saved))
    now = config_to_dict(cfg)
    changed = sorted(k for k in now if now[k] != before.get(k) and k not in RUNTIME_KEYS)
    if changed:
        raise ConfigError(
            f"{out} holds a pretraining run with other settings ({', '.join(changed)}); use another folder "
            "or the same settings to resume it"
        )
    if (out / "pretrain.json").is_file() and not (out / _STATE).exists():
        log.info("%s: this pretraining run has finished; its summary is in pretrain.json", out)
        summary: dict[str, Any] = json.loads((out / "pretrain.json").read_text())
        return summary
    return None


class _Meter:
    """Loss, tokens and examples since the last progress line (the loss stays on the device: no sync per step)."""

    def __init__(self, model: Any, collator: Collator, device: torch.device, start: int, seconds: float) -> None:
        self.model, self.collator, self.device, self.start, self.before = model, collator, device, start, seconds
        self.peak = _peak(device)
        self.t0 = time.perf_counter()
        self._reset()

    def _reset(self) -> None:
        self.since, self.tokens, self.examples, self.n = time.perf_counter(), 0, 0, 0
        self.loss = torch.zeros((), device=self.device)

    def add(self, batch: Batch, loss: torch.Tensor) -> None:
        self.tokens += int(batch.attention_mask.sum())
        self.examples += len(batch.objectives)
        self.loss += loss.detach()
        self.n += 1

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def row(self, cfg: PretrainConfig, step: int) -> dict[str, Any]:
        """One progress line (logged) and its row for ``pretrain.json``; starts the next interval."""
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        dt = time.perf_counter() - self.since
        text_tokens = self.tokens / max(1, self.examples) - self.collator.image_tokens
        flops = _flops_per_example(self.model, self.collator, text_tokens) * self.examples
        mfu = flops / dt / self.peak if self.peak else None
        row = {
            "step": step,
            "loss": round(float(self.loss) / max(1, self.n), 4),
            "lr": _lr(cfg, step - 1),
            "tokens_per_s": round(self.tokens / dt),
            "examples_per_s": round(self.examples / dt, 1),
            "mfu": round(mfu, 4) if mfu is not None else None,
            "elapsed_s": round(self.before + self.elapsed(), 1),
        }
        eta = self.elapsed() / (step - self.start) * (cfg.steps - step)
        mfu_text = f"{mfu:.1%}" if mfu is not None else "n/a"
        log.info(
            "step %d/%d  loss %.4f  %s tok/s  %.1f ex/s  MFU %s  ETA %.0f s",
            *(step, cfg.steps, row["loss"], f"{row['tokens_per_s']:,}", row["examples_per_s"], mfu_text, eta),
        )
        self._reset()
        return row


def _train_step(
    model: Any, opt: torch.optim.Optimizer, batch: Batch, collator: Collator, cfg: PretrainConfig, amp: bool
) -> torch.Tensor:
    device = next(model.parameters()).device
    inputs = collator.model_inputs(
        batch.input_ids.to(device, non_blocking=True),
        batch.attention_mask.to(device, non_blocking=True),
        batch.pixels.to(device, non_blocking=True),
        positions=True,
    )
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
        outp = model(**inputs, labels=batch.labels.to(device, non_blocking=True))
    outp.loss.backward()
    if cfg.grad_clip > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
    opt.step()
    opt.zero_grad(set_to_none=True)
    loss: torch.Tensor = outp.loss
    return loss


def pretrain(cfg: PretrainConfig, out_dir: str | Path) -> dict[str, Any]:
    """Pretrain (or resume) into ``out_dir``; returns the run's summary (also in ``pretrain.json``)."""
    _validate(cfg)
    out = Path(out_dir)
    done = _finished(cfg, out)
    if done is not None:
        return done
    out.mkdir(parents=True, exist_ok=True)
    save_config(cfg, out / "pretrain.yaml")
    if cfg.deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True)
    device = _device(cfg)
    processor = _prepare(cfg, out)
    collator = Collator(processor)
    model = build_model(cfg.model, processor, seed=cfg.seed).to(device)
    model.train()
    # One attention call per layer for all screens of a batch (transformers loops over them without flash-attn).
    enable_fast_vision_attention(model)
    opt = _optimizer(model, cfg, device)
    info = _load_state(out, model, opt) or {"step": 0, "seconds": 0.0, "log": []}
    step = start = int(info["step"])
    if start > 0:
        log.info("resuming at step %d of %d", start, cfg.steps)
    if cfg.compile and device.type == "cuda":
        for layer in model.model.language_model.layers:
            layer.compile()
    amp = cfg.bf16 and device.type == "cuda"
    meter = _Meter(model, collator, device, start, float(info["seconds"]))
    for batch in _batches(cfg, collator, start):
        for group in opt.param_groups:
            group["lr"] = _lr(cfg, step)
        meter.add(batch, _train_step(model, opt, batch, collator, cfg, amp))
        step += 1
        if step % cfg.log_every == 0 or step == cfg.steps:
            info["log"].append(meter.row(cfg, step))
        pause = cfg.stop_after_s > 0 and meter.elapsed() >= cfg.stop_after_s and step < cfg.steps
        if step % cfg.checkpoint_every == 0 or step == cfg.steps or pause:
            info["step"] = step
            _save_state(out, model, opt, {**info, "seconds": info["seconds"] + meter.elapsed()})
        if pause:
            log.info("paused at step %d of %d (stop_after_s); run the same command to go on", step, cfg.steps)
            return {"paused": True, "step": step, "steps": cfg.steps, "log": info["log"]}
    return _finish(cfg, out, model, processor, float(info["seconds"]) + meter.elapsed(), info["log"], device)


def _describe_processor(out: Path) -> None:
    """Name the real processor class and its video part in ``processor_config.json``, as a released
    Qwen2-VL folder does, so ``AutoProcessor.from_pretrained`` builds the whole processor (its video
    part needs torchvision, which transformers requires for Qwen2-VL's processor)."""
    f = out / "processor_config.json"
    data: dict[str, Any] = json.loads(f.read_text()) if f.is_file() else {}
    data["processor_class"] = "Qwen2VLProcessor"
    ip = data.get("image_processor", {})
    data["video_processor"] = {
        "video_processor_type": "Qwen2VLVideoProcessor",
        **{k: ip[k] for k in ("image_mean", "image_std", "merge_size", "patch_size", "temporal_patch_size", "size") if k in ip},
    }
    f.write_text(json.dumps(data, indent=2) + "\n")


def _finish(
    cfg: PretrainConfig,
    out: Path,
    model: Any,
    processor: Any,
    seconds: float,
    log_rows: list[dict[str, Any]],
    device: torch.device,
) -> dict[str, Any]:
    from digirl.vlm.card import write_card
    from digirl.vlm.evaluate import evaluate

    model.eval()
    model.save_pretrained(out)
    processor.save_pretrained(out)
    _describe_processor(out)
    quality = evaluate(out, cfg, device=device, model=model, processor=processor) if cfg.eval_examples > 0 else {}
    summary = {
        "config": config_to_dict(cfg, for_save=True),
        "parameters": sum(p.numel() for p in model.parameters()),
        "steps": cfg.steps,
        "examples_seen": cfg.steps * cfg.batch_size,
        "train_seconds": round(seconds, 1),
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "quality": quality,
        "log": log_rows,
        "observation": "screenshot",
    }
    (out / "pretrain.json").write_text(json.dumps(summary, indent=2) + "\n")
    write_card(out, summary)
    if not cfg.keep_state:
        shutil.rmtree(out / _STATE, ignore_errors=True)
    return summary
