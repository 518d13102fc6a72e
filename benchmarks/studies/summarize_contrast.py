"""Two methods compared seed by seed from ``time_to_target.py`` results, at equal online trajectories.

Reads any number of ``time_to_target.json`` files (single runs and ``--arm`` runs alike), finds each
run's method (``algo.name``, DigiRL when none is given) and seed from its command, and compares method
B with method A on every seed that both ran: test (and validation) success at each online-trajectory
count both evaluated, and at the end of each run's wall-clock budget. Each difference is B − A with a
paired 95% t-interval over the seeds, sample std beside every mean; a seed one method lacks is listed,
never dropped silently. When a method ran a seed twice (two sessions), the runs must agree at every
count both evaluated (the protocol is deterministic on one revision of the task sets); a disagreement
is reported and the later file is the one used.

    python benchmarks/studies/summarize_contrast.py --a digirl --b filtered_bc \\
        --out benchmarks/results/time_to_target/contrast_general.json \\
        benchmarks/results/time_to_target/pixels_regions_*general*.json

Writes the JSON and prints a table.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
from pathlib import Path
from typing import Any

from digirl.experiments.stats import paired_difference

Curve = list[dict[str, Any]]


def _algo(overrides: list[str]) -> str | None:
    names = [o.split("=", 1)[1] for o in overrides if o.startswith("algo.name=")]
    return names[-1] if names else None


def runs_of(result: dict[str, Any]) -> list[tuple[str, int, Curve]]:
    """(method, seed, curve) for every run in one ``time_to_target.json``."""
    argv = shlex.split(result["command_line"])
    seed = int(argv[argv.index("--seed") + 1]) if "--seed" in argv else 0
    common = argv[argv.index("--") + 1 :] if "--" in argv else []
    if "arms" in result:
        return [(_algo(common + arm["train_overrides"]) or "digirl", seed, arm["curve"]) for arm in result["arms"].values()]
    return [(_algo(common) or "digirl", seed, result["curve"])]


def _at(curve: Curve, trajectories: int | None) -> dict[str, Any] | None:
    pts = [p for p in curve if trajectories is None or p["online_trajectories"] == trajectories]
    return pts[-1] if pts else None


def _agree(old: Curve, new: Curve, tol: float = 1e-3) -> bool:
    """Equal at every shared count, to ``tol`` (a result rebuilt from a printed log has rounded rates;
    one task of 96 is 0.0104)."""
    olds = {p["online_trajectories"]: p for p in old}
    return all(
        abs(olds[n][k] - p[k]) <= tol
        for p in new
        if (n := p["online_trajectories"]) in olds
        for k in ("test_success", "validation_success")
        if p[k] is not None and olds[n][k] is not None
    )


def collect(files: list[Path]) -> tuple[dict[tuple[str, int], Curve], list[str]]:
    """Every (method, seed)'s curve, and notes on repeated runs (later files win)."""
    curves: dict[tuple[str, int], Curve] = {}
    notes: list[str] = []
    for f in files:
        for method, seed, curve in runs_of(json.loads(f.read_text())):
            if (method, seed) in curves:
                same = _agree(curves[(method, seed)], curve)
                notes.append(
                    f"{method} seed {seed} ran twice; {'equal' if same else 'DIFFERENT'} at shared counts ({f.name} used)"
                )
            curves[(method, seed)] = curve
    return curves, notes


def inputs_provenance(files: list[Path]) -> dict[str, Any]:
    """This summary's result metadata, with what the runs saw and chose on read from their own JSONs
    (one value, or ``a | b`` when they differ) and the GPUs they ran on."""
    from digirl.utils.provenance import result_metadata

    runs = [json.loads(f.read_text()) for f in files]

    def joined(key: str) -> str:
        return " | ".join(sorted({str(r.get(key, "unrecorded")) for r in runs}))

    split = joined("selection_split")
    return {
        **result_metadata(observation=joined("observation"), selection_split=None if "|" in split else split),
        "runs_selection_split": split,
        "runs_gpu": joined("gpu"),
    }


def _sd(x: list[float]) -> float:
    return statistics.stdev(x) if len(x) > 1 else 0.0


def _row(a: list[float], b: list[float]) -> dict[str, Any]:
    return {
        "a": a,
        "b": b,
        "a_mean": statistics.fmean(a),
        "a_std": _sd(a),
        "b_mean": statistics.fmean(b),
        "b_std": _sd(b),
        "b_minus_a": paired_difference(b, a).to_dict(),
    }


def _split_row(pa: list[dict[str, Any] | None], pb: list[dict[str, Any] | None], split: str) -> dict[str, Any] | None:
    """The paired row of one split; ``None`` where a run did not evaluate that split there."""
    a = [None if p is None else p[f"{split}_success"] for p in pa]
    b = [None if p is None else p[f"{split}_success"] for p in pb]
    if any(x is None for x in a + b):
        return None
    return _row([float(x) for x in a if x is not None], [float(x) for x in b if x is not None])


def contrast(curves: dict[tuple[str, int], Curve], a: str, b: str) -> dict[str, Any]:
    seeds_a = {s for m, s in curves if m == a}
    seeds_b = {s for m, s in curves if m == b}
    seeds = sorted(seeds_a & seeds_b)
    if not seeds:
        raise SystemExit(f"no seed ran both {a} and {b}")
    counts = sorted(set.intersection(*({p["online_trajectories"] for p in curves[(m, s)]} for s in seeds for m in (a, b))))
    points: dict[str, Any] = {}
    for label, n in [*((str(c), c) for c in counts), ("end", None)]:
        pa = [_at(curves[(a, s)], n) for s in seeds]
        pb = [_at(curves[(b, s)], n) for s in seeds]
        points[label] = {split: _split_row(pa, pb, split) for split in ("test", "validation")}
        if n is None:
            points[label]["online_trajectories"] = {
                a: [p and p["online_trajectories"] for p in pa],
                b: [p and p["online_trajectories"] for p in pb],
            }
    return {
        "a": a,
        "b": b,
        "seeds": seeds,
        "only_a": sorted(seeds_a - seeds_b),
        "only_b": sorted(seeds_b - seeds_a),
        "points": points,
    }


def _cell(r: dict[str, Any]) -> str:
    d = r["b_minus_a"]
    ci = "–" if d["n"] < 2 else f"{100 * d['ci_low']:+.1f} … {100 * d['ci_high']:+.1f}"
    return (
        f"{100 * r['a_mean']:5.1f} ± {100 * r['a_std']:4.1f}  {100 * r['b_mean']:5.1f} ± {100 * r['b_std']:4.1f}  "
        f"{100 * d['mean']:+5.1f} ({ci}; {d['wins']} W / {d['losses']} L)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", default="digirl", help="the reference method (algo.name)")
    ap.add_argument("--b", default="filtered_bc", help="the method compared with it")
    ap.add_argument("--out", type=Path, help="write the contrast here (JSON)")
    ap.add_argument("files", nargs="+", type=Path, help="time_to_target.json files, oldest first")
    args = ap.parse_args()
    curves, notes = collect(args.files)
    result = {
        **inputs_provenance(args.files),
        "files": [str(f) for f in args.files],
        "notes": notes,
        **contrast(curves, args.a, args.b),
    }
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(
        f"{args.b} − {args.a}, test success, seeds {result['seeds']} "
        f"(only {args.a}: {result['only_a']}, only {args.b}: {result['only_b']})"
    )
    print(f"{'online traj':>11}  {args.a + ' (mean ± std)':>16}  {args.b + ' (mean ± std)':>16}  difference (95% interval)")
    for label, row in result["points"].items():
        print(f"{label:>11}  {_cell(row['test'])}")
    for note in notes:
        print("note:", note)


if __name__ == "__main__":
    main()
