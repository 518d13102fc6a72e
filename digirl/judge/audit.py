"""Measure a judge against screens whose ground truth is known (``digirl judge audit``)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from digirl.judge.base import JudgeError, JudgeVerdict, SuccessJudge
from digirl.judge.episodes import JudgeCase

__all__ = ["AuditReport", "run_audit"]


@dataclass
class AuditReport:
    """Confusion counts and derived rates. Undecided verdicts count as wrong in ``accuracy`` and
    are excluded from ``decided_accuracy``; precision/recall treat undecided as "not success"."""

    n: int = 0
    tp: int = 0
    fp: int = 0
    tn: int = 0
    fn: int = 0
    undecided: int = 0
    undecided_pos: int = 0
    errors: int = 0
    wall_s: float = 0.0
    judge_stats: dict[str, Any] = field(default_factory=dict)
    cost_usd: float | None = None
    per_case: list[dict[str, Any]] = field(default_factory=list)

    @property
    def decided(self) -> int:
        return self.tp + self.fp + self.tn + self.fn

    def metrics(self) -> dict[str, Any]:
        n = max(1, self.n)
        pos_pred = self.tp + self.fp
        pos_true = self.tp + self.fn + self.undecided_pos
        return {
            "cases": self.n,
            "accuracy": round((self.tp + self.tn) / n, 4),
            "decided_accuracy": round((self.tp + self.tn) / self.decided, 4) if self.decided else None,
            "precision": round(self.tp / pos_pred, 4) if pos_pred else None,
            "recall": round(self.tp / pos_true, 4) if pos_true else None,
            "undecided_rate": round(self.undecided / n, 4),
            "errors": self.errors,
            "confusion": {
                "tp": self.tp,
                "fp": self.fp,
                "tn": self.tn,
                "fn": self.fn,
                "undecided": self.undecided,
            },
        }

    def to_dict(self) -> dict[str, Any]:
        s = self.judge_stats
        return {
            **self.metrics(),
            "calls": s.get("requests", 0),
            "retries": s.get("retries", 0),
            "cache_hits": s.get("cache_hits", 0) + s.get("unchanged_skips", 0),
            "prompt_tokens": s.get("prompt_tokens", 0),
            "completion_tokens": s.get("completion_tokens", 0),
            "latency_mean_s": s.get("latency_mean_s", 0.0),
            "latency_p95_s": s.get("latency_p95_s", 0.0),
            "wall_s": round(self.wall_s, 3),
            "estimated_cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
        }


def run_audit(
    judge: SuccessJudge,
    cases: Sequence[JudgeCase],
    *,
    concurrency: int = 4,
    price_in_per_1k: float | None = None,
    price_out_per_1k: float | None = None,
) -> AuditReport:
    """Judge every case (``concurrency`` at a time) and tally the report.

    A case the judge could not answer (:class:`JudgeError`, e.g. endpoint down) counts in ``errors``
    and as undecided.
    """
    rep = AuditReport(n=len(cases))
    t0 = time.monotonic()

    def one(i: int) -> tuple[int, JudgeVerdict | None, str]:
        c = cases[i]
        try:
            v = judge.judge(c.task, c.screenshot, previous=c.previous, actions=c.actions, episode_id=f"audit-{i}")
            return i, v, ""
        except JudgeError as e:
            return i, None, str(e)

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as ex:
        results = sorted(ex.map(one, range(len(cases))), key=lambda r: r[0])
    for i, v, err in results:
        c = cases[i]
        pred = v.success if v is not None else None
        if v is None:
            rep.errors += 1
        if pred is None:
            rep.undecided += 1
            rep.undecided_pos += int(c.label)
        elif pred and c.label:
            rep.tp += 1
        elif pred and not c.label:
            rep.fp += 1
        elif not pred and not c.label:
            rep.tn += 1
        else:
            rep.fn += 1
        rep.per_case.append(
            {
                "task": c.task.instruction,
                "kind": c.kind,
                "label": c.label,
                "seed": c.seed,
                "step": c.step,
                "verdict": "error" if v is None else v.label,
                "reason": err if v is None else v.reason,
            }
        )
    rep.wall_s = time.monotonic() - t0
    stats = getattr(judge, "stats", None)
    rep.judge_stats = stats() if callable(stats) else {}
    if price_in_per_1k is not None or price_out_per_1k is not None:
        rep.cost_usd = rep.judge_stats.get("prompt_tokens", 0) / 1000 * (price_in_per_1k or 0.0) + rep.judge_stats.get(
            "completion_tokens", 0
        ) / 1000 * (price_out_per_1k or 0.0)
    return rep
