"""kind=autoui on tiny models built in code: checkpoint names, acting, scoring, save/load, features, errors."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
pytest.importorskip("transformers")
import torch

from digirl.config.core import load_config
from digirl.core.actions import MAX_TEXT_LEN, Action, ActionType
from digirl.core.codecs import format_action
from digirl.core.errors import ConfigError, DataError
from digirl.core.types import Observation
from digirl.envs.toy import ToyEnv
from digirl.policies.autoui import AutoUIPolicy
from digirl.policies.autoui_features import screenshot_key, write_feature_file
from digirl.policies.base import Policy, is_trainable
from digirl.policies.config import PolicyConfig
from digirl.policies.registry import build_policy, load_policy
from digirl.testing.tiny_autoui import build_tiny_autoui, build_tiny_blip2

D_MODEL, IMAGE_DIM = 32, 24


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("autoui")
    return {
        "model": build_tiny_autoui(root / "autoui", image_dim=IMAGE_DIM, d_model=D_MODEL),
        "blip": build_tiny_blip2(root / "blip2", hidden=IMAGE_DIM),
        "root": root,
    }


def policy(tiny: dict[str, Path], *overrides: str, init: Path | None = None) -> Any:
    cfg = load_config(
        PolicyConfig,
        overrides=[
            "kind=autoui",
            f"init={init or tiny['model']}",
            f"autoui.vision_encoder={tiny['blip']}",
            "device=cpu",
            *overrides,
        ],
    )
    return build_policy(cfg, seed=0)


def observations(n: int = 4) -> list[Observation]:
    """``n`` toy observations with distinct screenshots and prompts of different lengths."""
    env = ToyEnv(mode="mixed")
    obs: list[Observation] = []
    seen: set[str] = set()
    seed = 0
    while len(obs) < n:
        o = env.reset(seed=seed)[0]
        seed += 1
        if screenshot_key(o.screenshot) in seen:
            continue
        seen.add(screenshot_key(o.screenshot))
        o.history = (Action.tap(0.2, 0.3),) * (len(obs) % 3)
        obs.append(o)
    return obs


ACTIONS = [Action.tap(0.5, 0.25), Action.type_text("hello"), Action(ActionType.PRESS_ENTER), Action.swipe((0.5, 0.8), (0.5, 0.2))]


# --------------------------------------------------------------------------- checkpoint layout
def _auto_ui_base_state_dict(vocab: int) -> dict[str, torch.Tensor]:
    """A state dict written by hand with Auto-UI-Base's parameter names (not produced by our class)."""
    d, heads, dkv, dff, buckets, layers = D_MODEL, 4, D_MODEL // 4, 2 * D_MODEL, 8, 2
    g = torch.Generator().manual_seed(7)

    def r(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g) * 0.1

    sd = {"shared.weight": r(vocab, d), "lm_head.weight": r(vocab, d)}
    for stack in ("encoder", "decoder"):
        for i in range(layers):
            b = f"{stack}.block.{i}.layer"
            attn = ["SelfAttention", "EncDecAttention"] if stack == "decoder" else ["SelfAttention"]
            for j, name in enumerate(attn):
                for w in "qkvo":
                    sd[f"{b}.{j}.{name}.{w}.weight"] = r(heads * dkv, d)
                sd[f"{b}.{j}.layer_norm.weight"] = 1 + r(d)
            if i == 0:
                sd[f"{b}.0.SelfAttention.relative_attention_bias.weight"] = r(buckets, heads)
            ff = len(attn)
            sd[f"{b}.{ff}.DenseReluDense.wi_0.weight"] = r(dff, d)
            sd[f"{b}.{ff}.DenseReluDense.wi_1.weight"] = r(dff, d)
            sd[f"{b}.{ff}.DenseReluDense.wo.weight"] = r(d, dff)
            sd[f"{b}.{ff}.layer_norm.weight"] = 1 + r(d)
        sd[f"{stack}.final_layer_norm.weight"] = 1 + r(d)
    sd |= {
        "image_dense.weight": r(d, IMAGE_DIM),
        "image_dense.bias": r(d),
        "mha_layer.in_proj_weight": r(3 * d, d),
        "mha_layer.in_proj_bias": r(3 * d),
        "mha_layer.out_proj.weight": r(d, d),
        "mha_layer.out_proj.bias": r(d),
        "gate_dense.weight": r(d, 2 * d),
        "gate_dense.bias": r(d),
    }
    return sd


@pytest.mark.parametrize("prefix", ["", "model."])
def test_an_auto_ui_base_checkpoint_loads_by_its_parameter_names(tiny: dict[str, Path], tmp_path: Path, prefix: str) -> None:
    folder = tmp_path / "Auto-UI-Base"
    shutil.copytree(tiny["model"], folder)
    (folder / "model.safetensors").unlink()
    vocab = json.loads((folder / "config.json").read_text())["vocab_size"]
    sd = _auto_ui_base_state_dict(vocab)
    legacy = "decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight"  # old T5 checkpoints carry it
    extra = {legacy: torch.zeros(8, 4), "critic.head.weight": torch.zeros(2, 2)} if prefix else {legacy: torch.zeros(8, 4)}
    # the format released Auto-UI-Base ships (a pickled state dict, read with weights_only=True); a DigiRL
    # agent checkpoint wraps the model under a prefix next to other modules
    torch.save({prefix + k: v for k, v in sd.items()} | extra, folder / "pytorch_model.bin")
    p = policy(tiny, init=folder)
    got = p.model.state_dict()
    for k, v in sd.items():
        torch.testing.assert_close(got[k].float(), v, rtol=0, atol=0, msg=k)
    assert p.model.lm_head.weight is not p.model.shared.weight  # a separate lm_head stays separate
    assert p.cfg.image_dim == IMAGE_DIM
    lp, ok = p.log_prob_with_mask(observations(2), ACTIONS[:2])
    assert torch.isfinite(lp).all() and ok.all()


def test_checkpoint_names_and_shapes(tiny: dict[str, Path]) -> None:
    p = policy(tiny)
    shapes = {k: tuple(v.shape) for k, v in p.model.state_dict().items()}
    d = D_MODEL
    assert shapes["image_dense.weight"] == (d, IMAGE_DIM) and shapes["image_dense.bias"] == (d,)
    assert shapes["mha_layer.in_proj_weight"] == (3 * d, d) and shapes["mha_layer.in_proj_bias"] == (3 * d,)
    assert shapes["mha_layer.out_proj.weight"] == (d, d) and shapes["mha_layer.out_proj.bias"] == (d,)
    assert shapes["gate_dense.weight"] == (d, 2 * d) and shapes["gate_dense.bias"] == (d,)
    for k in (
        "shared.weight",
        "lm_head.weight",
        "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
        "encoder.block.1.layer.1.DenseReluDense.wi_1.weight",
        "decoder.block.1.layer.1.EncDecAttention.k.weight",
        "decoder.block.0.layer.2.DenseReluDense.wo.weight",
        "decoder.final_layer_norm.weight",
    ):
        assert k in shapes


# --------------------------------------------------------------------------- the Policy protocol
def test_acting_never_crashes_and_respects_the_token_cap(tiny: dict[str, Path]) -> None:
    p = policy(tiny, "autoui.max_new_tokens=12")
    assert isinstance(p, AutoUIPolicy) and isinstance(p, Policy) and is_trainable(p)
    obs = observations(5)
    generated: list[int] = []
    generate = p.model.generate

    def spy(**kw: Any) -> Any:
        out = generate(**kw)
        generated.append(out.sequences.shape[1] - 1)  # without the decoder start token
        return out

    p.model.generate = spy
    out = p.act(obs, greedy=True)
    assert len(out) == 5 and generated == [12]  # the untrained model never stops by itself: capped
    for o in out:  # ...and writes garbage: INVALID actions carrying their raw text
        assert o.action.type is ActionType.INVALID and o.action.text == o.text and np.isfinite(o.log_prob)
    assert [o.text for o in p.act(obs, greedy=True)] == [o.text for o in out]  # greedy is deterministic
    sampled = p.act(obs, temperature=1.0)
    assert len(sampled) == 5 and all(np.isfinite(o.log_prob) for o in sampled)
    assert p.act([]) == []


def test_batched_log_prob_equals_per_sample(tiny: dict[str, Path]) -> None:
    p = policy(tiny, "autoui.max_new_tokens=96")
    p.train(False)
    obs = observations(6)
    acts = [*ACTIONS, Action.invalid("garbage", "no action_type"), Action.type_text("x" * MAX_TEXT_LEN)]
    lp, ok = p.log_prob_with_mask(obs, acts)
    assert ok.tolist() == [True, True, True, True, False, False]  # INVALID; too long for max_new_tokens
    single = torch.cat([p.log_prob_with_mask([o], [a])[0] for o, a in zip(obs, acts)])
    torch.testing.assert_close(lp, single, rtol=1e-6, atol=1e-5)
    p.model.double()  # in float64 the only difference left would be padding leaking into the values
    lp64 = p.log_prob_with_mask(obs, acts)[0]
    single64 = torch.cat([p.log_prob_with_mask([o], [a])[0] for o, a in zip(obs, acts)])
    assert (lp64 - single64).abs().max() < 1e-9
    nan = p.log_prob(obs[:5], acts[:5])
    assert torch.isnan(nan[4]) and torch.isfinite(nan[:4]).all()
    # differentiable in the policy's parameters
    p.model.float()
    lp, ok = p.log_prob_with_mask(obs[:2], acts[:2])
    lp.sum().backward()
    assert p.model.image_dense.weight.grad is not None and p.model.shared.weight.grad is not None


def test_log_prob_scores_the_canonical_auto_ui_text(tiny: dict[str, Path]) -> None:
    p = policy(tiny)
    p.train(False)
    o = observations(1)
    a = Action.tap(0.5, 0.25)
    ids = p.tokenizer(format_action(a, "autoui"))["input_ids"]
    assert ids[-1] == p.eos_id
    labels = torch.tensor([ids])
    enc, mask = p._encode(o)
    dec_in = torch.cat([torch.tensor([[p.start_id]]), labels[:, :-1]], 1)
    logits = p.model(encoder_outputs=enc, attention_mask=mask, decoder_input_ids=dec_in).logits
    want = torch.log_softmax(logits, -1)[0, torch.arange(len(ids)), labels[0]].sum()
    torch.testing.assert_close(p.log_prob(o, [a])[0], want)


def test_save_then_load_gives_identical_log_probs_and_actions(tiny: dict[str, Path], tmp_path: Path) -> None:
    p = policy(tiny, "autoui.history_len=2")
    p.train(False)
    obs = observations(4)
    lp = p.log_prob(obs, ACTIONS)
    p.save(tmp_path / "pol")
    files = {f.name for f in (tmp_path / "pol").iterdir()}
    assert {"policy.json", "config.json", "model.safetensors", "tokenizer.json"} <= files
    from safetensors import safe_open

    with safe_open(str(tmp_path / "pol" / "model.safetensors"), "pt") as f:
        keys = set(f.keys())
    assert "image_dense.weight" in keys and "lm_head.weight" in keys and "encoder.embed_tokens.weight" not in keys
    q = load_policy(tmp_path / "pol")
    assert isinstance(q, AutoUIPolicy) and q.cfg.history_len == 2
    q.train(False)
    torch.testing.assert_close(q.log_prob(obs, ACTIONS), lp, rtol=0, atol=0)
    assert [o.text for o in q.act(obs, greedy=True)] == [o.text for o in p.act(obs, greedy=True)]
    # run-time options given on the command line override the saved ones
    cfg = load_config(PolicyConfig, overrides=[f"init={tmp_path / 'pol'}", "autoui.max_new_tokens=7"])
    r = build_policy(cfg, seed=0)
    assert isinstance(r, AutoUIPolicy) and r.cfg.max_new_tokens == 7 and r.cfg.history_len == 2


# --------------------------------------------------------------------------- image features
def test_precomputed_features_replace_the_vision_encoder(tiny: dict[str, Path], tmp_path: Path) -> None:
    p = policy(tiny)
    p.train(False)
    obs = observations(4)
    feats = p.features([o.screenshot for o in obs])  # [B, 1, D] from the BLIP-2 tower
    assert feats.shape == (4, 1, IMAGE_DIM)
    # legacy datasets stack [previous, current]: the current screen's values are the last image_dim
    stacked = [np.concatenate([np.zeros(IMAGE_DIM, np.float32), f[0].numpy()]) for f in feats]
    path = tmp_path / "features.safetensors"
    assert write_feature_file(path, zip([o.screenshot for o in obs], stacked), image_dim=IMAGE_DIM) == 4
    q = policy(tiny, f"autoui.features={path}", "autoui.vision_encoder=null")
    q.train(False)
    torch.testing.assert_close(q.log_prob(obs, ACTIONS), p.log_prob(obs, ACTIONS))
    assert q.features.counts["file_hits"] == 4
    unseen = observations(6)[5]
    with pytest.raises(DataError, match="no features for 1 screenshot"):
        q.act([unseen])
    # with both, the file is read first and the encoder fills the gaps
    both = policy(tiny, f"autoui.features={path}")
    both.log_prob([*obs, unseen], [*ACTIONS, ACTIONS[0]])
    assert both.features.counts == {"cache_hits": 0, "file_hits": 4, "computed": 1}
    both.log_prob([unseen], [ACTIONS[0]])
    assert both.features.counts["cache_hits"] == 1
    assert screenshot_key(obs[0].screenshot) != screenshot_key(unseen.screenshot)


def test_patch_tokens_and_a_bare_vision_model_folder(tiny: dict[str, Path]) -> None:
    bare = build_tiny_blip2(tiny["root"] / "bare", hidden=IMAGE_DIM, full=False)
    p = policy(tiny, f"autoui.vision_encoder={bare}", "autoui.image_tokens=patches")
    obs = observations(2)
    assert p.features([o.screenshot for o in obs]).shape == (2, 5, IMAGE_DIM)  # class token + 2x2 patches
    assert torch.isfinite(p.log_prob(obs, ACTIONS[:2])).all()


def test_a_plain_t5_gets_fresh_fusion_layers(tiny: dict[str, Path], caplog: pytest.LogCaptureFixture) -> None:
    plain = build_tiny_autoui(tiny["root"] / "flan", image_dim=IMAGE_DIM, fusion=False, weights="bin")
    p = policy(tiny, f"autoui.image_dim={IMAGE_DIM}", init=plain)
    assert "start fresh" in caplog.text and p.model.image_dense.weight.shape == (D_MODEL, IMAGE_DIM)
    assert torch.isfinite(p.log_prob(observations(2), ACTIONS[:2])).all()


def test_a_folder_with_only_a_sentencepiece_model(tiny: dict[str, Path]) -> None:
    pytest.importorskip("sentencepiece")
    pytest.importorskip("google.protobuf")
    folder = build_tiny_autoui(tiny["root"] / "spiece", image_dim=IMAGE_DIM, tokenizer="spiece")
    assert (folder / "spiece.model").is_file() and not (folder / "tokenizer.json").exists()
    p = policy(tiny, init=folder)
    lp, ok = p.log_prob_with_mask(observations(2), [ACTIONS[0], Action.type_text("héllo")])
    assert ok.tolist() == [True, False]  # "é" is outside this vocabulary: the text does not survive
    assert torch.isfinite(lp).all() and len(p.act(observations(2), greedy=True)) == 2


# --------------------------------------------------------------------------- clear errors
def test_clear_errors(tiny: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"needs policy\.init=DIR.*config\.json.*model\.safetensors.*tokenizer\.json"):
        build_policy(load_config(PolicyConfig, overrides=["kind=autoui"]), seed=0)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match=r"missing config\.json.*weights \(one of model\.safetensors.*a tokenizer"):
        policy(tiny, init=empty)
    with pytest.raises(ConfigError, match="needs image features"):
        policy(tiny, "autoui.vision_encoder=null")
    small = build_tiny_blip2(tmp_path / "blip16", hidden=16)
    with pytest.raises(ConfigError, match="gives 16-d features but the model's image_dense takes 24"):
        policy(tiny, f"autoui.vision_encoder={small}")
    broken = tmp_path / "broken"
    shutil.copytree(tiny["model"], broken)
    (broken / "model.safetensors").write_bytes(b"\x00" * 32)
    with pytest.raises(DataError, match="corrupt or unreadable weights"):
        policy(tiny, init=broken)
    (broken / "model.safetensors").unlink()
    torch.save({"shared.weight": torch.zeros(2, 2), "obj": _NotATensor()}, broken / "pytorch_model.bin")
    with pytest.raises(DataError, match="corrupt or unreadable weights"):  # weights_only refuses objects
        policy(tiny, init=broken)
    cfg = json.loads((tiny["model"] / "config.json").read_text())
    bert = tmp_path / "bert"
    shutil.copytree(tiny["model"], bert)
    (bert / "config.json").write_text(json.dumps(cfg | {"model_type": "bert"}))
    with pytest.raises(DataError, match="is not 't5'"):
        policy(tiny, init=bert)
    wrong = tmp_path / "wrong"
    shutil.copytree(tiny["model"], wrong)
    (wrong / "config.json").write_text(json.dumps(cfg | {"num_layers": 3, "num_decoder_layers": 3}))
    with pytest.raises(DataError, match="weights do not match the T5 config"):
        policy(tiny, init=wrong)


class _NotATensor:
    pass
