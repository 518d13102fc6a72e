"""The answer of the JSON HTTP servers (the policy server, the fake OpenAI endpoint of the tests)."""

from __future__ import annotations

from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler

__all__ = ["send_json"]


def send_json(handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: Mapping[str, str] | None = None) -> None:
    """Answer ``handler``'s request with ``status`` and the JSON ``body`` (already encoded), its length
    and any extra ``headers``."""
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    for k, v in (headers or {}).items():
        handler.send_header(k, v)
    handler.end_headers()
    handler.wfile.write(body)
