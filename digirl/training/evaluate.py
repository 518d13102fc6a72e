"""Evaluation with DigiRL's protocol and a report users can trust.

Test split: the first N tasks *in order* (DigiRL evaluates the first 96). Train split: N tasks
sampled at random with a fixed seed. Reported: success rate with a 95% Wilson interval, mean
episode length (all and successful), per-family success, and failure modes.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from digirl.core.types import TaskSpec, Trajectory


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a binomial proportion (well-behaved at 0 and n)."""
    if n == 0:
        return (0.0, 0.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def failure_mode(t: Trajectory) -> str:
    """One label per episode: success, env_failure, stopped_early, gave_up, out_of_steps, other."""
    if t.env_failure:
        return "env_failure"
    if t.success:
        return "success"
    last = t.steps[-1].action if t.steps else None
    if last is not None and last.kind == "complete":
        return "stopped_early"
    if last is not None and last.kind == "impossible":
        return "gave_up"
    if t.truncated:
        return "out_of_steps"
    return "other"


@dataclass
class EvalReport:
    split: str
    episodes: int
    successes: int
    success_rate: float
    ci95: tuple[float, float]
    mean_length: float
    mean_length_success: float
    env_failures: int
    invalid_actions: int
    failure_modes: dict[str, int] = field(default_factory=dict)
    per_family: dict[str, dict[str, float]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["ci95"] = list(self.ci95)
        return d


def summarize(trajs: Iterable[Trajectory], split: str) -> EvalReport:
    trajs = list(trajs)
    scored = [t for t in trajs if not t.env_failure]  # env failures are not scored as 0
    succ = sum(t.success for t in scored)
    fam: dict[str, list[bool]] = defaultdict(list)
    for t in scored:
        fam[t.task.family or "?"].append(t.success)
    lengths = [t.length for t in scored]
    slen = [t.length for t in scored if t.success]
    return EvalReport(
        split=split,
        episodes=len(scored),
        successes=succ,
        success_rate=succ / len(scored) if scored else 0.0,
        ci95=wilson_interval(succ, len(scored)),
        mean_length=float(np.mean(lengths)) if lengths else 0.0,
        mean_length_success=float(np.mean(slen)) if slen else 0.0,
        env_failures=len(trajs) - len(scored),
        invalid_actions=sum(1 for t in scored for s in t.steps if not s.action.is_valid),
        failure_modes=dict(Counter(failure_mode(t) for t in trajs)),
        per_family={k: {"episodes": len(v), "success_rate": float(np.mean(v))} for k, v in sorted(fam.items())},
    )


def eval_tasks(
    test_pool: Sequence[TaskSpec | None], train_pool: Sequence[TaskSpec | None], n_test: int, n_train: int, seed: int
) -> dict[str, list[TaskSpec | None]]:
    """DigiRL's protocol: the first ``n_test`` test tasks in order; ``n_train`` random train tasks."""
    rng = np.random.default_rng(seed)
    out: dict[str, list[TaskSpec | None]] = {}
    if n_test > 0 and test_pool:
        out["test"] = list(test_pool[:n_test])
    if n_train > 0 and train_pool:
        idx = rng.choice(len(train_pool), size=min(n_train, len(train_pool)), replace=False)
        out["train"] = [train_pool[int(i)] for i in sorted(idx)]
    return out


def to_markdown(reports: Sequence[EvalReport]) -> str:
    lines = [
        "| split | episodes | success | 95% CI | mean length | env failures | invalid actions |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in reports:
        lines.append(
            f"| {r.split} | {r.episodes} | {100 * r.success_rate:.1f}% | {100 * r.ci95[0]:.1f}–{100 * r.ci95[1]:.1f}% "
            f"| {r.mean_length:.2f} | {r.env_failures} | {r.invalid_actions} |"
        )
    fams = sorted({f for r in reports for f in r.per_family})
    if fams:
        lines += ["", "| family | " + " | ".join(r.split for r in reports) + " |", "|---|" + "---|" * len(reports)]
        for f in fams:
            cells = []
            for r in reports:
                d = r.per_family.get(f)
                cells.append(f"{100 * d['success_rate']:.0f}% ({int(d['episodes'])})" if d else "–")
            lines.append(f"| {f} | " + " | ".join(cells) + " |")
    modes = sorted({m for r in reports for m in r.failure_modes})
    if modes:
        lines += ["", "| outcome | " + " | ".join(r.split for r in reports) + " |", "|---|" + "---|" * len(reports)]
        for m in modes:
            lines.append(f"| {m} | " + " | ".join(str(r.failure_modes.get(m, 0)) for r in reports) + " |")
    return "\n".join(lines) + "\n"


def write_reports(reports: Sequence[EvalReport], out_dir: str | Path, name: str = "eval") -> None:
    p = Path(out_dir)
    p.mkdir(parents=True, exist_ok=True)
    (p / f"{name}.json").write_text(json.dumps({r.split: r.to_dict() for r in reports}, indent=2))
    (p / f"{name}.md").write_text(to_markdown(reports))
