"""Summarize ``run_miniwob_fbc.sh`` runs: test success per task and seed at each evaluation (by online
episodes), as ``summary.md`` and ``summary.json`` in the output folder.

    python benchmarks/studies/summarize_miniwob_fbc.py OUT_DIR
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np


def curves(out: Path) -> dict[str, dict[int, list[tuple[int, float]]]]:
    """task -> seed -> [(online episodes, test success)]"""
    found: dict[str, dict[int, list[tuple[int, float]]]] = {}
    for run in sorted(out.iterdir()):
        m = re.fullmatch(r"(.+)-s(\d+)", run.name)
        if not m or not (run / "metrics.jsonl").exists():
            continue
        rollout = 32
        cfg = run / "config.yaml"
        if cfg.exists():
            hit = re.search(r"^rollout_size:\s*(\d+)", cfg.read_text(), re.M)
            rollout = int(hit.group(1)) if hit else rollout
        points = []
        for line in (run / "metrics.jsonl").read_text().splitlines():
            row = json.loads(line)
            if "eval/test_success_rate" in row:
                points.append((int(row["step"]) * rollout, float(row["eval/test_success_rate"])))
        found.setdefault(m.group(1), {})[int(m.group(2))] = points
    return found


def main(out: Path) -> None:
    data = curves(out)
    first = next((pts for by_seed in data.values() for pts in by_seed.values()), [])
    at = " / ".join(str(n) for n, _ in first)  # the evaluation points (online episodes) of the runs
    lines = [f"| task | seed | test success at {at} online episodes | gain |", "|---|---|---|---|"]
    summary: dict[str, dict[str, object]] = {}
    for task, by_seed in data.items():
        gains = []
        for seed, pts in sorted(by_seed.items()):
            gain = pts[-1][1] - pts[0][1]
            gains.append(gain)
            curve = " / ".join(f"{100 * v:.0f}%" for _, v in pts)
            lines.append(f"| {task} | {seed} | {curve} | {100 * gain:+.0f} |")
        start = [pts[0][1] for pts in by_seed.values()]
        end = [pts[-1][1] for pts in by_seed.values()]
        lines.append(
            f"| **{task}** | mean ± std | {100 * np.mean(start):.0f} ± {100 * np.std(start):.0f}% → "
            f"{100 * np.mean(end):.0f} ± {100 * np.std(end):.0f}% | {100 * np.mean(gains):+.0f} |"
        )
        summary[task] = {"curves": {str(s): p for s, p in by_seed.items()}, "start": start, "end": end}
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
