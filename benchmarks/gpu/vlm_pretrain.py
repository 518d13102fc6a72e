"""Pretrain the ``small`` screen VLM on one GPU within a time budget, resumable across calls.

    python benchmarks/gpu/vlm_pretrain.py --out runs/vlm-small --budget-s 1080 --call-s 500 --result R.json

First call: a short probe measures examples/s on this machine (its tokenizer is kept), the number
of steps that fits ``--budget-s`` of training is fixed and saved with the run; every call then trains
for at most ``--call-s`` seconds (the run pauses with a checkpoint) — call again to go on. The call
that finishes measures held-out quality and writes ``--result``: the summary, the machine and GPU,
the observation mode (screenshot only) and this exact command. No hyperparameter was searched: the
preset was fixed before the run (selection split: none).
"""

from __future__ import annotations

import argparse
import json
import logging
import platform
import shutil
import sys
import time
from pathlib import Path

from digirl.config.core import load_config
from digirl.vlm.config import PRESETS, PretrainConfig
from digirl.vlm.pretrain import pretrain


def _cfg(overrides: list[str]) -> PretrainConfig:
    return load_config(PretrainConfig, overrides=[*(f"{k}={v}" for k, v in PRESETS["small"].items()), *overrides])


def _probe(out: Path, extra: list[str]) -> float:
    """Examples per second of the small preset's training on this machine (steady state)."""
    probe = out.parent / (out.name + "-probe")
    shutil.rmtree(probe, ignore_errors=True)
    s = pretrain(_cfg(["steps=60", "log_every=15", "eval_examples=0", "checkpoint_every=1000", *extra]), probe)
    rows = s["log"][-2:]
    rate = sum(r["examples_per_s"] for r in rows) / len(rows)
    out.mkdir(parents=True, exist_ok=True)
    for f in probe.iterdir():  # the tokenizer and processor: the same seed makes the same ones
        if (
            f.is_file()
            and f.name not in ("pretrain.yaml", "pretrain.json", "README.md", "config.json", "generation_config.json")
            and not f.name.startswith("model")
        ):
            shutil.copy2(f, out / f.name)
    shutil.rmtree(probe, ignore_errors=True)
    print(f"probe: {rate:.0f} examples/s ({json.dumps(rows)})", flush=True)
    return float(rate)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=1080, help="seconds of training the whole run gets")
    ap.add_argument("--call-s", type=float, default=500, help="seconds of training in this call at most")
    ap.add_argument("--result", required=True, help="result JSON written when the run finishes")
    ap.add_argument(
        "--export",
        help="when the run finishes, also write the folder with bf16 weights as a .tar.gz cut into 15 MiB parts "
        "here (a GPU loan returns files of at most 16 MiB); rebuild it with `cat PARTS* | tar xz -C DIR`",
    )
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    out = Path(args.out)
    if not (out / "pretrain.yaml").is_file():
        rate = _probe(out, args.overrides)
        batch = _cfg(args.overrides).batch_size
        steps = max(100, int(rate * args.budget_s / batch))
        print(f"steps: {steps} ({args.budget_s:.0f} s at {rate:.0f} examples/s, batch {batch})", flush=True)
        cfg = _cfg([f"steps={steps}", *args.overrides, f"stop_after_s={args.call_s}"])
    else:
        from digirl.config.core import load_config_file

        cfg = load_config_file(PretrainConfig, out / "pretrain.yaml")
        cfg.stop_after_s = args.call_s
    t0 = time.time()
    summary = pretrain(cfg, out)
    if summary.get("paused"):
        print(f"paused at step {summary['step']} of {summary['steps']} after {time.time() - t0:.0f} s; call again", flush=True)
        return 0
    import torch

    result = {
        "what": "screen VLM pretraining, small preset, one GPU",
        "command": " ".join([sys.executable.rsplit("/", 1)[-1], *sys.argv]),
        "machine": {"host_cpus": __import__("os").cpu_count(), "platform": platform.platform()},
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none",
        "observation": "screenshot",
        "selection_split": "none (preset fixed before the run; quality measured on test-split tasks once)",
        **{k: v for k, v in summary.items() if k != "log"},
        "log": summary["log"],
    }
    Path(args.result).parent.mkdir(parents=True, exist_ok=True)
    Path(args.result).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: result[k] for k in ("gpu", "parameters", "steps", "train_seconds", "quality")}, indent=2))
    if args.export:
        _export(out, Path(args.export))
    return 0


def _export(folder: Path, dest: Path, part: int = 15 * 2**20) -> None:
    """``folder`` with its weights in bf16, as ``<name>.tar.gz.partNN`` files of at most ``part`` bytes."""
    import io
    import tarfile
    import tempfile

    from digirl.policies.hf.loading import hf

    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / folder.name
        model = hf().AutoModelForImageTextToText.from_pretrained(folder, dtype="bfloat16")
        model.save_pretrained(small)
        for f in folder.iterdir():
            if f.is_file() and not f.name.startswith("model") and not (small / f.name).exists():
                shutil.copy2(f, small / f.name)
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            tar.add(small, arcname=folder.name)
    data = buf.getvalue()
    for i in range(0, len(data), part):
        (dest / f"{folder.name}.tar.gz.part{i // part:02d}").write_bytes(data[i : i + part])
    print(f"exported {folder} ({len(data) / 2**20:.1f} MiB, bf16) to {dest}", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
