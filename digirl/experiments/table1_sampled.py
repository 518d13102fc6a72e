"""Greedy against sampled test success in a Table 1 result (runs with ``eval.sampled=true``).

Our evaluations act greedily by default; DigiRL's released evaluation samples (its
``scripts/config/main/default.yaml`` sets ``do_sample: True, temperature: 1.0`` and
``eval_only.yaml`` inherits them). Runs made with ``eval.sampled=true`` evaluate both ways on the
same tasks at every evaluation, so the two protocols can be compared seed by seed, at the end and
along the learning curve.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from digirl.experiments.stats import interval_text, paired_difference

__all__ = ["sampled_comparison", "sampled_markdown"]

Curves = dict[str, dict[str, dict[int, list[tuple[int, float]]]]]  # set -> method -> seed -> [(online, success)]


def sampled_comparison(greedy: Curves, sampled: Curves) -> dict[str, list[dict[str, Any]]]:
    """Per task set and method: mean greedy and sampled test success at every evaluation both made,
    and sampled − greedy at the last one, paired over the seeds that have both."""
    out: dict[str, list[dict[str, Any]]] = {}
    for tset, by_method in sampled.items():
        for key, s_runs in by_method.items():
            g_runs = greedy.get(tset, {}).get(key, {})
            seeds = sorted(s for s in s_runs if s in g_runs)
            if not seeds:
                continue
            # Evaluations both protocols made in every seed, in order of online trajectories.
            points = sorted(set.intersection(*({x for x, _ in g_runs[s]} & {x for x, _ in s_runs[s]} for s in seeds)))
            if not points:
                continue
            g = {s: dict(g_runs[s]) for s in seeds}
            sm = {s: dict(s_runs[s]) for s in seeds}
            curve = [
                {
                    "online_trajectories": x,
                    "greedy": float(np.mean([g[s][x] for s in seeds])),
                    "sampled": float(np.mean([sm[s][x] for s in seeds])),
                }
                for x in points
            ]
            last = points[-1]
            diff = paired_difference([sm[s][last] for s in seeds], [g[s][last] for s in seeds])
            out.setdefault(tset, []).append(
                {
                    "method": key,
                    "seeds": seeds,
                    "final_greedy_by_seed": {s: g[s][last] for s in seeds},
                    "final_sampled_by_seed": {s: sm[s][last] for s in seeds},
                    "curve": curve,
                    "sampled_minus_greedy": {"online_trajectories": last, **diff.to_dict()},
                }
            )
    return out


def sampled_markdown(comparison: dict[str, list[dict[str, Any]]]) -> str:
    """The comparison as markdown: one table per (set, method), then the paired final difference."""
    if not comparison:
        return ""
    lines = [
        "",
        "Greedy vs sampled actions on the same test tasks (eval.sampled=true; DigiRL's released "
        "evaluation samples at temperature 1.0), mean over seeds:",
    ]
    for tset, rows in comparison.items():
        for r in rows:
            d = r["sampled_minus_greedy"]
            lines += ["", f"| {tset} · {r['method']} · online trajectories | greedy | sampled |", "|---|---|---|"]
            lines += [f"| {p['online_trajectories']} | {100 * p['greedy']:.1f} | {100 * p['sampled']:.1f} |" for p in r["curve"]]
            lines += [
                "",
                f"Sampled − greedy at {d['online_trajectories']}: {100 * d['mean']:+.1f} points "
                f"(95% CI {interval_text(d)}), {d['wins']} / {d['losses']} seeds sampled wins / loses, "
                f"{'resolved' if d['resolved'] else 'not resolved'} (seeds {', '.join(map(str, r['seeds']))}).",
            ]
    return "\n".join(lines) + "\n"
