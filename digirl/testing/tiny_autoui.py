"""Tiny, randomly initialised Auto-UI checkpoints built locally (no hub), for tests and examples.

- :func:`build_tiny_autoui`: an Auto-UI-Base-style folder — ``config.json`` (a T5 config written as
  FLAN-T5 writes it: gated-GELU, untied ``lm_head``), weights under Auto-UI's parameter names
  (``model.safetensors``, or ``pytorch_model.bin`` as released Auto-UI-Base ships them), and a byte-level
  BPE tokenizer trained on Auto-UI prompts and action texts with T5's special tokens
  (``<pad>`` = 0, ``</s>`` = 1, ``<unk>`` = 2).
- :func:`build_tiny_blip2`: a BLIP-2 folder whose vision tower is tiny (``config.json`` with a
  ``vision_config``, ``vision_model.*`` weights next to a stray language-model tensor, and
  ``preprocessor_config.json``), or a bare ``Blip2VisionModel`` save.

Needs the ``hf`` extra (transformers, tokenizers).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import torch

from digirl.core.actions import Action, ActionType
from digirl.core.codecs import format_action
from digirl.policies.prompts import autoui_prompt

__all__ = ["build_tiny_autoui", "build_tiny_blip2", "tiny_t5_config"]

_WORDS = (
    "open the settings app search for weather in paris go to ebay com tap red blue green yellow button type word "
    "hello world phone agent and press enter show me news on google what is time in london play music maps"
).split()


def _corpus(rng: random.Random, n: int = 400) -> list[str]:
    texts = []
    for _ in range(n):
        kind = rng.choice(list(ActionType)[:-1])
        if kind is ActionType.DUAL_POINT:
            a = Action.dual_point((rng.random(), rng.random()), (rng.random(), rng.random()))
        elif kind is ActionType.TYPE:
            a = Action.type_text(" ".join(rng.choices(_WORDS, k=rng.randint(1, 3))))
        else:
            a = Action(kind)
        goal = " ".join(rng.choices(_WORDS, k=rng.randint(3, 8)))
        texts += [format_action(a, "autoui"), autoui_prompt(goal, [a], 1)]
    return texts


def _tokenizer(vocab_size: int, seed: int) -> Any:
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<pad>", "</s>", "<unk>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_corpus(random.Random(seed)), trainer)
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    fast: Any = transformers.PreTrainedTokenizerFast
    return fast(tokenizer_object=tok, eos_token="</s>", pad_token="<pad>", unk_token="<unk>")


def tiny_t5_config(vocab_size: int, d_model: int = 32, layers: int = 2, heads: int = 4) -> dict[str, Any]:
    """A FLAN-T5-shaped config (gated GELU, separate lm_head) of toy size, as its config.json would hold it."""
    return {
        "architectures": ["T5ForMultimodalGeneration"],
        "model_type": "t5",
        "vocab_size": vocab_size,
        "d_model": d_model,
        "d_kv": d_model // heads,
        "d_ff": 2 * d_model,
        "num_layers": layers,
        "num_decoder_layers": layers,
        "num_heads": heads,
        "relative_attention_num_buckets": 8,
        "relative_attention_max_distance": 32,
        "dropout_rate": 0.1,
        "feed_forward_proj": "gated-gelu",
        "tie_word_embeddings": False,
        "pad_token_id": 0,
        "eos_token_id": 1,
        "decoder_start_token_id": 0,
    }


def _spiece_tokenizer(out: Path, vocab_size: int, seed: int) -> Any:
    """A T5-style SentencePiece unigram model written as ``spiece.model`` only (needs sentencepiece, protobuf)."""
    import sentencepiece as spm
    import transformers

    corpus = out / "corpus.txt"
    corpus.write_text("\n".join(_corpus(random.Random(seed))))
    spm.SentencePieceTrainer.train(
        input=str(corpus),
        model_prefix=str(out / "spiece"),
        vocab_size=vocab_size,
        model_type="unigram",
        pad_id=0,
        eos_id=1,
        unk_id=2,
        bos_id=-1,
        character_coverage=1.0,
        minloglevel=2,
    )
    corpus.unlink()
    (out / "spiece.vocab").unlink()
    t5: Any = transformers.T5Tokenizer
    return t5.from_pretrained(str(out))  # as a user loads it: spiece.model plus T5's 100 sentinel tokens


def build_tiny_autoui(
    folder: str | Path,
    *,
    image_dim: int = 24,
    d_model: int = 32,
    layers: int = 2,
    heads: int = 4,
    vocab_size: int = 600,
    seed: int = 0,
    fusion: bool = True,
    weights: str = "safetensors",
    tokenizer: str = "bpe",
) -> Path:
    """Write a tiny Auto-UI-Base-style folder; ``fusion=False`` writes a plain T5 (no fusion weights),
    ``weights="bin"`` a ``pytorch_model.bin`` instead of ``model.safetensors``, ``tokenizer="spiece"``
    only a SentencePiece ``spiece.model`` (as older T5 checkpoints ship; needs sentencepiece and protobuf)
    instead of a byte-level BPE ``tokenizer.json``."""
    from safetensors.torch import save_file
    from transformers import T5Config

    from digirl.policies.autoui_model import AutoUIModel, autoui_state_dict

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    tok = _spiece_tokenizer(out, min(vocab_size, 300), seed) if tokenizer == "spiece" else _tokenizer(vocab_size, seed)
    cfg = tiny_t5_config(len(tok), d_model, layers, heads)
    torch.manual_seed(seed)
    model = AutoUIModel(T5Config.from_dict(cfg), image_dim=image_dim)
    sd = autoui_state_dict(model)
    sd["lm_head.weight"] = torch.randn_like(sd["shared.weight"]) * 0.5  # untied, as in FLAN-T5
    if not fusion:
        sd = {k: v for k, v in sd.items() if not k.startswith(("image_dense.", "mha_layer.", "gate_dense."))}
    if weights == "bin":
        torch.save(sd, out / "pytorch_model.bin")
    else:
        save_file(sd, str(out / "model.safetensors"), metadata={"format": "pt"})
    (out / "config.json").write_text(json.dumps(cfg, indent=2))
    if tokenizer != "spiece":
        tok.save_pretrained(str(out))
    return out


def build_tiny_blip2(
    folder: str | Path,
    *,
    hidden: int = 24,
    image_size: int = 28,
    patch: int = 14,
    layers: int = 1,
    full: bool = True,
    seed: int = 0,
) -> Path:
    """Write a tiny BLIP-2 folder (``full``: a blip-2 config and ``vision_model.*`` weights among others;
    otherwise a bare ``Blip2VisionModel`` save). Its features have ``hidden`` values."""
    import transformers
    from safetensors.torch import save_file

    from digirl.policies.autoui_features import blip_image_processor_class

    hf: Any = transformers
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    vcfg = hf.Blip2VisionConfig(
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=2,
        image_size=image_size,
        patch_size=patch,
        initializer_range=0.02,  # BLIP-2's default (1e-10) gives near-constant features
    )
    sd = {k: v.contiguous() for k, v in hf.Blip2VisionModel(vcfg).state_dict().items()}
    if full:
        sd = {f"vision_model.{k}": v for k, v in sd.items()}
        sd["language_model.lm_head.weight"] = torch.zeros(4, 4)  # only the vision tower must be read
        cfg: dict[str, Any] = {"model_type": "blip-2", "architectures": ["Blip2Model"], "vision_config": vcfg.to_dict()}
    else:
        cfg = vcfg.to_dict()
    save_file(sd, str(out / "model.safetensors"), metadata={"format": "pt"})
    (out / "config.json").write_text(json.dumps(cfg, indent=2))
    blip_image_processor_class()(size={"height": image_size, "width": image_size}).save_pretrained(str(out))
    return out
