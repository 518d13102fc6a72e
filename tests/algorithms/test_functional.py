"""Exact-number tests of the pure algorithm functions (values computed by hand in the comments)."""

import math

import numpy as np
import pytest
import torch

from digirl.algorithms.functional import (
    awr_weights,
    bce_value_loss,
    doubly_robust_advantage,
    filtered_bc_keep,
    hard_filter,
    instruction_curriculum,
    mse_value_loss,
    released_code_advantage,
)
from digirl.core.types import mc_returns


def test_mc_returns_horizon3():
    # G2 = 1; G1 = 0 + 0.95*1; G0 = 0 + 0.95*0.95
    assert mc_returns([0, 0, 1], 0.95) == pytest.approx([0.9025, 0.95, 1.0])
    assert mc_returns([], 0.5) == []
    with pytest.raises(ValueError):
        mc_returns([1], 1.5)


def test_doubly_robust_advantage_success_horizon3():
    # H = 2 (last index), λ = 0.5, r_H = 1, V = [.2, .5, .8], V(s_{h+1}) = [.5, .8, 0 (terminal)]
    # h=0: λ²=.25 → .25 + .75*(.5 + 0 - .2) = .475
    # h=1: λ¹=.5  → .5  + .5 *(.8 + 0 - .5) = .65
    # h=2: λ⁰=1   → 1   + 0                  = 1
    a = doubly_robust_advantage([0, 0, 1], [0.2, 0.5, 0.8], [0.5, 0.8, 0.0], 1.0, 0.5)
    assert a == pytest.approx([0.475, 0.65, 1.0])


def test_doubly_robust_advantage_failure_is_td():
    # r_H = 0 → A_h = V(s_{h+1}) + r_h - V(s_h)
    a = doubly_robust_advantage([0, 0, 0], [0.2, 0.5, 0.8], [0.5, 0.8, 0.0], 0.0, 0.5)
    assert a == pytest.approx([0.3, 0.3, -0.8])
    # kept by the paper's 1/H filter (H = 10): the two steps that made progress
    assert hard_filter(a, 0.1).tolist() == [True, True, False]


def test_doubly_robust_advantage_validates():
    with pytest.raises(ValueError):
        doubly_robust_advantage([0, 1], [0.1], [0.2, 0.0], 1.0, 0.5)
    with pytest.raises(ValueError):
        doubly_robust_advantage([1], [0.1], [0.0], 1.0, 1.5)


def test_released_code_advantage():
    # success: nv - v - .05 + r + G with G = [.9025, .95, 1] → [1.1525, 1.2, 1.15] → clamp 1
    g = mc_returns([0, 0, 1], 0.95)
    a = released_code_advantage([0, 0, 1], g, [0.2, 0.5, 0.8], [0.5, 0.8, 0.0])
    assert a == pytest.approx([1.0, 1.0, 1.0])
    # failure: [.3-.05, .3-.05, -.8-.05] → [.25, .25, 0]
    a = released_code_advantage([0, 0, 0], [0, 0, 0], [0.2, 0.5, 0.8], [0.5, 0.8, 0.0])
    assert a == pytest.approx([0.25, 0.25, 0.0])
    assert hard_filter(a, 0.0).tolist() == [True, True, False]


def test_instruction_curriculum_top_fraction():
    # scores r - V = [.1, -.1, .8, -.5]; top half = {.8, .1}
    keep = instruction_curriculum([1, 0, 1, 0], [0.9, 0.1, 0.2, 0.5], 0.5)
    assert keep.tolist() == [True, False, True, False]
    assert instruction_curriculum([1, 0], [0.5, 0.5], 1.0).tolist() == [True, True]
    assert instruction_curriculum([], [], 0.5).tolist() == []
    with pytest.raises(ValueError):
        instruction_curriculum([1], [0.5], 0.0)


def test_instruction_curriculum_keep_successes_drops_failures_only():
    # scores r - V = [.05, .6, .02, -.9, .3, -.1]: most episodes succeed, so the top half {.6, .3, .05}
    # drops the success at .02 (an easy task) and keeps no failure
    rewards, v = [1, 1, 1, 0, 1, 0], [0.95, 0.4, 0.98, 0.9, 0.7, 0.1]
    assert instruction_curriculum(rewards, v, 0.5).tolist() == [True, True, False, False, True, False]
    assert instruction_curriculum(rewards, v, 0.5, keep_successes=True).tolist() == [True, True, True, False, True, False]
    # with few successes the top half already holds them all: the same cut either way
    rewards, v = [1, 0, 0, 0], [0.2, 0.1, 0.5, 0.8]
    paper = instruction_curriculum(rewards, v, 0.5)
    assert paper.tolist() == [True, True, False, False]
    assert instruction_curriculum(rewards, v, 0.5, keep_successes=True).tolist() == paper.tolist()


def test_filtered_bc_keep_top_quantile_successes_only():
    # quantile .9 of [0,1,0,1,1] is 1 → keep the three successes
    assert filtered_bc_keep([0, 1, 0, 1, 1], 0.9).tolist() == [False, True, False, True, True]
    # all failures: nothing is kept even though they are "at the quantile"
    assert filtered_bc_keep([0, 0, 0], 0.9).tolist() == [False, False, False]
    assert filtered_bc_keep([0, 0, 0], 0.9, only_successful=False).tolist() == [True, True, True]


def test_awr_weights():
    w = awr_weights(np.array([0.0, 0.5, 100.0]), 0.5, max_weight=20.0)
    assert w == pytest.approx([1.0, math.e, 20.0])
    with pytest.raises(ValueError):
        awr_weights(np.array([0.0]), 0.0)


def test_value_losses():
    logits = torch.tensor([0.0, 0.0])
    y = torch.tensor([1.0, 0.0])
    assert float(bce_value_loss(logits, y)) == pytest.approx(math.log(2))
    assert float(mse_value_loss(logits, y)) == pytest.approx(0.25)
