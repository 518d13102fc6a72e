"""Data-parallel speed-up of the hf policy's real actor update (1 vs 2 GPUs), and its acting throughput.

The launcher (the default mode) runs the worker under ``torchrun --standalone --nproc_per_node N``
for each N of ``--ranks``, one variant after the other, N = 1 and N = 2 side by side, every run on
the same GLOBAL batch (``--batch``) for ``--warmup`` untimed and ``--steps`` timed optimizer steps.
A worker builds the policy as training does (``HFPolicy``, ``digirl.utils.distributed.init()``) and
steps the Filtered-BC algorithm the training loop steps (``FilteredBC.update`` -> ``bc_update``:
every rank draws the same minibatch, scores its shard, gradients summed over ranks before
clipping), one optimizer step per call on expert episodes of the simulator; only those calls are
timed. ``--grad-sync overlap flat`` runs every N > 1 once per way of summing the gradients
(``DIGIRL_GRAD_SYNC``): ``overlap``, the library's default (``GradSync``: bucketed all-reduces
started during the backward pass), and ``flat`` (``sum_grads``: one flat all-reduce after it), so
one invocation measures both side by side (``speedup[variant]["N_overlap_vs_flat"]``).
The update is exact: the N-rank run's losses and gradient norms equal the 1-rank run's up to
float rounding, and the JSON records the largest relative difference.

Models: ``qwen2.5-vl-3b`` (random weights, the configuration ``bench_vlm.py`` builds), ``small``
(the screen VLM's ``small`` pretraining preset, random weights), ``tiny`` (CPU tests), or
``--model-dir DIR``, a local pretrained folder loaded as ``policy.init`` would be. Variants are
``bench_vlm.py``'s whose settings are policy options: ``full`` (full fine-tuning, gradient
checkpointing), ``full_nogc``, ``frozen_vision`` (vision tower frozen, its features cached),
``lora``, ``lora_cached``, ...

Then one process acts on simulator screens with the same model, greedy, for each ``--act-envs``
count (the batch of each act call): env steps/s and act-call latency (``bench_vlm.bench_acting``).

The JSON (``--out``) is rewritten after every measurement, and progress lines are flushed, so a run
cut short keeps what it measured. On the 2-GPU machine (fits ``--budget-s 480``):

    PYTHONPATH=. python benchmarks/gpu/bench_vlm_ddp.py --out $OUT/ddp.json --model qwen2.5-vl-3b \\
        --variants full frozen_vision --ranks 1 2 --batch 16 --steps 8 --warmup 2 --act-envs 16 64 --budget-s 480
    PYTHONPATH=. python benchmarks/gpu/bench_vlm_ddp.py --out $OUT/ddp_sync.json --model qwen2.5-vl-3b \
        --variants full --ranks 1 2 --grad-sync overlap flat --batch 16 --steps 8 --warmup 2 --act-envs --budget-s 540
    PYTHONPATH=. python benchmarks/gpu/bench_vlm_ddp.py --model tiny --device cpu --steps 2 --act-envs 2  # smoke test
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # the worker imports bench_vlm as benchmarks.gpu.bench_vlm
    sys.path.insert(0, str(REPO))

DEFAULT_VARIANTS = ["full", "frozen_vision"]
#: Arguments every worker gets as the launcher got them.
FORWARDED = "model model_dir device batch steps warmup pool screen max_new_tokens lr max_grad_norm".split()


def variant_settings(name: str) -> dict[str, Any]:
    """``bench_vlm.VARIANTS[name]``, which must be policy options only (plus ``grad_accum``)."""
    from benchmarks.gpu.bench_vlm import VARIANTS
    from digirl.policies.config import HFPolicyConfig

    if name not in VARIANTS:
        raise SystemExit(f"unknown variant {name!r}; choose from {', '.join(VARIANTS)}")
    extra = set(VARIANTS[name]) - set(HFPolicyConfig.__dataclass_fields__) - {"grad_accum"}
    if extra:
        raise SystemExit(f"variant {name!r} needs {sorted(extra)}, which the training loop does not have")
    return dict(VARIANTS[name])


def screen_size(text: str) -> tuple[int, int]:
    w, h = (int(x) for x in text.lower().split("x"))
    return w, h


# --------------------------------------------------------------------------- worker
def build_policy(args: argparse.Namespace, settings: dict[str, Any], device: Any) -> Any:
    """The ``HFPolicy`` of ``--model`` / ``--model-dir`` with the variant's options, as training builds it."""
    import torch

    from digirl.policies.config import HFPolicyConfig, PolicyConfig
    from digirl.policies.hf.policy import HFPolicy

    opts = {k: v for k, v in settings.items() if k in HFPolicyConfig.__dataclass_fields__}
    cfg = HFPolicyConfig(max_new_tokens=args.max_new_tokens, **opts)
    if args.model_dir:
        pcfg = PolicyConfig(kind="hf", init=args.model_dir, device=str(device), hf=cfg)
        return HFPolicy.from_config(pcfg, device=device, seed=0)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    if args.model == "small":
        from digirl.policies.hf.loading import load_processor
        from digirl.vlm.model import build_model as build_screen_vlm

        processor = load_processor(args.processor_dir)  # trained once by the launcher: every rank reads the same
        model = build_screen_vlm(small_config().model, processor, seed=0).to(device=device, dtype=dtype)
    else:
        from benchmarks.gpu.bench_vlm import build_model

        model, processor = build_model(args.model, device, dtype)
    return HFPolicy.from_model(model, processor, cfg, device=device)


def small_config() -> Any:
    from digirl.config.core import load_config
    from digirl.vlm.config import PRESETS, PretrainConfig

    return load_config(PretrainConfig, overrides=[f"{k}={v}" for k, v in PRESETS["small"].items()])


def expert_episodes(n_steps: int, size: tuple[int, int]) -> list[Any]:
    """Successful episodes of the scripted expert on ``digirl/sim-general-v0`` (seeded), whole, until they
    hold ``n_steps`` steps (Filtered BC clones successful episodes only)."""
    from digirl.core.types import Step, Trajectory
    from digirl.envs.registry import make
    from digirl.sim.tasks.tasksets import load_taskset

    env = make("digirl/sim-general-v0", width=size[0], height=size[1])
    tasks = load_taskset("general", "train")
    out: list[Any] = []
    total, i = 0, 0
    while total < n_steps:
        task = tasks[(7 * i) % len(tasks)]
        obs, _ = env.reset(seed=i, options={"task": task})
        traj = Trajectory(task=task, seed=i)
        done = False
        while not done and (a := env.cheat()) is not None:
            nxt, r, term, trunc, _ = env.step(a)
            traj.steps.append(Step(obs, a, "", float(r), bool(term), bool(trunc)))
            obs, done = nxt, term or trunc
        if traj.success:
            out.append(traj)
            total += traj.length
        i += 1
    env.close()
    return out


def _sync(device: Any) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _grad_norm(policy: Any) -> float:
    """Norm of the gradients the last step applied (summed over ranks, after clipping)."""
    import torch

    sq = [p.grad.detach().float().square().sum() for p in policy.parameters() if p.grad is not None]
    return float(torch.stack(sq).sum().sqrt()) if sq else 0.0


def filtered_bc(args: argparse.Namespace, policy: Any, settings: dict[str, Any]) -> tuple[Any, list[Any]]:
    """The algorithm (one optimizer step per update) and its expert episodes, every one encoded (and
    its vision features cached) beforehand: the steady state of a loop that revisits its data."""
    import torch

    from digirl.algorithms.configs import FilteredBCConfig
    from digirl.algorithms.filtered_bc import FilteredBC

    episodes = expert_episodes(args.pool, screen_size(args.screen))
    cfg = FilteredBCConfig(
        lr=args.lr,
        batch_size=args.batch,
        grad_accum=int(settings.get("grad_accum", 1)),
        max_grad_norm=args.max_grad_norm,
        actor_steps=1,
        fbc_quantile=0.0,  # keep every (successful) expert episode
    )
    algo = FilteredBC(policy, cfg, seed=0)  # the same seed on every rank: the same minibatches
    obs = [s.observation for t in episodes for s in t.steps]
    acts = [s.action for t in episodes for s in t.steps]
    with torch.no_grad():
        for i in range(0, len(obs), args.batch):
            policy.log_prob_with_mask(obs[i : i + args.batch], acts[i : i + args.batch])
    if policy._vision is not None:
        policy._vision.hits = policy._vision.misses = 0  # count the update steps' look-ups only
    return algo, episodes


def run_update_worker(args: argparse.Namespace) -> int:
    """One rank: build, warm up, time ``--steps`` calls of ``FilteredBC.update`` (one optimizer step each)."""
    import torch

    from digirl.utils import distributed as dist

    dist.init()
    rank, world = dist.rank(), dist.world_size()
    local = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device(f"cuda:{local}") if args.device == "cuda" else torch.device(args.device)
    settings = variant_settings(args.variant)
    t0 = time.perf_counter()
    torch.manual_seed(0)
    policy = build_policy(args, settings, device)
    model = policy.model
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or "cpu"
    rec: dict[str, Any] = {"rank": rank, "world_size": world, "variant": args.variant, "device": name}
    rec |= {"build_s": time.perf_counter() - t0, "model_class": type(model).__name__}
    rec |= {"params": sum(p.numel() for p in model.parameters()), "trainable_params": sum(p.numel() for p in policy.parameters())}
    rec |= {"step_s": [], "loss": [], "grad_norm": [], "complete": False}
    path = Path(args.run_dir) / f"rank{rank}.json"

    def save() -> None:
        rec["peak_mem_gib"] = torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None
        rec["peak_rss_gib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux
        path.write_text(json.dumps(rec, indent=1))

    algo, episodes = filtered_bc(args, policy, settings)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    t0 = time.perf_counter()
    for _ in range(args.warmup):
        algo.update(episodes, "online")
    _sync(device)
    rec["warmup_s"] = time.perf_counter() - t0
    save()
    for i in range(args.steps):
        _sync(device)
        t0 = time.perf_counter()
        m = algo.update(episodes, "online")
        _sync(device)
        rec["step_s"].append(time.perf_counter() - t0)
        if not m["train/actor_samples"] or not math.isfinite(m["train/actor_loss"]):
            raise RuntimeError(f"the update cloned no samples or its loss is not finite: {m}")
        rec["loss"].append(m["train/actor_loss"])
        rec["grad_norm"].append(_grad_norm(policy))
        save()
        if rank == 0:
            print(
                f"  [{args.variant} x{world}] step {i + 1}/{args.steps}: {rec['step_s'][-1]:.3f} s "
                f"({args.batch / rec['step_s'][-1]:.2f} samples/s), loss {rec['loss'][-1]:.5f}",
                flush=True,
            )
    if policy._vision is not None:
        rec["vision_cache"] = {"hits": policy._vision.hits, "misses": policy._vision.misses}
    rec["complete"] = True
    save()
    dist.barrier()
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()
    return 0


def run_act_worker(args: argparse.Namespace) -> int:
    """One process: greedy acting on simulator screens for each ``--act-envs`` count."""
    import torch

    from benchmarks.gpu.bench_vlm import bench_acting

    device = torch.device("cuda:0") if args.device == "cuda" else torch.device(args.device)
    t0 = time.perf_counter()
    policy = build_policy(args, {}, device)
    rows: list[dict[str, Any]] = []
    path = Path(args.run_dir) / "acting.json"
    state: dict[str, Any] = {"build_s": time.perf_counter() - t0, "rows": rows}
    for n in args.act_envs:
        r = bench_acting(policy, n, screen_size(args.screen), args.act_episodes, greedy=True)
        r["act_latency_s_mean"] = r["seconds"] * r["policy_share"] / max(1, r["act_calls"])
        rows.append(r)
        path.write_text(json.dumps(state, indent=1))
        print(
            f"acting, {n} envs: {r['env_steps_per_s']:.2f} env steps/s, act latency median "
            f"{r['act_latency_s_median']:.3f} s (batch {r['mean_batch']:.1f}, greedy, {args.max_new_tokens} new tokens max)",
            flush=True,
        )
    return 0


# --------------------------------------------------------------------------- launcher
def _spawn(cmd: list[str], env: dict[str, str], timeout_s: float) -> str | None:
    """Run ``cmd`` (its output goes to ours) in its own session; None, or why it failed."""
    proc = subprocess.Popen(cmd, env=env, start_new_session=True)
    try:
        rc = proc.wait(timeout=max(1.0, timeout_s))
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)  # torchrun (or the acting worker) and every process it started
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        return f"stopped after {timeout_s:.0f} s (time budget)"
    return None if rc == 0 else f"exit status {rc}"


def _worker_args(args: argparse.Namespace) -> list[str]:
    out = []
    for name in FORWARDED:
        val = getattr(args, name)
        if val is not None:
            out += [f"--{name.replace('_', '-')}", str(val)]
    return out + (["--processor-dir", args.processor_dir] if args.processor_dir else [])


def _env(args: argparse.Namespace, n: int) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("HF_HUB_OFFLINE", "1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    if "OMP_NUM_THREADS" not in os.environ:  # the host's cores shared by the ranks, the same rule for every N
        env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // n))
    if args.device == "cpu":
        env["DIGIRL_DIST_BACKEND"] = "gloo"
    return env


def summarize_run(variant: str, n: int, ranks: list[dict[str, Any]], batch: int, grad_sync: str | None = None) -> dict[str, Any]:
    """One (variant, N) run from its ranks' records: a step lasts until its slowest rank is done.
    ``grad_sync``: how its gradients were summed over ranks (None: one rank, nothing to sum)."""
    import numpy as np

    steps = [max(r["step_s"][i] for r in ranks) for i in range(min(len(r["step_s"]) for r in ranks))]
    r0 = next(r for r in ranks if r["rank"] == 0)
    out: dict[str, Any] = {
        "variant": variant,
        "ranks": n,
        "grad_sync": grad_sync,
        "global_batch": batch,
        "per_rank_batch": batch / n,
        "timed_steps": len(steps),
        "complete": all(r["complete"] for r in ranks),
        "build_s": r0["build_s"],
        "warmup_s": r0.get("warmup_s"),
        "peak_mem_gib_per_rank": [r["peak_mem_gib"] for r in sorted(ranks, key=lambda r: r["rank"])],
        "peak_rss_gib_per_rank": [r["peak_rss_gib"] for r in sorted(ranks, key=lambda r: r["rank"])],
        "trainable_params": r0["trainable_params"],
        "loss": r0["loss"][: len(steps)],
        "grad_norm": r0["grad_norm"][: len(steps)],
        "step_s_all": steps,
    }
    if steps:
        mean = sum(steps) / len(steps)
        p50, p95 = (float(x) for x in np.quantile(steps, [0.5, 0.95]))
        out |= {"samples_per_s": batch / mean, "step_s_mean": mean, "step_s_p50": p50, "step_s_p95": p95}
        out["samples_per_s_p50"] = batch / p50
    if "vision_cache" in r0:
        out["vision_cache"] = r0["vision_cache"]
    return out


def _rel_diff(a: list[float], b: list[float]) -> float | None:
    pairs = list(zip(a, b))
    return max(abs(x - y) / max(abs(x), abs(y), 1e-12) for x, y in pairs) if pairs else None


def _compare(r: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    return {
        "speedup": r["samples_per_s"] / base["samples_per_s"],
        "speedup_p50": r["samples_per_s_p50"] / base["samples_per_s_p50"],
        "scaling_efficiency": r["samples_per_s"] / base["samples_per_s"] * base["ranks"] / r["ranks"],
        "loss_max_rel_diff": _rel_diff(r["loss"], base["loss"]),
        "grad_norm_max_rel_diff": _rel_diff(r["grad_norm"], base["grad_norm"]),
    }


def speedups(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per variant, each N against the fewest ranks measured in this invocation: throughput and exactness
    (``N_vs_B``; ``N_vs_B_flat`` for the flat gradient sum), and ``N_overlap_vs_flat`` when both ran."""
    out: dict[str, Any] = {}
    for v in dict.fromkeys(r["variant"] for r in runs):
        rs = sorted((r for r in runs if r["variant"] == v and "samples_per_s" in r), key=lambda r: r["ranks"])
        if len(rs) < 2:
            continue
        base = rs[0]
        out[v] = {}
        for r in rs[1:]:
            tag = "" if r.get("grad_sync") in (None, "overlap") else f"_{r['grad_sync']}"
            out[v][f"{r['ranks']}_vs_{base['ranks']}{tag}"] = _compare(r, base)
        for n in dict.fromkeys(r["ranks"] for r in rs):
            ways = {r.get("grad_sync"): r for r in rs if r["ranks"] == n}
            if "overlap" in ways and "flat" in ways:
                out[v][f"{n}_overlap_vs_flat"] = _compare(ways["overlap"], ways["flat"])
    return out


def prepare_processor(args: argparse.Namespace, work: Path) -> None:
    """``small``: train the preset's tokenizer once (as pretraining does) so that every worker loads the same."""
    if args.model != "small" or args.model_dir:
        return
    from dataclasses import replace

    from digirl.vlm.data import iter_examples
    from digirl.vlm.model import build_processor, corpus_of
    from digirl.vlm.pretrain import data_spec

    cfg = small_config()
    examples = list(iter_examples(replace(data_spec(cfg), stream=2), cfg.tokenizer_examples))
    args.processor_dir = str(work / "processor")
    build_processor(cfg.model, corpus_of(examples), seed=cfg.seed).save_pretrained(args.processor_dir)


def update_run(
    args: argparse.Namespace, variant: str, n: int, sync: str | None, work: Path, result: dict[str, Any], timeout_s: float
) -> None:
    """One torchrun launch of ``n`` update workers summing gradients the ``sync`` way (``DIGIRL_GRAD_SYNC``;
    None for one rank); its summary (also a cut-short one) goes to ``result``."""
    label = f"{variant} x{n}" + (f" ({sync})" if sync else "")
    run_dir = work / (f"{variant}_x{n}" + (f"_{sync}" if sync else ""))
    run_dir.mkdir()
    print(f"{label}, global batch {args.batch}:", flush=True)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={n}", __file__]
    cmd += ["--worker", "update", "--variant", variant, "--run-dir", str(run_dir), *_worker_args(args)]
    env = _env(args, n)
    if sync:
        env["DIGIRL_GRAD_SYNC"] = sync
    err = _spawn(cmd, env, timeout_s)
    ranks = [json.loads(p.read_text()) for p in sorted(run_dir.glob("rank*.json"))]
    if err:
        result["errors"].append({"variant": variant, "ranks": n, "grad_sync": sync, "error": err})
    if not any(r["rank"] == 0 for r in ranks):
        return
    run = summarize_run(variant, n, ranks, args.batch, sync) | {"omp_threads": env.get("OMP_NUM_THREADS")}
    result["runs"].append(run)
    r0 = next(r for r in ranks if r["rank"] == 0)
    result["gpu"], result["params"], result["model_class"] = r0["device"], r0["params"], r0["model_class"]
    result["speedup"] = speedups(result["runs"])
    if "samples_per_s" in run:
        peaks = [round(m, 1) if m is not None else None for m in run["peak_mem_gib_per_rank"]]
        print(
            f"{label}: {run['samples_per_s']:.2f} samples/s, step mean {run['step_s_mean']:.3f} s "
            f"p50 {run['step_s_p50']:.3f} p95 {run['step_s_p95']:.3f}, peak {peaks} GiB",
            flush=True,
        )
    for v, sp in result["speedup"].get(variant, {}).items():
        print(f"{variant} speed-up {v}: {sp['speedup']:.3f}x (loss rel diff {sp['loss_max_rel_diff']})", flush=True)


def act_run(args: argparse.Namespace, work: Path, result: dict[str, Any], timeout_s: float) -> None:
    """The acting worker, one process; the env counts it measured (all, or those before the budget ran out)."""
    run_dir = work / "acting"
    run_dir.mkdir()
    cmd = [sys.executable, __file__, "--worker", "act", "--run-dir", str(run_dir), *_worker_args(args)]
    cmd += ["--act-episodes", str(args.act_episodes), "--act-envs", *map(str, args.act_envs)]
    err = _spawn(cmd, _env(args, 1), timeout_s)
    if err:
        result["errors"].append({"acting": err})
    if (run_dir / "acting.json").is_file():
        acting = json.loads((run_dir / "acting.json").read_text())
        result["acting"], result["acting_build_s"] = acting["rows"], acting["build_s"]


def launch(args: argparse.Namespace) -> int:
    import torch
    import transformers

    t_start = time.perf_counter()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"command": args.command, "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    result["machine"] = {"hostname": socket.gethostname(), "cpus": os.cpu_count(), "platform": platform.platform()}
    result |= {"gpu": None, "gpus_visible": torch.cuda.device_count() if args.device == "cuda" else 0}
    result |= {"torch": torch.__version__, "transformers": transformers.__version__, "python": platform.python_version()}
    result |= {"model": args.model_dir or args.model, "params": None, "variants": args.variants, "ranks": args.ranks}
    result |= {"global_batch": args.batch, "timed_steps": args.steps, "warmup_steps": args.warmup}
    result |= {"screen": list(screen_size(args.screen)), "max_new_tokens": args.max_new_tokens, "lr": args.lr}
    result["update"] = "FilteredBC.update -> bc_update (digirl.algorithms), one optimizer step per call, AdamW"
    result["grad_sync"] = args.grad_sync
    result["notes"] = {
        "samples_per_s": "global batch / mean step time; a step lasts until its slowest rank is done",
        "grad_norm": f"norm of the applied gradients of each timed step, after clipping at {args.max_grad_norm}",
        "loss": "train/actor_loss of each timed step: -sum w log pi(a|s) / sum w over the global minibatch",
        "grad_sync": "overlap: GradSync, bucketed all-reduces during the backward pass; flat: sum_grads after it",
    }
    result |= {"runs": [], "speedup": {}, "acting": [], "errors": []}

    def save() -> None:
        result["elapsed_s"] = time.perf_counter() - t_start
        out.write_text(json.dumps(result, indent=2, default=str))

    def left() -> float:
        return args.budget_s - (time.perf_counter() - t_start)

    reserve = args.act_reserve_s if args.act_envs else 0.0
    with tempfile.TemporaryDirectory(prefix="bench_vlm_ddp_") as tmp:
        work = Path(tmp)
        prepare_processor(args, work)
        save()
        for variant in args.variants:
            variant_settings(variant)  # fail early on a variant the loop cannot run
            for n, sync in [(k, s) for k in args.ranks for s in (args.grad_sync if k > 1 else [None])]:
                if args.device == "cuda" and n > result["gpus_visible"]:
                    result["errors"].append({"variant": variant, "ranks": n, "error": f"only {result['gpus_visible']} GPUs"})
                    continue
                if left() < reserve + args.min_run_s:
                    result["errors"].append({"variant": variant, "ranks": n, "grad_sync": sync, "error": "skipped: time budget"})
                    continue
                update_run(args, variant, n, sync, work, result, left() - min(reserve, args.act_min_s))
                save()
        if args.act_envs:
            act_run(args, work, result, left())
    save()
    print(f"wrote {out} ({result['elapsed_s']:.0f} s)", flush=True)
    return 0


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="qwen2.5-vl-3b", choices=["qwen2.5-vl-3b", "small", "tiny"])
    ap.add_argument("--model-dir", default=None, help="a local pretrained model folder (instead of --model)")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--variants", nargs="+", default=DEFAULT_VARIANTS, help="bench_vlm.py variants (policy options)")
    ap.add_argument("--ranks", nargs="+", type=int, default=[1, 2], help="process counts, each a torchrun launch")
    ap.add_argument(
        "--grad-sync",
        nargs="+",
        default=["overlap"],
        choices=["overlap", "flat"],
        help="how N > 1 ranks sum gradients (each given: one run): overlap (GradSync, the default) or flat (sum_grads)",
    )
    ap.add_argument("--batch", type=int, default=16, help="GLOBAL minibatch of one optimizer step (split over the ranks)")
    ap.add_argument("--steps", type=int, default=8, help="timed optimizer steps")
    ap.add_argument("--warmup", type=int, default=2, help="untimed optimizer steps first")
    ap.add_argument("--pool", type=int, default=48, help="expert steps the minibatches are drawn from")
    ap.add_argument("--screen", default="448x952", help="simulator screen WxH")
    ap.add_argument("--max-new-tokens", type=int, default=48)
    ap.add_argument("--lr", type=float, default=1e-5)
    ap.add_argument("--max-grad-norm", type=float, default=1.0)
    ap.add_argument("--act-envs", nargs="*", type=int, default=[16, 64], help="acting: simulator processes (act batch)")
    ap.add_argument("--act-episodes", type=int, default=1, help="acting: timed episodes per env")
    ap.add_argument("--budget-s", type=float, default=480.0, help="the whole invocation's wall-clock budget")
    ap.add_argument("--act-reserve-s", type=float, default=150.0, help="an update run starts only with this much left")
    ap.add_argument("--act-min-s", type=float, default=60.0, help="an update run is stopped with this much left")
    ap.add_argument("--min-run-s", type=float, default=30.0, help="an update run starts only with this much left besides")
    ap.add_argument("--out", default="benchmarks/results/vlm/bench_vlm_ddp.json")
    ap.add_argument("--worker", choices=["update", "act"], help=argparse.SUPPRESS)
    ap.add_argument("--variant", help=argparse.SUPPRESS)
    ap.add_argument("--run-dir", help=argparse.SUPPRESS)
    ap.add_argument("--processor-dir", default=None, help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    args.command = " ".join(["python", os.path.relpath(__file__, REPO), *(sys.argv[1:] if argv is None else argv)])
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.worker == "update":
        return run_update_worker(args)
    if args.worker == "act":
        return run_act_worker(args)
    return launch(args)


if __name__ == "__main__":
    sys.exit(main())
