"""The HTTP layer: ``/v1/chat/completions``, ``/v1/models`` and ``/health`` on the standard library's
HTTP server (HTTP/1.1 keep-alive), with a bounded pool of connection threads
(:mod:`digirl.serve.connections`).

Why the standard library: the work per request is one policy forward pass shared by a batch, so the
server only has to parse JSON and wait; threads do that, need no event loop, and add no dependency
to a package that already pulls in torch. Everything is bounded: body size, JSON nesting and value
count, image bytes and pixels, connections (503 past the cap), the bytes all requests in flight may
hold (503 + ``Retry-After`` past the budget), a socket timeout. Bad requests get a 4xx with an
OpenAI-style error body and never reach a batch; a broken connection is one log line; an
unexpected failure answers 500 without details. The bearer token is compared in constant time and
never logged.
"""

from __future__ import annotations

import concurrent.futures
import hmac
import json
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from digirl.core.types import Observation
from digirl.policies.base import ActingPolicy, ActOutput
from digirl.serve.batcher import Batcher
from digirl.serve.body import BODY_COST, ByteBudget, Reservation, decode_json
from digirl.serve.connections import BoundedHTTPServer, describe
from digirl.serve.protocol import CONTENT_MODES, Limits, RequestError, completion, parse_request
from digirl.utils.http import send_json

__all__ = ["DEFAULT_ALIAS", "PolicyServer", "ServeConfig"]

log = logging.getLogger(__name__)

#: The model id every server also answers to, whatever its name (the one the docs use).
DEFAULT_ALIAS = "digirl"


@dataclass(frozen=True)
class ServeConfig:
    """How the server listens, batches, answers and checks requests."""

    host: str = "127.0.0.1"
    port: int = 8000
    model_id: str = "digirl-policy"
    #: Other model ids accepted (and listed by ``GET /v1/models``) besides ``model_id``.
    aliases: tuple[str, ...] = (DEFAULT_ALIAS,)
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
    #: Connections served at once (one pooled thread each); one more is answered 503.
    max_connections: int = 256
    #: Bytes all requests in flight may hold (bodies while parsed, decoded screenshots); past it, 503
    #: (413 for a request that needs more than all of it).
    max_inflight_bytes: int = 512 * 1024 * 1024
    #: Refuse requests without ``digirl.elements``: ``None`` = when the policy reads elements.
    require_elements: bool | None = None

    def __post_init__(self) -> None:
        if self.content not in CONTENT_MODES:
            raise ValueError(f"content must be one of {', '.join(CONTENT_MODES)}, got {self.content!r}")
        if self.max_connections < 1 or self.max_batch < 1 or self.max_inflight_bytes < 1:
            raise ValueError("max_connections, max_batch and max_inflight_bytes must be >= 1")


class _HTTPServer(BoundedHTTPServer):
    app: PolicyServer


_ERROR_500 = {"error": {"message": "internal server error", "type": "server_error", "param": None, "code": None}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    #: TCP_NODELAY: the headers and the body go out in two writes; with Nagle's algorithm the body
    #: waited for the client's delayed ACK of the headers (~40 ms on Linux loopback) on every response.
    disable_nagle_algorithm = True
    server: _HTTPServer
    #: A request body the handler has not read yet (it must be drained or the connection closed).
    _unread_body = False
    _abort_logged = False

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.app.config.socket_timeout_s)  # an idle or slow client is dropped

    def handle_one_request(self) -> None:
        # Waiting for the request line, the connection is idle: a new client may displace it when
        # the server is full. parse_request (called once the line is in) makes it busy again.
        self.server.mark_idle(self.connection)
        try:
            super().handle_one_request()
        finally:
            self.server.mark_busy(self.connection)

    def parse_request(self) -> bool:
        self.server.mark_busy(self.connection)
        return super().parse_request()

    # ---------------------------------------------------------------- plumbing
    def log_message(self, format: str, *args: Any) -> None:  # the request line only (never headers)
        log.debug("%s %s", self.address_string(), format % args)

    def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        send_json(self, status, json.dumps(body).encode(), headers)

    def _error(self, e: RequestError) -> None:
        headers = {"WWW-Authenticate": "Bearer"} if e.status == 401 else {}
        if e.retry_after is not None:
            headers["Retry-After"] = str(e.retry_after)
        unread = self._unread_body
        if unread:  # the unread body would be taken for the next request
            headers["Connection"] = "close"
            self.close_connection = True
        self._send(e.status, e.body(), headers)
        if unread:
            self._discard_body()

    def _discard_body(self) -> None:
        """Read (and drop) the unread body, up to twice the body limit, after the error went out: closing
        with unread input resets the connection, and the client, still sending, never sees the error.
        Dropped in 64 KiB chunks: it costs time on this connection's thread, no memory."""
        self._unread_body = False
        try:
            left = min(int(self.headers.get("Content-Length") or 0), 2 * self.server.app.config.limits.max_body_bytes)
            self.wfile.flush()
            while left > 0:
                chunk = self.rfile.read(min(left, 1 << 16))
                if not chunk:
                    break
                left -= len(chunk)
        except (OSError, ValueError):
            pass

    def _handle(self, fn: Any) -> None:
        length = self.headers.get("Content-Length")
        self._unread_body = bool(length and length.strip() not in ("", "0"))
        try:
            fn()
        except RequestError as e:
            try:
                self._error(e)
            except OSError as e2:
                self._aborted(e2)
        except OSError as e:  # reset, broken pipe, timeout: the client went away
            self._aborted(e)
        except Exception:
            log.exception("internal error on %s %s", self.command, self.path)
            try:
                self._send(500, _ERROR_500, {"Connection": "close"} if self._unread_body else None)
            except OSError:
                pass
            self.close_connection = True

    def _aborted(self, e: BaseException) -> None:
        self.close_connection = True
        if not self._abort_logged:  # one line per connection, however many writes then fail
            self._abort_logged = True
            self.server.handle_error_line(self.client_address, e)

    def _check_auth(self) -> None:
        token = self.server.app.config.token
        if token is None:
            return
        got = self.headers.get("Authorization", "")
        scheme, _, value = got.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), token.encode()):
            raise RequestError(401, "missing or wrong bearer token (Authorization: Bearer ...)", code="invalid_api_key")

    def _read_body(self, ticket: Reservation) -> bytes:
        length = self.headers.get("Content-Length")
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked" or length is None:
            self.close_connection = True
            raise RequestError(411, "a Content-Length header is required")
        try:
            n = int(length)
        except ValueError:
            self.close_connection = True
            self._unread_body = False  # its length is unknown: the connection closes instead
            raise RequestError(400, "bad Content-Length header") from None
        limit = self.server.app.config.limits.max_body_bytes
        if n < 0 or n > limit:
            raise RequestError(413, f"request body of {n} bytes is larger than {limit}", code="request_too_large")
        ticket.take(BODY_COST * n)  # 503 + Retry-After when the requests in flight hold the whole budget
        raw = self.rfile.read(n)
        self._unread_body = False
        if len(raw) < n:  # the client closed its side mid-body
            self._aborted(EOFError(f"the body ended after {len(raw)} of {n} bytes"))
            raise RequestError(400, "the request body ended early")
        return raw

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
            self._send(200, {"object": "list", "data": [app.model_card(i) for i in app.model_ids]})
        elif route.startswith("/v1/models/") and route.removeprefix("/v1/models/") in app.model_ids:
            self._send(200, app.model_card(route.removeprefix("/v1/models/")))
        elif route == "/v1/digirl/stats":
            self._send(200, app.stats())
        else:
            raise RequestError(404, f"no route {route[:200] or '/'} (try POST /v1/chat/completions, GET /v1/models)")

    def _post(self) -> None:
        app = self.server.app
        route = self._route()
        if route != "/v1/chat/completions":
            if route in ("/v1/models", "/health"):
                raise RequestError(405, f"{route} takes GET")
            raise RequestError(404, f"no route {route[:200] or '/'} (try POST /v1/chat/completions)")
        self._check_auth()
        ticket = app.budget.reservation()
        try:
            body = decode_json(self._read_body(ticket), app.config.limits)
            req = parse_request(body, app.model_ids, app.config.limits, reserve=ticket.take, needs_elements=app.needs_elements)
            del body  # the base64 text: the decoded screenshot is all the request needs from here on
            fut = app.batcher.submit([req.observation] * req.n, greedy=req.greedy, temperature=req.temperature)
            try:
                result = fut.result(timeout=app.config.act_timeout_s)
            except concurrent.futures.TimeoutError:  # not the client's fault, not a crash
                raise RequestError(503, "the policy is busy; retry later", code="server_busy", retry_after=5) from None
            except Exception as e:  # this request alone made the policy fail (the batcher logged it)
                log.warning("request from %s failed in policy.act (%s)", self.address_string(), describe(e))
                self._send(500, {"error": {**_ERROR_500["error"], "message": "the policy failed on this request"}})
                return
            body = completion(req, result.outputs, mode=app.config.content, batch_size=result.batch_size, kind=app.kind)
            self._send(200, body)
        finally:
            ticket.release()


class PolicyServer:
    """A policy behind the HTTP API; :meth:`start` serves from a background thread, :meth:`serve_forever` blocks."""

    def __init__(self, policy: ActingPolicy, config: ServeConfig | None = None) -> None:
        self.policy = policy
        self.config = config or ServeConfig()
        self.kind = str(getattr(policy, "kind", "unknown"))
        cfg = self.config
        #: The ids clients may send as ``model``: the server's name first, then its aliases.
        self.model_ids = tuple(dict.fromkeys((cfg.model_id, *cfg.aliases)))
        #: Whether a request must carry ``digirl.elements``: the policy says if it reads them
        #: (``uses_elements``; a kind without the attribute is taken to read pixels only).
        self.needs_elements = (
            bool(getattr(policy, "uses_elements", False)) if cfg.require_elements is None else cfg.require_elements
        )
        self.budget = ByteBudget(cfg.max_inflight_bytes)
        self.batcher = Batcher(self._act, max_batch=cfg.max_batch, max_wait_s=cfg.max_wait_s)
        self.httpd = _HTTPServer((cfg.host, cfg.port), _Handler, max_connections=cfg.max_connections)
        self.httpd.app = self
        self._thread: threading.Thread | None = None

    def _act(self, observations: Sequence[Observation], greedy: bool, temperature: float) -> list[ActOutput]:
        # Greedy takes the mode of the policy's own distribution (temperature 1): the same action as
        # at any temperature, and the log-probability reported is the policy's, not that of a
        # distribution sharpened towards a point mass.
        return self.policy.act(observations, greedy=greedy, temperature=1.0 if greedy else max(temperature, 1e-6))

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.httpd.server_address[:2]
        return str(host), int(port)

    @property
    def base_url(self) -> str:
        host, port = self.address
        return f"http://{host}:{port}/v1"

    def model_card(self, model_id: str | None = None) -> dict[str, Any]:
        return {
            "id": model_id or self.config.model_id,
            "object": "model",
            "created": 0,
            "owned_by": f"digirl ({self.kind} policy)",
        }

    def stats(self) -> dict[str, Any]:
        sizes = list(self.batcher.batch_sizes)
        h = self.httpd
        return {
            "requests": self.batcher.requests,
            "batches": len(sizes),
            "largest_batch": max(sizes, default=0),
            "mean_batch": (sum(sizes) / len(sizes)) if sizes else 0.0,
            "failed_in_policy": self.batcher.failed,
            "connections": {
                "active": h.active_connections,
                "idle": h.idle_connections,
                "max": h.max_connections,
                "threads": h.worker_threads,
                "refused": h.refused_connections,
                "evicted_idle": h.evicted_connections,
                "aborted": h.aborted_connections,
            },
            "inflight_bytes": {
                "used": self.budget.used,
                "peak": self.budget.peak,
                "budget": self.budget.capacity,
                "refused": self.budget.refused,
            },
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
