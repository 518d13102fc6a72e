"""Session fixtures shared by the test packages."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tiny_vlm(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """``tiny_vlm(family="qwen2_vl")``: a tiny random Hugging Face model folder, built once per session.

    Skips without the hf extra; the hub is never contacted (HF_HUB_OFFLINE=1).
    """
    pytest.importorskip("transformers")
    pytest.importorskip("peft")
    os.environ["HF_HUB_OFFLINE"] = "1"
    from digirl.testing.tiny_vlm import build_tiny_vlm

    built: dict[str, Path] = {}

    def make(family: str = "qwen2_vl") -> Path:
        if family not in built:
            built[family] = build_tiny_vlm(tmp_path_factory.mktemp(family) / "model", family)
        return built[family]

    return make
