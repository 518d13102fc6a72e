"""``digirl digiq propose | label | repft | featurize | outcomes | train | oracle | report``: Digi-Q's stages."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from digirl.cli.common import JSON_FLAG, add_command, add_group, arg, emit_json

_EXAMPLE = "digirl digiq {cmd} runs/digiq offline_dataset=runs/offline policy.init=runs/sft/policy"


def _config(args: argparse.Namespace) -> Any:
    """The run's config: its saved ``config.yaml`` (+ overrides) when it exists, else defaults + preset
    + overrides, with ``algo.name=digiq`` and ``mode=offline`` unless overridden."""
    from digirl.config.core import load_config
    from digirl.training.config import TrainConfig
    from digirl.training.settle import settle_run_config

    saved = Path(args.run_dir) / "config.yaml"
    if saved.is_file():
        if args.preset:
            raise ValueError(f"{args.run_dir} already holds a run; drop --preset (its saved config is used)")
        cfg = load_config(TrainConfig, preset=str(saved), overrides=args.overrides)
        return settle_run_config(cfg, preset=str(saved), overrides=args.overrides, run_dir=args.run_dir)
    overrides = ["algo.name=digiq", "mode=offline", *args.overrides]
    cfg = load_config(TrainConfig, preset=args.preset, overrides=overrides)
    return settle_run_config(cfg, preset=args.preset, overrides=overrides)


def _save(cfg: Any, run_dir: str) -> Any:
    from digirl.config.core import save_config
    from digirl.training.digiq import sidecar_of

    cfg = sidecar_of(cfg, run_dir)
    Path(run_dir).mkdir(parents=True, exist_ok=True)
    save_config(cfg, Path(run_dir) / "config.yaml")
    return cfg


def _print(result: dict[str, Any], args: argparse.Namespace, what: str) -> None:
    if args.json:
        emit_json(result)
        return
    print(f"{what}:")
    for k, v in result.items():
        if isinstance(v, float):
            print(f"  {k}: {v:.4g}")
        elif not isinstance(v, (dict, list)):
            print(f"  {k}: {v}")


def _stage(name: str) -> Any:
    def run(args: argparse.Namespace) -> int:
        from digirl.training.digiq import run_stages

        cfg = _save(_config(args), args.run_dir)
        _print(run_stages(cfg, args.run_dir, upto=name), args, f"digiq {name} ({cfg.algo.digiq.data})")
        return 0

    return run


def _cmd_train(args: argparse.Namespace) -> int:
    from digirl.training.digiq import train_digiq

    cfg = _save(_config(args), args.run_dir)
    result = train_digiq(cfg, args.run_dir)
    if args.json:
        emit_json(result)
        return 0
    md = Path(args.run_dir) / "eval.md"
    print(md.read_text() if md.is_file() else json.dumps(result.get("stages", {}), indent=2, default=str))
    print(f"run folder: {args.run_dir} (stages in {cfg.algo.digiq.data}; `digirl digiq report {args.run_dir}` draws Q and V)")
    return 0


def _cmd_oracle(args: argparse.Namespace) -> int:
    from digirl.experiments.digiq_oracle import evaluate_run

    cfg = _config(args)
    res = evaluate_run(cfg, args.run_dir, continuation=args.continuation, rollouts=args.rollouts, max_states=args.states)
    _print(res, args, f"critic vs ground truth ({args.continuation} continuation)")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from digirl.experiments.digiq_report import write_report

    path = write_report(args.run_dir, out=args.out, trajectories=args.trajectories, dataset=args.dataset)
    if args.json:
        emit_json({"report": str(path)})
    else:
        print(f"wrote {path}")
    return 0


_RUN_DIR = arg("run_dir", help="the Digi-Q run folder (its config.yaml is reused when it exists)")
# Every stage's first arguments: the run, how to configure it, and --json (before any stage's own options).
_STAGE_ARGS = (
    _RUN_DIR,
    arg("--preset", help="YAML preset name or file (first call only)"),
    arg("overrides", nargs="*", metavar="key=value", help="config overrides, e.g. algo.digiq.candidates=8"),
    JSON_FLAG,
)


def add_commands(sub: Any) -> None:
    dsub = add_group(
        sub,
        "digiq",
        "Digi-Q: propose candidates, label, fine-tune representations, featurize, train by TD + best-of-N",
        _EXAMPLE.format(cmd="train") + " eval.test_tasks=96",
        metavar="STAGE",
    )
    helps = {
        "propose": "N−1 candidate actions per stored step from the behaviour policy (candidate 0 = the dataset action)",
        "label": "Yes/No labels 'does the action change the screen?' (exact on the simulator, else pixel difference)",
        "repft": "representation fine-tuning of the feature backend on the labels",
        "featurize": "f(s, a) of every candidate and φ(s) of every state, once, into float16 sidecars",
        "outcomes": "every valid proposal executed once on a copy of its state (simulator): reward, end, φ(next "
        "screen), for algo.digiq.outcome_td",
    }
    for name, text in helps.items():
        add_command(
            dsub,
            name,
            text + " (runs the stages before it when missing)",
            _EXAMPLE.format(cmd=name),
            _stage(name),
            *_STAGE_ARGS,
            json=False,
        )
    add_command(
        dsub,
        "train",
        "every missing stage, then the offline training loop (algo.name=digiq)",
        _EXAMPLE.format(cmd="train"),
        _cmd_train,
        *_STAGE_ARGS,
        json=False,
    )
    add_command(
        dsub,
        "oracle",
        "critic quality against ground truth: true values of held-out candidates vs the run's learned Q",
        "digirl digiq oracle runs/digiq --states 400",
        _cmd_oracle,
        *_STAGE_ARGS,
        arg("--continuation", choices=("expert", "policy"), default="expert", help="who acts after the candidate"),
        arg("--rollouts", type=int, default=4, help="rollouts per candidate with continuation=policy"),
        arg("--states", type=int, default=400, help="held-out states evaluated (at least 200 recommended)"),
        json=False,
    )
    add_command(
        dsub,
        "report",
        "static HTML + PNG: per step V, Q, Q − V and the candidates on the screenshot",
        "digirl digiq report runs/digiq",
        _cmd_report,
        _RUN_DIR,
        JSON_FLAG,
        arg("--out", help="output folder (default RUN/digiq-report)"),
        arg("--trajectories", type=int, default=6, help="trajectories shown (held-out first)"),
        arg("--dataset", help="the offline dataset (default: the run's offline_dataset)"),
        json=False,
    )
