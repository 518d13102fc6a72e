"""The feature seam: drawing the action, the encoder backend (features, fine-tuning, save/load), the registry."""

import numpy as np
import pytest

from digirl.algorithms.digiq.config import DigiQConfig
from digirl.algorithms.digiq.features import (
    action_text,
    draw_action,
    feature_backend_names,
    load_feature_backend,
    make_feature_backend,
    question,
)
from digirl.core.actions import Action
from digirl.core.errors import ConfigError
from digirl.core.types import Observation, UIElement
from digirl.policies.config import EncoderConfig
from digirl.policies.default import DefaultPolicy

SMALL = EncoderConfig(dim=16, layers=1, heads=2)


def _obs(color: int = 200, elements=()) -> Observation:
    return Observation(np.full((60, 30, 3), color, np.uint8), "open the clock app", elements=tuple(elements))


def test_draw_action_marks_taps_and_swipes_only():
    base = np.full((100, 50, 3), 255, np.uint8)
    tap = draw_action(base, Action.tap(0.5, 0.5))
    assert tap[50, 25].tolist() == [230, 20, 20]  # the cursor's red centre at the tap point
    assert tap[2, 2].tolist() == [255, 255, 255]  # far away: untouched
    swipe = draw_action(base, Action.swipe((0.5, 0.8), (0.5, 0.2)))
    assert (swipe[:, 22:28] == [230, 20, 20]).all(-1).any(1).sum() > 50  # a red line along the swipe
    assert np.array_equal(draw_action(base, Action.back()), base)
    assert base.min() == 255  # the input is never modified


def test_prompts_name_the_action():
    assert action_text(Action.tap(0.25, 0.5)) == "tap at (0.25, 0.50)"
    assert action_text(Action.scroll("up")) == "swipe up"
    assert action_text(Action.type_text("hi")) == "type hi"
    q = question(Action.type_text("pizza"), "find pizza")
    assert "pizza" in q and q.endswith("Answer with Yes or No only.") and q.startswith("Task: find pizza")


def test_registry_rejects_unknown_backends():
    assert {"encoder", "hf"} <= set(feature_backend_names())
    with pytest.raises(ConfigError):
        make_feature_backend(DigiQConfig(features="nope"), None, seed=0)


def test_encoder_backend_starts_from_the_policy_and_fine_tunes(tmp_path):
    policy = DefaultPolicy(SMALL, seed=0)
    b = make_feature_backend(DigiQConfig(), policy, seed=0)
    assert b.name == "encoder" and b.identity()["init"] == "policy"
    w_policy = policy.net.encoder.state_dict()["word.weight"]
    assert b.net.encoder.state_dict()["word.weight"].equal(w_policy)
    els = [UIElement((0.0, 0.0, 1.0, 0.5), "Clock", kind="button"), UIElement((0.0, 0.5, 1.0, 1.0), "", kind="view")]
    obs = [_obs(elements=els) for _ in range(40)]
    # label: taps on the top half ("Clock") change the screen, taps on the bottom half do not
    acts = [Action.tap(0.5, 0.25) if i % 2 else Action.tap(0.5, 0.75) for i in range(40)]
    labels = [bool(i % 2) for i in range(40)]
    f = b.action_features(obs[:3], acts[:3])
    phi = b.state_features(obs[:2])
    assert f.shape == (3, 32) and phi.shape == (2, 16) and f.dtype == np.float32
    before = b.identity()["weights"]
    m = b.finetune(obs, acts, labels, steps=60, lr=3e-3, batch_size=16, seed=0)
    assert m["critic/repft_acc_heldout"] == 1.0 and m["critic/repft_examples"] == 40
    assert b.identity()["weights"] != before and b.identity()["finetuned"]
    b.save(tmp_path / "b")
    again = load_feature_backend(tmp_path / "b", DigiQConfig(), policy)
    assert again.identity() == b.identity()
    np.testing.assert_allclose(again.action_features(obs[:3], acts[:3]), b.action_features(obs[:3], acts[:3]), atol=1e-6)


def test_encoder_backend_random_init_differs_by_seed():
    policy = DefaultPolicy(SMALL, seed=0)
    a = make_feature_backend(DigiQConfig(encoder_init="random"), policy, seed=1)
    b = make_feature_backend(DigiQConfig(encoder_init="random"), policy, seed=2)
    assert a.identity()["init"] == "random" and a.identity()["weights"] != b.identity()["weights"]
