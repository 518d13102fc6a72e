"""Throughput and latency of ``digirl serve``: requests/s at 1, 8 and 32 concurrent clients.

    python benchmarks/throughput/bench_serve.py [--clients 1 8 32] [--seconds 8] [--device cpu]

The server runs in this process with the default policy (its default size, random weights: the
cost of acting does not depend on the weights) on the standard library HTTP server; each client is
a thread with one keep-alive connection sending, back to back, a chat-completion request with a
270x600 simulator screenshot (PNG, base64) and its UI elements. Every concurrency level runs twice,
side by side: with batching (max wait 5 ms, batch up to 32) and without (batch of 1). Clients and
server share the machine's cores, so figures are end to end, client included.
Writes benchmarks/results/serve.json.
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
import statistics
import sys
import threading
import time
from pathlib import Path

from PIL import Image


def sim_request(model: str) -> bytes:
    from digirl.envs.registry import make

    env = make("digirl/sim-general-v0")
    obs, _ = env.reset(seed=0)
    env.close()
    buf = io.BytesIO()
    Image.fromarray(obs.screenshot).save(buf, format="PNG")
    url = "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()
    body = {
        "model": model,
        "temperature": 1.0,
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": obs.instruction}, {"type": "image_url", "image_url": {"url": url}}],
            }
        ],
        "digirl": {"elements": [e.to_dict() for e in obs.elements or ()]},
    }
    return json.dumps(body).encode()


def run_level(port: int, body: bytes, clients: int, seconds: float) -> dict[str, float]:
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        mine: list[float] = []
        while time.monotonic() < stop:
            t0 = time.perf_counter()
            conn.request("POST", "/v1/chat/completions", body=body, headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            resp.read()
            if resp.status != 200:
                errors[0] += 1
            mine.append(time.perf_counter() - t0)
        conn.close()
        with lock:
            latencies.extend(mine)

    t0, cpu0 = time.perf_counter(), time.process_time()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    lat = sorted(latencies)
    return {
        "clients": clients,
        "requests": len(lat),
        "errors": errors[0],
        "requests_per_s": len(lat) / wall,
        # CPU seconds of this process (server and clients) per request: what other load on the
        # machine inflates least, so the fairest batched-vs-unbatched comparison on a shared machine
        "cpu_ms_per_request": 1000 * cpu / max(1, len(lat)),
        "latency_p50_ms": 1000 * statistics.median(lat),
        "latency_p90_ms": 1000 * lat[int(0.9 * (len(lat) - 1))],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--seconds", type=float, default=8.0, help="measured seconds per level and mode")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "results" / "serve.json"))
    args = ap.parse_args()

    import torch

    from digirl.policies.config import PolicyConfig
    from digirl.policies.registry import build_policy
    from digirl.serve.server import PolicyServer, ServeConfig

    load_before = os.getloadavg()[0]  # other work on the machine inflates every figure
    policy = build_policy(PolicyConfig(device=args.device), seed=0)
    body = sim_request("bench")
    rows = []
    for mode, max_batch in (("batched", 32), ("unbatched", 1)):
        server = PolicyServer(policy, ServeConfig(port=0, model_id="bench", max_batch=max_batch, max_wait_s=0.005)).start()
        try:
            run_level(server.address[1], body, 1, 1.0)  # warm-up
            for c in args.clients:
                before = len(server.batcher.batch_sizes)
                r = run_level(server.address[1], body, c, args.seconds)
                sizes = server.batcher.batch_sizes[before:]
                r |= {"mode": mode, "mean_batch": statistics.fmean(sizes) if sizes else 0.0}
                rows.append(r)
                print(
                    f"{mode:9s} clients {c:3d}: {r['requests_per_s']:7.1f} req/s  p50 {r['latency_p50_ms']:7.1f} ms  "
                    f"p90 {r['latency_p90_ms']:7.1f} ms  CPU {r['cpu_ms_per_request']:6.1f} ms/req  "
                    f"mean batch {r['mean_batch']:.1f}  errors {r['errors']}"
                )
        finally:
            server.close()
    by = {(r["mode"], r["clients"]): r["requests_per_s"] for r in rows}
    ratios = {str(c): by[("batched", c)] / by[("unbatched", c)] for c in args.clients}
    cpu = {(r["mode"], r["clients"]): r["cpu_ms_per_request"] for r in rows}
    cpu_ratios = {str(c): cpu[("unbatched", c)] / cpu[("batched", c)] for c in args.clients}
    print("batched / unbatched requests/s:", {k: round(v, 2) for k, v in ratios.items()})
    print("unbatched / batched CPU per request:", {k: round(v, 2) for k, v in cpu_ratios.items()})
    out = {
        "benchmark": "serve",
        "command": "python benchmarks/throughput/bench_serve.py " + " ".join(sys.argv[1:]),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "torch": torch.__version__,
            "torch_threads": torch.get_num_threads(),
            "load_average_1min_before_and_after": [load_before, os.getloadavg()[0]],
        },
        "policy": "default kind, default size (EncoderConfig()), random weights",
        "request": "270x600 simulator screenshot (PNG, base64) + its UI elements, temperature 1",
        "seconds_per_level": args.seconds,
        "results": rows,
        "batched_over_unbatched_requests_per_s": ratios,
        "unbatched_over_batched_cpu_per_request": cpu_ratios,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
