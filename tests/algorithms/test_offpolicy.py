"""Exact-number tests of the off-policy corrections in digirl.algorithms.functional (hand-computed)."""

import math

import numpy as np
import pytest

from digirl.algorithms.functional import replay_priority, truncated_importance_weights, vtrace


def test_truncated_importance_weights():
    # log ratios: +1 → e = 2.718 → truncated to 1; −1 → e^-1 = .3679; target NaN → 0; behaviour NaN → 1
    w = truncated_importance_weights([-1.0, -2.0, math.nan, -0.5], [-2.0, -1.0, -1.0, math.nan], rho_bar=1.0)
    assert w == pytest.approx([1.0, math.exp(-1), 0.0, 1.0])
    assert truncated_importance_weights([-1.0], [-2.0], rho_bar=2.0) == pytest.approx([2.0])
    assert truncated_importance_weights([-1.0], [-1.5], rho_bar=2.0) == pytest.approx([math.exp(0.5)])
    assert truncated_importance_weights([-math.inf], [-1.0]) == pytest.approx([0.0])
    assert truncated_importance_weights([0.0], [-500.0], rho_bar=3.0) == pytest.approx([3.0])  # no overflow
    with pytest.raises(ValueError, match="shapes differ"):
        truncated_importance_weights([0.0, 0.0], [0.0])
    with pytest.raises(ValueError, match="rho_bar"):
        truncated_importance_weights([0.0], [0.0], rho_bar=0.0)


def test_vtrace_off_policy_by_hand():
    # r = [0, 0, 1], V = [.2, .5, .8], terminal (bootstrap 0), ρ = [2, .5, 1], γ = λ = ρ̄ = c̄ = 1
    # ρ̂ = c = [1, .5, 1];  δ = ρ̂·(r + V' − V) = [.3, .5·.3 = .15, .2]
    # v2 = .8 + .2 = 1;  v1 = .5 + .15 + .5·(1 − .8) = .75;  v0 = .2 + .3 + 1·(.75 − .5) = .75
    # A = ρ̂·(r + v' − V) = [.75 − .2, .5·(1 − .5), 1 − .8] = [.55, .25, .2]
    out = vtrace([0, 0, 1], [0.2, 0.5, 0.8], 0.0, [2.0, 0.5, 1.0], gamma=1.0)
    assert out.vs == pytest.approx([0.75, 0.75, 1.0])
    assert out.pg_advantages == pytest.approx([0.55, 0.25, 0.2])


def test_vtrace_on_policy_is_the_bootstrapped_return():
    # ρ = 1, λ = 1: v_t is the n-step return; γ = .5, bootstrap V(s_3) = .4 (a truncated episode)
    # v2 = 0 + .5·.4 = .2;  v1 = 1 + .5·.2 = 1.1;  v0 = 0 + .5·1.1 = .55
    out = vtrace([0, 1, 0], [0.3, 0.6, 0.9], 0.4, [1.0, 1.0, 1.0], gamma=0.5)
    assert out.vs == pytest.approx([0.55, 1.1, 0.2])
    # A_t = r_t + γ v_{t+1} − V(s_t) = [.55 − .3, 1 + .1 − .6, .2 − .9]
    assert out.pg_advantages == pytest.approx([0.25, 0.5, -0.7])


def test_vtrace_lambda_cuts_the_traces():
    # λ = 0: v_t = V + δ_t only (one-step targets); ρ = 1, γ = 1, terminal
    # δ = [.5 − .2, .8 − .5, 1 − .8] → vs = [.5, .8, 1]
    out = vtrace([0, 0, 1], [0.2, 0.5, 0.8], 0.0, [1.0, 1.0, 1.0], gamma=1.0, lam=0.0)
    assert out.vs == pytest.approx([0.5, 0.8, 1.0])
    # ρ̄ truncation: ρ = [3, 3], ρ̄ = 2, c̄ = 1 → ρ̂ = 2, c = 1; r = [0, 1], V = [.5, .5], terminal
    # δ = [2·(0 + .5 − .5), 2·(1 − .5)] = [0, 1];  v1 = 1.5;  v0 = .5 + 0 + 1·(1.5 − .5) = 1.5
    out = vtrace([0, 1], [0.5, 0.5], 0.0, [3.0, 3.0], gamma=1.0, rho_bar=2.0, c_bar=1.0)
    assert out.vs == pytest.approx([1.5, 1.5])
    with pytest.raises(ValueError, match="lengths differ"):
        vtrace([0, 1], [0.5], 0.0, [1.0, 1.0], gamma=1.0)
    with pytest.raises(ValueError):
        vtrace([0], [0.5], 0.0, [1.0], gamma=1.5)


def test_replay_priority():
    # w_td·mean|δ| + w_rho·mean ρ̂ = 2·mean(.1, .3) + 1·mean(1, .5) = .4 + .75
    assert replay_priority([0.1, -0.3], [1.0, 0.5], w_td=2.0, w_rho=1.0) == pytest.approx(1.15)
    assert replay_priority([], []) == 0.0
    assert replay_priority(np.zeros(0), [0.5]) == pytest.approx(0.5)
