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

__all__ = ["PairedDifference", "interval_text", "paired_difference", "t_quantile_975"]

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
