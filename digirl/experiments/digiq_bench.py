"""``digirl bench digiq``: Digi-Q against SFT, offline Filtered BC and offline DigiRL on the simulator.

For every (task set, seed), as Table 1 (:mod:`digirl.experiments.table1`): expert demos → SFT (the
"Auto-UI" starting policy) → its evaluation → SFT rollouts as the offline data. Then Digi-Q's stages
are prepared once per cell (candidates, exact labels, fine-tuned and ablation features, in a shared
sidecar folder) and every method trains offline on the same data, each run a ``digirl`` command in
its own process (a failed run loses nothing else): Filtered BC, DigiRL, Digi-Q and the ablations —
no representation fine-tuning, N = 1 (no best-of-N), best of 4, random features. Each Digi-Q run's
critic is then compared with ground truth on held-out states (``digirl digiq oracle``).

Results: ``digiq.md`` (mean ± std over seeds and 95% intervals), ``digiq.json`` (per-seed numbers,
oracle metrics, the command, the machine) and ``curves.png`` (test success against N, the number
of candidates best-of-N chooses from, with the baselines as lines; the critic's rank correlation).
"""

from __future__ import annotations

import json
import logging
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from digirl.config.core import cfg_field
from digirl.experiments.subruns import run_all, run_cli, run_threads, visible_gpus
from digirl.experiments.table1 import _success
from digirl.utils.provenance import machine_info, result_metadata, saved_observation

log = logging.getLogger(__name__)


_f = cfg_field  # help text on every setting


@dataclass
class DigiQBenchConfig:
    """``digirl bench digiq OUT [--preset digiq-gpu] key=value ...``"""

    sets: list[str] = _f(["general", "webshop"], "simulator task sets")
    seeds: list[int] = _f([0, 1, 2], "seeds (each repeats the whole pipeline)")
    demos: dict[str, int] = _f({"general": 6, "webshop": 3}, "expert demos for SFT per set (Table 1's GPU run: 6 / 3)")
    sft_steps: int = _f(40, "SFT optimizer steps")
    offline_trajectories: int = _f(448, "SFT rollouts every offline method trains on (Table 1: 64 + 12×32 = 448)")
    test_tasks: int = _f(96, "first N test tasks in order (DigiRL protocol)")
    train_tasks: int = _f(24, "random train tasks evaluated")
    num_envs: int = _f(2, "env workers per run")
    parallel: int = _f(8, "runs executed at the same time")
    perturbation: int = _f(1, "in-the-wild perturbation level")
    device: str = _f("auto", "policy and critic device")
    gpus: int | None = _f(None, "spread runs over this many GPUs; null = all visible")
    candidates: int = _f(16, "N: candidates per state (released: 16)")
    delta: dict[str, float] = _f({"general": 0.10, "webshop": 0.05}, "best-of-N threshold δ per set (released values)")
    ablations: bool = _f(True, "also run no representation fine-tuning, N = 1, best of 4 and random features")
    oracle_states: int = _f(200, "held-out states whose candidates get ground-truth values (0: skip)")
    stage_workers: int = _f(2, "processes of the exact-label and oracle stages per cell")
    extra: list[str] = _f([], "key=value overrides passed to every train run (all methods)")
    digiq_extra: list[str] = _f([], "key=value overrides passed to the Digi-Q runs and their stages only")
    variants: list[str] = _f(
        [],
        "extra Digi-Q rows 'KEY|k=v k=v' trained on the cell's shared stages "
        "(e.g. 'digiq_n1_d0|algo.digiq.extract_candidates=1 algo.digiq.delta=0'); extraction and critic options only",
    )


# (key, label, command, overrides). "digiq" runs go through `digirl digiq train` and share the cell's stages.
METHODS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("fbc_offline", "Offline · Filtered BC", "train", ("algo.name=filtered_bc",)),
    ("digirl_offline", "Offline · DigiRL", "train", ("algo.name=digirl",)),
    ("digiq_offline", "Offline · Digi-Q", "digiq", ()),
)
ABLATIONS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("digiq_no_repft", "Ablation · Digi-Q, no representation fine-tuning", "digiq", ("algo.digiq.repft=false",)),
    ("digiq_n1", "Ablation · Digi-Q, N = 1 (no best-of-N)", "digiq", ("algo.digiq.extract_candidates=1",)),
    ("digiq_n4", "Ablation · Digi-Q, best of 4", "digiq", ("algo.digiq.extract_candidates=4",)),
    (
        "digiq_random",
        "Ablation · Digi-Q, random features",
        "digiq",
        ("algo.digiq.encoder_init=random", "algo.digiq.repft=false"),
    ),
)


def _variant(spec: str) -> tuple[str, str, str, tuple[str, ...]]:
    key, sep, extra = spec.partition("|")
    known = {k for k, _, _, _ in METHODS + ABLATIONS} | {"sft"}
    if not sep or not key or key in known or any(c in key for c in "/ "):
        raise ValueError(f"variants: {spec!r} is not 'KEY|k=v k=v' with a new KEY (no '/' or spaces)")
    return (key, f"Variant · Digi-Q, {extra or 'defaults'}", "digiq", tuple(extra.split()))


def methods(cfg: DigiQBenchConfig) -> tuple[tuple[str, str, str, tuple[str, ...]], ...]:
    return METHODS + (ABLATIONS if cfg.ablations else ()) + tuple(_variant(v) for v in cfg.variants)


def _digiq_args(cfg: DigiQBenchConfig, tset: str, d: Path, seed: int) -> list[str]:
    """What every Digi-Q run and stage of a cell shares (the stage options must agree)."""
    return [
        f"algo.digiq.data={d / 'digiq-stages'}",
        f"algo.digiq.candidates={cfg.candidates}",
        f"algo.digiq.delta={cfg.delta.get(tset, 0.10)}",
        f"algo.digiq.workers={cfg.stage_workers}",
        *cfg.digiq_extra,
    ]


def _prepare(cfg: DigiQBenchConfig, out: Path, tset: str, seed: int, gpu: int | None) -> dict[str, Any]:
    """Demos → SFT → SFT evaluation → SFT rollouts → Digi-Q's stages (every feature variant).

    A cell prepared before (``prepared.json``, written last) is reused as it is; one stopped midway is
    prepared again, and each command resumes what it had done."""
    d = out / f"{tset}-s{seed}"
    d.mkdir(parents=True, exist_ok=True)
    env = [
        f"env.id=digirl/sim-{tset}-v0",
        f"env.num_envs={cfg.num_envs}",
        f"env.perturbation={cfg.perturbation}",
        f"policy.device={cfg.device}",
    ]
    done = d / "prepared.json"
    if done.is_file():
        log.info("%s: prepared before, reused", d)
        return {**json.loads(done.read_text()), "dir": d}
    th = run_threads(cfg)
    demos = cfg.demos.get(tset, 6)
    run_cli(
        ["sft", str(d / "sft"), *env, f"seed={seed}", f"sft.demos={demos}", f"sft.steps={cfg.sft_steps}"], d / "sft.log", gpu, th
    )
    pol = str(d / "sft" / "policy")
    ev = run_cli(
        [
            "eval",
            pol,
            "--out",
            str(d / "sft-eval"),
            *env,
            f"eval.test_tasks={cfg.test_tasks}",
            f"eval.train_tasks={cfg.train_tasks}",
        ],
        d / "sft-eval.log",
        gpu,
        th,
    )
    data = d / "offline"
    run_cli(
        ["collect", str(data), *env, f"policy.init={pol}", f"trajectories={cfg.offline_trajectories}", f"seed={seed}"],
        d / "collect.log",
        gpu,
        th,
    )
    prep = {"sft_eval": ev, "policy": pol, "dir": d, "env": env, "data": str(data)}
    variants = [()] + ([o for k, _, c, o in ABLATIONS if c == "digiq" and "repft" in " ".join(o)] if cfg.ablations else [])
    for i, extra in enumerate(variants):  # each feature variant once, before the runs share them
        run_cli(
            [
                "digiq",
                "featurize",
                str(d / f"digiq-prep-{i}"),
                *env,
                *_common(cfg, prep, seed),
                *_digiq_args(cfg, tset, d, seed),
                *extra,
            ],
            d / f"digiq-prep-{i}.log",
            gpu,
            max(th, cfg.stage_workers),
        )
    done.write_text(json.dumps({k: v for k, v in prep.items() if k != "dir"}, default=str))
    return prep


def _common(cfg: DigiQBenchConfig, prep: dict[str, Any], seed: int) -> list[str]:
    return [
        "mode=offline",
        f"offline_dataset={prep['data']}",
        f"policy.init={prep['policy']}",
        f"seed={seed}",
        "iterations=0",
        f"eval.test_tasks={cfg.test_tasks}",
        f"eval.train_tasks={cfg.train_tasks}",
        "log.tensorboard=false",
        *cfg.extra,
    ]


def _run(
    cfg: DigiQBenchConfig,
    prep: dict[str, Any],
    tset: str,
    seed: int,
    key: str,
    command: str,
    overrides: tuple[str, ...],
    gpu: int | None,
) -> dict[str, Any] | None:
    d: Path = prep["dir"]
    run = d / key
    finished = d / f"{key}.json"
    if finished.is_file():  # a run of an earlier invocation (same OUT): kept, not trained again
        res: dict[str, Any] = json.loads(finished.read_text())
        if res.get("overrides") != list(overrides):
            raise ValueError(
                f"{finished} was trained with {res.get('overrides')}, not {list(overrides)}: "
                "give the changed variant a new KEY, or use a new output folder"
            )
        return res
    base = [*prep["env"], *_common(cfg, prep, seed)]
    if command == "digiq":
        args = ["digiq", "train", str(run), *base, *_digiq_args(cfg, tset, d, seed), *overrides]
    else:
        args = ["train", str(run), *base, *overrides]
    try:
        res = run_cli(args, d / f"{key}.log", gpu, run_threads(cfg))
    except RuntimeError as e:  # one failed run must not lose the others' results
        log.error("%s", e)
        return None
    res.pop("stages", None)
    res["overrides"] = list(overrides)
    if command == "digiq" and cfg.oracle_states > 0:
        try:
            res["oracle"] = run_cli(
                ["digiq", "oracle", str(run), "--states", str(cfg.oracle_states)], d / f"{key}-oracle.log", gpu, run_threads(cfg)
            )
        except RuntimeError as e:
            log.error("%s", e)
    finished.write_text(json.dumps(res, default=str))
    return res


def _counts(report: list[dict[str, Any]] | dict[str, Any], split: str) -> tuple[int, int] | None:
    rows = report.values() if isinstance(report, dict) else report
    for r in rows:
        if isinstance(r, dict) and r.get("split") == split:
            return int(r["successes"]), int(r["episodes"])
    return None


# Options that may change between invocations on one OUT: which cells and rows run, and how.
_FREE = {"sets", "seeds", "ablations", "variants", "parallel", "gpus", "stage_workers", "device"}


def _check_resume(cfg: DigiQBenchConfig, out: Path) -> None:
    """A second invocation on the same OUT reuses its prepared cells and finished runs, so every
    option that shaped them must agree; ``settings.json`` keeps those of the first."""
    path = out / "settings.json"
    now = {k: v for k, v in cfg.__dict__.items() if k not in _FREE}
    if path.is_file():
        before = json.loads(path.read_text())
        diff = sorted(k for k in set(now) | set(before) if now.get(k) != before.get(k))
        if diff:
            raise ValueError(
                f"{out} holds a Digi-Q benchmark run with other settings ({', '.join(diff)}); "
                "use a new output folder, or the same settings to resume it"
            )
    else:
        path.write_text(json.dumps(now, indent=2))


def run_digiq_bench(cfg: DigiQBenchConfig, out: str | Path) -> dict[str, Any]:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    _check_resume(cfg, out)
    t0 = time.time()
    cells = [(s, seed) for s in cfg.sets for seed in cfg.seeds]
    n_gpu = visible_gpus(cfg)

    def gpu_of(i: int) -> int | None:
        return i % n_gpu if n_gpu > 1 else None

    def prep_cell(ic: tuple[int, tuple[str, int]]) -> dict[str, Any] | None:
        i, (tset, seed) = ic
        try:
            return _prepare(cfg, out, tset, seed, gpu_of(i))
        except RuntimeError as e:  # a cell whose preparation failed: its runs are skipped, the others go on
            log.error("%s", e)
            return None

    # preparation is CPU-bound (replays, rendering): as many cells at once as the cores allow
    workers = min(len(cells), (os.cpu_count() or 1) // max(1, cfg.stage_workers))
    preps = dict(zip(cells, run_all(prep_cell, enumerate(cells), workers)))
    log.info("prepared %d (set, seed) cells in %.0f s", len(cells), time.time() - t0)
    ready = {c: p for c, p in preps.items() if p is not None}
    jobs = [(c, key, cmd, o) for c in cells if c in ready for key, _, cmd, o in methods(cfg)]

    def run_job(ij: tuple[int, tuple[tuple[str, int], str, str, tuple[str, ...]]]) -> dict[str, Any] | None:
        i, ((tset, seed), key, cmd, o) = ij
        return _run(cfg, ready[(tset, seed)], tset, seed, key, cmd, o, gpu_of(i))

    results = run_all(run_job, enumerate(jobs), cfg.parallel)
    raw: dict[str, dict[str, dict[str, list[float]]]] = {}
    counts: dict[str, dict[str, dict[str, list[list[int]]]]] = {}
    oracle: dict[str, dict[str, list[dict[str, float]]]] = {}
    failed = [f"{c[0]}-s{c[1]}/prepare" for c in cells if preps[c] is None]
    failed += [f"{c[0]}-s{c[1]}/{key}" for (c, key, _, _), res in zip(jobs, results) if res is None]

    def add(tset: str, key: str, report: Any) -> None:
        for split in ("train", "test"):
            v = _success(report, split)
            if v is not None:
                raw.setdefault(tset, {}).setdefault(key, {}).setdefault(split, []).append(v)
            n = _counts(report, split)
            if n is not None:
                counts.setdefault(tset, {}).setdefault(key, {}).setdefault(split, []).append(list(n))

    for c, prep in preps.items():
        if prep is not None:
            add(c[0], "sft", prep["sft_eval"])
    for (c, key, _, _), res in zip(jobs, results):
        if res is None:
            continue
        add(c[0], key, res["final"])
        if "oracle" in res:
            oracle.setdefault(c[0], {}).setdefault(key, []).append(
                {k: v for k, v in res["oracle"].items() if k.startswith("oracle/")}
            )
    summary = {
        **result_metadata(observation=saved_observation(sorted(out.glob("*/*/config.yaml")))),
        "command_line": " ".join(sys.argv),
        "machine": machine_info(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "wall_s": time.time() - t0,
        "config": cfg.__dict__,
        "results": raw,
        "counts": counts,
        "oracle": oracle,
        "failed_runs": failed,
    }
    (out / "digiq.json").write_text(json.dumps(summary, indent=2, default=str))
    md = table_markdown(raw, counts, oracle, cfg)
    if failed:
        md += f"\nFailed runs (see their logs): {', '.join(failed)}\n"
    (out / "digiq.md").write_text(md)
    draw(raw, oracle, cfg, out / "curves.png")
    return summary


# ---------------------------------------------------------------------------- tables and figures
_T95 = {2: 12.71, 3: 4.30, 4: 3.18, 5: 2.78, 6: 2.57, 7: 2.45, 8: 2.36, 9: 2.31, 10: 2.26}


def seed_interval(vals: list[float]) -> tuple[float, float]:
    """95% t-interval of the mean over seeds (needs ≥ 2 seeds; else the value itself)."""
    a = np.asarray(vals, dtype=np.float64)
    if len(a) < 2:
        return (float(a.mean()), float(a.mean())) if len(a) else (math.nan, math.nan)
    half = _T95.get(len(a), 1.96) * a.std(ddof=1) / math.sqrt(len(a))
    return (float(a.mean() - half), float(a.mean() + half))


def _cell(vals: list[float] | None, n: list[list[int]] | None) -> str:
    from digirl.training.evaluate import wilson_interval

    if not vals:
        return "–"
    a = 100 * np.asarray(vals)
    s = f"{a.mean():.1f} ± {a.std(ddof=1):.1f}" if len(a) > 1 else f"{a.mean():.1f}"
    if n:
        succ, eps = sum(x[0] for x in n), sum(x[1] for x in n)
        lo, hi = wilson_interval(succ, eps)
        s += f" [{100 * lo:.0f}–{100 * hi:.0f}]"
    return s


def table_markdown(
    raw: dict[str, dict[str, dict[str, list[float]]]],
    counts: dict[str, dict[str, dict[str, list[list[int]]]]],
    oracle: dict[str, dict[str, list[dict[str, float]]]],
    cfg: DigiQBenchConfig,
) -> str:
    sets = [s for s in cfg.sets if s in raw]
    rows = [("sft", "Supervised (SFT)")] + [(k, label) for k, label, _, _ in methods(cfg)]
    lines = ["| Method | " + " | ".join(f"{s} test | {s} train" for s in sets) + " |", "|---|" + "---|---|" * len(sets)]
    for key, label in rows:
        cells = []
        for s in sets:
            m, c = raw[s].get(key, {}), counts.get(s, {}).get(key, {})
            cells += [_cell(m.get("test"), c.get("test")), _cell(m.get("train"), c.get("train"))]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"Success rate (%) on the embedded simulator, mean ± std over {len(cfg.seeds)} seed(s) "
        f"[95% Wilson interval of the pooled episodes]; test = first {cfg.test_tasks} test tasks in order, "
        f"train = {cfg.train_tasks} random train tasks; every method trains offline on the same "
        f"{cfg.offline_trajectories} SFT rollouts; N = {cfg.candidates} candidates, δ = "
        + ", ".join(f"{s} {cfg.delta.get(s, 0.1)}" for s in sets)
        + ".",
    ]
    if oracle:
        keys = (
            "oracle/spearman",
            "oracle/spearman_within_state",
            "oracle/top1_agreement",
            "oracle/top1_random",
            "oracle/top1_dataset_action",
            "oracle/value_chosen",
            "oracle/value_dataset_action",
            "oracle/value_best",
            "oracle/extractable/spearman_within_state",
            "oracle/extractable/top1_agreement",
            "oracle/extractable/top1_dataset_action",
        )
        lines += ["", "Critic against ground truth (expert continuation, held-out states; mean over seeds; "
                  "extractable/: over the candidates best-of-N may pick):", ""]  # fmt: skip
        lines.append("| set | run | states | " + " | ".join(k.removeprefix("oracle/") for k in keys) + " |")
        lines.append("|---|---|---|" + "---|" * len(keys))
        for s in sets:
            for key, runs in oracle.get(s, {}).items():
                vals = [_nanmean([r.get(k, math.nan) for r in runs]) for k in keys]
                states = np.mean([r.get("oracle/states", 0) for r in runs])
                lines.append(f"| {s} | {key} | {states:.0f} | " + " | ".join(f"{v:.3f}" for v in vals) + " |")
    return "\n".join(lines) + "\n"


def _nanmean(xs: list[float]) -> float:
    finite = [x for x in xs if isinstance(x, (int, float)) and math.isfinite(x)]
    return float(np.mean(finite)) if finite else math.nan


def draw(raw: dict[str, Any], oracle: dict[str, Any], cfg: DigiQBenchConfig, path: Path) -> None:
    """Per set: test success against N (candidates best-of-N chooses from), with SFT / Filtered BC /
    DigiRL as horizontal lines and the seed intervals as error bars."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ModuleNotFoundError:
        from digirl.training.plot import line_chart

        series = {
            f"{s}/digiq": [
                (float(n), float(np.mean(raw[s][k]["test"]))) for n, k in _n_points(cfg) if raw[s].get(k, {}).get("test")
            ]
            for s in raw
        }
        line_chart(series, path, x_label="candidates N", y_label="test success")
        return
    sets = [s for s in cfg.sets if s in raw]
    fig, axes = plt.subplots(1, max(1, len(sets)), figsize=(5 * max(1, len(sets)), 3.6), squeeze=False)
    for ax, s in zip(axes[0], sets):
        pts = [(n, raw[s][k]["test"]) for n, k in _n_points(cfg) if raw[s].get(k, {}).get("test")]
        if pts:
            xs = [p[0] for p in pts]
            ys = [100 * float(np.mean(p[1])) for p in pts]
            err = [100 * (float(np.mean(p[1])) - seed_interval(p[1])[0]) for p in pts]
            ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label="Digi-Q (best of N)")
        for key, style in (("sft", ":"), ("fbc_offline", "--"), ("digirl_offline", "-.")):
            v = raw[s].get(key, {}).get("test")
            if v:
                ax.axhline(100 * float(np.mean(v)), ls=style, color="grey" if key == "sft" else None, label=key)
        ax.set_xscale("log", base=2)
        ax.set_title(f"{s} (test, first {cfg.test_tasks})")
        ax.set_xlabel("candidates N")
        ax.set_ylabel("success %")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _n_points(cfg: DigiQBenchConfig) -> list[tuple[int, str]]:
    pts = [(cfg.candidates, "digiq_offline")]
    if cfg.ablations:
        pts = [(1, "digiq_n1"), *([(4, "digiq_n4")] if cfg.candidates > 4 else []), *pts]
    return pts
