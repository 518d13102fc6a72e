"""Exact-number tests of Digi-Q's pure functions (values computed by hand in the comments)."""

import numpy as np
import pytest
import torch

from digirl.algorithms.digiq.functional import (
    action_key,
    best_of_n,
    dedupe_candidates,
    pixel_change,
    polyak_update,
    reduce_twins,
    td_target_q,
    td_target_v,
    value_loss,
)
from digirl.core.actions import Action
from digirl.core.types import UIElement


def test_td_target_q_masks_done_and_discounts():
    # y = r + γ(1 − done)V̄(s′), γ = 0.9:
    #   r=0, not done, V̄=.5 → .45;  r=1, done, V̄=.8 → 1 (no bootstrap);  r=0, done → 0;  r=.5, V̄=1 → 1.4
    r = torch.tensor([0.0, 1.0, 0.0, 0.5])
    done = torch.tensor([0.0, 1.0, 1.0, 0.0])
    nv = torch.tensor([0.5, 0.8, 0.7, 1.0])
    assert td_target_q(r, done, nv, 0.9).tolist() == pytest.approx([0.45, 1.0, 0.0, 1.4])
    # γ = 0: only the reward; γ = 1: r + V̄
    assert td_target_q(r, done, nv, 0.0).tolist() == pytest.approx([0.0, 1.0, 0.0, 0.5])
    assert td_target_q(r, done, nv, 1.0).tolist() == pytest.approx([0.5, 1.0, 0.0, 1.5])
    # a boolean done mask works the same
    assert td_target_q(r, done.bool(), nv, 0.9).tolist() == pytest.approx([0.45, 1.0, 0.0, 1.4])
    with pytest.raises(ValueError):
        td_target_q(r, done, nv, 1.5)


def test_td_target_v_is_the_in_sample_q():
    q = torch.tensor([0.3, 0.7])
    assert torch.equal(td_target_v(q), q)


def test_reduce_twins():
    x = torch.tensor([[0.2, 0.9], [0.4, 0.5]])
    assert reduce_twins(x, "min").tolist() == pytest.approx([0.2, 0.5])
    assert reduce_twins(x, "max").tolist() == pytest.approx([0.4, 0.9])
    assert reduce_twins(x, "mean").tolist() == pytest.approx([0.3, 0.7])
    with pytest.raises(ValueError):
        reduce_twins(x, "median")  # type: ignore[arg-type]


def test_polyak_update():
    # θ̄ ← τθ + (1 − τ)θ̄ with τ = 0.1: 0.1·10 + 0.9·0 = 1, then 0.1·10 + 0.9·1 = 1.9
    target = [torch.zeros(2), torch.tensor([5.0])]
    online = [torch.full((2,), 10.0), torch.tensor([-5.0])]
    polyak_update(target, online, 0.1)
    assert target[0].tolist() == pytest.approx([1.0, 1.0])
    assert target[1].tolist() == pytest.approx([0.1 * -5 + 0.9 * 5])  # 4.0
    polyak_update(target, online, 0.1)
    assert target[0].tolist() == pytest.approx([1.9, 1.9])
    polyak_update(target, online, 1.0)  # τ = 1 copies
    assert target[0].tolist() == [10.0, 10.0]
    # works on module parameters and never touches the online copy's graph
    a, b = torch.nn.Linear(2, 1), torch.nn.Linear(2, 1)
    polyak_update(a.parameters(), b.parameters(), 0.5)
    assert a.weight.grad is None
    with pytest.raises(ValueError):
        polyak_update(target, online, 1.5)
    with pytest.raises(ValueError):
        polyak_update(target, online[:1], 0.1)  # mismatched parameter lists


def test_value_loss_mse_and_ce():
    logits = torch.tensor([0.0, 0.0])  # σ = .5
    y = torch.tensor([1.0, 0.0])
    assert float(value_loss(logits, y, "mse")) == pytest.approx(0.25)
    assert float(value_loss(logits, y, "ce")) == pytest.approx(np.log(2))
    # soft targets, out-of-range targets are clamped into [0, 1]
    assert float(value_loss(torch.tensor([0.0]), torch.tensor([1.4]), "mse")) == pytest.approx(0.25)


def test_best_of_n_picks_the_largest_advantage_above_delta():
    # state 0: V = .5, Q = [.55, .8, .6] → A = [.05, .3, .1] → j* = 1, clamp(.3) > .1 → kept
    # state 1: V = .5, Q = [.58, .55, .52] → A = [.08, .05, .02] → j* = 0, .08 ≤ .1 → dropped
    q = [[0.55, 0.8, 0.6], [0.58, 0.55, 0.52]]
    v = [0.5, 0.5]
    valid = np.ones((2, 3), bool)
    chosen, adv, keep = best_of_n(q, v, valid, 0.1)
    assert chosen.tolist() == [1, 0]
    np.testing.assert_allclose(adv, [[0.05, 0.3, 0.1], [0.08, 0.05, 0.02]])
    assert keep.tolist() == [True, False]
    # δ = 0.05 keeps state 1 too (strictly greater: .08 > .05)
    assert best_of_n(q, v, valid, 0.05)[2].tolist() == [True, True]
    # δ exactly equal to the best advantage: not kept (strict)
    assert best_of_n([[0.75]], [0.5], [[True]], 0.25)[2].tolist() == [False]


def test_best_of_n_invalid_candidates_get_zero_advantage():
    # Q of the invalid candidate is huge but it counts as A = 0; the others are negative
    # A = [−.1, 0 (invalid), −.2] → argmax is the invalid one with A = 0 → never kept (0 ≤ δ)
    q = [[0.4, 0.99, 0.3]]
    valid = [[True, False, True]]
    chosen, adv, keep = best_of_n(q, [0.5], valid, 0.0)
    np.testing.assert_allclose(adv, [[-0.1, 0.0, -0.2]], atol=1e-12)
    assert chosen.tolist() == [1] and keep.tolist() == [False]
    # with a positive valid candidate, it wins over the invalid one
    chosen, _, keep = best_of_n([[0.7, 0.99]], [0.5], [[True, False]], 0.1)
    assert chosen.tolist() == [0] and keep.tolist() == [True]


def test_best_of_n_ties_go_to_the_dataset_action():
    # A = [.3, .3, .3]: the first maximum (candidate 0, the dataset action) wins
    chosen, _, keep = best_of_n([[0.8, 0.8, 0.8]], [0.5], np.ones((1, 3), bool), 0.1)
    assert chosen.tolist() == [0] and keep.tolist() == [True]
    # a tie between proposals 1 and 2 above the dataset action: the lower index
    assert best_of_n([[0.6, 0.9, 0.9]], [0.5], np.ones((1, 3), bool), 0.1)[0].tolist() == [1]


def test_best_of_n_clamps_only_the_weight_decision():
    # A = 1.5 (Q > 1 from an unbounded head) is clamped to 1 for the decision; the advantage is reported as is
    _, adv, keep = best_of_n([[2.0]], [0.5], [[True]], 0.1)
    assert adv[0, 0] == pytest.approx(1.5) and keep.tolist() == [True]


def test_best_of_n_forced_dataset_action_n1_ablation():
    # the N = 1 ablation considers candidate 0 only, however good the proposals look
    q = [[0.7, 0.99], [0.55, 0.99]]
    chosen, _, keep = best_of_n(q, [0.5, 0.5], np.ones((2, 2), bool), 0.1, use_candidates=False)
    assert chosen.tolist() == [0, 0]
    assert keep.tolist() == [True, False]  # A = .2 > .1; A = .05 ≤ .1


def test_best_of_n_validates():
    with pytest.raises(ValueError):
        best_of_n([[0.5]], [0.5, 0.5], [[True]], 0.1)
    with pytest.raises(ValueError):
        best_of_n([[0.5]], [0.5], [[True]], -0.1)
    with pytest.raises(ValueError):
        best_of_n(np.zeros((1, 0)), [0.5], np.zeros((1, 0), bool), 0.1)


ELEMENTS = (
    UIElement((0.0, 0.0, 1.0, 0.5), "list", kind="view"),
    UIElement((0.1, 0.1, 0.4, 0.2), "Settings", kind="button"),
)


def test_action_key_identifies_the_same_choice():
    # two taps on the same (smallest) element are one choice; a tap on the big element elsewhere is another
    assert action_key(Action.tap(0.15, 0.12), ELEMENTS) == action_key(Action.tap(0.35, 0.18), ELEMENTS) == ("tap_element", 1)
    assert action_key(Action.tap(0.8, 0.3), ELEMENTS) == ("tap_element", 0)
    assert action_key(Action.tap(0.8, 0.9), ELEMENTS) == ("tap", 0.8, 0.9)
    assert action_key(Action.scroll("up"), ELEMENTS) == action_key(Action.scroll("up", center=(0.3, 0.6)), ELEMENTS)
    assert action_key(Action.type_text("Hello  World")) == action_key(Action.type_text("hello world"))
    assert action_key(Action.back()) != action_key(Action.home())


def test_dedupe_candidates_keeps_the_dataset_action_first_and_once():
    data = Action.tap(0.2, 0.15)  # on "Settings"
    proposals = [
        Action.tap(0.3, 0.12),  # same element as the dataset action: dropped
        Action.back(),
        Action.invalid("garbage"),  # invalid: dropped
        Action.back(),  # duplicate: dropped
        Action.scroll("up"),
        Action.home(),
    ]
    out = dedupe_candidates(data, proposals, 4, ELEMENTS)
    assert out == [data, Action.back(), Action.scroll("up"), Action.home()]
    # fewer unique proposals than N−1: fewer candidates, never padding with repeats
    assert dedupe_candidates(data, [Action.back(), Action.back()], 16, ELEMENTS) == [data, Action.back()]
    # N = 1: the dataset action only; an invalid dataset action stays candidate 0
    assert dedupe_candidates(data, proposals, 1, ELEMENTS) == [data]
    bad = Action.invalid("x")
    assert dedupe_candidates(bad, [Action.back()], 2) == [bad, Action.back()]
    with pytest.raises(ValueError):
        dedupe_candidates(data, proposals, 0)


def test_pixel_change():
    a = np.zeros((8, 8, 3), np.uint8)
    b = a.copy()
    assert pixel_change(a, b) == 0.0
    # full-resolution: every pixel +10 → MSE 100
    assert pixel_change(a, a + 10, scale=1.0) == pytest.approx(100.0)
    # a uniform change survives downscaling exactly
    assert pixel_change(a, a + 10) == pytest.approx(100.0)
    assert pixel_change(a, np.zeros((4, 8, 3), np.uint8)) == float("inf")


def test_best_of_n_margin_keeps_the_dataset_action_unless_clearly_beaten():
    # A = [.15, .2, .4]: with margin .1 the proposal at .2 does not beat .15 by more than .1, the one at .4 does
    q = [[0.65, 0.7, 0.9], [0.65, 0.7, 0.6]]
    v = [0.5, 0.5]
    ok = np.ones((2, 3), bool)
    assert best_of_n(q, v, ok, 0.1)[0].tolist() == [2, 1]  # released rule: plain argmax
    chosen, _, keep = best_of_n(q, v, ok, 0.1, margin=0.1)
    assert chosen.tolist() == [2, 0] and keep.tolist() == [True, True]
    # an invalid dataset action never holds a proposal back
    chosen, _, keep = best_of_n([[0.0, 0.7]], [0.5], [[False, True]], 0.1, margin=0.5)
    assert chosen.tolist() == [1] and keep.tolist() == [True]
    with pytest.raises(ValueError):
        best_of_n(q, v, ok, 0.1, margin=-0.1)


def test_best_of_n_fallback_uses_proposals_only_where_the_dataset_action_is_not_kept():
    # A = [.15, .4] (kept dataset action), [-.2, .3] (bad one), [0, .25] (invalid one), [.05, .08] (nothing > δ)
    q = [[0.65, 0.9], [0.3, 0.8], [0.0, 0.75], [0.55, 0.58]]
    v = [0.5, 0.5, 0.5, 0.5]
    ok = np.array([[True, True], [True, True], [False, True], [True, True]])
    assert best_of_n(q, v, ok, 0.1)[0].tolist() == [1, 1, 1, 1]  # released rule: plain argmax
    chosen, adv, keep = best_of_n(q, v, ok, 0.1, fallback=True)
    assert chosen.tolist() == [0, 1, 1, 1]
    assert keep.tolist() == [True, True, True, False]
    assert adv[1].tolist() == pytest.approx([-0.2, 0.3])
