"""The Table-1 benchmark of DigiRL on the simulator: SFT, Filtered BC and DigiRL, offline and off2on.

For every (task set, seed): expert demos → SFT (the "Auto-UI" starting policy) → SFT rollouts as
offline data → four runs with equal budgets (DigiRL's prescription: the offline-only runs get as
many trajectories as the off2on runs end with) → evaluation on the first ``test_tasks`` test tasks
in order and ``train_tasks`` random train tasks. Each stage is a ``digirl`` CLI call in its own
process, so runs execute in parallel. Results: ``table1.md`` (mean ± std over seeds, like the
paper's Table 1), ``table1.json`` and ``curves.png`` (test success vs online trajectories).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from digirl.config.core import cfg_field
from digirl.experiments import table1_resume as resume
from digirl.experiments.env_steps import equal_steps_comparison, equal_steps_markdown
from digirl.experiments.stats import interval_text, paired_difference
from digirl.experiments.subruns import run_all, run_cli, run_threads, visible_gpus
from digirl.experiments.table1_curves import draw_curves
from digirl.experiments.table1_partial import partial_comparison, partial_curves, partial_markdown
from digirl.experiments.table1_sampled import Curves, sampled_comparison, sampled_markdown
from digirl.training.task_sampling import DemoSampling
from digirl.utils.provenance import machine_info, result_metadata, saved_observation

log = logging.getLogger(__name__)


_f = cfg_field  # help text on every setting


@dataclass
class Table1Config:
    """``digirl bench table1 OUT [--preset table1-gpu] key=value ...``"""

    sets: list[str] = _f(["general", "webshop"], "simulator task sets")
    seeds: list[int] = _f([0, 1, 2], "seeds (each seed repeats the whole pipeline)")
    demos: int = _f(16, "expert demos for SFT (few: a mediocre starting policy, like Auto-UI)")
    demo_sampling: DemoSampling = _f(
        "uniform", "how SFT demo tasks are drawn: uniform over tasks, family (a family per draw), stratified (families equally)"
    )
    sft_steps: int = _f(60, "SFT optimizer steps")
    offline_trajectories: int = _f(64, "SFT rollouts that start the off2on runs")
    iterations: int = _f(8, "online iterations of the off2on runs")
    rollout_size: int = _f(32, "trajectories per online iteration")
    eval_every: int = _f(4, "evaluate off2on runs every N iterations (learning curves)")
    test_tasks: int = _f(96, "first N test tasks in order (DigiRL protocol)")
    val_tasks: int = _f(96, "first N validation tasks in order, evaluated and reported beside test (choose recipes on these)")
    observation: str = _f(
        "auto", "what every stage's agent sees: screenshot, screenshot+elements, or auto (as the SFT policy's flags say)"
    )
    selection_split: str = _f(
        "unspecified",
        "the split this recipe (its hyperparameters) was chosen on: validation, test, none or unspecified; recorded "
        "in table1.json so a reader knows whether the test numbers are held-out estimates",
    )
    train_tasks: int = _f(48, "random train tasks evaluated")
    num_envs: int = _f(2, "env workers per run")
    parallel: int = _f(8, "runs executed at the same time")
    perturbation: int = _f(1, "in-the-wild perturbation level")
    device: str = _f("auto", "policy device")
    gpus: int | None = _f(None, "spread runs over this many GPUs (CUDA_VISIBLE_DEVICES per run); null = all visible")
    ablations: bool = _f(
        False, "also run DigiRL off2on without the curriculum, with MC-return advantages and with a regression value loss"
    )
    variants: list[str] = _f(
        [],
        "extra rows 'KEY|ALGO|MODE|k=v k=v' with MODE offline, off2on or online (e.g. "
        "'digirl_xfit|digirl|off2on|algo.critic_folds=2', 'grpo|grpo|online|group_size=4'), compared with the baseline",
    )
    baseline: str = _f("digirl_off2on", "the method key that variants and ablations are compared with (paired intervals)")
    only: list[str] = _f([], "run only these built-in method keys (sft and the variants always run; empty = all)")
    sft_extra: list[str] = _f([], "extra key=value overrides of the SFT run (e.g. policy.default.frame_stack=2)")
    extra: list[str] = _f([], "extra key=value overrides passed to every train run")


# (key, row label, algorithm, mode, extra overrides)
METHODS: tuple[tuple[str, str, str | None, str | None, tuple[str, ...]], ...] = (
    ("sft", "Supervised (SFT)", None, None, ()),
    ("fbc_offline", "Offline · Filtered BC", "filtered_bc", "offline", ()),
    ("digirl_offline", "Offline · DigiRL", "digirl", "offline", ()),
    ("fbc_off2on", "Off-to-on · Filtered BC", "filtered_bc", "off2on", ()),
    ("digirl_off2on", "Off-to-on · DigiRL", "digirl", "off2on", ()),
)
# The paper's ablations (its Fig. 9): each removes one ingredient from DigiRL off2on.
ABLATIONS: tuple[tuple[str, str, str | None, str | None, tuple[str, ...]], ...] = (
    ("digirl_off2on_no_curriculum", "Ablation · DigiRL off2on, no curriculum", "digirl", "off2on", ("algo.curriculum=false",)),
    ("digirl_off2on_mc", "Ablation · DigiRL off2on, MC-return advantage", "digirl", "off2on", ("algo.advantage=mc",)),
    ("digirl_off2on_mse", "Ablation · DigiRL off2on, regression value loss", "digirl", "off2on", ("algo.value_loss=mse",)),
)
SAMPLED = "eval/test_sampled_success_rate"  # logged by runs with eval.sampled=true
# Paired comparisons reported with 95% intervals: (a, b) means "a minus b".
BASE_PAIRS = (("digirl_off2on", "fbc_off2on"), ("digirl_offline", "fbc_offline"), ("digirl_off2on", "digirl_offline"))

Method = tuple[str, str, str | None, str | None, tuple[str, ...]]
#: Splits every evaluation may report (validation: where a run evaluated it, eval.val_tasks > 0).
SPLITS = ("train", "validation", "test")


def _observation(out: Path, cfg: Table1Config) -> str:
    """What the table's agents saw: the switch when given, else as the stages' saved configs settled it."""
    if cfg.observation != "auto":
        return cfg.observation
    return saved_observation(sorted(out.glob("*-s*/*/config.yaml")))


def _variant(spec: str) -> Method:
    parts = spec.split("|")
    if len(parts) != 4 or not parts[0] or parts[2] not in ("offline", "off2on", "online"):
        raise ValueError(f"variants: {spec!r} is not 'KEY|ALGO|MODE|k=v k=v' with MODE offline, off2on or online")
    key, algo, mode, extra = parts
    kind = "Online" if mode == "online" else "Variant"
    return (key, f"{kind} · {key} ({extra or 'defaults'})", algo, mode, tuple(extra.split()))


def methods(cfg: Table1Config) -> tuple[Method, ...]:
    built_in = METHODS + (ABLATIONS if cfg.ablations else ())
    chosen = tuple(m for m in built_in if m[0] == "sft" or not cfg.only or m[0] in cfg.only)
    return chosen + tuple(_variant(v) for v in cfg.variants)


def comparison_pairs(cfg: Table1Config) -> list[tuple[str, str]]:
    keys = {m[0] for m in methods(cfg)}
    extra = [
        (m[0], cfg.baseline)
        for m in methods(cfg)
        if m[0].startswith("digirl_off2on_") or m[0] in {_variant(v)[0] for v in cfg.variants}
    ]
    return [(a, b) for a, b in (*BASE_PAIRS, *extra) if a in keys and b in keys and a != b]


def _cell_env(cfg: Table1Config, tset: str) -> list[str]:
    return [
        f"env.id=digirl/sim-{tset}-v0",
        f"env.num_envs={cfg.num_envs}",
        f"env.perturbation={cfg.perturbation}",
        f"policy.device={cfg.device}",
        f"observation={cfg.observation}",
    ]


def _prepare(
    cfg: Table1Config,
    out: Path,
    tset: str,
    seed: int,
    gpu: int | None = None,
    *,
    runs_pending: bool = True,
    report_only: bool = False,
) -> dict[str, Any]:
    """Demos → SFT → SFT evaluation → offline datasets (small for off2on, large for offline). What a
    previous invocation finished is kept (``table1_resume``); with no run pending only the evaluation is needed."""
    d = out / f"{tset}-s{seed}"
    d.mkdir(parents=True, exist_ok=True)
    env = _cell_env(cfg, tset)
    pol = str(d / "sft" / "policy")
    ev = resume.saved_eval(d)
    if not runs_pending and ev is not None:
        return {"sft_eval": ev, "policy": pol, "dir": d, "env": env}
    if report_only:
        raise ValueError(f"{d}: no SFT evaluation (sft-eval/eval.json) to report; run without --report-only to make it")
    if not resume.sft_complete(d):
        resume.clear(
            "the SFT policy is missing or incomplete", d / "sft", d / "sft-eval", d / "offline-large", d / "offline-small"
        )
        ev = None
        run_cli(
            [
                "sft",
                str(d / "sft"),
                *env,
                f"seed={seed}",
                f"sft.demos={cfg.demos}",
                f"sft.steps={cfg.sft_steps}",
                f"sft.demo_sampling={cfg.demo_sampling}",
                *cfg.sft_extra,
            ],
            d / "sft.log",
            gpu,
            run_threads(cfg),
        )
    if ev is None:
        eval_args = ["eval", pol, "--out", str(d / "sft-eval"), *env]
        eval_args += [f"eval.test_tasks={cfg.test_tasks}", f"eval.train_tasks={cfg.train_tasks}"]
        eval_args += [f"eval.val_tasks={cfg.val_tasks}"]
        ev = run_cli(eval_args, d / "sft-eval.log", gpu, run_threads(cfg))
    if not runs_pending:
        return {"sft_eval": ev, "policy": pol, "dir": d, "env": env}
    # Offline-only runs get as many SFT rollouts as the off2on runs end with; off2on runs start from
    # the first `offline_trajectories` of the same rollouts; online runs need none.
    if not any(m[3] in ("offline", "off2on") for m in methods(cfg)):
        return {"sft_eval": ev, "policy": pol, "dir": d, "env": env}
    needs_large = any(m[3] == "offline" for m in methods(cfg))
    n_collect = cfg.offline_trajectories + (cfg.iterations * cfg.rollout_size if needs_large else 0)
    if not resume.dataset_complete(d / "offline-large", n_collect):
        resume.clear(f"fewer than {n_collect} offline trajectories", d / "offline-large", d / "offline-small")
        run_cli(
            ["collect", str(d / "offline-large"), *env, f"policy.init={pol}", f"trajectories={n_collect}", f"seed={seed}"],
            d / "collect.log",
            gpu,
            run_threads(cfg),
        )
    from digirl.data.store import TrajectoryStore

    small = TrajectoryStore(d / "offline-small", info={"env_id": f"digirl/sim-{tset}-v0", "producer": "table1 subset"})
    if len(small) == 0:
        trajs = TrajectoryStore(d / "offline-large", create=False).load()
        small.append(trajs[: cfg.offline_trajectories])
    return {"sft_eval": ev, "policy": pol, "dir": d, "env": env}


def _train_args(
    cfg: Table1Config, d: Path, env: list[str], key: str, algo: str, mode: str, seed: int, overrides: tuple[str, ...]
) -> list[str]:
    data = d / ("offline-large" if mode == "offline" else "offline-small")
    return [
        "train",
        str(d / key),
        *env,
        f"mode={mode}",
        f"algo.name={algo}",
        *([f"offline_dataset={data}"] if mode != "online" else []),
        f"policy.init={d / 'sft' / 'policy'}",
        f"seed={seed}",
        f"iterations={cfg.iterations if mode != 'offline' else 0}",
        f"rollout_size={cfg.rollout_size}",
        f"eval.every={cfg.eval_every}",
        f"eval.test_tasks={cfg.test_tasks}",
        f"eval.train_tasks={cfg.train_tasks}",
        f"eval.val_tasks={cfg.val_tasks}",
        "log.tensorboard=false",
        *cfg.extra,
        *overrides,
    ]


def _train(
    cfg: Table1Config, out: Path, d: Path, key: str, args: list[str], machine: dict[str, Any], gpu: int | None = None
) -> dict[str, Any] | None:
    """One train run (continued from its checkpoint when its folder holds one); None when it fails."""
    resume.start_run(d / key)
    try:
        res = run_cli(args, d / f"{key}.log", gpu, run_threads(cfg))
    except RuntimeError as e:  # one failed run must not lose the others' results
        log.error("%s", e)
        return None
    resume.save_run(d / f"{key}.json", res, resume.portable_args(args, out), machine)
    return res


def _report(report: list[dict[str, Any]] | dict[str, Any], split: str) -> dict[str, Any] | None:
    """One split's report from ``digirl eval`` (split -> report) or ``digirl train`` (a list) output."""
    if isinstance(report, dict):
        r: dict[str, Any] | None = report.get(split)
        return r
    return next((r for r in report if r["split"] == split), None)


def _success(report: list[dict[str, Any]] | dict[str, Any], split: str) -> float | None:
    r = _report(report, split)
    return None if r is None else float(r["success_rate"])


def _family_counts(report: list[dict[str, Any]] | dict[str, Any], split: str) -> dict[str, list[int]] | None:
    """family -> [successes, episodes] of one split's report."""
    r = _report(report, split)
    if r is None:
        return None
    fams = r.get("per_family", {})
    return {f: [round(d["success_rate"] * d["episodes"]), int(d["episodes"])] for f, d in sorted(fams.items())}


def run_table1(cfg: Table1Config, out: str | Path, *, report_only: bool = False, name: str = "table1") -> dict[str, Any]:
    """Run (or finish: ``table1_resume``) every (set, seed, method) and write the table (``NAME.md``,
    ``NAME.json``, the curves). ``report_only`` runs nothing: the table of what OUT holds, its unfinished
    runs listed (when a machine's time ran out)."""
    out = Path(out)
    if report_only and not out.is_dir():
        raise ValueError(f"{out}: no such folder, nothing to report")
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    cells = [(s, seed) for s in cfg.sets for seed in cfg.seeds]
    resume.check_config(out, cfg.__dict__, create=not report_only, defaults=Table1Config().__dict__)
    machine = machine_info()  # this invocation's host: recorded with every run it finishes and with the table
    jobs = [(c, key, algo, mode, extra) for c in cells for key, _, algo, mode, extra in methods(cfg) if algo and mode]
    args = {
        (c, key): _train_args(cfg, out / f"{c[0]}-s{c[1]}", _cell_env(cfg, c[0]), key, algo, mode, c[1], extra)
        for c, key, algo, mode, extra in jobs
    }
    done = _read_back(out, [(c, key) for c, key, *_ in jobs], args)
    reused = sorted(f"{c[0]}-s{c[1]}/{key}" for c, key in done)
    missing = [(c, key) for c, key, *_ in jobs if (c, key) not in done]
    todo = [] if report_only else missing
    unfinished = sorted(f"{c[0]}-s{c[1]}/{key}" for c, key in missing) if report_only else []
    gpu_of = _gpu_of(cfg)
    preps = _prepare_cells(cfg, out, cells, {c for c, _ in todo}, gpu_of, report_only=report_only)
    log.info("prepared %d (set, seed) cells in %.0f s", len(cells), time.time() - t0)
    done.update(_train_runs(cfg, out, todo, preps, args, machine, gpu_of))
    results = [done.get((c, key)) for c, key, *_ in jobs]
    failed = [f"{c[0]}-s{c[1]}/{key}" for (c, key, _, _, _), res in zip(jobs, results) if res is None]
    failed = [f for f in failed if f not in unfinished]
    tally = _Tally()
    for (c, key, _, mode, _), res in zip(jobs, results):
        if res is not None:
            tally.add_run(c, key, mode, res)
    for c, prep in preps.items():
        tally.add_final(c, "sft", prep["sft_eval"])
    compared = comparison_pairs(cfg)
    pairs = paired_comparisons(tally.by_seed, compared)
    partial = partial_curves(out, [(c[0], c[1], key) for c, key in missing], cfg.rollout_size) if report_only else {}
    partial_pairs = partial_comparison(tally.curves_by_seed, partial, compared)
    sampled_vs_greedy = sampled_comparison(tally.curves_by_seed, tally.sampled_by_seed)
    summary = {
        **result_metadata(observation=_observation(out, cfg), selection_split=cfg.selection_split),
        "command_line": " ".join(sys.argv),
        "machine": machine,
        "wall_s": time.time() - t0,
        "config": cfg.__dict__,
        "results": tally.raw,
        "test_by_seed": tally.by_seed,
        "paired": pairs,
        "curves": tally.curves,
        "curves_by_seed": tally.curves_by_seed,  # set -> method -> seed -> [(online trajectories, test success)]
        "sampled_curves_by_seed": tally.sampled_by_seed,  # the same with sampled actions (eval.sampled=true)
        "sampled_vs_greedy": sampled_vs_greedy,
        "env_step_curves_by_seed": tally.steps_by_seed,  # set -> method -> seed -> [(online env steps, test success)]
        "at_equal_env_steps": equal_steps_comparison(tally.steps_by_seed, compared),
        "test_families_by_seed": tally.fam_by_seed,
        "test_family_curves": tally.fam_curves,
        "failed_runs": failed,
        "reused_runs": reused,
        "unfinished_runs": unfinished,
        "partial_curves_by_seed": partial,  # unfinished runs' test evaluations so far (--report-only)
        "partial_paired": partial_pairs,  # a − b at the most online trajectories both reached
        "report_only": report_only,  # then `machine` is where the table was written, not where the runs ran
    }
    _write(out, summary, cfg, name)
    return summary


def _gpu_of(cfg: Table1Config) -> Callable[[int], int | None]:
    """Job ``i``'s GPU: round-robin over the visible ones; ``None`` (the default device) with one or none."""
    n_gpu = visible_gpus(cfg)
    return lambda i: i % n_gpu if n_gpu > 1 else None


def _prepare_cells(
    cfg: Table1Config,
    out: Path,
    cells: list[tuple[str, int]],
    pending: set[tuple[str, int]],
    gpu_of: Callable[[int], int | None],
    *,
    report_only: bool,
) -> dict[tuple[str, int], dict[str, Any]]:
    """Each (set, seed) cell's SFT policy and data, half as many cells at a time as runs."""

    def prepare(ic: tuple[int, tuple[str, int]]) -> dict[str, Any]:
        i, (tset, seed) = ic
        return _prepare(cfg, out, tset, seed, gpu_of(i), runs_pending=(tset, seed) in pending, report_only=report_only)

    return dict(zip(cells, run_all(prepare, enumerate(cells), cfg.parallel // 2)))


def _train_runs(
    cfg: Table1Config,
    out: Path,
    todo: list[tuple[tuple[str, int], str]],
    preps: dict[tuple[str, int], dict[str, Any]],
    args: dict[tuple[tuple[str, int], str], list[str]],
    machine: dict[str, Any],
    gpu_of: Callable[[int], int | None],
) -> dict[tuple[tuple[str, int], str], dict[str, Any] | None]:
    """Train the ``todo`` runs, ``cfg.parallel`` at a time; ``None`` for a run that failed."""

    def train(ij: tuple[int, tuple[tuple[str, int], str]]) -> dict[str, Any] | None:
        i, (c, key) = ij
        return _train(cfg, out, preps[c]["dir"], key, args[c, key], machine, gpu_of(i))

    return dict(zip(todo, run_all(train, enumerate(todo), cfg.parallel)))


def _read_back(
    out: Path, runs: list[tuple[tuple[str, int], str]], args: dict[tuple[tuple[str, int], str], list[str]]
) -> dict[tuple[tuple[str, int], str], dict[str, Any] | None]:
    """The runs an earlier invocation in ``out`` finished with the same arguments."""
    done: dict[tuple[tuple[str, int], str], dict[str, Any] | None] = {
        (c, key): r
        for c, key in runs
        if (r := resume.finished_run(out / f"{c[0]}-s{c[1]}" / f"{key}.json", resume.portable_args(args[c, key], out)))
    }
    if done:
        log.info("%d of %d runs finished in an earlier invocation: read back", len(done), len(runs))
    return done


def _write(out: Path, summary: dict[str, Any], cfg: Table1Config, name: str = "table1") -> None:
    """NAME.json, NAME.md, curves.png (by online trajectories) and, when runs counted them,
    curves_env_steps.png (by online env steps) of ``summary``."""
    (out / f"{name}.json").write_text(json.dumps(summary, indent=2, default=str))
    raw = summary["results"]
    md = (
        table_markdown(raw, cfg)
        + pairs_markdown(summary["paired"], cfg)
        + families_markdown(summary["test_families_by_seed"], cfg)
    )
    md += equal_steps_markdown(summary["at_equal_env_steps"])
    md += sampled_markdown(summary["sampled_vs_greedy"])
    md += partial_markdown(summary["partial_curves_by_seed"], summary["partial_paired"])
    lists = (
        ("failed_runs", "Failed runs (see their logs)"),
        ("unfinished_runs", "Not finished (reported without them; the same command finishes them)"),
        ("reused_runs", "Read back from an earlier invocation in this folder"),
    )
    for key, title in lists:
        if summary[key]:
            md += f"\n{title}: {', '.join(summary[key])}\n"
    (out / f"{name}.md").write_text(md)
    draw_curves(summary["curves"], raw, out / "curves.png")
    steps = summary["env_step_curves_by_seed"]
    if steps:
        by_steps = {s: {k: list(seeds.values()) for k, seeds in d.items()} for s, d in steps.items()}
        draw_curves(by_steps, raw, out / "curves_env_steps.png", x_label="online env steps")


@dataclass
class _Tally:
    """The finished runs' and SFT evaluations' numbers, gathered per set, method and seed."""

    raw: dict[str, dict[str, dict[str, list[float]]]] = field(default_factory=dict)  # set -> method -> split -> values
    by_seed: dict[str, dict[str, dict[int, float]]] = field(default_factory=dict)  # set -> method -> seed -> test success
    curves: dict[str, dict[str, list[list[tuple[int, float]]]]] = field(default_factory=dict)
    curves_by_seed: Curves = field(default_factory=dict)
    # set -> method -> seed -> family -> [successes, episodes] (final test); and test success per family
    # at every evaluation of the off2on runs (set -> method -> seed -> [[online trajectories, {family: rate}]])
    fam_by_seed: dict[str, dict[str, dict[int, dict[str, list[int]]]]] = field(default_factory=dict)
    fam_curves: dict[str, dict[str, dict[int, list[list[Any]]]]] = field(default_factory=dict)
    sampled_by_seed: Curves = field(default_factory=dict)
    # set -> method -> seed -> [(online env steps, test success)]: the curves by env steps (branches included)
    steps_by_seed: Curves = field(default_factory=dict)

    def add_final(self, cell: tuple[str, int], key: str, final: list[dict[str, Any]] | dict[str, Any]) -> None:
        """One method's final evaluation (a train run's ``final`` or the SFT policy's ``digirl eval``)."""
        tset, seed = cell
        for split in SPLITS:
            v = _success(final, split)
            if v is not None:
                self.raw.setdefault(tset, {}).setdefault(key, {}).setdefault(split, []).append(v)
                if split == "test":
                    self.by_seed.setdefault(tset, {}).setdefault(key, {})[seed] = v
        fams = _family_counts(final, "test")
        if fams is not None:
            self.fam_by_seed.setdefault(tset, {}).setdefault(key, {})[seed] = fams

    def add_run(self, cell: tuple[str, int], key: str, mode: str, res: dict[str, Any]) -> None:
        self.add_final(cell, key, res["final"])
        if mode == "offline":
            return
        tset, seed = cell
        history = res["history"]
        self.fam_curves.setdefault(tset, {}).setdefault(key, {})[seed] = [
            [int(h["online_trajectories"]), h["families"]["test"]] for h in history if "test" in h.get("families", {})
        ]
        curve = [
            (int(h["online_trajectories"]), float(h["eval/test_success_rate"])) for h in history if "eval/test_success_rate" in h
        ]
        self.curves.setdefault(tset, {}).setdefault(key, []).append(curve)
        self.curves_by_seed.setdefault(tset, {}).setdefault(key, {})[seed] = curve
        steps = [
            (int(h["online_env_steps"]), float(h["eval/test_success_rate"]))
            for h in history
            if "eval/test_success_rate" in h and "online_env_steps" in h
        ]
        if steps:  # runs recorded before env steps were counted have none
            self.steps_by_seed.setdefault(tset, {}).setdefault(key, {})[seed] = steps
        sampled = [(int(h["online_trajectories"]), float(h[SAMPLED])) for h in history if SAMPLED in h]
        if sampled:  # runs with eval.sampled=true
            self.sampled_by_seed.setdefault(tset, {}).setdefault(key, {})[seed] = sampled


def paired_comparisons(
    by_seed: dict[str, dict[str, dict[int, float]]], pairs: list[tuple[str, str]]
) -> dict[str, list[dict[str, Any]]]:
    """Per task set: test success of ``a`` minus ``b`` over the seeds both finished, with a 95% interval."""
    out: dict[str, list[dict[str, Any]]] = {}
    for tset, methods_ in by_seed.items():
        for a, b in pairs:
            sa, sb = methods_.get(a, {}), methods_.get(b, {})
            seeds = sorted(set(sa) & set(sb))
            if not seeds:
                continue
            d = paired_difference([sa[k] for k in seeds], [sb[k] for k in seeds])
            out.setdefault(tset, []).append({"a": a, "b": b, "seeds": seeds, **d.to_dict()})
    return out


def pairs_markdown(pairs: dict[str, list[dict[str, Any]]], cfg: Table1Config) -> str:
    if not pairs:
        return ""
    lines = ["", "Paired comparisons (test success, a − b, same seeds; 95% t-interval over seeds):", ""]
    lines += ["| set | a − b | mean (points) | 95% CI | a wins / loses | resolved |", "|---|---|---|---|---|---|"]
    for tset, rows in pairs.items():
        for r in rows:
            lines.append(
                f"| {tset} | {r['a']} − {r['b']} | {100 * r['mean']:+.1f} | {interval_text(r)} | {r['wins']} / {r['losses']} "
                f"| {'yes' if r['resolved'] else 'no'} |"
            )
    return "\n".join(lines) + "\n"


def families_markdown(fam_by_seed: dict[str, dict[str, dict[int, dict[str, list[int]]]]], cfg: Table1Config) -> str:
    """Final test success per task family, pooled over seeds: where a method's score comes from."""
    keys = [m[0] for m in methods(cfg)]
    out = ""
    for tset in [s for s in cfg.sets if s in fam_by_seed]:
        rows = fam_by_seed[tset]
        cols = [k for k in keys if k in rows]
        pooled: dict[str, dict[str, list[int]]] = {}
        for k in cols:
            for fams in rows[k].values():
                for f, (succ, n) in fams.items():
                    acc = pooled.setdefault(f, {}).setdefault(k, [0, 0])
                    acc[0] += succ
                    acc[1] += n
        lines = ["", f"Test success per family ({tset}, pooled over seeds; episodes per method in brackets):", ""]
        lines += ["| family | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
        for f in sorted(pooled, key=lambda f: (-max(n for _, n in pooled[f].values()), f)):
            cells = [
                f"{100 * pooled[f][k][0] / pooled[f][k][1]:.0f}% ({pooled[f][k][1]})" if k in pooled[f] else "–" for k in cols
            ]
            lines.append(f"| {f} | " + " | ".join(cells) + " |")
        out += "\n".join(lines) + "\n"
    return out


def _fmt(vals: list[float] | None, n_seeds: int) -> str:
    if not vals:
        return "–"
    a = 100 * np.asarray(vals)
    text = f"{a.mean():.1f} ± {a.std(ddof=1):.1f}" if len(a) > 1 else f"{a.mean():.1f}"
    return text if len(a) == n_seeds else f"{text} ({len(a)} of {n_seeds} seeds)"


def table_markdown(raw: dict[str, dict[str, dict[str, list[float]]]], cfg: Table1Config) -> str:
    sets = [s for s in cfg.sets if s in raw]
    head = "| Method | " + " | ".join(f"{s} train | {s} validation | {s} test" for s in sets) + " |"
    lines = [head, "|---|" + "---|---|---|" * len(sets)]
    for key, label, _, _, _ in methods(cfg):
        cells = []
        for s in sets:
            m = raw[s].get(key, {})
            cells += [_fmt(m.get(split), len(cfg.seeds)) for split in ("train", "validation", "test")]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    n = len(cfg.seeds)
    lines.append("")
    n_off = cfg.offline_trajectories + cfg.iterations * cfg.rollout_size
    modes = {m[3] for m in methods(cfg)}
    budgets = {
        "off2on": f"off2on = {cfg.offline_trajectories} offline + {cfg.iterations}×{cfg.rollout_size} online trajectories",
        "offline": f"offline = {n_off} offline trajectories (equal budgets)",
        "online": f"online = {cfg.iterations}×{cfg.rollout_size} online trajectories from the SFT policy",
    }
    lines.append(
        f"Success rate (%) on the embedded simulator, mean ± std (sample) over {n} seed(s); "
        f"test = first {cfg.test_tasks} test tasks in order, validation = first {cfg.val_tasks} validation tasks "
        f"in order (held-out entities of its own), train = {cfg.train_tasks} random train tasks; "
        + "; ".join(b for k, b in budgets.items() if k in modes)
        + "."
    )
    return "\n".join(lines) + "\n"
