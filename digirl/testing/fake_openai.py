"""A local OpenAI-compatible ``/v1/chat/completions`` server for tests of the judge, the API policy
and your own clients (127.0.0.1 only, stdlib only).

Each request takes the next scripted behaviour from ``script`` (then ``default``); a behaviour is
``"success"``, ``"failure"`` (judge answers), ``"garbage"``, ``"badjson"``, ``"echo_auth"`` (an error
body that echoes the Authorization header), ``"timeout"`` (answers after ``hang_s``), an int HTTP
status (``429``, ``500``, ``401``...), ``(429, "<Retry-After>")``, ``("text", "<answer>")`` (a 200
with that assistant text), or a callable ``request_json -> behaviour`` (it runs in the request's
thread, so it may also sleep).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from digirl.utils.http import send_json

Behaviour = Any

USAGE = {"prompt_tokens": 1200, "completion_tokens": 30, "total_tokens": 1230}


class FakeOpenAI(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, default: Behaviour = "success", *, delay_s: float = 0.0, hang_s: float = 2.0) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.default = default
        self.script: deque[Behaviour] = deque()
        self.delay_s = delay_s
        self.hang_s = hang_s
        self.requests: list[dict[str, Any]] = []
        self.auth_headers: list[str | None] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def next_behaviour(self, req: dict[str, Any]) -> Behaviour:
        with self._lock:
            b = self.script.popleft() if self.script else self.default
        return b(req) if callable(b) else b

    def __enter__(self) -> FakeOpenAI:
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()


def answer(text: str) -> dict[str, Any]:
    return {
        "id": "cmpl-1",
        "object": "chat.completion",
        "model": "fake",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": dict(USAGE),
    }


class _Handler(BaseHTTPRequestHandler):
    server: FakeOpenAI

    def log_message(self, *args: Any) -> None:  # keep pytest output clean
        pass

    _counted = False  # this request is in srv.in_flight

    def _finish(self) -> None:
        """Leave ``in_flight`` before the answer goes out: a client that sends its next request the
        moment it reads this one's answer must not find it still counted (it was, by one, under load)."""
        if self._counted:
            self._counted = False
            with self.server._lock:
                self.server.in_flight -= 1

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self._finish()
        send_json(self, status, body, headers)

    def do_POST(self) -> None:
        srv = self.server
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path != "/v1/chat/completions":
            return self._send(404, b'{"error": "not found"}')
        req = json.loads(body)
        with srv._lock:
            srv.requests.append(req)
            srv.auth_headers.append(self.headers.get("Authorization"))
            srv.in_flight += 1
            srv.max_in_flight = max(srv.max_in_flight, srv.in_flight)
        self._counted = True
        try:
            if srv.delay_s:
                time.sleep(srv.delay_s)
            self._behave(srv.next_behaviour(req))
        finally:
            self._finish()

    def _behave(self, b: Behaviour) -> None:
        if b == "success":
            return self._send(200, json.dumps(answer("Reason: the results page is shown.\nStatus: success")).encode())
        if b == "failure":
            return self._send(200, json.dumps(answer("Reason: still on the home screen.\nStatus: failure")).encode())
        if b == "garbage":
            return self._send(200, json.dumps(answer("I like turtles. Maybe?")).encode())
        if b == "badjson":
            return self._send(200, b"<html>gateway</html>")
        if b == "echo_auth":
            return self._send(500, json.dumps({"error": f"bad header {self.headers.get('Authorization')}"}).encode())
        if b == "timeout":
            time.sleep(self.server.hang_s)
            return self._send(200, json.dumps(answer("Status: success")).encode())
        if isinstance(b, tuple) and b[0] == "text":
            return self._send(200, json.dumps(answer(b[1])).encode())
        if isinstance(b, tuple):
            status, retry_after = b
            return self._send(status, b'{"error": "rate limited"}', {"Retry-After": retry_after})
        if isinstance(b, int):
            return self._send(b, json.dumps({"error": {"message": f"status {b}"}}).encode())
        raise AssertionError(f"unknown behaviour {b!r}")
