"""Table 1's unfinished off2on runs, as far as they got: when a machine's time runs out, the test
evaluations a run already logged still say how fast it was learning. ``--report-only`` reads them from
each unfinished run's ``metrics.jsonl`` and compares them, seed by seed, with the finished rows at the
last number of online trajectories that both reached (the paper's ablations are about learning speed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from digirl.experiments.stats import interval_text, paired_difference
from digirl.experiments.table1_sampled import Curves
from digirl.utils.metrics import METRICS_FILE, read_metrics


def partial_curves(out: Path, unfinished: list[tuple[str, int, str]], rollout_size: int) -> Curves:
    """The test evaluations each unfinished (set, seed, method) run logged so far (none: left out)."""
    curves: Curves = {}
    for tset, seed, key in unfinished:
        path = out / f"{tset}-s{seed}" / key / METRICS_FILE
        if not path.is_file():
            continue
        curve = [
            (int(r["step"]) * rollout_size, float(r["eval/test_success_rate"]))
            for r in read_metrics(path)
            if "eval/test_success_rate" in r and "step" in r
        ]
        if curve:
            curves.setdefault(tset, {}).setdefault(key, {})[seed] = curve
    return curves


def partial_comparison(finished: Curves, partial: Curves, pairs: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """For each pair (a, b) with a run unfinished: a − b at the most online trajectories that every
    seed of both evaluated, over the seeds both have; a 95% t-interval over seeds."""
    rows: list[dict[str, Any]] = []
    for tset in sorted(partial):
        both = {**finished.get(tset, {}), **partial[tset]}
        for a, b in pairs:
            if a not in partial[tset] and b not in partial[tset]:
                continue
            ca, cb = both.get(a, {}), both.get(b, {})
            seeds = sorted(set(ca) & set(cb))
            if not seeds:
                continue
            common = set.intersection(*({t for t, _ in c[s]} for c in (ca, cb) for s in seeds))
            reached = max((t for t in common if t > 0), default=None)
            if reached is None:
                continue
            va = [dict(ca[s])[reached] for s in seeds]
            vb = [dict(cb[s])[reached] for s in seeds]
            d = paired_difference(va, vb)
            row = {"set": tset, "a": a, "b": b, "at": reached, "seeds": seeds, "a_by_seed": va, "b_by_seed": vb}
            rows.append({**row, **d.to_dict()})
    return rows


def partial_markdown(partial: Curves, rows: list[dict[str, Any]]) -> str:
    if not partial:
        return ""
    lines = ["", "Unfinished runs, as far as they got (test success % at online trajectories: per seed):", ""]
    for tset, methods in partial.items():
        for key, by_seed in methods.items():
            seeds = "; ".join(f"s{s} " + " / ".join(f"{100 * v:.1f}@{t}" for t, v in c) for s, c in sorted(by_seed.items()))
            lines.append(f"- {tset} · {key}: {seeds}")
    if rows:
        lines += ["", "Paired at the last point both reached (a − b, same seeds; 95% t-interval over seeds):", ""]
        lines += ["| set | a − b | at | mean (points) | 95% CI | a wins / loses | resolved |", "|---|---|---|---|---|---|---|"]
        for r in rows:
            lines.append(
                f"| {r['set']} | {r['a']} − {r['b']} | {r['at']} | {100 * r['mean']:+.1f} | {interval_text(r)} "
                f"| {r['wins']} / {r['losses']} | {'yes' if r['resolved'] else 'no'} |"
            )
    return "\n".join(lines) + "\n"
