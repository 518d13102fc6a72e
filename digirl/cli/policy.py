"""``digirl policy merge | info``: export a LoRA policy as one checkpoint; describe a policy folder."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from digirl.cli.common import add_command, add_group, arg, emit_json


def _cmd_merge(args: argparse.Namespace) -> int:
    from digirl.policies.hf.policy import HFPolicy

    src, dst = Path(args.src), Path(args.dst)
    if dst.exists() and any(dst.iterdir()):
        raise ValueError(f"{dst} exists and is not empty; choose a new folder")
    policy = HFPolicy.load(src, device=args.device)
    was_lora = policy.is_lora
    policy.merged().save(dst)
    result = {"src": str(src), "dst": str(dst), "merged_lora": was_lora}
    if args.json:
        emit_json(result)
    else:
        what = "LoRA adapters merged into the weights" if was_lora else "no adapters to merge; weights copied"
        print(f"{dst}: {what}. It loads as policy.init={dst} and as a plain Hugging Face checkpoint.")
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    from digirl.policies.registry import saved_policy_kind

    path = Path(args.path)
    kind = saved_policy_kind(path)
    info: dict[str, Any] = {"path": str(path), "kind": kind}
    if kind is not None:
        meta = json.loads((path / "policy.json").read_text())
        info |= {k: v for k, v in meta.items() if k != "kind"}
    elif (path / "config.json").is_file():
        info["kind"] = None
        info["huggingface_model"] = json.loads((path / "config.json").read_text()).get("model_type")
        info["hint"] = f"use it with policy.kind=hf policy.init={path}"
    else:
        raise ValueError(f"{path}: neither a saved policy (policy.json) nor a Hugging Face model folder (config.json)")
    if args.json:
        emit_json(info)
    else:
        for k, v in info.items():
            print(f"{k}: {json.dumps(v) if isinstance(v, (dict, list)) else v}")
    return 0


def add_commands(sub: Any) -> None:
    psub = add_group(
        sub,
        "policy",
        "inspect policy folders and export LoRA policies",
        "digirl policy merge runs/lora/policy runs/merged",
        metavar="COMMAND",
    )
    add_command(
        psub,
        "merge",
        "fold a LoRA policy's adapters into its base weights: one self-contained checkpoint (also a plain HF folder)",
        "digirl policy merge runs/lora/policy runs/merged && digirl eval runs/merged",
        _cmd_merge,
        arg("src", help="a saved hf policy folder (LoRA or full)"),
        arg("dst", help="new folder for the merged policy"),
        arg("--device", default="cpu", help="where to merge (cpu, cuda)"),
    )
    add_command(
        psub,
        "info",
        "what a policy folder (or Hugging Face model folder) holds",
        "digirl policy info runs/sft/policy",
        _cmd_info,
        arg("path", help="a saved policy folder or a Hugging Face model folder"),
    )
