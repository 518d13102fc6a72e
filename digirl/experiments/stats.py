"""Small statistics for comparing methods across seeds: paired differences with 95% confidence intervals.

Two methods run from the same SFT start on the same seeds are *paired*: the difference per seed
removes the (large) seed-to-seed variation of the starting point. A comparison is called
**resolved** when the 95% interval of the mean paired difference excludes 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

__all__ = [
    "PairedDifference",
    "interval_text",
    "mcnemar_exact",
    "paired_bootstrap",
    "paired_difference",
    "t_quantile_975",
]

# Two-sided 95% quantiles of Student's t (0.975 quantile) for 1..30 degrees of freedom.
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t_quantile_975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (normal beyond 30)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    return _T975[df - 1] if df <= len(_T975) else 1.96


@dataclass(frozen=True)
class PairedDifference:
    """Mean of ``a - b`` over pairs, its 95% t-interval, and whether the interval excludes 0."""

    n: int
    mean: float
    ci_low: float
    ci_high: float
    wins: int  # pairs where a > b
    losses: int  # pairs where a < b

    @property
    def resolved(self) -> bool:
        return self.n >= 2 and (self.ci_low > 0 or self.ci_high < 0)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "resolved": self.resolved}


def paired_difference(a: Sequence[float], b: Sequence[float]) -> PairedDifference:
    """Paired comparison of two methods measured on the same seeds (``a[i]`` and ``b[i]`` pair up)."""
    if len(a) != len(b):
        raise ValueError(f"paired samples must have equal length, got {len(a)} and {len(b)}")
    d = [float(x) - float(y) for x, y in zip(a, b)]
    n = len(d)
    if n == 0:
        raise ValueError("no pairs")
    mean = sum(d) / n
    if n == 1:
        return PairedDifference(1, mean, -math.inf, math.inf, int(d[0] > 0), int(d[0] < 0))
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
    half = t_quantile_975(n - 1) * sd / math.sqrt(n)
    return PairedDifference(n, mean, mean - half, mean + half, sum(x > 0 for x in d), sum(x < 0 for x in d))


def interval_text(row: dict[str, Any]) -> str:
    """A paired difference's 95% interval in points (``PairedDifference.to_dict()`` form); "–" for one pair."""
    return "–" if row["n"] < 2 else f"{100 * row['ci_low']:+.1f} … {100 * row['ci_high']:+.1f}"


def paired_bootstrap(
    a: Sequence[Sequence[float]], b: Sequence[Sequence[float]], *, reps: int = 10_000, seed: int = 0
) -> dict[str, Any]:
    """Paired bootstrap of two conditions' per-episode outcomes: ``a[s][i]`` and ``b[s][i]`` are task ``i``
    played by seed ``s``'s policy under condition a and b (the same tasks and env seeds). Each replicate
    draws the task indices with replacement once and uses that draw for every seed and both conditions,
    so the correlation between the pairs and across seeds stays in. Returns the point estimates and 95%
    percentile intervals of the difference ``mean(b) - mean(a)`` and the ratio ``mean(b) / mean(a)``
    (the ratio's interval leaves out replicates with ``mean(a) = 0``; ``None`` when none is left)."""
    import numpy as np

    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if xa.shape != xb.shape or xa.ndim != 2 or xa.shape[1] == 0:
        raise ValueError(f"paired outcomes must be two equal (seeds x tasks) arrays, got {xa.shape} and {xb.shape}")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, xa.shape[1], size=(reps, xa.shape[1]))
    ma, mb = xa[:, idx].mean(axis=(0, 2)), xb[:, idx].mean(axis=(0, 2))  # one mean per replicate
    diff = mb - ma
    ok = ma > 0
    ratios = mb[ok] / ma[ok]
    pa, pb = float(xa.mean()), float(xb.mean())
    return {
        "pairs": int(xa.size),
        "mean_a": pa,
        "mean_b": pb,
        "difference": pb - pa,
        "difference_ci95": [float(np.quantile(diff, 0.025)), float(np.quantile(diff, 0.975))],
        "ratio": pb / pa if pa > 0 else None,
        "ratio_ci95": [float(np.quantile(ratios, 0.025)), float(np.quantile(ratios, 0.975))] if ratios.size else None,
        "ratio_replicates_used": int(ratios.size),
        "reps": reps,
        "seed": seed,
    }


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> dict[str, Any]:
    """Exact McNemar test of paired binary outcomes: under "no difference" each discordant pair is
    as likely to favour a as b, so the count of pairs won by b is Binomial(discordant, 1/2); the
    two-sided p-value doubles the smaller tail (capped at 1)."""
    if len(a) != len(b):
        raise ValueError(f"paired outcomes must have equal length, got {len(a)} and {len(b)}")
    only_a = sum(bool(x) and not bool(y) for x, y in zip(a, b))
    only_b = sum(bool(y) and not bool(x) for x, y in zip(a, b))
    n = only_a + only_b
    tail = sum(math.comb(n, k) for k in range(min(only_a, only_b) + 1)) / 2**n if n else 1.0
    return {"pairs": len(a), "only_a": only_a, "only_b": only_b, "p_value": min(1.0, 2 * tail)}
