"""A bounded loopback load test of ``digirl serve`` with hostile clients among the valid ones.

    python benchmarks/throughput/load_serve.py [--clients 200] [--poisoned 0.1] [--requests 3] [--deadline 300]

Starts ``digirl serve`` as its own process (a default policy of the default size, random weights,
on the CPU, bound to 127.0.0.1) and runs ``--clients`` client threads in this process. Each valid
client sends ``--requests`` chat completions on one keep-alive connection: a 270x600 simulator
screenshot with its UI elements, greedy or sampled. A ``--poisoned`` share of the clients send, on
fresh connections, requests that once broke the server or that it must refuse: element bounds of
``1e999``/``1e308``/NaN, a NaN temperature, JSON nested 100,000 deep, a body over the size cap, an
image over the pixel cap, too many elements, a connection reset halfway through a body. Before
them, ``--idle-sockets`` (default 300) connections that never send anything are opened and held:
the server serves 256 at once (``--max-connections``), so the clients must displace idle ones. The server's
resident memory is sampled every 50 ms and its peak read from the kernel (``VmHWM``).

Then (``--heavy-clients``, default 40) that many clients send at once a valid request with a large
screenshot (a ~18 MB body), together more than the server's in-flight budget: the ones past it get
503 + ``Retry-After`` and retry, and the server's memory stays near its idle size plus the budget.

Pass/fail: every valid request of the first phase answered 200, no 5xx at all, every poisoned request
a 4xx (the reset one gets no answer by design), the server still answering afterwards, and every
heavy request answered 200 in the end. Prints figures and writes
``benchmarks/results/load_serve.json`` (``--out``). Bounded: ``clients x requests`` requests and a
``--deadline`` in seconds, past which the run stops and is reported as incomplete.
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import http.client
import io
import json
import os
import platform
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
#: What each poisoned client sends (client i of the poisoned ones sends kind i mod len).
POISON_KINDS = (
    "bounds-1e999",
    "bounds-1e308",
    "bounds-nan",
    "temperature-nan",
    "nested-json",
    "oversized-body",
    "oversized-image",
    "too-many-elements",
    "reset-mid-body",
    "x0-after-x1",
)


def sim_observation() -> tuple[str, list[dict[str, Any]], str]:
    """(instruction, elements, screenshot as a data: URL) of a simulator screen."""
    from digirl.envs.registry import make

    env = make("digirl/sim-general-v0")
    obs, _ = env.reset(seed=0)
    env.close()
    buf = io.BytesIO()
    Image.fromarray(obs.screenshot).save(buf, format="PNG")
    url = "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()
    return obs.instruction, [e.to_dict() for e in obs.elements or ()], url


def body(instruction: str, elements: list[dict[str, Any]], url: str, **kw: Any) -> dict[str, Any]:
    return {
        "model": "digirl",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": instruction}, {"type": "image_url", "image_url": {"url": url}}]}
        ],
        "digirl": {"elements": elements},
        **kw,
    }


def poison(kind: str, instruction: str, elements: list[dict[str, Any]], url: str) -> bytes:
    """The request body of one poisoned kind (``reset-mid-body`` sends the valid body, then resets)."""

    def with_bounds(literal: str) -> bytes:
        els = [{**elements[0], "bounds": "@B@"}, *elements[1:]]
        return json.dumps(body(instruction, els, url)).replace('"@B@"', literal).encode()

    if kind == "bounds-1e999":
        return with_bounds("[1e999, 0.1, 1e999, 0.2]")
    if kind == "bounds-1e308":
        return with_bounds("[1e308, 0.1, 1e308, 0.2]")
    if kind == "bounds-nan":
        return with_bounds("[NaN, 0.1, 0.5, 0.2]")
    if kind == "x0-after-x1":
        return with_bounds("[0.9, 0.1, 0.1, 0.2]")
    if kind == "temperature-nan":
        return json.dumps(body(instruction, elements, url, temperature="@T@")).replace('"@T@"', "NaN").encode()
    if kind == "nested-json":
        return b'{"model": "digirl", "messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    if kind == "oversized-body":
        return json.dumps(body(instruction, elements, url, padding="x" * (32 << 20))).encode()  # just past the 32 MiB cap
    if kind == "oversized-image":
        buf = io.BytesIO()
        Image.new("RGB", (5000, 5000)).save(buf, format="PNG")  # 25 Mpixel, a few KiB of PNG
        big = "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()
        return json.dumps(body(instruction, elements, big)).encode()
    if kind == "too-many-elements":
        return json.dumps(body(instruction, elements * (2001 // max(1, len(elements)) + 1), url)).encode()
    if kind == "reset-mid-body":
        return json.dumps(body(instruction, elements, url)).encode()
    raise ValueError(f"unknown poison {kind!r}")


def start_server(
    policy_dir: Path, log_path: Path, budget_mb: float = 512.0, max_connections: int = 256
) -> tuple[subprocess.Popen[str], int, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    env.pop("DIGIRL_SERVE_TOKEN", None)
    log = log_path.open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "digirl",
            "serve",
            str(policy_dir),
            "--port",
            "0",
            "--max-inflight-mb",
            str(budget_mb),
            "--max-connections",
            str(max_connections),
            "policy.device=cpu",
        ],
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    for line in proc.stdout:  # the server prints where it listens
        if line.startswith("serving "):
            return proc, int(line.split(" at http://127.0.0.1:", 1)[1].split("/", 1)[0]), log
    proc.kill()
    raise RuntimeError(f"digirl serve did not start; see {log_path}")


def rss_kib(pid: int, field: str = "VmRSS") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


class Sampler(threading.Thread):
    """The server's resident memory every ``period`` seconds, until stopped."""

    def __init__(self, pid: int, period: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.pid, self.period = pid, period
        self.samples: list[int] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            try:
                self.samples.append(rss_kib(self.pid))
            except OSError:
                return
            time.sleep(self.period)


def server_stats(port: int) -> dict[str, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", "/v1/digirl/stats")
        return dict(json.loads(conn.getresponse().read()))
    finally:
        conn.close()


def send(conn: http.client.HTTPConnection, data: bytes) -> tuple[int, str]:
    conn.request("POST", "/v1/chat/completions", body=data, headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    return resp.status, resp.read().decode(errors="replace")


def reset_mid_body(port: int, data: bytes) -> None:
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {len(data)}\r\n\r\n".encode())
    s.sendall(data[: len(data) // 2])
    time.sleep(0.05)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close() resets
    s.close()


def run_load(
    port: int,
    *,
    clients: int,
    poisoned: float,
    requests: int,
    deadline_s: float,
    idle_sockets: int = 0,
    progress: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Run the clients against a server on ``port``; one record per request. ``idle_sockets``
    connections that never send anything are opened first and held until the clients are done."""
    idle: list[socket.socket] = []
    for _ in range(idle_sockets):
        try:
            idle.append(socket.create_connection(("127.0.0.1", port), timeout=30))
        except OSError:
            break
    if idle:
        time.sleep(1.0)  # they wait longer than the 0.5 s after which a new client may displace them
    instruction, elements, url = sim_observation()
    valid_bodies = [json.dumps(body(instruction, elements, url, temperature=t)).encode() for t in (0, 1.0)]
    n_poisoned = round(clients * poisoned)
    kinds = [POISON_KINDS[i % len(POISON_KINDS)] for i in range(n_poisoned)]
    payloads = {k: poison(k, instruction, elements, url) for k in set(kinds)}
    records: list[dict[str, Any]] = []
    lock = threading.Lock()
    stop_at = time.monotonic() + deadline_s
    start = threading.Barrier(clients)

    def valid_client(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        start.wait()
        for r in range(requests):
            if time.monotonic() > stop_at:
                break
            t0 = time.perf_counter()
            reconnected = False
            try:
                status, text = send(conn, valid_bodies[(i + r) % 2])
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # The server closed this kept-alive connection before reading the request (it had
                # been idle while the server was full): send it again on a new one, as HTTP
                # clients do (httpx, urllib3). Counted; a second failure is not retried.
                reconnected = True
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                try:
                    status, text = send(conn, valid_bodies[(i + r) % 2])
                except (OSError, http.client.HTTPException) as e:
                    status, text = -1, f"{type(e).__name__}: {e}"
            except (OSError, http.client.HTTPException) as e:
                status, text = -1, f"{type(e).__name__}: {e}"
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            with lock:
                records.append(
                    {
                        "kind": "valid",
                        "status": status,
                        "s": time.perf_counter() - t0,
                        "error": text[:200],
                        "reconnected": reconnected,
                    }
                )
        conn.close()

    def poisoned_client(kind: str) -> None:
        start.wait()
        for _ in range(requests):
            if time.monotonic() > stop_at:
                break
            t0 = time.perf_counter()
            status, text = 0, ""
            try:
                if kind == "reset-mid-body":
                    reset_mid_body(port, payloads[kind])
                else:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                    try:
                        status, text = send(conn, payloads[kind])
                    finally:
                        conn.close()
            except (OSError, http.client.HTTPException) as e:
                status, text = -1, f"{type(e).__name__}: {e}"
            with lock:
                records.append({"kind": kind, "status": status, "s": time.perf_counter() - t0, "error": text[:200]})

    threads = [threading.Thread(target=poisoned_client, args=(k,), daemon=True) for k in kinds]
    threads += [threading.Thread(target=valid_client, args=(i,), daemon=True) for i in range(clients - n_poisoned)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(1.0, stop_at - time.monotonic() + 60))
    wall = time.perf_counter() - t0
    for sock in idle:
        sock.close()
    progress(f"{len(records)} requests in {wall:.1f} s")
    return {
        "records": records,
        "wall_s": wall,
        "poisoned_clients": n_poisoned,
        "kinds": Counter(kinds),
        "idle_sockets_opened": len(idle),
    }


def heavy_phase(port: int, *, clients: int, deadline_s: float, seed: int = 0) -> dict[str, Any]:
    """``clients`` valid requests at once, each carrying a 1500x3000 screenshot of noise (a ~13 MB
    PNG, an ~18 MB body; about 85 MB against the in-flight budget): more than the budget holds. Each
    client retries after ``Retry-After`` on a 503 until it gets its answer or the deadline passes."""
    import numpy as np

    instruction, elements, _ = sim_observation()
    arr = np.random.default_rng(seed).integers(0, 256, (3000, 1500, 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG", compress_level=1)
    big = "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()
    data = json.dumps(body(instruction, elements, big, temperature=0)).encode()
    del arr, buf, big
    outcome: list[dict[str, Any]] = []
    lock = threading.Lock()
    stop_at = time.monotonic() + deadline_s
    start = threading.Barrier(clients)

    def client() -> None:
        start.wait()
        busy, status, t0 = 0, 0, time.perf_counter()
        while time.monotonic() < stop_at:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            try:
                conn.request("POST", "/v1/chat/completions", body=data, headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                resp.read()
                status, retry = resp.status, resp.getheader("Retry-After")
            except (OSError, http.client.HTTPException):
                status, retry = -1, None
            finally:
                conn.close()
            if status != 503:
                break
            busy += 1
            time.sleep(float(retry or 1))
        with lock:
            outcome.append({"status": status, "busy_503": busy, "s": time.perf_counter() - t0})

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(1.0, stop_at - time.monotonic() + 150))
    return {
        "clients": clients,
        "body_mib": len(data) / 2**20,
        "wall_s": time.perf_counter() - t0,
        "answered_200": sum(o["status"] == 200 for o in outcome),
        "final_status": dict(Counter(str(o["status"]) for o in outcome)),
        "busy_503_then_retried": sum(o["busy_503"] for o in outcome),
        "latency_max_s": max((o["s"] for o in outcome), default=None),
    }


def summarize(records: list[dict[str, Any]], *, expected: int) -> dict[str, Any]:
    valid = [r for r in records if r["kind"] == "valid"]
    bad = [r for r in records if r["kind"] != "valid"]
    lat = sorted(r["s"] for r in valid if r["status"] == 200)
    by_kind: dict[str, Counter[int]] = {}
    for r in bad:
        by_kind.setdefault(r["kind"], Counter())[r["status"]] += 1
    five = [r for r in records if r["status"] >= 500 or r["status"] == -1]
    poisoned_ok = all(
        (r["status"] == 0) if r["kind"] == "reset-mid-body" else (400 <= r["status"] < 500) for r in bad
    )  # 0: no answer expected
    return {
        "requests": len(records),
        "expected_requests": expected,
        "complete": len(records) == expected,
        "valid_requests": len(valid),
        "valid_200": sum(r["status"] == 200 for r in valid),
        "valid_resent_on_a_new_connection": sum(bool(r.get("reconnected")) for r in valid),
        "valid_non_200_examples": [r for r in valid if r["status"] != 200][:5],
        "poisoned_requests": len(bad),
        "poisoned_status_by_kind": {k: {str(s): n for s, n in sorted(c.items())} for k, c in sorted(by_kind.items())},
        "poisoned_all_4xx_or_dropped": poisoned_ok,
        "responses_5xx_or_broken": len(five),
        "broken_examples": five[:5],
        "valid_latency_p50_s": statistics.median(lat) if lat else None,
        "valid_latency_p90_s": lat[int(0.9 * (len(lat) - 1))] if lat else None,
        "valid_latency_max_s": lat[-1] if lat else None,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, default=200)
    ap.add_argument("--poisoned", type=float, default=0.1, help="share of the clients sending poisoned requests")
    ap.add_argument("--requests", type=int, default=3, help="requests per client")
    ap.add_argument("--deadline", type=float, default=300.0, help="seconds before the run stops (reported incomplete)")
    ap.add_argument("--small", action="store_true", help="a small policy (dim 32, 1 layer) instead of the default size")
    ap.add_argument(
        "--heavy-clients",
        type=int,
        default=40,
        help="then this many clients at once with ~18 MB requests, more than the in-flight budget holds (0: skip)",
    )
    ap.add_argument("--budget-mb", type=float, default=512.0, help="the server's --max-inflight-mb")
    ap.add_argument("--max-connections", type=int, default=256, help="the server's --max-connections")
    ap.add_argument(
        "--idle-sockets",
        type=int,
        default=300,
        help="connections that send nothing, opened before the clients and held through the first phase",
    )
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "load_serve.json"))
    args = ap.parse_args(argv)
    if args.clients < 1 or args.requests < 1 or not 0 <= args.poisoned <= 1 or args.deadline <= 0:
        ap.error("--clients and --requests must be >= 1, --poisoned in [0, 1], --deadline > 0")

    from digirl.policies.config import EncoderConfig, PolicyConfig
    from digirl.policies.registry import build_policy

    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="digirl-load-") as tmp:
        policy_dir = Path(tmp) / "load" / "policy"
        encoder = EncoderConfig(dim=32, layers=1, heads=2) if args.small else EncoderConfig()
        build_policy(PolicyConfig(device="cpu", default=encoder), seed=0).save(policy_dir)
        proc, port, log = start_server(policy_dir, Path(tmp) / "server.log", args.budget_mb, args.max_connections)
        try:
            idle_kib = rss_kib(proc.pid)
            sampler = Sampler(proc.pid)
            sampler.start()
            run = run_load(
                port,
                clients=args.clients,
                poisoned=args.poisoned,
                requests=args.requests,
                deadline_s=args.deadline,
                idle_sockets=args.idle_sockets,
            )
            peak_kib = rss_kib(proc.pid, "VmHWM")
            stats = server_stats(port)
            heavy: dict[str, Any] | None = None
            if args.heavy_clients:
                heavy = heavy_phase(port, clients=args.heavy_clients, deadline_s=args.deadline)
                heavy["server_rss_peak_vmhwm_mib"] = rss_kib(proc.pid, "VmHWM") / 1024
                heavy["inflight_bytes"] = server_stats(port)["inflight_bytes"]
            sampler.done.set()
            sampler.join()
            after = run_load(port, clients=1, poisoned=0.0, requests=1, deadline_s=60, progress=lambda _: None)
            still_ok = [r["status"] for r in after["records"]] == [200]
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
            log.close()
        server_log = (Path(tmp) / "server.log").read_text()
    summary = summarize(run["records"], expected=args.clients * args.requests)
    passed = (
        summary["complete"]
        and summary["valid_200"] == summary["valid_requests"]
        and summary["responses_5xx_or_broken"] == 0
        and summary["poisoned_all_4xx_or_dropped"]
        and still_ok
        and (heavy is None or heavy["answered_200"] == heavy["clients"])
    )
    out = {
        "benchmark": "load_serve",
        "command": "python benchmarks/throughput/load_serve.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "gpu": None,
            "load_average_1min_before_and_after": [load_before, os.getloadavg()[0]],
        },
        "server": f"digirl serve (separate process), loopback, device cpu, OMP_NUM_THREADS=1, --max-connections "
        f"{args.max_connections} --max-inflight-mb {args.budget_mb:g}, other limits default",
        "policy": f"default kind, {'small (dim 32, 1 layer)' if args.small else 'default size'}, random weights",
        "observation_mode": "screenshot + UI elements (a 270x600 simulator screen)",
        "clients": args.clients,
        "idle_sockets": run["idle_sockets_opened"],
        "poisoned_clients": run["poisoned_clients"],
        "poisoned_kinds": dict(run["kinds"]),
        "requests_per_client": args.requests,
        "wall_s": run["wall_s"],
        "requests_per_s": summary["requests"] / run["wall_s"],
        "server_rss_mib": {
            "idle_before": idle_kib / 1024,
            "peak_vmhwm": peak_kib / 1024,  # the first phase (200 clients, poisoned ones among them)
            "peak_sampled_all_phases": max(sampler.samples, default=0) / 1024,
        },
        "server_stats": stats,
        "heavy_phase": heavy,
        "server_log_lines": len(server_log.splitlines()),
        "server_log_tracebacks": server_log.count("Traceback"),
        "still_answers_after": still_ok,
        **summary,
        "passed": passed,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    rss = out["server_rss_mib"]
    print(
        f"{summary['requests']}/{summary['expected_requests']} requests from {args.clients} clients "
        f"({run['poisoned_clients']} poisoned; {run['idle_sockets_opened']} idle sockets held) in {run['wall_s']:.1f} s "
        f"({out['requests_per_s']:.1f} req/s)\n"
        f"valid: {summary['valid_200']}/{summary['valid_requests']} answered 200 "
        f"({summary['valid_resent_on_a_new_connection']} resent on a new connection), latency p50 "
        f"{summary['valid_latency_p50_s'] or 0:.2f} s, p90 {summary['valid_latency_p90_s'] or 0:.2f} s, "
        f"max {summary['valid_latency_max_s'] or 0:.2f} s\n"
        f"poisoned: {summary['poisoned_status_by_kind']}\n"
        f"5xx or broken responses: {summary['responses_5xx_or_broken']}; server log: {out['server_log_lines']} lines, "
        f"{out['server_log_tracebacks']} tracebacks\n"
        f"server RSS: {rss['idle_before']:.0f} MiB idle, peak {rss['peak_vmhwm']:.0f} MiB (VmHWM); "
        f"in-flight bytes peak {stats['inflight_bytes']['peak'] / 2**20:.0f} MiB "
        f"of {stats['inflight_bytes']['budget'] / 2**20:.0f}\n"
        f"{'PASSED' if passed else 'FAILED'}; wrote {args.out}"
    )
    if heavy is not None:
        print(
            f"heavy phase: {heavy['clients']} clients at once with {heavy['body_mib']:.1f} MiB requests: "
            f"{heavy['answered_200']} answered 200 after {heavy['busy_503_then_retried']} 503s (Retry-After) in "
            f"{heavy['wall_s']:.1f} s; in-flight bytes peak {heavy['inflight_bytes']['peak'] / 2**20:.0f} MiB of "
            f"{heavy['inflight_bytes']['budget'] / 2**20:.0f}; server RSS peak {heavy['server_rss_peak_vmhwm_mib']:.0f} MiB"
        )
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
