"""Configuration of policies: the options every kind shares, and one config class per kind.

``policy.kind`` picks the implementation (see :mod:`digirl.policies.registry`); its options live
under ``policy.<kind>.*`` (``policy.default.dim=128``). ``policy.init`` is a saved policy folder
(any kind: its ``policy.json`` says which) or, for kinds built on a pretrained model, that model's
local folder. This module imports nothing heavy, so configs load without torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal, TypeVar

from digirl.core.errors import DataError

__all__ = [
    "KIND_CONFIGS",
    "RUNTIME_KEYS",
    "APIPolicyConfig",
    "AutoUIPolicyConfig",
    "EncoderConfig",
    "HFPolicyConfig",
    "PolicyConfig",
    "PolicyNetConfig",
]

#: The keys of ``policy.<kind>`` that say how a saved policy runs or samples, not what it is: a run may
#: set them on a loaded policy (``policy.init`` = a saved folder, or a resumed checkpoint). Every other
#: key is fixed by the saved ``policy.json``, and a run that asks for another value is an error
#: (:func:`digirl.policies.settle.settle_loaded_policy`). ``None``: every key (an endpoint's settings;
#: no weights depend on them). ``policy.device``, ``temperature`` and ``tap_epsilon`` are run options of
#: every kind. The default policy's ``dropout`` and ``word_dropout`` are saved with it: set them when it is made.
RUNTIME_KEYS: dict[str, tuple[str, ...] | None] = {
    "default": (),
    "hf": (
        "dtype",
        "autocast",
        "attn_implementation",
        "fast_vision_attention",
        "gradient_checkpointing",
        "vision_checkpointing",
        "compile_lm",
        "freeze_vision",
        "vision_cache",
        "max_new_tokens",
    ),
    "autoui": (
        "vision_encoder",
        "features",
        "max_new_tokens",
        "dtype",
        "vision_dtype",
        "feature_cache",
        "vision_batch_size",
        "gradient_checkpointing",
    ),
    "api": None,
}
#: Keys an ``hf`` run may also set on a fully fine-tuned saved policy: they start LoRA adapters on top of it.
HF_LORA_KEYS = ("lora_r", "lora_alpha", "lora_dropout", "lora_targets", "lora_vision")


def _f(default: Any, help: str, choices: tuple[Any, ...] | None = None) -> Any:
    meta: dict[str, Any] = {"help": help}
    if choices is not None:
        meta["choices"] = choices
    return field(default=default, metadata=meta)


def _from_dict(cls: Any, d: dict[str, Any], what: str) -> Any:
    unknown = set(d) - set(cls.__dataclass_fields__)
    if unknown:
        raise DataError(f"{what} config has unknown keys {sorted(unknown)}")
    return cls(**d)


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
    word_dropout: float = _f(
        0.0,
        "in training, hide each distinct word of a sample (instruction and elements alike) with this probability, so "
        "the pointer learns to match the instruction's words to an element's (overlap features) instead of memorising "
        "names it saw (test tasks name held-out apps and places)",
    )
    image_width: int = _f(48, "screenshot width fed to the CNN")
    image_height: int = _f(104, "screenshot height fed to the CNN")
    frame_stack: int = _f(1, "screenshots stacked as input (DigiRL stacks 2: the current and the previous)")
    max_instruction_words: int = _f(24, "instruction words kept")
    max_elements: int = _f(40, "UI elements kept per screen")
    history_len: int = _f(4, "previous action kinds shown")
    buckets: int = _f(4096, "hash buckets of the word embedding")
    use_elements: bool = _f(
        True,
        "see the UI element list (text + boxes, as AitW's OCR/icon annotations); false = screenshot and "
        "instruction only (like Auto-UI): every tap is a grid cell",
    )
    label_rows: bool = _f(
        False,
        "a clickable element without text (a settings row, a result card) reads as the labels centred inside it; "
        "lets the pointer tell settings rows apart, but measured worse on Web Shopping's 'select the first entry' "
        "(every result card then matches the query)",
    )
    screen_match: bool = _f(
        False,
        "policy only: the action-kind head also sees how well the screen's best element matches the instruction "
        "(the maximum of the two word-overlap features), so it can tell 'what the instruction names is here, tap it' "
        "from 'scroll on' (an app further down a list)",
    )
    grid_cols: int = _f(6, "columns of the tap grid (taps not on an element)")
    grid_rows: int = _f(12, "rows of the tap grid")
    pixel_regions: bool = _f(
        False,
        "policy only, screenshot only (needs use_elements=false): the pointer points at UI boxes detected from the screenshot's "
        "pixels (text lines, icons, buttons, bars: digirl/policies/regions.py), each a token of its position and a "
        "crop of its pixels, instead of every tap being a grid cell. Reads no element list: still pixels-only",
    )

    def check_view(self) -> None:
        """Raise when the flags ask for two views at once. Checked when a policy is built and when a run's
        config is settled, not here: ``observation=screenshot`` sets ``use_elements`` after the overrides."""
        if self.pixel_regions and self.use_elements:
            raise ValueError(
                "pixel_regions=true points at boxes detected from pixels in place of the element list: set "
                "use_elements=false (or observation=screenshot)"
            )

    def __post_init__(self) -> None:
        if self.dim % self.heads:
            raise ValueError(f"dim ({self.dim}) must be a multiple of heads ({self.heads})")
        if not 0.0 <= self.word_dropout < 1.0:
            raise ValueError(f"word_dropout must be in [0, 1), got {self.word_dropout}")
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
            grid_cols=self.grid_cols,
            grid_rows=self.grid_rows,
            use_elements=self.use_elements,
            label_rows=self.label_rows,
            pixel_regions=self.pixel_regions,
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
    autocast: bool = _f(
        True, "bfloat16 autocast for forward passes on CUDA (no effect on CPU; accelerate launch --mixed_precision overrides)"
    )
    attn_implementation: str = _f("sdpa", "attention of the language model: sdpa, eager, flash_attention_2, ...")
    fast_vision_attention: bool = _f(
        True,
        "Qwen-VL vision towers: one batched attention call per window size instead of one call per window "
        "(exact; the Hugging Face default makes thousands of tiny calls per step)",
    )
    gradient_checkpointing: bool = _f(False, "recompute activations in the backward pass (less memory, ~30% slower)")
    vision_checkpointing: bool = _f(
        False,
        "recompute only the vision tower's activations (most of the memory of screenshots, a fraction of the compute)",
    )
    compile_lm: bool = _f(
        False,
        "torch.compile each language-model decoder layer (fuses its norm, rotary and MLP elementwise work: "
        "+29% update throughput measured on an H100; ~20 s of compilation on first use)",
    )
    pad_to_multiple: int = _f(
        8,
        "scored batches (updates) are right-padded to a multiple of this many tokens: one shape class for "
        "compiled layers and aligned GEMMs; the padding is masked out (1 = pad to the longest sample only)",
    )
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
        if self.pad_to_multiple < 1:
            raise ValueError(f"policy.hf.pad_to_multiple must be >= 1, got {self.pad_to_multiple}")
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


@dataclass(frozen=True)
class AutoUIPolicyConfig:
    """Auto-UI (kind=autoui): the multimodal T5 of DigiRL/Auto-UI, started from ``policy.init``, a local
    Auto-UI-Base-style folder (config.json + weights + tokenizer). See docs/policies-autoui-api.md."""

    vision_encoder: str | None = _f(
        None,
        "local BLIP-2 folder whose vision tower computes the image features (a Blip2Model / "
        "Blip2ForConditionalGeneration checkpoint, or a Blip2VisionModel save); null = features only from policy.autoui.features",
    )
    features: str | None = _f(
        None,
        "precomputed image features (a .safetensors feature file keyed by screenshot; see "
        "digirl.policies.autoui_features.write_feature_file); looked up before the vision encoder",
    )
    image_dim: int = _f(
        1408,
        "image feature size (BLIP-2 ViT-g: 1408); only used to create fresh fusion layers when policy.init is a plain T5 "
        "without them; otherwise read from the checkpoint's image_dense weight",
    )
    image_tokens: str = _f(
        "pooled",
        "which vision outputs are fused: pooled (one vector per screenshot, as Auto-UI and DigiRL) or patches (all patch tokens)",
        ("pooled", "patches"),
    )
    history_len: int = _f(1, "previous actions written into the prompt (DigiRL: 1; Auto-UI's own training: 8)")
    max_input_tokens: int = _f(512, "prompt tokens kept (truncated from the left, so the goal stays)")
    max_new_tokens: int = _f(128, "cap on generated tokens per action; longer action texts are not expressible")
    dtype: str = _f(
        "float32",
        "the T5's weights and compute: float32, or bfloat16 (half the memory; for acting, since AdamW on bfloat16 "
        "weights loses small updates)",
        ("float32", "bfloat16"),
    )
    vision_dtype: str = _f(
        "auto",
        "the frozen vision encoder: auto (bfloat16 on CUDA, float32 on CPU), float32 or bfloat16",
        ("auto", "float32", "bfloat16"),
    )
    feature_cache: int = _f(8192, "image features kept in memory (LRU, by exact screenshot); 0 = no cache")
    vision_batch_size: int = _f(16, "screenshots per vision-encoder forward pass")
    gradient_checkpointing: bool = _f(False, "trade compute for memory in the T5 stacks during updates")

    def __post_init__(self) -> None:
        if min(self.image_dim, self.max_input_tokens, self.max_new_tokens, self.vision_batch_size) < 1:
            raise ValueError("image_dim, max_input_tokens, max_new_tokens and vision_batch_size must be >= 1")
        if self.history_len < 0 or self.feature_cache < 0:
            raise ValueError("history_len and feature_cache must be >= 0")

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> AutoUIPolicyConfig:
        """From a saved ``policy.json``; unknown keys are a :class:`DataError`."""
        cfg: AutoUIPolicyConfig = _from_dict(cls, d, "autoui policy")
        return cfg


@dataclass(frozen=True)
class APIPolicyConfig:
    """An OpenAI-compatible chat endpoint as an act-only policy (kind=api): vLLM, a hosted VLM, a served
    CogAgent. The API key is read from the environment variable named by ``api_key_env`` at each request
    and is never saved or logged."""

    base_url: str = _f("http://127.0.0.1:8000/v1", "endpoint base URL including the API version (…/v1)")
    model: str = _f("", "model name sent with every request (e.g. the name vLLM serves)")
    api_key_env: str = _f(
        "OPENAI_API_KEY", "name of the environment variable holding the API key (the key itself is never saved)"
    )
    codec: str = _f("json", "how the answer is parsed into an action", ("json", "autoui", "cogagent"))
    template: str = _f(
        "auto",
        "prompt template: auto (the one matching the codec), json (our action space as JSON), autoui "
        "(Previous Actions: … Goal: …) or cogagent (CogAgent's grounding question)",
        ("auto", "json", "autoui", "cogagent"),
    )
    system_prompt: str | None = _f(None, "replaces the template's system message ('' = send none)")
    user_template: str | None = _f(
        None, "replaces the template's user text; placeholders {instruction}, {history}, {step}, {autoui_prompt}"
    )
    history_len: int = _f(4, "previous actions written into the prompt")
    send_previous: bool = _f(False, "also send the previous screenshot (before the current one)")
    image_format: str = _f("png", "screenshot encoding in the request", ("png", "jpeg"))
    image_max_side: int | None = _f(1280, "downscale screenshots so their longer side is at most this (null = as is)")
    jpeg_quality: int = _f(90, "JPEG quality (image_format=jpeg)")
    max_tokens: int = _f(256, "cap on generated tokens per answer")
    timeout_s: float = _f(60.0, "per-request timeout in seconds")
    max_retries: int = _f(6, "retries on 408/409/425/429/5xx, timeouts and connection errors (exponential backoff, Retry-After)")
    backoff_base_s: float = _f(1.0, "first backoff delay in seconds (doubles each retry, full jitter)")
    backoff_max_s: float = _f(60.0, "longest backoff delay in seconds")
    retry_after_max_s: float = _f(300.0, "longest wait a Retry-After header may ask for")
    max_concurrency: int = _f(8, "requests in flight at once (one thread each)")
    on_error: str = _f(
        "raise",
        "when an observation's request fails through every retry: raise (stop the run with a clear error) or invalid "
        "(record an INVALID action for that step and go on)",
        ("raise", "invalid"),
    )
    call_log: str | None = _f(None, "append one JSON line per HTTP request (status, latency, tokens; never the key) to this file")

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"policy.api.base_url must be an http(s) URL, got {self.base_url!r}")
        if min(self.max_tokens, self.max_concurrency) < 1 or self.max_retries < 0 or self.history_len < 0:
            raise ValueError("max_tokens and max_concurrency must be >= 1, max_retries and history_len >= 0")
        if not self.timeout_s > 0:
            raise ValueError(f"policy.api.timeout_s must be > 0, got {self.timeout_s}")
        if not 1 <= self.jpeg_quality <= 100:
            raise ValueError(f"policy.api.jpeg_quality must be in 1..100, got {self.jpeg_quality}")

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> APIPolicyConfig:
        """From a saved ``policy.json``; unknown keys are a :class:`DataError`."""
        cfg: APIPolicyConfig = _from_dict(cls, d, "api policy")
        return cfg


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
    tap_epsilon: float = _f(
        0.0,
        "default policy, collection only: spread this share of the pointer's probability uniformly over the "
        "screen's elements when sampling (ε-exploration of taps, for starts that never try the right element); "
        "greedy actions and the trained distribution are unaffected",
    )
    device: str = _f("auto", "cpu, cuda, cuda:N, or auto (cuda when available)")
    default: EncoderConfig = _sub(EncoderConfig, "the default policy's network (kind=default)")
    autoui: AutoUIPolicyConfig = _sub(AutoUIPolicyConfig, "the Auto-UI multimodal T5 (kind=autoui)")
    api: APIPolicyConfig = _sub(APIPolicyConfig, "an OpenAI-compatible chat endpoint as an act-only policy (kind=api)")
    hf: HFPolicyConfig = _sub(HFPolicyConfig, "a Hugging Face vision-language model (kind=hf; needs the hf extra)")

    def __post_init__(self) -> None:
        from digirl.policies.registry import policy_kinds

        if self.kind not in policy_kinds():
            raise ValueError(f"policy.kind {self.kind!r} is not registered; known kinds: {', '.join(policy_kinds())}")
        if not self.temperature > 0:
            raise ValueError(f"policy.temperature must be > 0, got {self.temperature}")
        if not 0.0 <= self.tap_epsilon < 1.0:
            raise ValueError(f"policy.tap_epsilon must be in [0, 1), got {self.tap_epsilon}")
        if self.tap_epsilon and self.kind != "default":
            raise ValueError(f"policy.tap_epsilon applies to the default policy only, not kind={self.kind}")


#: Each built-in kind's sub-config of :class:`PolicyConfig`: ``policy.<attribute>`` holds a ``cls``.
KIND_CONFIGS: dict[str, tuple[str, type]] = {
    "default": ("default", EncoderConfig),
    "hf": ("hf", HFPolicyConfig),
    "autoui": ("autoui", AutoUIPolicyConfig),
    "api": ("api", APIPolicyConfig),
}


_Cfg = TypeVar("_Cfg")


def with_overrides(saved: _Cfg, given: _Cfg | None) -> _Cfg:
    """``saved`` (a loaded policy's sub-config) with every field of ``given`` that differs from the
    default (an explicit override); ``given`` is of the same dataclass."""
    if given is None:
        return saved
    default: Any = type(saved)()
    changes = {f.name: getattr(given, f.name) for f in fields(default) if getattr(given, f.name) != getattr(default, f.name)}
    return replace(saved, **changes) if changes else saved  # type: ignore[type-var]
