"""``digirl sft | collect | train | eval``: the training spine on the command line."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from digirl.cli.common import add_command, arg, emit_json

_CONFIG_ARGS = (
    arg("--preset", help="YAML preset name (see `digirl config presets`) or file"),
    arg("overrides", nargs="*", metavar="key=value", help="dotted config overrides, e.g. algo.lr=3e-4"),
)


def _load(cls: type, args: argparse.Namespace, existing: Path | None = None, extra: list[str] | None = None) -> Any:
    """Config from defaults + preset + overrides; an existing run's saved config replaces the preset
    (so `digirl train RUN iterations=20` resumes with only that change). Settled against the policy
    it loads (digirl.training.settle) before anything is created."""
    from digirl.config.core import load_config
    from digirl.training.settle import settle_run_config

    preset = args.preset
    if existing is not None and existing.is_file():
        if preset:
            raise ValueError(f"{existing.parent} already holds a run; drop --preset (its saved config is used)")
        preset = str(existing)
    overrides = [*(extra or []), *args.overrides]
    cfg: Any = load_config(cls, preset=preset, overrides=overrides)
    return settle_run_config(cfg, preset=preset, overrides=overrides, run_dir=existing.parent if existing else None)


def _main_process() -> bool:
    """Under accelerate launch / torchrun only rank 0 reports."""
    from digirl.utils import distributed

    return distributed.is_main()


def _cmd_sft(args: argparse.Namespace) -> int:
    from digirl.training.config import SFTRunConfig
    from digirl.training.sft import sft

    cfg = _load(SFTRunConfig, args)
    _check_inputs(cfg)
    result = sft(cfg, args.out)
    if not _main_process():
        return 0
    if args.json:
        emit_json(result)
    else:
        print(
            f"SFT policy saved to {result['policy']} "
            f"({result['samples']} steps from {result['successful_demos']} successful demos)"
        )
    return 0


def _cmd_collect(args: argparse.Namespace) -> int:
    from digirl.training.config import CollectConfig
    from digirl.training.sft import collect

    cfg = _load(CollectConfig, args)
    if not cfg.expert and not cfg.policy.init:
        raise ValueError("collect needs policy.init=PATH (a saved policy folder) or expert=true")
    summary = collect(cfg, args.out)
    if args.json:
        emit_json(summary)
    else:
        print(
            f"dataset {args.out}: {summary.get('trajectories')} trajectories, "
            f"success {100 * float(summary.get('success_rate', 0)):.1f}%"
        )
    return 0


def _check_inputs(cfg: Any) -> None:
    """What a run reads, checked before it writes anything (config.yaml, data/): a missing or
    corrupt dataset is one line and leaves no run folder behind."""
    from digirl.data.store import open_input_dataset

    if getattr(cfg, "mode", None) in ("offline", "off2on") and cfg.offline_dataset:
        open_input_dataset(cfg.offline_dataset, "offline_dataset")
    dataset = getattr(getattr(cfg, "sft", None), "dataset", None)
    if dataset:
        open_input_dataset(dataset, "sft.dataset")


def _cmd_train(args: argparse.Namespace) -> int:
    from digirl.training.config import TrainConfig

    run_dir = Path(args.run_dir)
    cfg = _load(TrainConfig, args, existing=run_dir / "config.yaml")
    _check_inputs(cfg)
    from digirl.training.loop import train

    result = train(cfg, run_dir)
    if not _main_process():
        return 0
    if args.json:
        emit_json(result)
    else:
        md = run_dir / "eval.md"
        print(md.read_text() if md.is_file() else json.dumps(result, indent=2, default=str))
        print(f"run folder: {run_dir} (metrics.jsonl, checkpoints/, data/, eval/, policy/)")
    return 0


def _cmd_eval(args: argparse.Namespace) -> int:
    from digirl.policies.registry import build_policy
    from digirl.training.common import make_runner
    from digirl.training.config import EvalRunConfig
    from digirl.training.evaluate import eval_task_sets, to_markdown, write_reports
    from digirl.training.loop import evaluate_as_configured

    cfg = _load(EvalRunConfig, args, extra=[f"policy.init={args.policy}"])
    policy = build_policy(cfg.policy, seed=0)
    tasks = eval_task_sets(cfg.env, cfg.eval)
    runner = make_runner(cfg.env, deterministic=cfg.deterministic)
    try:
        reports, sampled = evaluate_as_configured(policy, runner, tasks, cfg)
    finally:
        runner.close()
    out = Path(args.out) if args.out else Path(args.policy).parent / "eval"
    write_reports(reports, out, failure_gifs=args.failure_gifs)
    if sampled:
        write_reports(sampled, out, name="eval-sampled")
    if args.json:
        from digirl.utils.provenance import result_metadata

        splits = {r.split: r.to_dict() for r in reports} | {f"{r.split}_sampled": r.to_dict() for r in sampled}
        emit_json(splits | result_metadata())
    else:
        print(to_markdown(reports))
        if sampled:
            print("\nWith sampled actions:\n\n" + to_markdown(sampled))
        print(f"saved {out}/eval.json and eval.md" + (" (sampled: eval-sampled.json, .md)" if sampled else ""))
    return 0


def add_commands(sub: Any) -> None:
    add_command(
        sub,
        "sft",
        "supervised fine-tuning from expert demos (or a dataset) → a starting policy",
        "digirl sft runs/sft --preset sft-general sft.demos=64",
        _cmd_sft,
        arg("out", help="output folder (policy/ is written inside)"),
        *_CONFIG_ARGS,
    )
    add_command(
        sub,
        "collect",
        "roll out a policy (or the expert) on the train split into a dataset",
        "digirl collect runs/offline policy.init=runs/sft/policy trajectories=256",
        _cmd_collect,
        arg("out", help="dataset folder to create or append to"),
        *_CONFIG_ARGS,
    )
    add_command(
        sub,
        "train",
        "train with Filtered BC or DigiRL (offline / online / off2on); resumes an existing run folder",
        "digirl train runs/digirl --preset digirl-general policy.init=runs/sft/policy offline_dataset=runs/offline",
        _cmd_train,
        arg("run_dir", help="run folder; if it holds a run, training resumes where it stopped"),
        *_CONFIG_ARGS,
    )
    add_command(
        sub,
        "eval",
        "evaluate a saved policy with DigiRL's protocol (first N test tasks in order)",
        "digirl eval runs/digirl/policy eval.test_tasks=96 eval.train_tasks=32",
        _cmd_eval,
        arg("policy", help="a saved policy folder of any kind (policy.json names it), or a model folder with policy.kind=KIND"),
        arg("--out", help="where eval.json / eval.md go (default: next to the policy)"),
        arg(
            "--failure-gifs",
            type=int,
            default=0,
            metavar="N",
            help="also write GIFs of N failed episodes per task family, linked from eval.md (needs the video extra)",
        ),
        *_CONFIG_ARGS,
    )
