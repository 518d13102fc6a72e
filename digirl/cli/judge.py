"""``digirl judge``: audit the VLM success judge on screens with known ground truth, or ask it once."""

from __future__ import annotations

import argparse
import os
from typing import Any

from digirl.cli.common import Arg, add_command, add_group, arg, emit_json

_ENDPOINT = "judge endpoint (any OpenAI-compatible chat-completions API)"


def _judge_options() -> tuple[Arg, ...]:
    """Both subcommands' first options: how to reach the judge (or load one locally). A function:
    the defaults read the environment when the parser is built."""
    return (
        arg(
            "--base-url",
            group=_ENDPOINT,
            default=os.environ.get("DIGIRL_JUDGE_BASE_URL"),
            help="API base URL including the version, e.g. https://api.openai.com/v1 (default: $DIGIRL_JUDGE_BASE_URL)",
        ),
        arg(
            "--model",
            group=_ENDPOINT,
            default=os.environ.get("DIGIRL_JUDGE_MODEL"),
            help="model name (default: $DIGIRL_JUDGE_MODEL)",
        ),
        arg(
            "--api-key-env",
            group=_ENDPOINT,
            default="OPENAI_API_KEY",
            help="name of the environment variable holding the API key (the key itself is never a flag)",
        ),
        arg("--votes", group=_ENDPOINT, type=int, default=1, help="k-vote majority per judgement"),
        arg("--max-concurrency", group=_ENDPOINT, type=int, default=4, help="requests in flight at most"),
        arg("--max-retries", group=_ENDPOINT, type=int, default=6, help="retries on 429/409/5xx/timeouts"),
        arg("--timeout-s", group=_ENDPOINT, type=float, default=60.0, help="per-request timeout"),
        arg(
            "--examples",
            group=_ENDPOINT,
            choices=("auto", "text", "none"),
            default="auto",
            help="few-shot examples: screenshots from the simulator (auto), text only, or none",
        ),
        arg("--call-log", group=_ENDPOINT, default=None, help="append every request's record to this JSONL file"),
        arg("--cache-size", group=_ENDPOINT, type=int, default=4096, help="(task, screen) verdicts kept; 0 disables the cache"),
        arg(
            "--local",
            group=_ENDPOINT,
            default=None,
            metavar="FOLDER",
            help="judge with a `digirl vlm pretrain` folder loaded here instead of an endpoint (no server, no key)",
        ),
    )


def _make_judge(args: argparse.Namespace) -> Any:
    if getattr(args, "local", None):
        from digirl.vlm.judge import PretrainedJudge

        args.model, args.base_url = str(args.local), "local"
        return PretrainedJudge(args.local)
    if not args.base_url or not args.model:
        raise ValueError("--base-url and --model are required (or set DIGIRL_JUDGE_BASE_URL / DIGIRL_JUDGE_MODEL)")
    from digirl.judge.vlm import VLMJudge

    return VLMJudge(
        args.base_url,
        args.model,
        api_key_env=args.api_key_env,
        votes=args.votes,
        max_concurrency=args.max_concurrency,
        max_retries=args.max_retries,
        timeout_s=args.timeout_s,
        examples=args.examples,
        call_log_path=args.call_log,
        cache_size=args.cache_size,
    )


def _audit(args: argparse.Namespace) -> int:
    from digirl.judge.audit import run_audit
    from digirl.judge.episodes import expert_cases

    judge = _make_judge(args)
    cases = expert_cases(args.env, args.episodes, seed=args.seed)
    if not cases:
        raise ValueError(f"the expert of {args.env} solved no episode; nothing to audit")
    rep = run_audit(
        judge,
        cases,
        concurrency=args.max_concurrency,
        price_in_per_1k=args.price_in_per_1k,
        price_out_per_1k=args.price_out_per_1k,
    )
    out = {
        "env": args.env,
        "model": args.model,
        "base_url": args.base_url,
        "seed": args.seed,
        **rep.to_dict(),
    }
    if args.per_case:
        out["per_case"] = rep.per_case
    if args.json:
        emit_json(out)
        return 0
    pos = sum(1 for c in cases if c.label)
    print(f"judge audit: {args.model} @ {args.base_url} on {args.env}")
    print(f"  cases            {out['cases']} ({pos} expert successes, {out['cases'] - pos} early stops)")
    for k in ("accuracy", "decided_accuracy", "precision", "recall", "undecided_rate", "errors"):
        print(f"  {k:<16} {out[k]}")
    print(f"  calls            {out['calls']} (retries {out['retries']}, cache hits {out['cache_hits']})")
    print(f"  tokens           {out['prompt_tokens']} prompt + {out['completion_tokens']} completion")
    lat = f"mean {out['latency_mean_s']} s, p95 {out['latency_p95_s']} s"
    print(f"  latency          {lat}; wall {out['wall_s']} s")
    if out["estimated_cost_usd"] is not None:
        print(f"  estimated cost   ${out['estimated_cost_usd']:.4f}")
    if args.per_case:
        for c in rep.per_case:
            mark = "ok " if c["verdict"] == ("success" if c["label"] else "failure") else "BAD"
            print(f"  [{mark}] {c['kind']:<14} {c['verdict']:<9} {c['task'][:60]}")
    return 0


def _ask(args: argparse.Namespace) -> int:
    import numpy as np
    from PIL import Image

    from digirl.core.types import TaskSpec

    def load(path: str) -> Any:
        try:
            with Image.open(path) as im:
                return np.asarray(im.convert("RGB"), dtype=np.uint8)
        except OSError as e:
            raise ValueError(f"cannot read image {path}: {e}") from e

    judge = _make_judge(args)
    task = TaskSpec(instruction=args.task, family=args.family)
    v = judge.judge(task, load(args.image), previous=load(args.previous) if args.previous else None)
    if args.json:
        emit_json({**v.to_dict(), "requests": judge.stats()["requests"]})
    else:
        print(f"{v.label}: {v.reason}")
    return 0 if v.success is not None else 3


def add_commands(sub: Any) -> None:
    jsub = add_group(
        sub,
        "judge",
        "The VLM success judge: audit it against known outcomes, or ask it once",
        "digirl judge audit --base-url http://localhost:8000/v1 --model Qwen/Qwen2.5-VL-7B-Instruct",
    )

    add_command(
        jsub,
        "audit",
        "Judge simulator screens whose ground truth is known (expert successes and early stops); "
        "report accuracy, precision, recall, undecided rate, calls, tokens, latency and cost",
        "digirl judge audit --base-url https://api.openai.com/v1 --model gpt-4o-mini --episodes 40 "
        "--price-in-per-1k 0.00015 --price-out-per-1k 0.0006 --json",
        _audit,
        *_judge_options(),
        arg("--env", default="digirl/sim-general-v0", help="env whose scripted expert makes the cases"),
        arg("--episodes", type=int, default=20, help="number of judged screens (half early stops)"),
        arg("--seed", type=int, default=0),
        arg("--price-in-per-1k", type=float, default=None, help="USD per 1k prompt tokens"),
        arg("--price-out-per-1k", type=float, default=None, help="USD per 1k completion tokens"),
        arg("--per-case", action="store_true", help="also list every case and its verdict"),
    )
    add_command(
        jsub,
        "ask",
        "Ask the judge once whether a screenshot shows a task done (exit 3 if undecided)",
        'digirl judge ask --image shot.png --task "Open the settings" --model gpt-4o-mini --base-url https://api.openai.com/v1',
        _ask,
        *_judge_options(),
        arg("--image", required=True, help="PNG/JPEG screenshot to judge"),
        arg("--previous", default=None, help="optional screenshot before the last action"),
        arg("--task", required=True, help="the task instruction"),
        arg("--family", default="general", choices=("general", "webshop", "webapp"), help="prompt family"),
    )
