"""Tiny random vision-language models, built locally (no hub), for tests and examples.

``build_tiny_vlm(path, family="qwen2_vl") -> Path`` writes a complete Hugging Face model folder
with ``save_pretrained``: random weights, a byte-level BPE tokenizer trained here on digirl's own
prompt and action texts, an image processor with small pixel bounds and a chat template. It loads
with ``AutoModelForImageTextToText`` / ``AutoProcessor`` like any downloaded checkpoint (the
folder names the family's real processor class). Families: ``qwen2_vl``, ``qwen2_5_vl`` (windowed
vision attention) and ``llava`` (a CLIP vision tower that center-crops, and a Llama).

Needs the ``hf`` extra. Without torchvision the Qwen processor is built without its video part.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["FAMILIES", "build_tiny_processor", "build_tiny_vlm", "tiny_config", "tokenizer_corpus"]

FAMILIES = ("qwen2_vl", "qwen2_5_vl", "llava")
_PROCESSOR = {"qwen2_vl": "Qwen2VLProcessor", "qwen2_5_vl": "Qwen2_5_VLProcessor", "llava": "LlavaProcessor"}

_QWEN_SPECIAL = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
]
_LLAVA_SPECIAL = ["<pad>", "<s>", "</s>", "<image>"]

_QWEN_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>{% else %}{{ c['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
_LLAVA_TEMPLATE = (
    "{% for m in messages %}{{ m['role'].upper() }}: "
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<image>\n{% else %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}\n"
    "{% endfor %}{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)


def tokenizer_corpus(n: int = 3000, seed: int = 0) -> Iterator[str]:
    """Texts like the ones an ``hf`` policy reads and writes: prompts, instructions, actions."""
    from digirl.core.actions import Action
    from digirl.core.codecs import CoordFrame, get_codec
    from digirl.policies.hf.prompt import render_prompt
    from digirl.sim.tasks.tasksets import TASKSET_DIR

    rng = random.Random(seed)
    files = [f for f in sorted(TASKSET_DIR.glob("*.txt")) if not f.stem.endswith("_validation")]  # the corpus predates it
    instructions = [line for f in files for line in f.read_text().splitlines() if line.strip()]
    frames = [None, CoordFrame(280, 616, integer=True), CoordFrame(1000, 1000, integer=True)]
    for i in range(n):
        x, y = rng.random(), rng.random()
        acts = [Action.tap(x, y), Action.swipe((x, y), (x, 1 - y)), Action.type_text(rng.choice(instructions)[:40])]
        acts += [Action.back(), Action.home(), Action.enter(), Action.complete(), Action.impossible()]
        fmt = ("json", "autoui")[i % 2]
        coords = ("normalized", "pixels", "grid1000")[i % 3]
        codec = get_codec(fmt, frames[i % 3])
        instruction = rng.choice(instructions)
        size = (280, 616)
        yield render_prompt(
            "", instruction, acts[: i % 4], action_format=fmt, coords=coords, frame=frames[i % 3], image_size=size
        )
        yield " ".join(codec.format(a) for a in acts)


def _tokenizer(family: str, vocab_size: int, seed: int, corpus: Iterable[str] | None = None) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    from digirl.policies.hf.loading import hf

    qwen = family.startswith("qwen")
    special = _QWEN_SPECIAL if qwen else _LLAVA_SPECIAL
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=special, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator(tokenizer_corpus(seed=seed) if corpus is None else corpus, trainer)
    if qwen:
        fast = hf().PreTrainedTokenizerFast(
            tokenizer_object=tok,
            eos_token="<|im_end|>",
            pad_token="<|endoftext|>",
            extra_special_tokens={
                "image_token": "<|image_pad|>",
                "video_token": "<|video_pad|>",
                "vision_bos_token": "<|vision_start|>",
                "vision_eos_token": "<|vision_end|>",
            },
        )
        fast.chat_template = _QWEN_TEMPLATE
    else:
        special_tokens = {"bos_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>"}
        fast = hf().PreTrainedTokenizerFast(
            tokenizer_object=tok, **special_tokens, extra_special_tokens={"image_token": "<image>"}
        )
        fast.chat_template = _LLAVA_TEMPLATE
    return fast


def build_tiny_processor(
    family: str = "qwen2_vl",
    *,
    vocab_size: int = 1024,
    min_pixels: int = 28 * 28 * 4,
    max_pixels: int = 28 * 28 * 64,
    image_size: int = 84,
    seed: int = 0,
    corpus: Iterable[str] | None = None,
) -> Any:
    """The processor of a tiny ``family`` model (tokenizer + image processor + chat template).

    Qwen families: images are resized to between ``min_pixels`` and ``max_pixels``; llava: a CLIP
    processor that resizes the short side to ``image_size`` and center-crops a square. The
    tokenizer is a byte-level BPE trained on ``corpus`` (default: :func:`tokenizer_corpus`).
    """
    from digirl.policies.hf.loading import hf, image_only_processor_class

    tf = hf()
    _check_family(family)
    tok = _tokenizer(family, vocab_size, seed, corpus)
    if family.startswith("qwen"):
        ip = tf.Qwen2VLImageProcessorPil(min_pixels=min_pixels, max_pixels=max_pixels)
        cls = image_only_processor_class(getattr(tf, _PROCESSOR[family]))
        return cls(image_processor=ip, tokenizer=tok, chat_template=tok.chat_template)
    ip = tf.CLIPImageProcessorPil(size={"shortest_edge": image_size}, crop_size={"height": image_size, "width": image_size})
    return tf.LlavaProcessor(
        image_processor=ip,
        tokenizer=tok,
        patch_size=14,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        chat_template=tok.chat_template,
    )


def tiny_config(
    family: str = "qwen2_vl",
    *,
    vocab_size: int,
    hidden: int = 64,
    layers: int = 2,
    heads: int = 4,
    kv_heads: int = 2,
    vision_hidden: int = 32,
    vision_depth: int = 2,
    vision_heads: int = 2,
    window_size: int = 56,
    image_size: int = 84,
    intermediate: int = 0,
) -> Any:
    """A tiny model config of ``family`` whose token ids match :func:`build_tiny_processor`'s tokenizer."""
    from digirl.policies.hf.loading import hf

    tf = hf()
    _check_family(family)
    head_dim = hidden // heads
    vision: dict[str, Any]
    text: dict[str, Any] = {
        "vocab_size": vocab_size,
        "hidden_size": hidden,
        "intermediate_size": intermediate or 2 * hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "max_position_embeddings": 4096,
    }
    if family.startswith("qwen"):
        q = head_dim // 2  # M-RoPE sections (temporal, height, width) sum to head_dim / 2
        text |= {
            "rope_parameters": {"rope_type": "default", "rope_theta": 1e4, "mrope_section": [q - 2 * (q // 3), q // 3, q // 3]},
            "bos_token_id": None,
            "eos_token_id": 2,
            "pad_token_id": 0,
        }
        ids: dict[str, Any] = {"image_token_id": 5, "video_token_id": 6, "vision_start_token_id": 3, "vision_end_token_id": 4}
        if family == "qwen2_vl":
            vision = {"depth": vision_depth, "embed_dim": vision_hidden, "hidden_size": hidden}
            vision |= {"num_heads": vision_heads, "mlp_ratio": 2}
            cfg = tf.Qwen2VLConfig(text_config=text, vision_config=vision, **ids)
        else:
            vision = {
                "depth": vision_depth,
                "hidden_size": vision_hidden,
                "intermediate_size": 2 * vision_hidden,
                "num_heads": vision_heads,
                "out_hidden_size": hidden,
                "window_size": window_size,
                "fullatt_block_indexes": [vision_depth - 1],
            }
            cfg = tf.Qwen2_5_VLConfig(text_config=text, vision_config=vision, **ids)
        cfg.bos_token_id, cfg.eos_token_id, cfg.pad_token_id = None, 2, 0
        return cfg
    text |= {"model_type": "llama", "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0}
    vision = {
        "model_type": "clip_vision_model",
        "hidden_size": vision_hidden,
        "intermediate_size": 2 * vision_hidden,
        "num_hidden_layers": vision_depth,
        "num_attention_heads": 2,
        "image_size": image_size,
        "patch_size": 14,
    }
    strategy: dict[str, Any] = {"vision_feature_select_strategy": "default", "vision_feature_layer": -1}
    cfg = tf.LlavaConfig(vision_config=vision, text_config=text, image_token_id=3, **strategy)
    cfg.pad_token_id = 0
    return cfg


def build_tiny_vlm(
    path: str | Path,
    family: str = "qwen2_vl",
    *,
    seed: int = 0,
    vocab_size: int = 1024,
    min_pixels: int = 28 * 28 * 4,
    max_pixels: int = 28 * 28 * 64,
    image_size: int = 84,
    **sizes: Any,
) -> Path:
    """Write a tiny random ``family`` model + processor folder at ``path``; returns ``path``.

    ``sizes`` go to :func:`tiny_config` (hidden, layers, heads, kv_heads, vision_hidden,
    vision_depth, window_size).
    """
    import torch

    from digirl.policies.hf.loading import hf

    tf = hf()
    _check_family(family)
    out = Path(path)
    processor = build_tiny_processor(
        family, vocab_size=vocab_size, min_pixels=min_pixels, max_pixels=max_pixels, image_size=image_size, seed=seed
    )
    cfg = tiny_config(family, vocab_size=len(processor.tokenizer), image_size=image_size, **sizes)
    torch.manual_seed(seed)
    model = tf.AutoModelForImageTextToText.from_config(cfg)
    tok = processor.tokenizer
    model.generation_config = tf.GenerationConfig(
        bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id
    )
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    processor.save_pretrained(out)
    _name_real_processor(out, family)
    return out


def _name_real_processor(out: Path, family: str) -> None:
    """Record the family's processor class, as a downloaded checkpoint does."""
    name = _PROCESSOR[family]
    f = out / "processor_config.json"
    data = json.loads(f.read_text()) if f.is_file() else {}
    data["processor_class"] = name
    f.write_text(json.dumps(data, indent=2) + "\n")


def _check_family(family: str) -> None:
    if family not in FAMILIES:
        raise ValueError(f"unknown tiny VLM family {family!r}; choose one of {', '.join(FAMILIES)}")
