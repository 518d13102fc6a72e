"""The Table-1 drivers' learning-curve figures: test success against online trajectories (or env
steps), one panel per task set, the SFT start as a dashed line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["draw_curves"]


def draw_curves(
    curves: dict[str, dict[str, list[list[tuple[int, float]]]]],
    raw: dict[str, Any],
    path: Path,
    x_label: str = "online trajectories",
) -> None:
    """Test success vs online trajectories (or ``x_label``), one panel per task set (matplotlib when available)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ModuleNotFoundError:
        from digirl.training.plot import line_chart

        series = {f"{s}/{k}": _mean_curve(v) for s, d in curves.items() for k, v in d.items()}
        line_chart(series, path, x_label=x_label, y_label="test success")
        return
    fig, axes = plt.subplots(1, max(1, len(curves)), figsize=(5 * max(1, len(curves)), 3.6), squeeze=False)
    for ax, (s, d) in zip(axes[0], sorted(curves.items())):
        for key, runs in sorted(d.items()):
            xs, ys = zip(*_mean_curve(runs)) if runs and runs[0] else ((), ())
            ax.plot(xs, [100 * y for y in ys], marker="o", label=key)
        sft = raw.get(s, {}).get("sft", {}).get("test")
        if sft:
            ax.axhline(100 * float(np.mean(sft)), color="grey", ls="--", label="SFT")
        ax.set_title(f"{s} (test)")
        ax.set_xlabel(x_label)
        ax.set_ylabel("success %")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _mean_curve(runs: list[list[tuple[int, float]]]) -> list[tuple[int, float]]:
    n = min(len(r) for r in runs) if runs else 0
    # x is the mean over seeds too: equal for trajectories, not for env steps
    return [(round(float(np.mean([r[i][0] for r in runs]))), float(np.mean([r[i][1] for r in runs]))) for i in range(n)]
