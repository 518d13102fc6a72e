"""Configuration of policies: the options every kind shares, and one config class per kind.

``policy.kind`` picks the implementation (see :mod:`digirl.policies.registry`); its options live
under ``policy.<kind>.*`` (``policy.default.dim=128``). ``policy.init`` is a saved policy folder
(any kind: its ``policy.json`` says which) or, for kinds built on a pretrained model, that model's
local folder. This module imports nothing heavy, so configs load without torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from digirl.core.errors import DataError

__all__ = ["EncoderConfig", "HFPolicyConfig", "PolicyConfig", "PolicyNetConfig"]


def _f(default: Any, help: str) -> Any:
    return field(default=default, metadata={"help": help})


def _sub(cls: type, help: str) -> Any:
    return field(default_factory=cls, metadata={"help": help})


@dataclass(frozen=True)
class EncoderConfig:
    """The from-scratch screen encoder (CNN + hashed words + UI elements + a small transformer).

    The default policy is this encoder with action heads; DigiRL's critics have an encoder of their
    own, configured separately (``algo.critic.*``).
    """

    dim: int = _f(96, "transformer width")
    layers: int = _f(2, "transformer layers")
    heads: int = _f(4, "attention heads")
    dropout: float = _f(0.0, "dropout in the transformer")
    image_width: int = _f(48, "screenshot width fed to the CNN")
    image_height: int = _f(104, "screenshot height fed to the CNN")
    frame_stack: int = _f(1, "screenshots stacked as input (DigiRL stacks 2: the current and the previous)")
    max_instruction_words: int = _f(24, "instruction words kept")
    max_elements: int = _f(40, "UI elements kept per screen")
    history_len: int = _f(4, "previous action kinds shown")
    buckets: int = _f(4096, "hash buckets of the word embedding")

    def __post_init__(self) -> None:
        if self.dim % self.heads:
            raise ValueError(f"dim ({self.dim}) must be a multiple of heads ({self.heads})")
        if min(self.dim, self.layers, self.heads, self.frame_stack, self.buckets) < 1:
            raise ValueError("dim, layers, heads, frame_stack and buckets must be >= 1")

    @property
    def features(self) -> Any:
        """The featurization this encoder expects (:class:`digirl.policies.features.FeatureSpec`)."""
        from digirl.policies.features import FeatureSpec

        return FeatureSpec(
            image_width=self.image_width,
            image_height=self.image_height,
            frame_stack=self.frame_stack,
            max_instruction_words=self.max_instruction_words,
            max_elements=self.max_elements,
            history_len=self.history_len,
            buckets=self.buckets,
        )

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EncoderConfig:
        """From a saved ``policy.json`` config; unknown keys are a :class:`DataError`."""
        known = set(cls.__dataclass_fields__)
        unknown = set(d) - known
        if unknown:
            raise DataError(f"policy config has unknown keys {sorted(unknown)}")
        return cls(**d)


@dataclass(frozen=True)
class HFPolicyConfig:
    """A Hugging Face vision-language model as the policy (``policy.kind=hf``, needs the ``hf`` extra).

    ``policy.init`` is a local model folder (anything ``AutoModelForImageTextToText`` and
    ``AutoProcessor`` load: Qwen2-VL, Qwen2.5-VL, Qwen3-VL, SmolVLM/Idefics3, PaliGemma, LLaVA) or a
    saved ``hf`` policy. Nothing is ever downloaded.
    """

    action_format: Literal["json", "autoui"] = _f(
        "json", "action text the model reads and writes: json or autoui (digirl.core.codecs)"
    )
    coords: Literal["normalized", "pixels", "grid1000"] = _f(
        "normalized",
        "how the model writes points: normalized (fractions of the image, 0-1), pixels (integer pixels of the "
        "image the model sees after the processor's resize; Qwen2.5-VL's convention) or grid1000 (integers 0-1000; "
        "Qwen2-VL/Qwen3-VL's convention). Points map back to the screen exactly, whatever the screen size",
    )
    image_fit: Literal["auto", "stretch", "pad"] = _f(
        "auto",
        "how the screenshot becomes the model's image: stretch (the processor resizes the whole screen), pad (pad "
        "to the processor's aspect ratio first, for processors that center-crop, e.g. CLIP/LLaVA), auto (pad when "
        "the processor crops, else stretch)",
    )
    max_image_pixels: int = _f(0, "downscale screenshots to at most this many pixels before the processor (0 = keep)")
    history: int = _f(4, "previous actions of the episode shown in the prompt (the last K)")
    previous_screenshot: bool = _f(False, "also show the previous screenshot (DigiRL stacks two frames)")
    prompt: str = _f(
        "",
        "user prompt template with {instruction}, {history} and {format} fields; empty = the built-in prompt",
    )
    max_new_tokens: int = _f(96, "cap on generated tokens per action (longer targets cannot be expressed)")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = _f(
        "auto", "weights dtype: auto (bfloat16 on CUDA, float32 on CPU), float32, bfloat16, float16"
    )
    autocast: bool = _f(True, "bfloat16 autocast for forward passes on CUDA (no effect on CPU)")
    attn_implementation: str = _f("sdpa", "attention of the language model: sdpa, eager, flash_attention_2, ...")
    fast_vision_attention: bool = _f(
        True,
        "Qwen-VL vision towers: one batched attention call per window size instead of one call per window "
        "(exact; the Hugging Face default makes thousands of tiny calls per step)",
    )
    gradient_checkpointing: bool = _f(False, "recompute activations in the backward pass (less memory, ~30% slower)")
    freeze_vision: bool = _f(False, "full fine-tuning: keep the vision tower (and projector) frozen")
    vision_cache: int = _f(
        2048,
        "screenshots whose vision features are cached during updates when the vision tower is frozen "
        "(freeze_vision or LoRA on the language model only); 0 = off",
    )
    lora_r: int = _f(0, "LoRA rank; 0 = full fine-tuning")
    lora_alpha: float = _f(32.0, "LoRA alpha (the update is scaled by alpha / r)")
    lora_dropout: float = _f(0.0, "LoRA dropout")
    lora_targets: str = _f(
        "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj",
        "comma-separated names of the linear layers that get adapters",
    )
    lora_vision: bool = _f(False, "LoRA also on the vision tower's matching layers (default: language model only)")

    def __post_init__(self) -> None:
        if self.action_format not in ("json", "autoui"):
            raise ValueError(f"policy.hf.action_format must be json or autoui, got {self.action_format!r}")
        if self.coords not in ("normalized", "pixels", "grid1000"):
            raise ValueError(f"policy.hf.coords must be normalized, pixels or grid1000, got {self.coords!r}")
        if self.image_fit not in ("auto", "stretch", "pad"):
            raise ValueError(f"policy.hf.image_fit must be auto, stretch or pad, got {self.image_fit!r}")
        if self.dtype not in ("auto", "float32", "bfloat16", "float16"):
            raise ValueError(f"policy.hf.dtype must be auto, float32, bfloat16 or float16, got {self.dtype!r}")
        if self.max_new_tokens < 1 or self.history < 0 or self.lora_r < 0 or self.max_image_pixels < 0 or self.vision_cache < 0:
            raise ValueError("policy.hf: max_new_tokens must be >= 1; history, lora_r, max_image_pixels, vision_cache >= 0")
        if self.lora_r and not [t for t in self.lora_targets.split(",") if t.strip()]:
            raise ValueError("policy.hf.lora_targets is empty")

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> HFPolicyConfig:
        """From a saved ``policy.json`` config; unknown keys are a :class:`DataError`."""
        unknown = set(d) - set(cls.__dataclass_fields__)
        if unknown:
            raise DataError(f"hf policy config has unknown keys {sorted(unknown)}")
        return cls(**d)


#: The default policy's network config (the same fields as its encoder).
PolicyNetConfig = EncoderConfig


@dataclass
class PolicyConfig:
    """Which policy, where it starts from, and how it acts."""

    kind: str = _f("default", "policy kind: default (from-scratch CPU policy), or another registered kind (hf, autoui, api)")
    init: str | None = _f(
        None,
        "start from this folder: a saved digirl policy of any kind (its policy.json names the kind), "
        "or a pretrained model folder for kinds built on one; null = a fresh policy",
    )
    temperature: float = _f(1.0, "sampling temperature during collection (paper: 1.0)")
    device: str = _f("auto", "cpu, cuda, cuda:N, or auto (cuda when available)")
    default: EncoderConfig = _sub(EncoderConfig, "the default policy's network (kind=default)")
    hf: HFPolicyConfig = _sub(HFPolicyConfig, "a Hugging Face vision-language model (kind=hf; needs the hf extra)")

    def __post_init__(self) -> None:
        from digirl.policies.registry import policy_kinds

        if self.kind not in policy_kinds():
            raise ValueError(f"policy.kind {self.kind!r} is not registered; known kinds: {', '.join(policy_kinds())}")
        if not self.temperature > 0:
            raise ValueError(f"policy.temperature must be > 0, got {self.temperature}")
