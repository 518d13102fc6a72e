"""``digirl serve`` under hostile input (issue 43): every number checked before batching, a request
that fails inside a batch fails alone, bounded JSON, connections and in-flight bytes, one log line
per aborted connection."""

from __future__ import annotations

import json
import logging
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from digirl.core.actions import Action
from digirl.core.types import Observation
from digirl.policies.base import ActOutput
from tests.serve.conftest import ELEMENTS, Gated, post, raw_request, request_body


def _server(policy: Any, **kw: Any) -> Any:
    from digirl.serve.protocol import Limits
    from digirl.serve.server import PolicyServer, ServeConfig

    limits = kw.pop("limits", Limits(max_body_bytes=2_000_000, max_image_pixels=300 * 300))
    return PolicyServer(policy, ServeConfig(port=0, model_id="tiny", max_wait_s=0.0, limits=limits, **kw))


@pytest.fixture
def gated(tiny_policy_dir: Path) -> Iterator[tuple[Any, Gated]]:
    from digirl.policies.registry import load_policy

    g = Gated(load_policy(tiny_policy_dir))
    with _server(g) as s:
        yield s, g


def _wait(cond: Any, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def _with_bounds(literal: str) -> bytes:
    """A valid body whose first element's bounds are the raw JSON ``literal`` (1e999, NaN: not json.dumps-able)."""
    return (
        json.dumps(request_body(elements=[{"bounds": "@B@", "text": "Settings"}, ELEMENTS[1]])).replace('"@B@"', literal).encode()
    )


B = "digirl.elements[0].bounds"
POISON = [  # bounds, words of the error, its param (None: refused while the JSON is decoded)
    ("[1e999, 0.1, 1e999, 0.2]", "1e999 is out of range", None),  # the case: JSON's 1e999 is inf in Python
    ("[1e308, 0.1, 1e308, 0.2]", "normalized", B),  # finite, but its centre overflows to inf
    ("[NaN, 0.1, 0.5, 0.2]", "NaN is not a JSON number", None),
    ("[-Infinity, 0.1, 0.5, 0.2]", "-Infinity is not a JSON number", None),
    ("[-0.5, 0.1, 0.5, 0.2]", "normalized", B),
    ("[0.9, 0.1, 0.1, 0.2]", "normalized", B),  # x0 > x1
    ("[0.1, 0.1, 0.5]", "4 finite numbers", B),
    ("[true, 0.1, 0.5, 0.2]", "4 finite numbers", B),
    ('["0.1", 0.1, 0.5, 0.2]', "4 finite numbers", B),
    ("[1" + "0" * 400 + ", 0.1, 0.5, 0.2]", "4 finite numbers", B),  # an integer no float holds: once OverflowError
]


@pytest.mark.parametrize(("bounds", "needle", "param"), POISON, ids=[p[0][:24] for p in POISON])
def test_a_poisoned_request_fails_alone_and_never_reaches_a_batch(
    gated: tuple[Any, Gated], bounds: str, needle: str, param: str | None
) -> None:
    """Issue 43, finding 1: one bad element among 11 valid concurrent requests made the valid ones 500."""
    server, policy = gated
    policy.gate.clear()  # hold the worker: the 11 valid requests queue up, the poisoned one is sent among them
    results: dict[str, tuple[int, dict[str, Any]]] = {}
    first = threading.Thread(target=lambda: results.__setitem__("first", post(server.address, request_body())))
    first.start()
    _wait(lambda: policy.sizes, "the first batch")
    valid = [
        threading.Thread(target=lambda i=i: results.__setitem__(f"v{i}", post(server.address, request_body(f"Open app {i}"))))
        for i in range(10)
    ]
    for t in valid[:5]:
        t.start()
    results["poison"] = post(server.address, _with_bounds(bounds))  # answered at once, the worker still held
    for t in valid[5:]:
        t.start()
    _wait(lambda: server.batcher.pending() == 10, "10 queued requests")
    policy.gate.set()
    for t in [first, *valid]:
        t.join(60)
    status, err = results.pop("poison")
    assert status == 400 and needle in err["error"]["message"] and err["error"]["param"] == param, err
    assert sorted(s for s, _ in results.values()) == [200] * 11
    assert policy.sizes == [1, 10] and server.batcher.failed == 0


class _Fragile:
    """A policy with a bug validation cannot foresee: any batch holding the word 'boom' raises."""

    kind = "fragile"
    uses_elements = False

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def act(self, observations: Any, *, greedy: bool = False, temperature: float = 1.0) -> list[ActOutput]:
        self.calls.append([o.instruction for o in observations])
        if any("boom" in o.instruction for o in observations):
            raise RuntimeError("the policy cannot take this screen")
        return [ActOutput(Action.home(), f"home for {o.instruction}", -0.5) for o in observations]


def test_a_request_that_fails_inside_a_batch_fails_alone() -> None:
    from digirl.serve.batcher import Batcher

    policy = _Fragile()
    gate = threading.Event()

    def act(obs: Any, greedy: bool, temperature: float) -> list[ActOutput]:
        assert gate.wait(30)
        return policy.act(obs, greedy=greedy, temperature=temperature)

    b = Batcher(act, max_batch=32, max_wait_s=0.0)
    try:
        hold = b.submit([_obs("hold")], greedy=False, temperature=1.0)  # occupies the worker until the gate opens
        _wait(lambda: b.pending() == 0, "the worker to take the first job")
        names = [f"a{i}" for i in range(3)] + ["boom"] + [f"b{i}" for i in range(4)]
        futs = {n: b.submit([_obs(n)], greedy=False, temperature=1.0) for n in names}
        gate.set()
        assert hold.result(30).outputs[0].text == "home for hold"
        with pytest.raises(RuntimeError, match="cannot take this screen"):
            futs.pop("boom").result(30)
        assert {n: f.result(30).outputs[0].text for n, f in futs.items()} == {n: f"home for {n}" for n in futs}
    finally:
        b.close()
    # the batch of 8 failed, then halves: [a0 a1 a2 boom] failed, [b0..b3] answered, [a0 a1] answered, [a2 boom] failed, ...
    assert policy.calls[1] == names and ["b0", "b1", "b2", "b3"] in policy.calls and ["boom"] in policy.calls
    assert b.failed == 1 and len(policy.calls) == 8


def _obs(text: str) -> Observation:
    import numpy as np

    return Observation(np.zeros((8, 8, 3), np.uint8), text)


def test_over_http_the_failing_request_gets_500_and_the_others_200() -> None:
    policy = Gated(_Fragile())
    with _server(policy) as server:
        policy.gate.clear()
        results: dict[str, int] = {}
        first = threading.Thread(target=lambda: results.__setitem__("first", post(server.address, request_body())[0]))
        first.start()
        _wait(lambda: policy.sizes, "the first batch")
        texts = ["go 1", "go 2", "boom now", "go 3", "go 4"]
        ts = [
            threading.Thread(target=lambda t=t: results.__setitem__(t, post(server.address, request_body(t))[0])) for t in texts
        ]
        for t in ts:
            t.start()
        _wait(lambda: server.batcher.pending() == 5, "5 queued requests")
        policy.gate.set()
        for t in [first, *ts]:
            t.join(60)
    assert results == {"first": 200, "go 1": 200, "go 2": 200, "boom now": 500, "go 3": 200, "go 4": 200}


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (b'{"model": "tiny", "messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nests more than 32 levels"),
        (b'{"x": ' + b"[" * 33 + b"]" * 33 + b"}", "nests more than 32 levels"),
        (b"[" + b"0," * 250_000 + b"0]", "more than 200000"),
        (json.dumps({**request_body(), "temperature": "@T@"}).replace('"@T@"', "NaN").encode(), "NaN is not a JSON number"),
        (json.dumps({**request_body(), "temperature": "@T@"}).replace('"@T@"', "1e999").encode(), "1e999 is out of range"),
    ],
    ids=["nested-100000", "nested-33", "250001-values", "temperature-NaN", "temperature-1e999"],
)
def test_json_bounds_are_a_clear_400(gated: tuple[Any, Gated], body: bytes, needle: str) -> None:
    server, _ = gated
    status, err = post(server.address, body)
    assert status == 400 and needle in err["error"]["message"], err
    assert post(server.address, request_body())[0] == 200


def test_json_depth_ignores_brackets_in_strings() -> None:
    from digirl.serve.body import json_depth

    assert json_depth(b'{"a": [1, {"b": "[[[[{{{{ \\" ]]]"}], "c": []}', 32) == 3
    assert json_depth(b"[" * 40, 32) == 33  # stops counting past the limit


@pytest.mark.parametrize(
    ("ext", "param", "needle"),
    [
        ({"step": 10**12}, "digirl.step", "0..1000000"),
        ({"step": -1}, "digirl.step", "0..1000000"),
        ({"elements": [{"bounds": [0.1, 0.1, 0.2, 0.2], "text": 7}]}, "digirl.elements[0].text", "must be a string"),
        ({"elements": [{"bounds": [0.1, 0.1, 0.2, 0.2], "clickable": "yes"}]}, "digirl.elements[0].clickable", "true or false"),
        ({"elements": [{"bounds": [0.1, 0.1, 0.2, 0.2], "size": 3}]}, "digirl.elements[0]", "unknown keys"),
        ({"elements": [{"bounds": [0.1, 0.1, 0.2, 0.2], "text": "x" * 20_000}]}, "digirl.elements[0].text", "more than 16384"),
        ({"history": [{"type": "DUAL_POINT", "touch": [2.0, 0.5], "lift": [0.5, 0.5]}]}, "digirl.history", "[0, 1]"),
        ({"history": [{"type": "DUAL_POINT", "touch": [10**400, 0.5], "lift": [0.5, 0.5]}]}, "digirl.history", "too large"),
        ({"step": 10**400}, "digirl.step", "0..1000000"),
    ],
)
def test_every_field_is_checked_before_batching(gated: tuple[Any, Gated], ext: dict[str, Any], param: str, needle: str) -> None:
    server, policy = gated
    body = request_body()
    body["digirl"] = {"elements": ELEMENTS, **ext}
    status, err = post(server.address, body)
    assert status == 400 and err["error"]["param"] == param and needle in err["error"]["message"], err
    assert policy.sizes == []  # nothing reached the policy


def test_roles_of_any_json_type_are_400(gated: tuple[Any, Gated]) -> None:
    server, _ = gated
    status, err = post(server.address, {"model": "tiny", "messages": [{"role": ["user"], "content": "x"}]})
    assert status == 400 and "role" in err["error"]["message"]


# ------------------------------------------------------------------------------------ bounded memory


def test_past_the_inflight_byte_budget_requests_get_503_with_retry_after(tiny_policy_dir: Path) -> None:
    from digirl.policies.registry import load_policy
    from digirl.serve.body import BODY_COST
    from digirl.serve.protocol import PIXEL_COST, Limits

    limits = Limits(max_body_bytes=100_000, max_image_pixels=60 * 130)
    one = json.dumps(request_body()).encode()
    cost = BODY_COST * len(one) + PIXEL_COST * 54 * 120  # what one request in flight holds
    policy = Gated(load_policy(tiny_policy_dir))
    budget = 3 * cost + cost // 2  # room for 3 such requests
    fits = budget // cost
    with _server(policy, limits=limits, max_inflight_bytes=budget) as server:
        policy.gate.clear()
        results: list[int] = []
        ts = [threading.Thread(target=lambda: results.append(post(server.address, one)[0])) for _ in range(fits)]
        for t in ts:
            t.start()
        _wait(lambda: server.budget.used == fits * cost, f"{fits} requests in flight")
        status, headers, text = raw_request(server.address, "POST", "/v1/chat/completions", one)
        assert status == 503 and headers["Retry-After"] == "1" and json.loads(text)["error"]["code"] == "server_busy"
        stats = json.loads(raw_request(server.address, "GET", "/v1/digirl/stats")[2])["inflight_bytes"]
        assert stats == {"used": fits * cost, "peak": fits * cost, "budget": budget, "refused": 1}
        policy.gate.set()
        for t in ts:
            t.join(60)
        assert results == [200] * fits
        _wait(lambda: server.budget.used == 0, "the reservations to be released")  # just after each response went out
        assert post(server.address, one)[0] == 200  # room again


def test_a_request_larger_than_the_whole_budget_is_413_not_503(tiny_policy_dir: Path) -> None:
    """Waiting cannot help a request that would not fit even alone: 413, not an endless 503 + retry."""
    from digirl.policies.registry import load_policy

    one = json.dumps(request_body()).encode()
    with _server(load_policy(tiny_policy_dir), max_inflight_bytes=2 * len(one)) as server:  # the body fits, not 3x it
        status, headers, text = raw_request(server.address, "POST", "/v1/chat/completions", one)
        assert status == 413 and "Retry-After" not in headers
        assert "more than the server's whole in-flight budget" in json.loads(text)["error"]["message"]
        assert server.budget.used == 0


def test_idle_sockets_cannot_lock_clients_out(tiny_policy_dir: Path) -> None:
    """300 idle sockets once held 307 threads. Now threads stay at the cap, and a new client
    displaces the connection idle the longest instead of being refused."""
    from digirl.policies.registry import load_policy

    with _server(load_policy(tiny_policy_dir), max_connections=4) as server:
        idle = [socket.create_connection(server.address) for _ in range(4)]
        _wait(lambda: server.httpd.idle_connections == 4, "4 idle connections")
        time.sleep(0.6)  # older than the 0.5 s a connection must have waited before it may be displaced
        extra = [socket.create_connection(server.address) for _ in range(20)]
        _wait(lambda: server.httpd.evicted_connections >= 4, "the idle connections to be displaced")
        time.sleep(0.6)
        assert post(server.address, request_body())[0] == 200
        assert server.httpd.worker_threads == 4 and server.httpd.active_connections <= 4
        assert idle[0].recv(1) == b""  # the oldest was closed by the server
        for s in idle + extra:
            s.close()


def test_when_every_connection_is_busy_a_new_one_gets_503_with_retry_after(tiny_policy_dir: Path) -> None:
    from digirl.policies.registry import load_policy

    policy = Gated(load_policy(tiny_policy_dir))
    with _server(policy, max_connections=4) as server:
        policy.gate.clear()
        results: list[int] = []
        ts = [threading.Thread(target=lambda: results.append(post(server.address, request_body())[0])) for _ in range(4)]
        for t in ts:
            t.start()
        _wait(lambda: sum(policy.sizes) + server.batcher.pending() == 4, "4 requests in the policy or its queue")
        status, headers, text = raw_request(server.address, "POST", "/v1/chat/completions", json.dumps(request_body()).encode())
        assert status == 503 and headers["Retry-After"] == "1" and "maximum of 4 connections" in text
        policy.gate.set()
        for t in ts:
            t.join(60)
        assert results == [200] * 4 and server.httpd.refused_connections == 1 and server.httpd.worker_threads == 4


# ------------------------------------------------------------------------------------ aborted connections


def _reset(sock: socket.socket) -> None:
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close() sends RST
    sock.close()


@pytest.mark.parametrize(
    ("when", "error"), [("request-line", "ConnectionResetError"), ("body", "ConnectionResetError"), ("body-fin", "EOFError")]
)
def test_an_aborted_connection_is_one_log_line(
    gated: tuple[Any, Gated], caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str], when: str, error: str
) -> None:
    server, _ = gated
    caplog.set_level(logging.INFO, logger="digirl.serve.server")
    sock = socket.create_connection(server.address)
    if when == "request-line":
        sock.sendall(b"POST /v1/chat/comp")  # then reset: once a ~20-line traceback on stderr
    else:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" + b'{"model": "t' * 10)
    time.sleep(0.2)  # the handler is reading
    if when == "body-fin":
        sock.shutdown(socket.SHUT_WR)  # a clean close of the client's side, mid-body
        sock.recv(4096)  # the 400 (or nothing)
        sock.close()
    else:
        _reset(sock)
    _wait(lambda: server.httpd.aborted_connections == 1, "the abort to be noticed")
    lines = [r.getMessage() for r in caplog.records if "aborted" in r.getMessage()]
    assert len(lines) == 1 and error in lines[0] and "\n" not in lines[0], lines
    assert all(r.exc_info is None for r in caplog.records)
    assert "Traceback" not in capfd.readouterr().err
    assert post(server.address, request_body())[0] == 200


def test_a_body_refused_before_it_is_read_leaves_the_connection_usable(gated: tuple[Any, Gated]) -> None:
    """A 404 for a POST with a body: the body is drained (or the connection closed), never taken for the next request."""
    import http.client

    server, _ = gated
    conn = http.client.HTTPConnection(*server.address, timeout=30)
    try:
        conn.request("POST", "/v1/nowhere", body=json.dumps(request_body()).encode())
        r = conn.getresponse()
        r.read()
        assert r.status == 404
        conn.request("POST", "/v1/chat/completions", body=json.dumps(request_body()).encode())
        r = conn.getresponse()
        assert r.status == 200, r.read()
    finally:
        conn.close()
