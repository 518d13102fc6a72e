"""The pixels-only pointer over detected regions (``policy.default.pixel_regions``): features, scoring,
acting, invalid actions, save/load, and the configuration rules around it."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from digirl.cli.main import main
from digirl.core.actions import Action
from digirl.core.types import Observation
from digirl.policies.config import EncoderConfig
from digirl.policies.default import DefaultPolicy
from digirl.policies.features import KIND_INDEX, encode_actions, tap_point
from digirl.policies.regions import CROP_SIZE, detect_regions
from digirl.sim.env import SimEnv

SMALL = dict(dim=16, layers=1, heads=2, use_elements=False, pixel_regions=True, max_elements=48)


def _expert_steps(taskset: str, episodes: int) -> tuple[list[Observation], list[Action]]:
    env = SimEnv(taskset, "validation")
    obs_l, acts = [], []
    for seed in range(episodes):
        obs, _ = env.reset(seed=seed)
        for _ in range(8):
            a = env.cheat()
            if a is None:
                break
            obs_l.append(obs)
            acts.append(a)
            obs, _, term, trunc, _ = env.step(a)
            if term or trunc:
                break
    return obs_l, acts


@pytest.fixture(scope="module")
def steps() -> tuple[list[Observation], list[Action]]:
    return _expert_steps("general", 3)


def _policy(**kw: object) -> DefaultPolicy:
    return DefaultPolicy(EncoderConfig(**{**SMALL, **kw}), seed=0)  # type: ignore[arg-type]


def test_features_are_the_detected_regions_and_their_crops(steps: tuple[list[Observation], list[Action]]) -> None:
    obs, _ = steps
    pol = _policy()
    batch = pol.featurize(obs)
    assert batch.elem_pixels is not None and batch.elem_pixels.shape == (len(obs), 48, 3, *CROP_SIZE)
    for i, o in enumerate(obs):
        boxes = detect_regions(o.screenshot)[:48]
        assert [e.bounds for e in batch.elements[i]] == boxes  # the element list is never read
        assert int(batch.elem_mask[i].sum()) == len(boxes)
        assert np.array_equal(batch.elem_num[i, : len(boxes), :4], np.array(boxes, np.float32))
        assert not batch.elem_words[i].any() and not batch.elem_num[i, :, 6:].any()  # no words, no overlap
        assert not batch.elem_pixels[i, len(boxes) :].any()  # padding rows are blank
    # An observation whose element list is empty or absent featurizes the same: only pixels count.
    stripped = [Observation(o.screenshot, o.instruction, elements=(), step=o.step) for o in obs[:2]]
    again = pol.featurize(stripped)
    assert np.array_equal(again.elem_num, batch.elem_num[:2]) and np.array_equal(again.elem_pixels, batch.elem_pixels[:2])


def test_expert_taps_are_pointers_at_regions_and_score_finite(steps: tuple[list[Observation], list[Action]]) -> None:
    obs, acts = steps
    pol = _policy()
    batch = pol.featurize(obs)
    tg = encode_actions(batch, obs, acts, pol.spec)
    taps = [i for i, a in enumerate(acts) if a.touch is not None and not a.is_swipe]
    assert taps, "the episodes have taps"
    assert all(tg.kind[i] == KIND_INDEX["tap_element"] and tg.element[i] >= 0 for i in taps)
    lp = pol.log_prob(obs, acts)
    assert lp.shape == (len(obs),) and torch.isfinite(lp).all()
    lp.sum().backward()
    assert pol.net.encoder.region_cnn is not None
    assert all(p.grad is not None for p in pol.net.encoder.region_cnn.parameters())


def test_greedy_taps_land_on_a_region(steps: tuple[list[Observation], list[Action]]) -> None:
    obs, _ = steps
    pol = _policy()
    with torch.no_grad():  # make the kind head always tap a region
        pol.net.kind_head[-1].bias.fill_(-50.0)
        pol.net.kind_head[-1].bias[KIND_INDEX["tap_element"]] = 50.0
    batch = pol.featurize(obs)
    outs = pol.act(obs, greedy=True)
    for i, out in enumerate(outs):
        assert out.action.touch is not None
        points = [tap_point(batch.elements[i], k) for k in range(len(batch.elements[i]))]
        assert out.action.touch in points and math.isfinite(out.log_prob)
    # Training on its own taps teaches the same choice: each tap encodes back to the region it came from.
    tg = encode_actions(batch, obs, [o.action for o in outs], pol.spec)
    for i, out in enumerate(outs):
        assert tap_point(batch.elements[i], int(tg.element[i])) == out.action.touch
    assert torch.allclose(
        pol.log_prob(obs, [o.action for o in outs]).detach(), torch.tensor([o.log_prob for o in outs]), atol=1e-4
    )


def test_invalid_and_inexpressible_actions_score_nan(steps: tuple[list[Observation], list[Action]]) -> None:
    obs, _ = steps
    pol = _policy()
    acts = [Action.invalid("garbage", "not an action"), Action.type_text("zzz qqq"), Action.back()]
    _, valid = pol.log_prob_with_mask(obs[:3], acts)
    assert valid.tolist() == [False, False, True]
    nan = pol.log_prob(obs[:3], acts).detach()
    assert math.isnan(nan[0]) and math.isnan(nan[1]) and math.isfinite(nan[2])


def test_a_screen_without_regions_cannot_choose_a_region_tap() -> None:
    from digirl.policies.default import batch_to_tensors

    blank = Observation(np.full((600, 270, 3), 255, np.uint8), "open settings")
    pol = _policy()
    with torch.no_grad():  # even a policy that always wants a region tap
        pol.net.kind_head[-1].bias[KIND_INDEX["tap_element"]] = 50.0
    out = pol.net(batch_to_tensors(pol.featurize([blank]), pol.device))
    assert out["kind"][0, KIND_INDEX["tap_element"]] < -1e8
    act = pol.act([blank], greedy=True)[0]
    assert act.action.type.name != "INVALID" and math.isfinite(act.log_prob)


def test_save_load_round_trip(steps: tuple[list[Observation], list[Action]], tmp_path: Path) -> None:
    obs, acts = steps
    pol = _policy()
    pol.save(tmp_path / "p")
    loaded = DefaultPolicy.load(tmp_path / "p")
    assert loaded.cfg == pol.cfg and loaded.cfg.pixel_regions
    assert torch.equal(loaded.log_prob(obs, acts), pol.log_prob(obs, acts))
    assert [o.action for o in loaded.act(obs, greedy=True)] == [o.action for o in pol.act(obs, greedy=True)]


def test_pixel_regions_need_the_element_list_off(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="set use_elements=false"):
        DefaultPolicy(EncoderConfig(dim=16, layers=1, heads=2, pixel_regions=True))
    rc = main(["sft", str(tmp_path / "a"), "policy.default.pixel_regions=true", "sft.demos=1", "sft.steps=1"])
    assert rc != 0 and "set use_elements=false" in capsys.readouterr().err and not (tmp_path / "a").exists()
    # observation=screenshot turns the element list off after the overrides: the pair is valid
    tiny = ["policy.default.dim=16", "policy.default.layers=1", "policy.default.heads=2", "env.runner=inline", "env.num_envs=1"]
    args = ["sft", str(tmp_path / "b"), "observation=screenshot", "policy.default.pixel_regions=true", *tiny]
    assert main([*args, "sft.demos=1", "sft.steps=1"]) == 0
    assert DefaultPolicy.load(tmp_path / "b" / "policy").cfg.pixel_regions


def test_an_old_policy_json_loads_without_regions(tmp_path: Path) -> None:
    import json

    pol = DefaultPolicy(EncoderConfig(dim=16, layers=1, heads=2, use_elements=False), seed=0)
    pol.save(tmp_path / "p")
    meta = json.loads((tmp_path / "p" / "policy.json").read_text())
    del meta["config"]["pixel_regions"]  # as saved before the key existed
    (tmp_path / "p" / "policy.json").write_text(json.dumps(meta))
    assert not DefaultPolicy.load(tmp_path / "p").cfg.pixel_regions


def test_overriding_pixel_regions_on_a_loaded_policy_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    saved = tmp_path / "policy"
    _policy().save(saved)
    run = tmp_path / "run"
    rc = main(["train", str(run), f"policy.init={saved}", "policy.default.pixel_regions=false", "iterations=0"])
    err = capsys.readouterr().err
    assert rc != 0 and "pixel_regions=true" in err and "requested false" in err
    assert not run.exists()
    plain = tmp_path / "plain"
    DefaultPolicy(EncoderConfig(dim=16, layers=1, heads=2, use_elements=False), seed=0).save(plain)
    rc = main(
        [
            "collect",
            str(tmp_path / "c"),
            f"policy.init={plain}",
            "policy.default.use_elements=false",
            "policy.default.pixel_regions=true",
        ]
    )
    assert rc != 0 and "pixel_regions=false" in capsys.readouterr().err and not (tmp_path / "c").exists()
