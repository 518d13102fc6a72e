"""``digirl vlm pretrain | eval``: a screen VLM of our own, pretrained on the simulator."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from digirl.cli.common import add_command, add_group, arg, emit_json


def _config(args: argparse.Namespace, folder: Path) -> Any:
    """Preset + overrides on a new folder; the folder's saved settings (+ overrides) on a resume."""
    from digirl.config.core import load_config, load_config_file
    from digirl.core.errors import ConfigError
    from digirl.vlm.config import PRESETS, PretrainConfig

    saved = folder / "pretrain.yaml"
    if saved.is_file():
        if args.preset:
            base = load_config_file(PretrainConfig, saved)
            fresh = load_config(PretrainConfig, overrides=[f"{k}={v}" for k, v in PRESETS[args.preset].items()])
            if base.model != fresh.model:
                raise ConfigError(f"{folder} holds a run of another size than --preset {args.preset}; use another folder")
        return load_config(PretrainConfig, preset=str(saved), overrides=args.overrides)
    name = args.preset or "tiny"
    return load_config(PretrainConfig, overrides=[*(f"{k}={v}" for k, v in PRESETS[name].items()), *args.overrides])


def _cmd_pretrain(args: argparse.Namespace) -> int:
    from digirl.vlm.pretrain import pretrain

    out = Path(args.out)
    summary = pretrain(_config(args, out), out)
    if summary.get("paused"):
        print(f"{out}: paused at step {summary['step']} of {summary['steps']}; run the same command to go on")
        return 0
    if args.json:
        emit_json({k: v for k, v in summary.items() if k != "log"})
    else:
        q = summary.get("quality", {})
        print(f"{out}: {summary['parameters']:,} parameters, {summary['steps']} steps, {summary['train_seconds']:.0f} s")
        for k, v in q.items():
            print(f"  {k}: {v:.3f}" if isinstance(v, float) else f"  {k}: {v}")
        print(f"use it: digirl eval {out} policy.kind=hf   (or policy.kind=hf policy.init={out} for sft/train)")
    return 0


def _cmd_eval(args: argparse.Namespace) -> int:
    from digirl.config.core import load_config, load_config_file
    from digirl.vlm.config import PretrainConfig
    from digirl.vlm.evaluate import evaluate

    folder = Path(args.folder)
    saved = folder / "pretrain.yaml"
    cfg = load_config_file(PretrainConfig, saved) if saved.is_file() else load_config(PretrainConfig)
    result = evaluate(folder, cfg, n=args.n)
    if args.json:
        emit_json(result)
    else:
        for k, v in result.items():
            print(f"{k}: {json.dumps(v)}")
    return 0


def add_commands(sub: Any) -> None:
    from digirl.vlm.config import PRESETS

    vsub = add_group(
        sub,
        "vlm",
        "pretrain and measure a screen VLM of our own",
        "digirl vlm pretrain models/screen-vlm --preset small",
        metavar="COMMAND",
    )
    add_command(
        vsub,
        "pretrain",
        "pretrain a screen VLM from scratch on simulator data into OUT (a plain Hugging Face folder); "
        "run it again on OUT to resume after a crash",
        "digirl vlm pretrain models/screen-vlm --preset small steps=8000",
        _cmd_pretrain,
        arg("out", help="output folder (model, processor, model card, pretrain.json)"),
        arg("--preset", choices=sorted(PRESETS), help="model size and schedule: tiny (CPU, seconds), small (one GPU), base"),
        arg("overrides", nargs="*", help="key=value settings (digirl.vlm.config.PretrainConfig)"),
    )
    add_command(
        vsub,
        "eval",
        "held-out quality of a pretrained folder: grounding, reading, action match, typing, judge",
        "digirl vlm eval models/screen-vlm --n 200",
        _cmd_eval,
        arg("folder", help="a folder written by digirl vlm pretrain"),
        arg("--n", type=int, default=None, help="examples per metric (default: the run's eval_examples)"),
    )
