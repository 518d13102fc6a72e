"""The tiny offline VLM builders write folders that load like downloaded checkpoints."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("transformers")


@pytest.mark.parametrize("family", ["qwen2_vl", "qwen2_5_vl", "llava"])
def test_tiny_folders_load_with_the_auto_classes(tiny_vlm, family):
    from transformers import AutoModelForImageTextToText

    from digirl.policies.hf.loading import load_processor

    path = tiny_vlm(family)
    names = {f.name for f in path.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "processor_config.json"} <= names
    want = {"qwen2_vl": "Qwen2VLProcessor", "qwen2_5_vl": "Qwen2_5_VLProcessor", "llava": "LlavaProcessor"}[family]
    assert json.loads((path / "processor_config.json").read_text())["processor_class"] == want
    model = AutoModelForImageTextToText.from_pretrained(path, local_files_only=True)
    assert sum(p.numel() for p in model.parameters()) < 1_000_000
    proc = load_processor(path)
    assert type(proc).__name__ == want and proc.image_processor is not None and proc.chat_template


def test_unknown_family(tmp_path):
    from digirl.testing.tiny_vlm import build_tiny_vlm

    with pytest.raises(ValueError, match="unknown tiny VLM family"):
        build_tiny_vlm(tmp_path, "gpt2")
