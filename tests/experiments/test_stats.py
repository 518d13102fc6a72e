"""Paired differences across seeds, checked against hand-computed numbers."""

import math

import pytest

from digirl.experiments.stats import mcnemar_exact, paired_bootstrap, paired_difference, t_quantile_975


def test_paired_difference_by_hand():
    # differences 0.1, 0.2, 0.3: mean 0.2, sd 0.1, t(2) = 4.303 -> half-width 0.248: not resolved
    p = paired_difference([0.6, 0.7, 0.8], [0.5, 0.5, 0.5])
    half = 4.303 * 0.1 / math.sqrt(3)
    assert p.n == 3 and p.mean == pytest.approx(0.2)
    assert (p.ci_low, p.ci_high) == pytest.approx((0.2 - half, 0.2 + half))
    assert not p.resolved and (p.wins, p.losses) == (3, 0)
    # differences 0.10, 0.12, 0.14: sd 0.02 -> half-width 0.0497, the interval excludes 0
    q = paired_difference([0.6, 0.62, 0.64], [0.5, 0.5, 0.5])
    assert q.ci_low == pytest.approx(0.12 - 4.303 * 0.02 / math.sqrt(3)) and q.resolved


def test_unresolved_when_the_interval_spans_zero_and_single_pairs():
    p = paired_difference([0.6, 0.4], [0.5, 0.5])
    assert p.mean == pytest.approx(0.0) and not p.resolved and (p.wins, p.losses) == (1, 1)
    one = paired_difference([0.9], [0.1])
    assert one.mean == pytest.approx(0.8) and not one.resolved and math.isinf(one.ci_high)
    assert paired_difference([0.5, 0.7], [0.5, 0.7]).to_dict()["resolved"] is False


def test_t_quantiles_and_errors():
    assert t_quantile_975(1) == 12.706 and t_quantile_975(4) == 2.776 and t_quantile_975(100) == 1.96
    with pytest.raises(ValueError):
        t_quantile_975(0)
    with pytest.raises(ValueError, match="equal length"):
        paired_difference([1.0], [1.0, 2.0])


def test_mcnemar_exact_by_hand():
    # 5 discordant pairs, all won by b: 2 * (1/2)^5 = 0.0625; concordant pairs do not count
    r = mcnemar_exact([True, False, False, False, False, False, True], [True, True, True, True, True, True, True])
    assert (r["only_a"], r["only_b"], r["pairs"]) == (0, 5, 7) and r["p_value"] == pytest.approx(0.0625)
    # one each way: (C(2,0) + C(2,1)) / 4 = 3/4, doubled and capped at 1
    assert mcnemar_exact([True, False], [False, True])["p_value"] == 1.0
    assert mcnemar_exact([True], [True])["p_value"] == 1.0
    with pytest.raises(ValueError):
        mcnemar_exact([True], [True, False])


def test_paired_bootstrap_draws_tasks_once_for_every_seed():
    # each task is won by exactly one seed under a and by the other under b: with one task draw
    # shared by both seeds and both conditions, every replicate has mean(a) == mean(b)
    a, b = [[1, 0, 1, 0], [0, 1, 0, 1]], [[0, 1, 0, 1], [1, 0, 1, 0]]
    r = paired_bootstrap(a, b, reps=500, seed=1)
    assert r["difference"] == 0.0 and r["difference_ci95"] == [0.0, 0.0]
    assert r["ratio"] == 1.0 and r["ratio_ci95"] == [1.0, 1.0] and r["pairs"] == 8


def test_paired_bootstrap_shift_and_ratio():
    a = [[1, 1, 1, 1, 0, 0, 0, 0]]
    b = [[1, 1, 0, 0, 0, 0, 0, 0]]  # b keeps half of a's successes, on the same tasks
    r = paired_bootstrap(a, b, reps=2000, seed=0)
    assert r["mean_a"] == 0.5 and r["mean_b"] == 0.25 and r["difference"] == -0.25 and r["ratio"] == 0.5
    lo, hi = r["difference_ci95"]
    assert -1.0 <= lo < -0.25 < hi <= 0.0  # b never beats a on a task: the difference is never positive
    assert r["ratio_ci95"] is not None and r["ratio_ci95"][0] <= 0.5 <= r["ratio_ci95"][1] <= 1.0
    assert paired_bootstrap(a, b, reps=2000, seed=0) == r  # seeded
    with pytest.raises(ValueError):
        paired_bootstrap([[1, 0]], [[1]])
