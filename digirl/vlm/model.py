"""The screen VLM's pieces: tokenizer and processor trained here, the model built from a config,
and the batch layout shared by the data workers (CPU) and the trainer (GPU).

Data workers hand over *uint8* screens already resized the way the processor resizes them (a
fraction of the bytes of float patches); :func:`patchify` normalises and cuts them into the
processor's patch layout on the training device. ``tests/vlm`` checks both against the processor
itself, so a pretrained folder behaves under ``AutoProcessor`` exactly as it did in training.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from PIL import Image

from digirl.policies.hf.prompt import messages
from digirl.vlm.config import ModelSize
from digirl.vlm.data import Example

__all__ = ["Batch", "Collator", "build_model", "build_processor", "corpus_of", "patchify"]


def corpus_of(examples: Iterable[Example]) -> Iterable[str]:
    """The text a tokenizer is trained on: every prompt, answer and on-screen text of the examples."""
    for ex in examples:
        yield ex.prompt
        yield ex.target
        for e in ex.elements:
            if e.text:
                yield e.text


def build_processor(size: ModelSize, corpus: Iterable[str], *, seed: int = 0) -> Any:
    """A Qwen2-VL processor whose tokenizer is a byte-level BPE trained on ``corpus``."""
    from digirl.testing.tiny_vlm import build_tiny_processor

    return build_tiny_processor(
        "qwen2_vl", vocab_size=size.vocab_size, min_pixels=28 * 28 * 4, max_pixels=size.max_pixels, seed=seed, corpus=corpus
    )


def build_model(size: ModelSize, processor: Any, *, seed: int) -> Any:
    """A randomly initialised ``Qwen2VLForConditionalGeneration`` of ``size`` (fp32)."""
    from digirl.policies.hf.loading import hf
    from digirl.testing.tiny_vlm import tiny_config

    tf = hf()
    tok = processor.tokenizer
    cfg = tiny_config(
        "qwen2_vl",
        vocab_size=len(tok),
        hidden=size.hidden,
        layers=size.layers,
        heads=size.heads,
        kv_heads=size.kv_heads,
        intermediate=size.intermediate,
        vision_hidden=size.vision_hidden,
        vision_depth=size.vision_depth,
        vision_heads=size.vision_heads,
    )
    torch.manual_seed(seed)
    model = tf.Qwen2VLForConditionalGeneration(cfg)
    model.generation_config = tf.GenerationConfig(
        bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id
    )
    return model


@dataclass
class Batch:
    """Right-padded token ids, their loss labels (-100 = not scored) and the uint8 screens."""

    input_ids: torch.Tensor  # [B, L] int64
    labels: torch.Tensor  # [B, L] int64
    attention_mask: torch.Tensor  # [B, L] int64
    pixels: torch.Tensor  # [B, H, W, 3] uint8, already at the processor's size
    objectives: list[str]

    def pin_memory(self) -> Batch:
        return Batch(
            self.input_ids.pin_memory(),
            self.labels.pin_memory(),
            self.attention_mask.pin_memory(),
            self.pixels.pin_memory(),
            self.objectives,
        )


class Collator:
    """Turns examples into a :class:`Batch` with the processor's tokenizer and image size."""

    def __init__(self, processor: Any, screen: tuple[int, int] = (270, 600)) -> None:
        from digirl.policies.hf.geometry import model_image_size

        ip = processor.image_processor
        self.tokenizer = processor.tokenizer
        self.processor = processor
        size = model_image_size(ip, *screen)
        if size is None:
            raise ValueError("the processor's image size cannot be predicted")
        self.size = size  # (width, height) the model sees
        merge, patch = int(ip.merge_size), int(ip.patch_size)
        self.image_tokens = (size[0] // patch) * (size[1] // patch) // (merge * merge)
        self.image_id = int(self.tokenizer.convert_tokens_to_ids("<|image_pad|>"))
        self.eos_id = int(self.tokenizer.eos_token_id)
        self.pad_id = int(self.tokenizer.pad_token_id)

    def resize(self, screen: np.ndarray) -> np.ndarray:
        """The screen at the model's size, resized as the processor resizes (PIL bicubic)."""
        w, h = self.size
        if screen.shape[1] == w and screen.shape[0] == h:
            return screen
        return np.asarray(Image.fromarray(screen).resize((w, h), Image.Resampling.BICUBIC))

    def prompt_ids(self, prompt: str) -> list[int]:
        """The chat turn of ``prompt`` with one image, up to the assistant's first token."""
        chat = self.processor.apply_chat_template(messages(prompt, 1), add_generation_prompt=True, tokenize=False)
        ids = [int(i) for i in self.tokenizer(chat, add_special_tokens=False)["input_ids"]]
        at = ids.index(self.image_id)
        return ids[:at] + [self.image_id] * self.image_tokens + ids[at + 1 :]

    def target_ids(self, target: str) -> list[int]:
        """The answer's tokens and the end-of-turn token (what an ``hf`` policy scores)."""
        return [int(i) for i in self.tokenizer(target, add_special_tokens=False)["input_ids"]] + [self.eos_id]

    def model_inputs(
        self, ids: torch.Tensor, mask: torch.Tensor, pixels: torch.Tensor, *, positions: bool = False
    ) -> dict[str, torch.Tensor]:
        """The model's keyword inputs for token ids, their mask and uint8 screens (all on one device);
        ``positions``: also the M-RoPE ``position_ids`` of right-padded training batches (generation
        computes its own)."""
        values, grid = patchify(pixels, self.processor.image_processor)
        image = ids == self.image_id
        inputs = {
            "input_ids": ids,
            "attention_mask": mask,
            "pixel_values": values,
            "image_grid_thw": grid,
            "mm_token_type_ids": image.long(),  # where the image's tokens sit (M-RoPE)
        }
        if positions:
            inputs["position_ids"] = self.position_ids(image, mask, pixels.shape[1], pixels.shape[2])
        return inputs

    def position_ids(self, image: torch.Tensor, mask: torch.Tensor, height: int, width: int) -> torch.Tensor:
        """M-RoPE positions [3, B, L] of sequences holding one ``height`` x ``width`` screen each, as
        ``get_rope_index`` lays them out (text: one position per token on all three axes; the image:
        temporal = its start, height/width = start + row/column of its merged grid; the text after it
        goes on from start + max(rows, columns)). Computed at once on the device: transformers builds
        them sequence by sequence in Python, which cost more than the step of a small model."""
        ip = self.processor.image_processor
        cell = int(ip.patch_size) * int(ip.merge_size)
        rows, cols = height // cell, width // cell
        b, n = image.shape
        count = image.sum(dim=1)
        if bool((count != rows * cols).any()):
            raise ValueError(f"each sequence must hold exactly one screen of {rows * cols} image tokens")
        idx = torch.arange(n, device=image.device).expand(b, n)
        start = image.long().argmax(dim=1, keepdim=True)  # first image token of each row
        k = (idx - start).clamp(min=0, max=rows * cols - 1)
        inside = image
        after = idx >= start + rows * cols
        text = torch.where(after, idx - rows * cols + max(rows, cols), idx)
        t = torch.where(inside, start.expand(b, n), text)
        h = torch.where(inside, start + k // cols, text)
        w = torch.where(inside, start + k % cols, text)
        pos = torch.stack([t, h, w]) * mask.unsqueeze(0)
        return pos.long()

    def __call__(self, examples: Sequence[Example]) -> Batch:
        seqs, labels = [], []
        for ex in examples:
            p, t = self.prompt_ids(ex.prompt), self.target_ids(ex.target)
            seqs.append(p + t)
            labels.append([-100] * len(p) + t)
        n = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), n), self.pad_id, dtype=torch.long)
        lab = torch.full((len(seqs), n), -100, dtype=torch.long)
        mask = torch.zeros((len(seqs), n), dtype=torch.long)
        for i, (s, lb) in enumerate(zip(seqs, labels)):
            ids[i, : len(s)] = torch.tensor(s)
            lab[i, : len(lb)] = torch.tensor(lb)
            mask[i, : len(s)] = 1
        pixels = torch.from_numpy(np.stack([self.resize(ex.screen) for ex in examples]))
        return Batch(ids, lab, mask, pixels, [ex.objective for ex in examples])


def patchify(pixels: torch.Tensor, image_processor: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """uint8 screens [B, H, W, 3] → (``pixel_values`` [B·N, C·T·P·P], ``image_grid_thw`` [B, 3]) as the
    Qwen2-VL image processor lays them out (one frame repeated over the temporal patch)."""
    ip = image_processor
    p, m, t = int(ip.patch_size), int(ip.merge_size), int(ip.temporal_patch_size)
    mean = torch.tensor(ip.image_mean, device=pixels.device, dtype=torch.float32).view(1, 3, 1, 1)
    std = torch.tensor(ip.image_std, device=pixels.device, dtype=torch.float32).view(1, 3, 1, 1)
    x = pixels.permute(0, 3, 1, 2).to(torch.float32) * float(ip.rescale_factor)
    x = (x - mean) / std  # [B, C, H, W]
    b, c, h, w = x.shape
    gh, gw = h // p, w // p
    x = x.unsqueeze(1).expand(b, t, c, h, w)
    x = x.reshape(b, t, c, gh // m, m, p, gw // m, m, p)
    x = x.permute(0, 3, 6, 4, 7, 2, 1, 5, 8)  # B, gh/m, gw/m, m, m, C, T, P, P
    values = x.reshape(b * gh * gw, c * t * p * p)
    grid = torch.tensor([[1, gh, gw]] * b, dtype=torch.long, device=pixels.device)
    return values, grid
