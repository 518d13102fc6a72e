"""``digirl serve``: a saved policy behind an OpenAI-compatible HTTP API."""

from __future__ import annotations

import argparse
import dataclasses
import ipaddress
import os
import sys
from pathlib import Path
from typing import Any

from digirl.cli.common import LOCAL_HOST, add_command, arg, stop_on_signals

TOKEN_ENV = "DIGIRL_SERVE_TOKEN"


def add_commands(sub: Any) -> None:
    add_command(
        sub,
        "serve",
        "serve a policy over an OpenAI-compatible /v1/chat/completions API (screenshot + instruction in, action out)",
        "digirl serve runs/digirl/policy --port 8000   # then: OpenAI(base_url='http://127.0.0.1:8000/v1', api_key='-')",
        _serve,
        arg("policy", help="a saved policy folder of any kind (policy.json names it), or a model folder with policy.kind=KIND"),
        LOCAL_HOST,
        arg("--port", type=int, default=8000, help="port (0 = any free port; the URL is printed)"),
        arg("--model-name", help="model id clients send (default: the policy folder's name); 'digirl' is always accepted too"),
        arg(
            "--content",
            default="raw",
            choices=("raw", "json", "autoui", "cogagent"),
            help="message content: the policy's own text (raw) or the action in this codec",
        ),
        arg("--max-batch", type=int, default=32, help="most observations in one forward pass (default 32)"),
        arg("--max-wait-ms", type=float, default=5.0, help="how long the first request waits for others to join its batch"),
        arg(
            "--max-connections",
            type=int,
            default=256,
            help="connections served at once (default 256); more get 503 + Retry-After",
        ),
        arg(
            "--max-inflight-mb",
            type=float,
            default=512.0,
            help="MiB that all requests in flight may hold (bodies, decoded screenshots; default 512); "
            "past it, 503 + Retry-After",
        ),
        arg(
            "--allow-missing-elements",
            action="store_true",
            help="answer requests without digirl.elements even when the policy reads UI elements (it then taps grid cells only)",
        ),
        arg(
            "--token-env",
            default=TOKEN_ENV,
            help=f"env var holding a bearer token that clients must send (default {TOKEN_ENV}; unset = no token)",
        ),
        arg("overrides", nargs="*", metavar="key=value", help="policy options, e.g. policy.kind=hf policy.device=cpu"),
        json=False,
    )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def load_served_policy(path: str, overrides: list[str]) -> tuple[Any, str]:
    """The policy in ``path`` (any registered kind, through ``build_policy``) and its default model id."""
    from digirl.config.core import load_config
    from digirl.policies.config import PolicyConfig
    from digirl.policies.registry import build_policy

    bad = [o for o in overrides if not o.startswith("policy.")]
    if bad:
        raise ValueError(f"serve takes policy.* overrides only, got {bad}")
    cfg = load_config(PolicyConfig, overrides=[*(o.removeprefix("policy.") for o in overrides), f"init={path}"])
    policy = build_policy(cfg, seed=0)
    p = Path(path).resolve()
    return policy, (p.parent.name if p.name == "policy" and p.parent.name else p.name)


#: glibc's mallopt parameter for the size from which allocations are mmap'ed (and unmapped on free).
_M_MMAP_THRESHOLD = -3


def return_large_frees_to_os(threshold: int = 256 * 1024) -> bool:
    """Make glibc serve allocations of ``threshold`` bytes and more with their own mappings, given
    back to the OS when freed. By default glibc raises that threshold as large blocks are freed and
    then keeps freed request bodies and screenshots in its per-thread heaps: under a burst of large
    requests the server's memory peaked at 1,163 MiB (idle 237) for a 512 MiB in-flight budget,
    against 679-694 MiB with this (benchmarks/throughput/load_serve.py). A no-op off glibc, or when the user set
    ``MALLOC_MMAP_THRESHOLD_`` themselves; returns whether it applied."""
    if os.environ.get("MALLOC_MMAP_THRESHOLD_") or not sys.platform.startswith("linux"):
        return False
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, threshold))
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False


def _serve(args: argparse.Namespace) -> int:
    from digirl.serve.server import PolicyServer, ServeConfig

    if args.max_connections < 1 or args.max_batch < 1 or args.max_inflight_mb <= 0 or args.max_wait_ms < 0:
        raise ValueError("--max-connections and --max-batch must be >= 1, --max-inflight-mb > 0, --max-wait-ms >= 0")
    token = os.environ.get(args.token_env) or None
    config = ServeConfig(  # checked before the policy loads; the model id is set once it has
        host=args.host,
        port=args.port,
        model_id=args.model_name or "-",
        content=args.content,
        max_batch=args.max_batch,
        max_wait_s=args.max_wait_ms / 1000,
        token=token,
        max_connections=args.max_connections,
        max_inflight_bytes=int(args.max_inflight_mb * (1 << 20)),
        require_elements=False if args.allow_missing_elements else None,
    )
    return_large_frees_to_os()
    policy, default_name = load_served_policy(args.policy, args.overrides)
    path = Path(args.policy).resolve()
    name = args.model_name or default_name
    server = PolicyServer(policy, dataclasses.replace(config, model_id=name))
    if not _is_loopback(args.host) and token is None:
        print(f"warning: serving on {args.host} without a token; set {args.token_env} to require one", file=sys.stderr)
    auth = f"bearer token from ${args.token_env}" if token else "no token"
    ids = " or ".join(repr(i) for i in server.model_ids)
    sees = "screenshot + UI elements" if server.needs_elements else "screenshot only"
    print(
        f"serving {policy.kind} policy {str(path)!r} ({sees}) as model {ids} at {server.base_url} ({auth}); Ctrl-C stops",
        flush=True,
    )
    # Ctrl-C and SIGTERM stop the server cleanly, also when a script started it in the background.
    with stop_on_signals(sigint=True):
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.close()
    return 0
