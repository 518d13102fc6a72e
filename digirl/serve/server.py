"""The HTTP layer: ``/v1/chat/completions``, ``/v1/models`` and ``/health`` on the standard library's
``ThreadingHTTPServer`` (one thread per connection, HTTP/1.1 keep-alive).

Why the standard library: the work per request is one policy forward pass shared by a batch, so the
server only has to parse JSON and wait; threads do that, need no event loop, and add no dependency
to a package that already pulls in torch. Requests are bounded (body size, image bytes and pixels,
a socket timeout), bad ones get a 4xx with an OpenAI-style error body, and any unexpected failure
answers 500 without details; the bearer token is compared in constant time and never logged.
"""

from __future__ import annotations

import concurrent.futures
import hmac
import json
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from digirl.core.types import Observation
from digirl.policies.base import ActingPolicy, ActOutput
from digirl.serve.batcher import Batcher
from digirl.serve.protocol import CONTENT_MODES, Limits, RequestError, completion, parse_request

__all__ = ["PolicyServer", "ServeConfig"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServeConfig:
    """How the server listens, batches, answers and checks requests."""

    host: str = "127.0.0.1"
    port: int = 8000
    model_id: str = "digirl-policy"
    #: Message content: ``raw`` (the policy's own text) or a codec name (json, autoui, cogagent).
    content: str = "raw"
    max_batch: int = 32
    max_wait_s: float = 0.005
    #: Bearer token required on /v1 routes (``None``: no authentication).
    token: str | None = field(default=None, repr=False)
    limits: Limits = field(default_factory=Limits)
    #: Seconds a connection may sit idle or take to send a request.
    socket_timeout_s: float = 30.0
    #: Seconds a request may wait for its batch before answering 503.
    act_timeout_s: float = 120.0

    def __post_init__(self) -> None:
        if self.content not in CONTENT_MODES:
            raise ValueError(f"content must be one of {', '.join(CONTENT_MODES)}, got {self.content!r}")


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    #: Pending connections the kernel holds before refusing (http.server's default of 5 resets bursts of clients).
    request_queue_size = 128
    app: PolicyServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.app.config.socket_timeout_s)  # an idle or slow client is dropped

    # ---------------------------------------------------------------- plumbing
    def log_message(self, format: str, *args: Any) -> None:  # the request line only (never headers)
        log.debug("%s %s", self.address_string(), format % args)

    def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, e: RequestError) -> None:
        headers = {"WWW-Authenticate": "Bearer"} if e.status == 401 else {}
        if e.status == 413:  # the unread body would be taken for the next request
            headers["Connection"] = "close"
            self.close_connection = True
        self._send(e.status, e.body(), headers)
        if e.status == 413:
            self._discard_body()

    def _discard_body(self, cap: int = 16 << 20) -> None:
        """Read (and drop) an oversized body of up to ``cap`` bytes after the 413 went out: closing
        with unread input resets the connection, and the client, still sending, never sees the 413."""
        try:
            left = min(int(self.headers.get("Content-Length") or 0), cap)
            self.wfile.flush()
            while left > 0:
                chunk = self.rfile.read(min(left, 1 << 16))
                if not chunk:
                    break
                left -= len(chunk)
        except (OSError, ValueError):
            pass

    def _handle(self, fn: Any) -> None:
        try:
            fn()
        except RequestError as e:
            self._error(e)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True
        except Exception:
            log.exception("internal error on %s %s", self.command, self.path)
            try:
                self._send(
                    500, {"error": {"message": "internal server error", "type": "server_error", "param": None, "code": None}}
                )
            except OSError:
                self.close_connection = True

    def _check_auth(self) -> None:
        token = self.server.app.config.token
        if token is None:
            return
        got = self.headers.get("Authorization", "")
        scheme, _, value = got.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), token.encode()):
            raise RequestError(401, "missing or wrong bearer token (Authorization: Bearer ...)", code="invalid_api_key")

    def _read_json(self) -> Any:
        length = self.headers.get("Content-Length")
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked" or length is None:
            self.close_connection = True
            raise RequestError(411, "a Content-Length header is required")
        try:
            n = int(length)
        except ValueError:
            self.close_connection = True
            raise RequestError(400, "bad Content-Length header") from None
        limit = self.server.app.config.limits.max_body_bytes
        if n < 0 or n > limit:
            raise RequestError(413, f"request body of {n} bytes is larger than {limit}", code="request_too_large")
        raw = self.rfile.read(n)
        if len(raw) < n:
            self.close_connection = True
            raise RequestError(400, "the request body ended early")
        try:
            return json.loads(raw)
        except (UnicodeDecodeError, ValueError) as e:
            raise RequestError(400, f"the body is not valid JSON ({e})", code="invalid_json") from None

    # ---------------------------------------------------------------- routes
    def do_GET(self) -> None:
        self._handle(self._get)

    def do_POST(self) -> None:
        self._handle(self._post)

    def _refuse_method(self) -> None:
        raise RequestError(405, f"method {self.command} is not allowed (GET /v1/models, POST /v1/chat/completions)")

    def _not_allowed(self) -> None:  # without these, http.server would answer 501
        self._handle(self._refuse_method)

    do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _not_allowed

    def _route(self) -> str:
        return self.path.split("?", 1)[0].rstrip("/")

    def _get(self) -> None:
        app = self.server.app
        route = self._route()
        if route == "/health":
            self._send(200, {"status": "ok"})
            return
        if route in ("/v1/chat/completions", "/v1/completions"):
            raise RequestError(405, f"{route} takes POST")
        self._check_auth()
        if route == "/v1/models":
            self._send(200, {"object": "list", "data": [app.model_card()]})
        elif route == f"/v1/models/{app.config.model_id}":
            self._send(200, app.model_card())
        elif route == "/v1/digirl/stats":
            self._send(200, app.stats())
        else:
            raise RequestError(404, f"no route {route or '/'} (try POST /v1/chat/completions, GET /v1/models)")

    def _post(self) -> None:
        app = self.server.app
        route = self._route()
        if route != "/v1/chat/completions":
            if route in ("/v1/models", "/health"):
                raise RequestError(405, f"{route} takes GET")
            raise RequestError(404, f"no route {route or '/'} (try POST /v1/chat/completions)")
        self._check_auth()
        req = parse_request(self._read_json(), app.config.model_id, app.config.limits)
        fut = app.batcher.submit([req.observation] * req.n, greedy=req.greedy, temperature=req.temperature)
        try:
            result = fut.result(timeout=app.config.act_timeout_s)
        except concurrent.futures.TimeoutError:
            raise RequestError(503, "the policy is busy; retry later") from None  # not the client's fault, not a crash
        body = completion(req, result.outputs, mode=app.config.content, batch_size=result.batch_size, kind=app.kind)
        self._send(200, body)


class PolicyServer:
    """A policy behind the HTTP API; :meth:`start` serves from a background thread, :meth:`serve_forever` blocks."""

    def __init__(self, policy: ActingPolicy, config: ServeConfig | None = None) -> None:
        self.policy = policy
        self.config = config or ServeConfig()
        self.kind = str(getattr(policy, "kind", "unknown"))
        self.batcher = Batcher(self._act, max_batch=self.config.max_batch, max_wait_s=self.config.max_wait_s)
        self.httpd = _HTTPServer((self.config.host, self.config.port), _Handler)
        self.httpd.app = self
        self._thread: threading.Thread | None = None

    def _act(self, observations: Sequence[Observation], greedy: bool, temperature: float) -> list[ActOutput]:
        return self.policy.act(observations, greedy=greedy, temperature=max(temperature, 1e-6))

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.httpd.server_address[:2]
        return str(host), int(port)

    @property
    def base_url(self) -> str:
        host, port = self.address
        return f"http://{host}:{port}/v1"

    def model_card(self) -> dict[str, Any]:
        return {"id": self.config.model_id, "object": "model", "created": 0, "owned_by": f"digirl ({self.kind} policy)"}

    def stats(self) -> dict[str, Any]:
        sizes = list(self.batcher.batch_sizes)
        return {
            "requests": self.batcher.requests,
            "batches": len(sizes),
            "largest_batch": max(sizes, default=0),
            "mean_batch": (sum(sizes) / len(sizes)) if sizes else 0.0,
        }

    def start(self) -> PolicyServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="digirl-serve-http", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self.httpd.serve_forever()

    def close(self) -> None:
        if self._thread is not None:
            self.httpd.shutdown()
            self._thread.join(timeout=10)
        self.httpd.server_close()
        self.batcher.close()

    def __enter__(self) -> PolicyServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
