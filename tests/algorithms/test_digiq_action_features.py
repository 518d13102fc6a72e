"""Digi-Q's action-aware Q inputs (``algo.digiq.action_features``): exact numbers per level, the critic's
input widths, and the element level refused on a screenshot-only run."""

import numpy as np
import pytest
import torch

from digirl.algorithms.base import AlgoConfig
from digirl.algorithms.digiq.action_features import ACTION_WIDTH, ELEMENT_WIDTH, action_aware, aware_width, content_words
from digirl.algorithms.digiq.config import DigiQConfig
from digirl.algorithms.digiq.critic import DigiQCritic, action_inputs, state_inputs
from digirl.algorithms.encoder_config import CriticEncoderConfig
from digirl.algorithms.registry import make_algorithm
from digirl.core.actions import Action
from digirl.core.types import Observation, UIElement
from digirl.policies.config import EncoderConfig
from digirl.policies.default import DefaultPolicy

ELEMENTS = (
    UIElement((0.0, 0.0, 1.0, 0.1), "Search", kind="input", focused=True),
    UIElement((0.0, 0.2, 1.0, 0.3), "Weather in Paris", kind="list_item"),
    UIElement((0.0, 0.4, 0.5, 0.5), "Settings", kind="button"),
)


def _obs(elements=ELEMENTS):
    return Observation(np.zeros((8, 4, 3), dtype=np.uint8), "Search for the weather in Paris", elements=elements)


def test_content_words_drop_function_words():
    assert content_words("Search for the weather in Paris") == {"search", "weather", "paris"}


def test_widths():
    assert (aware_width("off"), aware_width("action"), aware_width("element")) == (0, 7, 19)
    assert ACTION_WIDTH + ELEMENT_WIDTH == 19


def test_off_is_empty():
    x, text = action_aware(_obs(), Action.tap(0.5, 0.25), "off")
    assert x.shape == (0,) and text == ""


def test_action_level_tap_and_typing():
    x, text = action_aware(_obs(), Action.tap(0.5, 0.25), "action")
    np.testing.assert_allclose(x, [1, 0.5, 0.25, 0, 0, 0, 0])
    assert text == ""  # the action level never reads the element list
    # "paris weather" types 2 content words, both in the instruction (3 content words)
    x, _ = action_aware(_obs(), Action.type_text("Paris weather"), "action")
    np.testing.assert_allclose(x, [0, 0, 0, 0, 1, 1.0, 2 / 3], rtol=1e-6)
    x, _ = action_aware(_obs(), Action.scroll("down"), "action")
    np.testing.assert_allclose(x, [0, 0, 0, 1, 0, 0, 0])


def test_element_level_target_overlaps_the_instruction():
    x, text = action_aware(_obs(), Action.tap(0.5, 0.25), "element")
    assert text == "Weather in Paris"
    # has target, clickable, not focused, centre (0.5, 0.25), size 1 × 0.1, its words all in the
    # instruction, 2 of the instruction's 3 content words, its text inside the instruction, the most
    # overlapping element, has text
    np.testing.assert_allclose(x[ACTION_WIDTH:], [1, 1, 0, 0.5, 0.25, 1.0, 0.1, 1.0, 2 / 3, 1, 1, 0], rtol=1e-6, atol=1e-7)
    x, text = action_aware(_obs(), Action.tap(0.25, 0.45), "element")
    assert text == "Settings"
    np.testing.assert_allclose(x[ACTION_WIDTH:], [1, 1, 0, 0.25, 0.45, 0.5, 0.1, 0, 0, 0, 0, 0], rtol=1e-6, atol=1e-7)


def test_element_level_typing_targets_the_focused_field_and_a_miss_has_none():
    x, text = action_aware(_obs(), Action.type_text("weather"), "element")
    assert text == "Search" and x[ACTION_WIDTH] == 1 and x[ACTION_WIDTH + 2] == 1  # has target, focused
    assert x[ACTION_WIDTH + 7] == 1.0  # "search" is in the instruction
    x, text = action_aware(_obs(), Action.tap(0.9, 0.9), "element")
    assert text == "" and not x[ACTION_WIDTH:].any()
    x, text = action_aware(_obs(elements=None), Action.tap(0.5, 0.25), "element")
    assert text == "" and not x[ACTION_WIDTH:].any()


def test_critic_inputs_carry_the_features_and_score():
    obs, acts = [_obs(), _obs()], [Action.tap(0.5, 0.25), Action.type_text("weather")]
    f = np.ones((2, 4), dtype=np.float32)
    kind, text, fx = action_inputs(obs, acts, f, torch.device("cpu"))
    assert text.shape == (2, 8) and fx.shape == (2, 4)
    kind, text, fx = action_inputs(obs, acts, f, torch.device("cpu"), "element")
    assert text.shape == (2, 16) and fx.shape == (2, 4 + 19)
    assert (text[0, :8] == 0).all() and (text[0, 8:11] > 0).all()  # no typed text; "Weather in Paris"
    cfg = DigiQConfig(critic_hidden=8, action_features="element")
    critic = DigiQCritic(3, fx.shape[1], cfg, gamma=0.9, device=torch.device("cpu"))
    x = state_inputs(obs, np.zeros((2, 3), dtype=np.float32), torch.device("cpu")).with_action(kind, text, fx)
    q = critic.q_of(x)
    assert q.shape == (2,) and ((q > 0) & (q < 1)).all()


def test_element_level_needs_the_element_list():
    cfg = AlgoConfig(name="digiq")
    cfg.digiq = DigiQConfig(action_features="element", encoder=CriticEncoderConfig(use_elements=False))
    with pytest.raises(ValueError, match="reads the UI element list"):
        make_algorithm(DefaultPolicy(EncoderConfig(dim=16, layers=1, heads=2), seed=0), cfg)
    cfg.digiq = DigiQConfig(action_features="action", encoder=CriticEncoderConfig(use_elements=False))
    make_algorithm(DefaultPolicy(EncoderConfig(dim=16, layers=1, heads=2), seed=0), cfg)


def test_update_with_element_features_and_extract_matches_best_of_n():
    from digirl.algorithms.digiq.functional import best_of_n
    from digirl.envs.vector import EpisodeJob, env_factory, run_expert

    fn = env_factory("digirl/sim-general-v0", perturbation=0)
    trajs = run_expert(fn, [EpisodeJob("Open the clock app", seed=i) for i in range(4)], eps=0.3, seed=0, mode="inline")
    cfg = AlgoConfig(name="digiq", offline_actor_steps=2, batch_size=8)
    cfg.digiq = DigiQConfig(candidates=3, repft_steps=2, critic_steps=3, critic_hidden=16, folds=2, action_features="element")
    algo = make_algorithm(DefaultPolicy(EncoderConfig(dim=16, layers=1, heads=2), seed=0), cfg, seed=0)
    c = algo.critique(trajs)
    assert c is not None and c.q.shape == (sum(t.length for t in trajs), c.q.shape[1]) and c.v.shape == (c.q.shape[0],)
    _d_phi, d_f = algo.critics[0].dims
    assert d_f == c.table.pair_inputs.f.shape[1] and c.table.pair_inputs.text.shape[1] == 16
    # extract is best_of_n over the first k candidates with the config's δ and margin
    algo.dq.extract_candidates, algo.dq.delta, algo.dq.margin = 2, 0.0, 0.05
    valid = c.valid.copy()
    valid[:, 2:] = False
    want = best_of_n(c.q, c.v, valid, 0.0, margin=0.05)
    for got, w in zip(algo.extract(c), want):
        np.testing.assert_array_equal(got, w)
    assert "train/actor_samples" in algo.update(trajs, "offline")
