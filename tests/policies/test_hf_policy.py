"""The Hugging Face VLM policy on tiny random models (CPU, offline): acting, scoring, saving, LoRA."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch

pytest.importorskip("transformers")
pytest.importorskip("peft")

from digirl.algorithms.base import Sample, bc_update
from digirl.config.core import load_config
from digirl.core.actions import Action, ActionType
from digirl.core.errors import ConfigError, DataError
from digirl.envs.toy import ToyEnv
from digirl.policies.base import Policy, is_trainable
from digirl.policies.config import PolicyConfig
from digirl.policies.hf.lora import is_vision_param
from digirl.policies.hf.policy import HFPolicy
from digirl.policies.registry import build_policy, load_policy, saved_policy_kind

pytestmark = pytest.mark.usefixtures("one_thread")

SHORT = "Task: {instruction}\nHistory: {history}"


def _cfg(path, *overrides: str, prompt: str = SHORT) -> PolicyConfig:
    cfg = load_config(PolicyConfig, overrides=["kind=hf", f"init={path}", "device=cpu", "hf.max_new_tokens=40", *overrides])
    cfg.hf = dataclasses.replace(cfg.hf, prompt=prompt)
    return cfg


def _policy(path, *overrides: str, seed: int = 0) -> HFPolicy:
    p = build_policy(_cfg(path, *overrides), seed=seed)
    assert isinstance(p, HFPolicy)
    return p


def _obs(n: int = 6, size: tuple[int, int] = (97, 211)):
    env = ToyEnv(mode="mixed", width=size[0], height=size[1])
    out = []
    for i in range(n):
        o, _ = env.reset(seed=i)
        out.append((o, env.cheat()))
    return out


ACTIONS = [
    Action.tap(0.5, 0.3),
    Action.type_text("hello"),
    Action.swipe((0.2, 0.8), (0.2, 0.1)),
    Action.complete(),
    Action.invalid("garbage"),
    Action.type_text("x" * 200),  # longer than the generation cap: not expressible
]


@pytest.mark.parametrize("family", ["qwen2_vl", "qwen2_5_vl", "llava"])
def test_batched_log_prob_equals_per_sample_and_acting_never_crashes(tiny_vlm, family):
    p = _policy(tiny_vlm(family))
    assert isinstance(p, Policy) and is_trainable(p)
    obs = [o for o, _ in _obs(len(ACTIONS))]
    lp, valid = p.log_prob_with_mask(obs, ACTIONS)
    assert valid.tolist() == [True, True, True, True, False, False]
    single = torch.stack([p.log_prob_with_mask([o], [a])[0][0] for o, a in zip(obs, ACTIONS)])
    torch.testing.assert_close(lp, single, atol=1e-5, rtol=0)
    assert torch.isnan(p.log_prob(obs, ACTIONS)[4:]).all()
    lp.sum().backward()  # differentiable
    assert any(q.grad is not None and q.grad.abs().sum() > 0 for q in p.parameters())
    # A random model writes garbage: every output is an action (INVALID ones keep the raw text).
    for greedy in (True, False):
        outs = p.act(obs, greedy=greedy, temperature=1.0)
        assert len(outs) == len(obs)
        for o in outs:
            assert o.log_prob is not None and np.isfinite(o.log_prob)
            if o.action.type is ActionType.INVALID:
                assert o.action.text == o.text


@pytest.mark.parametrize(
    ("family", "overrides"),
    [
        ("qwen2_5_vl", ["hf.coords=pixels", "hf.action_format=autoui", "hf.max_new_tokens=64"]),
        ("llava", ["hf.coords=grid1000"]),
    ],
)
def test_a_fitted_policy_writes_actions_that_parse_back(tiny_vlm, family, overrides):
    """Overfit a few demonstrations, then greedy acting reproduces them through the codec and frame.

    (qwen2_vl with json / normalized coordinates is the learning test in tests/training.)"""
    p = _policy(tiny_vlm(family), *overrides)
    pairs = _obs(4)
    samples = [Sample(o, a) for o, a in pairs]
    opt = torch.optim.AdamW(p.parameters(), lr=3e-3)
    rng = np.random.default_rng(0)
    bc_update(p, opt, samples, steps=80, batch_size=4, grad_accum=1, max_grad_norm=1.0, rng=rng)
    outs = p.act([o for o, _ in pairs], greedy=True)
    for (_, want), got in zip(pairs, outs):
        assert got.action.is_valid, got.text
        assert got.action.type is want.type
        if want.type is ActionType.DUAL_POINT:
            assert got.action.touch is not None and want.touch is not None
            # written in the model's frame (pixels / grid) and mapped back: within one unit of that frame
            assert abs(got.action.touch[0] - want.touch[0]) < 0.02 and abs(got.action.touch[1] - want.touch[1]) < 0.02
        else:
            assert got.action == want


def test_save_load_identical_log_probs_and_the_folder_is_a_plain_checkpoint(tiny_vlm, tmp_path):
    p = _policy(tiny_vlm("qwen2_vl"))
    obs = [o for o, _ in _obs(4)]
    acts = ACTIONS[:4]
    with torch.no_grad():
        for q in list(p.parameters())[:3]:
            q.add_(0.01)  # differ from the base folder
    p.save(tmp_path / "pol")
    assert saved_policy_kind(tmp_path / "pol") == "hf"
    assert (tmp_path / "pol" / "model.safetensors").is_file() and (tmp_path / "pol" / "config.json").is_file()
    q = load_policy(tmp_path / "pol", cfg=_cfg(tmp_path / "pol"))
    torch.testing.assert_close(p.log_prob(obs, acts), q.log_prob(obs, acts), atol=0, rtol=0)
    # The same folder also loads as a plain Hugging Face checkpoint.
    from transformers import AutoModelForImageTextToText

    AutoModelForImageTextToText.from_pretrained(tmp_path / "pol", local_files_only=True)


def test_lora_adapters_save_load_identical_and_merge(tiny_vlm, tmp_path):
    base = tiny_vlm("qwen2_vl")
    p = _policy(base, "hf.lora_r=4", "hf.lora_targets=q_proj,v_proj")
    total = sum(x.numel() for x in p.model.parameters())
    trainable = list(p.parameters())
    assert trainable and all(x.requires_grad for x in trainable)
    assert sum(x.numel() for x in trainable) < 0.1 * total  # adapters only
    names = [n for n, x in p.model.named_parameters() if x.requires_grad]
    assert all("lora_" in n and "visual" not in n for n in names)
    pairs = _obs(4)
    obs, acts = [o for o, _ in pairs], [a for _, a in pairs]
    opt = torch.optim.AdamW(p.parameters(), lr=1e-2)
    bc_update(
        p,
        opt,
        [Sample(o, a) for o, a in pairs],
        steps=3,
        batch_size=4,
        grad_accum=1,
        max_grad_norm=1.0,
        rng=np.random.default_rng(0),
    )
    p.save(tmp_path / "lora")
    files = {f.name for f in (tmp_path / "lora").iterdir()}
    assert {"policy.json", "adapter_model.safetensors", "adapter_config.json"} <= files
    assert "model.safetensors" not in files  # the base is referenced, not copied
    assert json.loads((tmp_path / "lora" / "policy.json").read_text())["base_model"] == str(base.resolve())
    q = load_policy(tmp_path / "lora", cfg=_cfg(tmp_path / "lora"))
    assert isinstance(q, HFPolicy) and q.is_lora
    want = p.log_prob(obs, acts)
    torch.testing.assert_close(want, q.log_prob(obs, acts), atol=0, rtol=0)
    merged = q.merged()
    merged.save(tmp_path / "merged")
    m = load_policy(tmp_path / "merged", cfg=_cfg(tmp_path / "merged"))
    assert isinstance(m, HFPolicy) and not m.is_lora
    torch.testing.assert_close(want, m.log_prob(obs, acts), atol=1e-4, rtol=0)


def test_lora_on_top_of_a_fine_tuned_policy(tiny_vlm, tmp_path):
    p = _policy(tiny_vlm("qwen2_vl"))
    p.save(tmp_path / "sft")
    q = build_policy(_cfg(tmp_path / "sft", "hf.lora_r=4"), seed=0)
    assert isinstance(q, HFPolicy) and q.is_lora and q.base_model == (tmp_path / "sft").resolve()


@pytest.mark.parametrize("family", ["qwen2_5_vl", "llava"])
def test_frozen_vision_features_are_cached_and_exact(tiny_vlm, family):
    path = tiny_vlm(family)
    cached = _policy(path, "hf.freeze_vision=true")
    plain = _policy(path, "hf.freeze_vision=true", "hf.vision_cache=0")
    assert cached._vision is not None and plain._vision is None
    assert not any(is_vision_param(n) for n, x in cached.model.named_parameters() if x.requires_grad)
    pairs = _obs(4)
    obs, acts = [o for o, _ in pairs], [a for _, a in pairs]
    first = cached.log_prob(obs, acts)
    again = cached.log_prob(obs, acts)
    assert cached._vision.hits == 4 and cached._vision.misses == 4
    torch.testing.assert_close(first, again, atol=0, rtol=0)
    torch.testing.assert_close(first, plain.log_prob(obs, acts), atol=1e-5, rtol=0)
    # A batch mixing cached and new screens computes the new ones only, with the same values.
    more = [o for o, _ in _obs(6, size=(131, 97))][4:]
    mixed_obs, mixed_acts = [obs[1], more[0], obs[3], more[1]], [acts[1], acts[0], acts[3], acts[2]]
    mixed = cached.log_prob(mixed_obs, mixed_acts)
    assert cached._vision.hits == 6 and cached._vision.misses == 6
    torch.testing.assert_close(mixed, plain.log_prob(mixed_obs, mixed_acts), atol=1e-5, rtol=0)


def test_clear_errors_for_bad_folders_and_configs(tiny_vlm, tmp_path):
    with pytest.raises(ConfigError, match=r"policy\.init=DIR"):
        build_policy(load_config(PolicyConfig, overrides=["kind=hf", "device=cpu"]), seed=0)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "config.json").write_text("{}")
    with pytest.raises(DataError, match=r"missing: .*model\.safetensors.*tokenizer\.json.*preprocessor_config\.json"):
        _policy(tmp_path / "empty")
    with pytest.raises(DataError, match="no such folder"):
        _policy(tmp_path / "nope")
    with pytest.raises(ConfigError, match="image_fit=pad"):
        _policy(tiny_vlm("llava"), "hf.image_fit=stretch")  # CLIP center-crops: coordinates could not map back
    with pytest.raises(ConfigError, match=r"policy\.kind=hf"):
        build_policy(load_config(PolicyConfig, overrides=[f"init={tiny_vlm('qwen2_vl')}", "device=cpu"]), seed=0)


def test_vision_checkpointing_gives_the_same_gradients(tiny_vlm):
    path = tiny_vlm("qwen2_5_vl")
    pairs = _obs(3)
    obs, acts = [o for o, _ in pairs], [a for _, a in pairs]
    grads = []
    for extra in ([], ["hf.vision_checkpointing=true"]):
        p = _policy(path, *extra)
        p.train(True)
        p.log_prob(obs, acts).sum().backward()
        grads.append({n: x.grad.clone() for n, x in p.model.named_parameters() if x.grad is not None})
    assert grads[0].keys() == grads[1].keys() and any("visual" in n for n in grads[0])
    for n, g in grads[0].items():
        torch.testing.assert_close(grads[1][n], g, atol=1e-5, rtol=1e-4)


def test_compile_lm_compiles_the_decoder_layers_only(tiny_vlm):
    p = _policy(tiny_vlm("qwen2_vl"), "hf.compile_lm=true")
    compiled = [n for n, m in p.model.named_modules() if getattr(m, "_compiled_call_impl", None) is not None]
    assert compiled == ["model.language_model.layers.0", "model.language_model.layers.1"]


@pytest.mark.parametrize("family", ["qwen2_vl", "qwen2_5_vl"])
def test_position_ids_computed_on_the_host_equal_the_models_own(tiny_vlm, family):
    p = _policy(tiny_vlm(family))
    assert p._rope_index is not None
    obs = [o for o, _ in _obs(len(ACTIONS))]
    encs = p.encode_many(obs[:4])
    seqs = [e.prompt_ids for e in encs]
    inputs = p._model_inputs(encs, seqs, left=False, positions=True)
    assert inputs["position_ids"].shape[-2:] == inputs["input_ids"].shape  # M-RoPE: [3, B, S]
    host = p.log_prob(obs, ACTIONS)
    p._rope_index = None  # the model computes them inside forward
    torch.testing.assert_close(host, p.log_prob(obs, ACTIONS), atol=0, rtol=0, equal_nan=True)


@pytest.mark.parametrize("family", ["qwen2_5_vl", "llava"])
def test_scored_batches_are_padded_to_the_multiple_and_log_probs_do_not_change(tiny_vlm, family):
    path = tiny_vlm(family)
    obs = [o for o, _ in _obs(len(ACTIONS))]
    lps = {}
    for m in (1, 8, 64):
        p = _policy(path, f"hf.pad_to_multiple={m}")
        encs = p.encode_many(obs[:3])
        longest = max(len(e.prompt_ids) for e in encs)
        inputs = p._model_inputs(encs, [e.prompt_ids for e in encs], left=False, positions=True)
        n = inputs["input_ids"].shape[1]
        assert n % m == 0 and longest <= n < longest + m
        assert inputs["attention_mask"].sum().item() == sum(len(e.prompt_ids) for e in encs)
        lps[m] = p.log_prob(obs, ACTIONS)
    torch.testing.assert_close(lps[8], lps[1], atol=1e-5, rtol=0, equal_nan=True)
    torch.testing.assert_close(lps[64], lps[1], atol=1e-5, rtol=0, equal_nan=True)


def test_pad_to_multiple_must_be_positive(tiny_vlm):
    with pytest.raises(Exception, match="pad_to_multiple"):
        _policy(tiny_vlm("qwen2_vl"), "hf.pad_to_multiple=0")
