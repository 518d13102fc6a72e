"""Configuration of ``digirl vlm pretrain``: the model's size, the data mix and the schedule.

Presets (``--preset``) set sizes and schedules; any key can then be overridden with ``key=value``
(``digirl config keys`` style). ``tiny`` runs on a CPU in seconds (tests), ``small`` is the one-GPU
model (about 20 minutes on an H100), ``base`` a larger one for several GPUs or a longer loan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from digirl.config.core import cfg_field

__all__ = ["PRESETS", "RUNTIME_KEYS", "ModelSize", "PretrainConfig"]


@dataclass
class ModelSize:
    """A Qwen2-VL-architecture model (``Qwen2VLForConditionalGeneration``), built from scratch."""

    hidden: int = cfg_field(64, "language model width")
    layers: int = cfg_field(2, "language model decoder layers")
    heads: int = cfg_field(4, "attention heads of the language model")
    kv_heads: int = cfg_field(2, "key/value heads of the language model (grouped-query attention)")
    intermediate: int = cfg_field(0, "MLP width of the language model (0 = 2 x hidden)")
    vision_hidden: int = cfg_field(32, "vision tower width")
    vision_depth: int = cfg_field(2, "vision tower blocks")
    vision_heads: int = cfg_field(2, "vision tower attention heads")
    vocab_size: int = cfg_field(1024, "tokenizer vocabulary, trained here on the simulator's text")
    max_pixels: int = cfg_field(28 * 28 * 64, "image pixels at most (a 270x600 screen is resized to fit; 28 px per token)")


@dataclass
class PretrainConfig:
    """Everything a pretraining run depends on (saved as ``pretrain.yaml`` in the output folder)."""

    model: ModelSize = cfg_field(ModelSize, "model size")
    seed: int = cfg_field(0, "seed of the weights and of the data stream")
    steps: int = cfg_field(40, "optimizer steps")
    batch_size: int = cfg_field(16, "examples per step")
    lr: float = cfg_field(3e-3, "peak learning rate (AdamW; linear warm-up, cosine decay to lr / 10)")
    warmup: float = cfg_field(0.03, "fraction of the steps spent warming up")
    weight_decay: float = cfg_field(0.05, "AdamW weight decay (matrices only)")
    grad_clip: float = cfg_field(1.0, "clip the gradient norm to this (0 = off)")
    objectives: str = cfg_field(
        "act=0.4,ground=0.2,read=0.12,list=0.06,effect=0.1,judge=0.12",
        "the data mix: objective=weight, comma separated (act, ground, read, list, effect, judge)",
    )
    noise: float = cfg_field(0.25, "probability that an episode's step is a random action (off-path screens)")
    rename: float = cfg_field(
        0.5,
        "probability that an act example typing text has the words it shares with the instruction renamed to made-up "
        "ones (in both): teaches copying the instruction's words, which held-out tasks need (their entities are unseen)",
    )
    tasksets: str = cfg_field("general,webshop", "simulator task sets the instructions come from (train split only)")
    workers: int = cfg_field(-1, "data processes (-1 = every CPU core but one; 0 = in the training process)")
    device: str = cfg_field("auto", "auto (cuda when present), cuda or cpu")
    bf16: bool = cfg_field(True, "bf16 autocast on CUDA (weights and optimizer stay fp32)")
    compile: bool = cfg_field(False, "torch.compile the language model's decoder layers")
    deterministic: bool = cfg_field(False, "deterministic kernels (bit-identical resume; slower on GPU)")
    checkpoint_every: int = cfg_field(200, "save a resumable checkpoint every this many steps (and at the end)")
    log_every: int = cfg_field(10, "log progress every this many steps")
    tokenizer_examples: int = cfg_field(200, "examples whose text trains the tokenizer")
    eval_examples: int = cfg_field(96, "held-out examples per objective measured at the end (test-split tasks, unseen screens)")
    keep_state: bool = cfg_field(False, "keep the optimizer checkpoint after the run ends (to extend it later)")
    stop_after_s: float = cfg_field(
        0.0, "pause after this many seconds of this process (checkpoint, exit 0; run again to go on); 0 = run to the end"
    )


#: Keys that say how to run, not what is trained: they may differ when a run is resumed.
RUNTIME_KEYS = ("workers", "log_every", "keep_state", "stop_after_s", "eval_examples", "device", "compile")


#: Overrides per preset (applied to the defaults above).
PRESETS: dict[str, dict[str, Any]] = {
    "tiny": {},
    "small": {
        # ~17M parameters: 34 MB in bf16, small enough to carry between GPU loans.
        "model.hidden": 384,
        "model.layers": 6,
        "model.heads": 6,
        "model.kv_heads": 2,
        "model.intermediate": 1024,
        "model.vision_hidden": 256,
        "model.vision_depth": 6,
        "model.vision_heads": 4,
        "model.vocab_size": 4096,
        "model.max_pixels": 280 * 588,
        "steps": 8000,
        "batch_size": 128,
        "compile": True,  # ~25% faster steps on a GPU (benchmarks/results/vlm/step_probe_small_h200.json)
        "lr": 1.5e-3,
        "tokenizer_examples": 3000,
        "checkpoint_every": 500,
        "log_every": 50,
        "eval_examples": 200,
    },
    "base": {
        "model.hidden": 1024,
        "model.layers": 16,
        "model.heads": 16,
        "model.kv_heads": 4,
        "model.intermediate": 2816,
        "model.vision_hidden": 640,
        "model.vision_depth": 12,
        "model.vision_heads": 10,
        "model.vocab_size": 8192,
        "model.max_pixels": 280 * 588,
        "steps": 20000,
        "batch_size": 128,
        "lr": 6e-4,
        "tokenizer_examples": 5000,
        "checkpoint_every": 1000,
        "log_every": 50,
        "eval_examples": 300,
    },
}
