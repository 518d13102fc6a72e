"""Helpers shared by the serve tests: screenshots as data: URLs, request bodies, raw HTTP, a gated policy."""

from __future__ import annotations

import base64
import http.client
import io
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from digirl.core.types import Observation
from digirl.policies.base import ActOutput

ELEMENTS = [
    {"bounds": [0.1, 0.1, 0.5, 0.2], "text": "Settings", "kind": "button"},
    {"bounds": [0.1, 0.5, 0.9, 0.6], "text": "Wi-Fi"},
]


def png_url(w: int = 54, h: int = 120, seed: int = 0) -> str:
    arr = np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def request_body(text: str = "Open the settings", *, model: str = "tiny", elements: Any = ELEMENTS, **kw: Any) -> dict[str, Any]:
    """A valid chat-completion body (``elements=None``: no ``digirl`` extension)."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": text}, {"type": "image_url", "image_url": {"url": png_url()}}]}
        ],
        **kw,
    }
    if elements is not None:
        body["digirl"] = {"elements": elements}
    return body


def raw_request(
    address: tuple[str, int], method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], str]:
    """(status, headers, body text) of one request on a fresh connection."""
    conn = http.client.HTTPConnection(*address, timeout=60)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read().decode()
    finally:
        conn.close()


def post(address: tuple[str, int], body: Any) -> tuple[int, dict[str, Any]]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    status, _, text = raw_request(address, "POST", "/v1/chat/completions", data, {"Content-Type": "application/json"})
    return status, json.loads(text)


class Gated:
    """Wraps a policy: records batch sizes; each act waits for ``gate`` (so requests pile up behind it)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.kind = inner, inner.kind
        self.uses_elements = getattr(inner, "uses_elements", False)
        self.gate = threading.Event()
        self.gate.set()
        self.sizes: list[int] = []

    def act(self, observations: Sequence[Observation], *, greedy: bool = False, temperature: float = 1.0) -> list[ActOutput]:
        self.sizes.append(len(observations))
        assert self.gate.wait(60)
        return self.inner.act(observations, greedy=greedy, temperature=temperature)

    def save(self, path: Any) -> None:
        self.inner.save(path)


@pytest.fixture(scope="module")
def tiny_policy_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from digirl.policies.config import EncoderConfig
    from digirl.policies.default import DefaultPolicy

    d = tmp_path_factory.mktemp("srv") / "policy"
    DefaultPolicy(EncoderConfig(dim=32, layers=1, heads=2), seed=0).save(d)
    return d
