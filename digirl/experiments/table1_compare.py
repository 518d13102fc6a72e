"""Paired comparisons between two Table 1 results (``table1.json`` of two ``digirl bench table1`` runs).

A run compares its own rows with each other; this compares rows *across* runs, seed by seed: an
ablation run against a recorded baseline (deterministic mode makes a rerun of the baseline give the
same numbers on the same kind of machine), or one recipe against another. Two runs are paired on
the same start only when their SFT rows agree seed by seed; otherwise the comparison is one of
recipes, paired by seed index, and the report says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from digirl.experiments.stats import interval_text
from digirl.experiments.table1 import paired_comparisons

__all__ = ["RowPair", "compare_markdown", "compare_results", "load_table1_result"]


@dataclass(frozen=True)
class RowPair:
    """Compare row ``a`` of the first run with row ``b`` of the second (``a − b``)."""

    a: str
    b: str

    @classmethod
    def parse(cls, spec: str) -> RowPair:
        """``KEY`` (the same row in both runs) or ``KEY_A:KEY_B``."""
        a, sep, b = spec.partition(":")
        if not a or (sep and not b):
            raise ValueError(f"row pair {spec!r} is not KEY or KEY_A:KEY_B")
        return cls(a, b or a)


def load_table1_result(path: str | Path) -> dict[str, Any]:
    """Read a ``table1.json`` (or the folder holding it); a missing or malformed file names itself."""
    p = Path(path)
    if p.is_dir():
        p = p / "table1.json"
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no Table 1 result here (expected the table1.json of a `digirl bench table1` run)")
    try:
        data = json.loads(p.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{p}: not valid JSON ({e})") from None
    if not isinstance(data, dict) or not isinstance(data.get("test_by_seed"), dict):
        raise ValueError(f"{p}: not a Table 1 result (no 'test_by_seed' table)")
    return data


def _by_seed(result: dict[str, Any], tset: str, key: str, at: int | None = None) -> dict[int, float]:
    """Test success per seed: final, or at ``at`` online trajectories (off2on rows' evaluations; the
    SFT row is the start at any budget). A seed not evaluated at ``at`` is left out."""
    final = {int(s): float(v) for s, v in result["test_by_seed"].get(tset, {}).get(key, {}).items()}
    if at is None or key == "sft":
        return final
    out: dict[int, float] = {}
    for seed, curve in _curves(result, tset, key).items():
        out.update((seed, float(v)) for n, v in curve if int(n) == at)
    return out


def _curves(result: dict[str, Any], tset: str, key: str) -> dict[int, list[Any]]:
    if "curves_by_seed" in result:
        return {int(s): c for s, c in result["curves_by_seed"].get(tset, {}).get(key, {}).items()}
    # Older results list the curves of the finished runs in seed order, like their final scores.
    runs = result.get("curves", {}).get(tset, {}).get(key, [])
    seeds = sorted(int(s) for s in result["test_by_seed"].get(tset, {}).get(key, {}))
    return dict(zip(seeds, runs)) if len(runs) == len(seeds) else {}


def compare_results(
    a: dict[str, Any], b: dict[str, Any], pairs: list[RowPair] | None = None, *, at: int | None = None
) -> dict[str, Any]:
    """Per task set in both runs: ``a`` − ``b`` over the seeds both have, with a 95% interval; final
    test success, or with ``at`` the evaluation at that many online trajectories (how fast rows learn).

    Without ``pairs``, every row key present in both runs is compared with itself. Also returns the
    config fields that differ and, per set, the seeds whose SFT start differs and the pairs that
    have no seed in common (``missing``: a key that is not in one of the runs).
    """
    ca, cb = a.get("config", {}), b.get("config", {})
    config_diff = {k: [ca.get(k), cb.get(k)] for k in sorted(set(ca) | set(cb)) if ca.get(k) != cb.get(k)}
    sets: dict[str, Any] = {}
    for tset in sorted(set(a["test_by_seed"]) & set(b["test_by_seed"])):
        rows_a, rows_b = a["test_by_seed"][tset], b["test_by_seed"][tset]
        chosen = pairs if pairs is not None else [RowPair(k, k) for k in sorted(rows_a, key=lambda k: k != "sft") if k in rows_b]
        sft_a, sft_b = _by_seed(a, tset, "sft"), _by_seed(b, tset, "sft")
        # One run's rows as "A:key", the other's as "B:key": then it is table1's own paired comparison.
        merged = {f"A:{k}": _by_seed(a, tset, k, at) for k in rows_a} | {f"B:{k}": _by_seed(b, tset, k, at) for k in rows_b}
        found = paired_comparisons({tset: merged}, [(f"A:{p.a}", f"B:{p.b}") for p in chosen]).get(tset, [])
        rows = [{**r, "a": r["a"][2:], "b": r["b"][2:]} for r in found]
        done = {(r["a"], r["b"]) for r in rows}
        missing = [f"{p.a}:{p.b}" for p in chosen if (p.a, p.b) not in done]
        common = sorted(set(sft_a) & set(sft_b))
        sets[tset] = {
            "rows": rows,
            "missing": missing,
            "start_seeds": common,
            "start_differs": [s for s in common if sft_a[s] != sft_b[s]],
        }
    return {"config_diff": config_diff, "at": at, "sets": sets}


def compare_markdown(cmp: dict[str, Any], name_a: str, name_b: str) -> str:
    """A short report: what differs between the runs, then one table row per compared pair."""
    lines = [f"A = {name_a}", f"B = {name_b}", ""]
    if cmp["config_diff"]:
        lines.append("Config fields that differ (A | B):")
        lines += [f"- {k}: {va!r} | {vb!r}" for k, (va, vb) in cmp["config_diff"].items()]
    else:
        lines.append("The configs are identical.")
    lines.append("")
    for tset, s in cmp["sets"].items():
        if not s["start_seeds"]:
            lines.append(f"{tset}: no SFT rows to compare; whether the runs share a start is unknown.")
        elif s["start_differs"]:
            lines.append(
                f"{tset}: the SFT start differs at seeds {s['start_differs']}: a comparison of recipes, "
                "paired by seed index only."
            )
        else:
            lines.append(f"{tset}: the same SFT start at every common seed (test success equal seed by seed).")
        if s["missing"]:
            lines.append(
                f"{tset}: no common seeds for {', '.join(s['missing'])} (a row key not in A or not in B"
                + ("" if cmp.get("at") is None else ", or not evaluated at that budget")
                + ")."
            )
    when = "final test success" if cmp.get("at") is None else f"test success at {cmp['at']:,} online trajectories"
    lines += ["", f"Paired by seed, {when}:"]
    lines += ["", "| set | A − B | seeds | mean (points) | 95% CI | A wins / loses | resolved |", "|---|---|---|---|---|---|---|"]
    for tset, s in cmp["sets"].items():
        for r in s["rows"]:
            label = r["a"] if r["a"] == r["b"] else f"{r['a']} − {r['b']}"
            lines.append(
                f"| {tset} | {label} | {len(r['seeds'])} | {100 * r['mean']:+.1f} | {interval_text(r)} "
                f"| {r['wins']} / {r['losses']} | {'yes' if r['resolved'] else 'no'} |"
            )
    return "\n".join(lines) + "\n"
