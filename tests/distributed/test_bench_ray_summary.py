"""``benchmarks/throughput/bench_ray.py async``: the time-to-target verdict, on hand-made learning curves (no runs)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from benchmarks.throughput.bench_ray import _mean_curve, _summaries, _summary, _time_to


def _run(mode: str, seed: int, points: Sequence[tuple[float, float]], start: float = 1000.0) -> dict[str, Any]:
    curve = [{"iteration": i, "wall_s": w, "test_success": s} for i, (w, s) in enumerate(points)]
    return {"mode": mode, "seed": seed, "curve": curve, "total_wall_s": curve[-1]["wall_s"], "online_start_unix": start}


def test_time_to_skips_the_starting_checkpoint_and_takes_the_first_crossing() -> None:
    curve = _run("sync", 0, [(0, 0.9), (10, 0.4), (20, 0.6), (30, 0.5)])["curve"]
    assert _time_to(curve, 0.6) == 20.0
    assert _time_to(curve, 0.7) is None


def test_mean_curve_averages_wall_time_and_success_over_the_iterations_every_seed_has() -> None:
    a = _run("async", 0, [(0, 0.5), (10, 0.6), (20, 0.7)])["curve"]
    b = _run("async", 1, [(0, 0.5), (20, 0.8)])["curve"]
    assert _mean_curve([a, b]) == [
        {"iteration": 0, "wall_s": 0.0, "test_success": 0.5},
        {"iteration": 1, "wall_s": 15.0, "test_success": pytest.approx(0.7)},
    ]


def _runs(async_points: Sequence[Sequence[tuple[float, float]]]) -> dict[str, dict[str, Any]]:
    sync = [
        [(0, 0.5), (50, 0.55), (100, 0.60)],
        [(0, 0.5), (50, 0.60), (100, 0.70)],
        [(0, 0.5), (50, 0.55), (100, 0.65)],
    ]
    runs = {f"sync-s{i}": _run("sync", i, p) for i, p in enumerate(sync)}
    runs |= {f"async-s{i}": _run("async", i, p, start=1005.0) for i, p in enumerate(async_points)}
    return runs


def test_summary_target_is_the_sync_mean_final_and_the_verdict_uses_the_seed_averaged_curves() -> None:
    # Sync mean final = 0.65, reached by the mean sync curve at its last iteration (mean wall 100 s).
    runs = _runs(
        [
            [(0, 0.5), (20, 0.60), (40, 0.62), (60, 0.70)],
            [(0, 0.5), (20, 0.60), (40, 0.68), (60, 0.66)],
            [(0, 0.5), (20, 0.60), (40, 0.65), (60, 0.64)],
        ]
    )
    out = _summary(runs, [0, 1, 2])
    assert out["target_success"] == pytest.approx(0.65)
    # Async mean curve: 0.60, 0.65 (at 40 s), 0.667: crosses at 40 s -> 100 / 40 = 2.5x.
    assert out["time_to_target_mean_curve_s"] == {"sync": 100.0, "async": 40.0}
    assert out["speedup_to_target_mean_curve"] == 2.5
    assert out["async_final_within_sync_ci"] is True and out["criterion_met"] is True
    s0 = out["per_seed"][0]
    assert s0["sync_time_to_target_s"] is None  # seed 0's sync run never reaches the mean (0.60 < 0.65)
    assert s0["async_time_to_target_s"] == 60.0 and s0["speedup_to_target"] is None
    assert out["per_seed"][1]["speedup_to_target"] == 2.5  # sync seed 1 reaches 0.65 at 100 s, async at 40 s
    # The async runs went 3 iterations, the sync ones 2: the "same iterations" comparison takes async's 2nd.
    assert s0["async_wall_s_at_sync_iterations"] == 40.0 and s0["speedup_same_iterations"] == 2.5
    assert s0["sync_ended_at_async_s"] == 95.0  # the sync run's online phase began 5 s earlier


def test_summary_not_met_when_the_async_runs_never_reach_the_target_or_end_outside_the_interval() -> None:
    never = _runs([[(0, 0.5), (20, 0.55), (40, 0.6)]] * 3)
    out = _summary(never, [0, 1, 2])
    assert out["time_to_target_mean_curve_s"]["async"] is None and out["criterion_met"] is False
    # Fast, but ends far above the synchronous interval (0.65 ± 0.124): not "the same final success".
    high = _runs([[(0, 0.5), (20, 0.95), (40, 0.95)]] * 3)
    out = _summary(high, [0, 1, 2])
    assert out["speedup_to_target_mean_curve"] == 5.0
    assert out["async_final_within_sync_ci"] is False and out["criterion_met"] is False


def test_summaries_reports_the_other_asynchronous_variants_apart() -> None:
    runs = _runs([[(0, 0.5), (20, 0.7)]] * 3)
    runs |= {f"async-none-s{i}": {**runs[f"async-s{i}"], "mode": "async-none"} for i in range(3)}
    out = _summaries(runs, [0, 1, 2], ["async", "async-none"])
    assert out["async_runs"] == "async" and out["variants"]["async-none"]["async_runs"] == "async-none"
    assert out["variants"]["async-none"]["speedup_to_target_mean_curve"] == out["speedup_to_target_mean_curve"] == 5.0
