"""The ``hf`` feature backend on tiny random VLMs built in code (no hub): features from a chosen layer,
Yes/No representation fine-tuning (full and LoRA), save/load, and the whole Digi-Q update on top."""

from __future__ import annotations

import numpy as np
import pytest

from digirl.algorithms.digiq.config import DigiQConfig, HFFeatureConfig
from digirl.algorithms.digiq.features import load_feature_backend, make_feature_backend
from digirl.core.actions import Action
from digirl.core.errors import ConfigError
from digirl.core.types import Observation

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _obs(i: int) -> Observation:
    shot = np.full((120, 60, 3), 40 * (i % 5), np.uint8)
    return Observation(shot, "open the clock app")


def _cfg(model, **hf) -> DigiQConfig:
    return DigiQConfig(features="hf", feature_batch=4, hf=HFFeatureConfig(model=str(model), device="cpu", dtype="float32", **hf))


@pytest.mark.parametrize("family", ["qwen2_vl", "llava"])
def test_features_from_a_chosen_layer(tiny_vlm, family):
    path = tiny_vlm(family)
    b = make_feature_backend(_cfg(path, layer=1), None, seed=0)
    obs = [_obs(i) for i in range(3)]
    acts = [Action.tap(0.5, 0.5), Action.scroll("up"), Action.type_text("clock")]
    f = b.action_features(obs, acts)
    phi = b.state_features(obs[:2])
    assert f.shape == (3, 64) and phi.shape == (2, 64) and np.isfinite(f).all()
    assert not np.allclose(f[0], f[1])  # the drawn action and its question change the state
    last = make_feature_backend(_cfg(path, layer=-1, pool="last"), None, seed=0).action_features(obs, acts)
    assert last.shape == (3, 64) and not np.allclose(last, f)
    with pytest.raises(ConfigError, match="hidden-state layers"):
        make_feature_backend(_cfg(path, layer=40), None, seed=0)
    with pytest.raises(ConfigError, match=r"hf\.model"):
        make_feature_backend(DigiQConfig(features="hf"), None, seed=0)


@pytest.mark.parametrize(("lora_r", "lr", "steps"), [(0, 3e-3, 40), (4, 1e-2, 80)])
def test_yes_no_fine_tuning_learns_and_round_trips(tiny_vlm, tmp_path, lora_r, lr, steps):
    path = tiny_vlm("qwen2_vl")
    b = make_feature_backend(_cfg(path, lora_r=lora_r, image_scale=1.0), None, seed=0)
    obs = [_obs(i) for i in range(40)]
    acts = [Action.back() if i % 2 else Action.home() for i in range(40)]
    labels = [bool(i % 2) for i in range(40)]  # "back" changes the screen, "home" does not: learnable from the text
    before = b.identity()
    m = b.finetune(obs, acts, labels, steps=steps, lr=lr, batch_size=8, seed=0)
    assert m["critic/repft_acc_heldout"] == 1.0 > m["critic/repft_acc_heldout_majority"]
    if lora_r == 0:  # full fine-tuning also puts the probability mass on the answer tokens
        assert m["critic/repft_loss"] < np.log(2)
    after = b.identity()
    assert after["finetuned"] and after["weights"] != before["weights"]
    b.save(tmp_path / "b")
    again = load_feature_backend(tmp_path / "b", _cfg(path, lora_r=lora_r, image_scale=1.0), None)
    assert again.identity() == after
    np.testing.assert_allclose(again.action_features(obs[:2], acts[:2]), b.action_features(obs[:2], acts[:2]), atol=1e-4)


def test_digiq_update_on_tiny_vlm_features(tiny_vlm):
    from digirl.algorithms.base import AlgoConfig
    from digirl.algorithms.registry import make_algorithm
    from digirl.envs.vector import EpisodeJob, env_factory, run_expert
    from digirl.policies.config import EncoderConfig
    from digirl.policies.default import DefaultPolicy

    fn = env_factory("digirl/sim-general-v0", perturbation=0)
    trajs = run_expert(fn, [EpisodeJob("Open the clock app", seed=i) for i in range(3)], eps=0.3, seed=0, mode="inline")
    cfg = AlgoConfig(name="digiq", offline_actor_steps=2, batch_size=4)
    cfg.digiq = _cfg(tiny_vlm("qwen2_vl"))
    cfg.digiq.candidates, cfg.digiq.repft_steps, cfg.digiq.critic_steps, cfg.digiq.critic_hidden, cfg.digiq.folds = 2, 2, 3, 16, 1
    algo = make_algorithm(DefaultPolicy(EncoderConfig(dim=16, layers=1, heads=2), seed=0), cfg, seed=0)
    m = algo.update(trajs, "offline")
    assert m["critic/repft_examples"] > 0 and np.isfinite(m["critic/q_loss"])
    assert len([a for a in algo.annotations() if a.step >= 0]) == sum(t.length for t in trajs)
