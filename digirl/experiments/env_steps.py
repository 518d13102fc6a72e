"""Methods compared at equal environment steps, not only at equal trajectories.

Trajectories are not a fair budget between methods whose episodes differ in length, or that execute
extra steps per trajectory (``algo.name=branch`` runs K actions from visited states on copies of the
env). Every train run records its online env steps at each evaluation (``online_env_steps``); here
each set gets one budget — the fewest env steps any compared run ended with — and each run's success
at it is its last evaluation within the budget.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from digirl.experiments.stats import interval_text, paired_difference

#: set -> method -> seed -> [(online env steps, test success)], in order
StepCurves = dict[str, dict[str, dict[int, list[tuple[int, float]]]]]


def success_at(curve: list[tuple[int, float]], budget: int) -> float | None:
    """Test success of the last evaluation at most ``budget`` env steps in (None when none was)."""
    within = [v for steps, v in curve if steps <= budget]
    return within[-1] if within else None


def equal_steps_comparison(curves: StepCurves, pairs: list[tuple[str, str]]) -> dict[str, dict[str, Any]]:
    """Per set: the common budget, every compared method's success at it per seed, and a − b per pair
    with a 95% interval over the seeds both have."""
    out: dict[str, dict[str, Any]] = {}
    for tset, by_method in curves.items():
        keys = sorted({k for pair in pairs for k in pair if k in by_method})
        finals = [c[-1][0] for k in keys for c in by_method[k].values() if c]
        if not finals:
            continue
        budget = min(finals)
        success = {k: {seed: v for seed, c in by_method[k].items() if (v := success_at(c, budget)) is not None} for k in keys}
        rows = []
        for a, b in pairs:
            sa, sb = success.get(a, {}), success.get(b, {})
            seeds = sorted(set(sa) & set(sb))
            if seeds:
                d = paired_difference([sa[s] for s in seeds], [sb[s] for s in seeds])
                rows.append({"a": a, "b": b, "seeds": seeds, **d.to_dict()})
        out[tset] = {"env_steps": budget, "success": success, "paired": rows}
    return out


def equal_steps_markdown(comparison: dict[str, dict[str, Any]]) -> str:
    lines: list[str] = []
    for tset, c in comparison.items():
        lines += ["", f"At equal env steps ({tset}: {c['env_steps']:,} online env steps, each run's last evaluation within):", ""]
        lines += ["| method | test success (mean ± std over seeds) | seeds |", "|---|---|---|"]
        for k, by_seed in c["success"].items():
            v = 100 * np.asarray(list(by_seed.values()), dtype=float)
            std = f" ± {v.std(ddof=1):.1f}" if len(v) > 1 else ""
            lines.append(f"| {k} | {v.mean():.1f}{std} | {len(v)} |" if len(v) else f"| {k} | – | 0 |")
        if c["paired"]:
            lines += ["", "| a − b | mean (points) | 95% CI | a wins / loses | resolved |", "|---|---|---|---|---|"]
            for r in c["paired"]:
                lines.append(
                    f"| {r['a']} − {r['b']} | {100 * r['mean']:+.1f} | {interval_text(r)} | {r['wins']} / {r['losses']} "
                    f"| {'yes' if r['resolved'] else 'no'} |"
                )
    return "\n".join(lines) + ("\n" if lines else "")
