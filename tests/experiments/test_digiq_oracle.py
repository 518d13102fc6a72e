"""Critic-vs-ground-truth metrics, with hand-computed numbers."""

import math

import numpy as np
import pytest

from digirl.experiments.digiq_oracle import oracle_metrics, rank_average, spearman


def test_rank_average_and_spearman():
    assert rank_average(np.array([3.0, 1.0, 2.0])).tolist() == [3.0, 1.0, 2.0]
    assert rank_average(np.array([1.0, 2.0, 2.0, 5.0])).tolist() == [1.0, 2.5, 2.5, 4.0]  # ties share 2.5
    assert spearman([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    assert spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    # ranks [1,2,3] vs [1,3,2]: Pearson of ranks = 0.5
    assert spearman([1, 2, 3], [1, 3, 2]) == pytest.approx(0.5)
    assert math.isnan(spearman([1, 1, 1], [1, 2, 3]))


def test_oracle_metrics():
    learned = {
        ("a", 0): [0.2, 0.9, 0.1],  # picks candidate 1: truly best
        ("a", 1): [0.5, 0.4],  # picks candidate 0; candidate 1 is truly better
        ("b", 0): [0.3, 0.3],  # true values equal: not decisive
        ("c", 0): [0.1, 0.2],  # no true values: ignored
    }
    true = {
        ("a", 0, 0): 0.5, ("a", 0, 1): 0.9, ("a", 0, 2): 0.0,
        ("a", 1, 0): 0.0, ("a", 1, 1): 0.95,
        ("b", 0, 0): 0.9, ("b", 0, 1): 0.9,
    }  # fmt: skip
    m = oracle_metrics(learned, true)
    assert m["oracle/states"] == 3 and m["oracle/pairs"] == 7 and m["oracle/decisive_states"] == 2
    assert m["oracle/top1_agreement"] == pytest.approx(0.5)
    assert m["oracle/top1_random"] == pytest.approx((1 / 3 + 1 / 2) / 2)
    assert m["oracle/top1_dataset_action"] == pytest.approx(0.0)
    # within-state Spearman: state a0: ranks q [2,3,1] vs t [2,3,1] → 1; state a1: [2,1] vs [1,2] → −1
    assert m["oracle/spearman_within_state"] == pytest.approx(0.0)
    # true value of the chosen candidate: .9 (a0), 0 (a1), .9 (b0: first max) → .6
    assert m["oracle/value_chosen"] == pytest.approx(0.6)
    assert m["oracle/value_dataset_action"] == pytest.approx((0.5 + 0.0 + 0.9) / 3)
    assert m["oracle/value_best"] == pytest.approx((0.9 + 0.95 + 0.9) / 3)
    assert -1 <= m["oracle/spearman"] <= 1


def test_oracle_metrics_over_the_candidates_extraction_may_pick():
    learned = {
        ("a", 0): [0.2, 0.9, 0.1],  # the top candidate is a no-op extraction never picks
        ("a", 1): [0.5, 0.4, 0.7],  # only the dataset action can be picked: nothing to rank
        ("b", 0): [0.1, 0.3, 0.2],  # an unpickable dataset action is never counted as best
    }
    true = {
        ("a", 0, 0): 0.5, ("a", 0, 1): 0.0, ("a", 0, 2): 0.9,
        ("a", 1, 0): 0.9, ("a", 1, 1): 0.0, ("a", 1, 2): 0.2,
        ("b", 0, 0): 1.0, ("b", 0, 1): 0.2, ("b", 0, 2): 0.8,
    }  # fmt: skip
    pickable = {("a", 0): [True, False, True], ("a", 1): [True, False, False], ("b", 0): [False, True, True]}
    m = oracle_metrics(learned, true, pickable)
    assert m["oracle/top1_agreement"] == pytest.approx(0.0)  # all candidates: a0 → 1 (0.0), a1 → 2, b0 → 1
    e = {k.removeprefix("oracle/extractable/"): v for k, v in m.items() if k.startswith("oracle/extractable/")}
    assert e["decisive_states"] == 2  # a1 has one pickable candidate
    # a0 over {0, 2}: picks 0 (0.2 > 0.1), truly best is 2 → miss; b0 over {1, 2}: picks 1, best is 2 → miss
    assert e["top1_agreement"] == pytest.approx(0.0)
    assert e["top1_dataset_action"] == pytest.approx(0.0)  # a0: candidate 0 is not best; b0: not pickable
    assert e["top1_random"] == pytest.approx(0.5)
    # ranks: a0 q [2,1] vs t [1,2] → −1; b0 q [2,1] vs t [1,2] → −1
    assert e["spearman_within_state"] == pytest.approx(-1.0)
    assert e["value_chosen"] == pytest.approx((0.5 + 0.2) / 2) and e["value_best"] == pytest.approx((0.9 + 0.8) / 2)
    assert "oracle/extractable/top1_agreement" not in oracle_metrics(learned, true)
