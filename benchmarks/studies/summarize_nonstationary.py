"""Summarize `digirl bench nonstationary` runs of several seeds: means, paired differences, recovery.

    python benchmarks/studies/summarize_nonstationary.py OUT SEED_DIR [SEED_DIR ...]

Each SEED_DIR holds one run's ``nonstationary.json``. Writes ``OUT/summary.json`` and
``OUT/summary.md``: per world version the frozen and continued test success of every seed and their
mean; the frozen policy's change from the first version to each later one and continued − frozen at
each later version as paired differences over the seeds (95% t-interval); and the share of the
frozen policy's loss that continued training won back (where it lost 5 points or more).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from digirl.experiments.stats import interval_text, paired_difference

#: Below this mean loss (5 points) a share of it recovered means nothing and is not reported.
_MIN_LOSS = 0.05


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def summarize(runs: list[dict[str, Any]], names: list[str]) -> dict[str, Any]:
    versions = [int(v) for v in runs[0]["config"]["versions"]]
    for r in runs:
        if [int(v) for v in r["config"]["versions"]] != versions:
            raise ValueError("the runs evaluated different world versions")

    def col(key: str, v: int) -> list[float]:
        return [float(r[key][str(v)] if str(v) in r[key] else r[key][v]) for r in runs]

    first = versions[0]
    table = {v: {"frozen": col("frozen", v), "continued": col("continued", v)} for v in versions}
    diffs: dict[str, Any] = {}
    for v in versions[1:]:
        drop = paired_difference(table[v]["frozen"], table[first]["frozen"])
        gain = paired_difference(table[v]["continued"], table[v]["frozen"])
        diffs[str(v)] = {
            "frozen_minus_first": drop.to_dict(),
            "continued_minus_frozen": gain.to_dict(),
            "recovered_share": None if drop.mean > -_MIN_LOSS else gain.mean / -drop.mean,
        }
    return {
        "seeds": names,
        "versions": versions,
        "table": {str(v): {k: {"runs": x, "mean": sum(x) / len(x)} for k, x in row.items()} for v, row in table.items()},
        "paired": diffs,
        "runs": [r.get("run") for r in runs],
        "provenance": {k: runs[0].get(k) for k in ("git_commit", "machine", "gpu", "command", "observation") if k in runs[0]},
    }


def to_markdown(s: dict[str, Any]) -> str:
    names = s["seeds"]
    lines = [
        "| world version | " + " | ".join(f"{n} frozen / continued" for n in names) + " | mean frozen | mean continued |",
        "|---|" + "---|" * (len(names) + 2),
    ]
    for v in s["versions"]:
        row = s["table"][str(v)]
        cells = [f"{_pct(f)} / {_pct(c)}" for f, c in zip(row["frozen"]["runs"], row["continued"]["runs"])]
        lines.append(f"| {v} | " + " | ".join(cells) + f" | {_pct(row['frozen']['mean'])} | {_pct(row['continued']['mean'])} |")
    lines.append("")
    first = s["versions"][0]
    for v, d in s["paired"].items():
        a, b = d["frozen_minus_first"], d["continued_minus_frozen"]
        share = "–" if d["recovered_share"] is None else f"{100 * d['recovered_share']:.0f}%"
        lines.append(
            f"- world {v}: frozen − world {first} **{100 * a['mean']:+.1f} points** ({interval_text(a)}, "
            f"{a['wins']} W / {a['losses']} L{', resolved' if a['resolved'] else ''}); continued − frozen "
            f"**{100 * b['mean']:+.1f}** ({interval_text(b)}, {b['wins']} W / {b['losses']} L"
            f"{', resolved' if b['resolved'] else ''}); share of the loss recovered: **{share}**"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="folder for summary.json and summary.md")
    ap.add_argument("runs", nargs="+", help="folders with a nonstationary.json each (one per seed)")
    args = ap.parse_args()
    runs, names = [], []
    for d in args.runs:
        f = Path(d) / "nonstationary.json"
        try:
            runs.append(json.loads(f.read_text()))
        except (OSError, json.JSONDecodeError) as e:
            raise SystemExit(f"{f}: cannot read a nonstationary result ({e})") from e
        names.append(Path(d).name)
    s = summarize(runs, names)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(s, indent=2) + "\n")
    (out / "summary.md").write_text(to_markdown(s))
    print(to_markdown(s))


if __name__ == "__main__":
    main()
