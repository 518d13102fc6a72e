"""Paired differences across seeds, checked against hand-computed numbers."""

import math

import pytest

from digirl.experiments.stats import paired_difference, t_quantile_975


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
