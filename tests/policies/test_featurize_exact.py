"""Featurization is exact: the same arrays as the frozen old implementation, on simulator
episodes (both task sets, one and two stacked frames) and on browser-like element lists."""

from __future__ import annotations

import numpy as np
import pytest

from digirl.core.actions import Action
from digirl.core.types import Observation, UIElement
from digirl.policies.features import Batch, FeatureSpec, featurize
from digirl.sim.env import SimEnv
from tests.policies.policy_reference import reference_featurize


def _same(a: Batch, b: Batch) -> None:
    for name in ("image", "instr", "elem_words", "elem_num", "elem_kind", "elem_mask", "history"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y), name
    assert a.instr_words == b.instr_words and a.elements == b.elements
    assert (a.elem_pixels is None) == (b.elem_pixels is None)
    if a.elem_pixels is not None and b.elem_pixels is not None:
        assert a.elem_pixels.dtype == b.elem_pixels.dtype and np.array_equal(a.elem_pixels, b.elem_pixels)


def _sim_observations(taskset: str, episodes: int, seed: int) -> list[Observation]:
    env = SimEnv(taskset=taskset, perturbation=2)
    rng = np.random.default_rng(seed)
    out = []
    for ep in range(episodes):
        obs, _ = env.reset(seed=seed * 100 + ep)
        out.append(obs)
        done = False
        while not done:
            a = env.cheat() if rng.random() < 0.7 else None
            obs, _, term, trunc, _ = env.step(a if a is not None else env.action_space.sample(rng))
            out.append(obs)
            done = term or trunc
    return out


@pytest.mark.parametrize(("taskset", "frame_stack"), [("general", 1), ("general", 2), ("webshop", 2)])
def test_simulator_batches_match_reference(taskset: str, frame_stack: int) -> None:
    obs = _sim_observations(taskset, 14, seed=frame_stack)
    assert len(obs) > 50
    small = FeatureSpec(frame_stack=frame_stack, max_elements=8, buckets=97, label_rows=True)
    for spec in (FeatureSpec(frame_stack=frame_stack), small):
        for size in (1, 4, 16):
            for i in range(0, len(obs), size):
                _same(featurize(obs[i : i + size], spec), reference_featurize(obs[i : i + size], spec))


def _browser_like(rng: np.random.Generator, n: int) -> list[Observation]:
    """Observations like a browser's: many elements (more than kept), odd texts, kinds and flags."""
    vocab = ["Submit", "click", "the", "button", "wi-fi", "what's", "bestbuy.com", "ÜBER", "São", "Paulo", "", "  ", "★4.5"]
    vocab += ["inToronto", "A.B", "x--y", "42", "e-mail", "Search", "search", "SEARCH", "Pp1d", "…", "a'b"]
    kinds = ["button", "text", "input", "radio", "link", "div", "checkbox", "image", "view", "switch"]
    out = []
    for i in range(n):
        els = []
        for _ in range(int(rng.integers(0, 60))):
            x0, y0 = rng.random(2) * 0.9
            text = " ".join(rng.choice(vocab, size=int(rng.integers(0, 9))))
            els.append(
                UIElement(
                    bounds=(float(x0), float(y0), float(x0 + rng.random() * 0.3), float(y0 + rng.random() * 0.2)),
                    text=text,
                    kind=str(rng.choice(kinds)),
                    clickable=bool(rng.integers(2)),
                    focused=bool(rng.integers(2)),
                )
            )
        shot = rng.integers(0, 256, (int(rng.integers(200, 400)), int(rng.integers(90, 300)), 3), dtype=np.uint8)
        history = tuple(
            [Action.tap(0.5, 0.5), Action.type_text("x"), Action.back(), Action.scroll("up"), Action.complete()][
                : int(rng.integers(0, 6))
            ]
        )
        instr = " ".join(rng.choice(vocab, size=int(rng.integers(0, 40))))
        prev = shot if i % 3 == 0 else (rng.integers(0, 256, shot.shape, dtype=np.uint8) if i % 3 == 1 else None)
        out.append(
            Observation(shot, instr, step=i, history=history, elements=tuple(els) if i % 5 else None, previous_screenshot=prev)
        )
    return out


def test_browser_like_batches_match_reference() -> None:
    rng = np.random.default_rng(7)
    obs = _browser_like(rng, 60)
    for spec in (FeatureSpec(), FeatureSpec(frame_stack=2, max_instruction_words=5, max_element_words=2, history_len=2)):
        for size in (1, 7, 30):
            for i in range(0, len(obs), size):
                _same(featurize(obs[i : i + size], spec), reference_featurize(obs[i : i + size], spec))
    assert featurize([], FeatureSpec()).image.shape == reference_featurize([], FeatureSpec()).image.shape


@pytest.mark.parametrize("frame_stack", [1, 2])
def test_act_samples_the_same_actions_for_the_same_generator_state(frame_stack: int) -> None:
    """Two identical seeded policies, one acting through the old loop: the same actions, texts
    and log-probabilities, call after call (so the generator is consumed in the same order)."""
    from digirl.policies.config import EncoderConfig
    from digirl.policies.default import DefaultPolicy
    from tests.policies.policy_reference import reference_act

    cfg = EncoderConfig(frame_stack=frame_stack, dim=32, layers=1)
    new, old = DefaultPolicy(cfg, seed=5), DefaultPolicy(cfg, seed=5)
    obs = _sim_observations("general", 5, seed=11) + _browser_like(np.random.default_rng(3), 16)
    rng = np.random.default_rng(0)
    calls = 0
    for temperature in (1.0, 0.3, 0.0):
        for greedy in (False, True):
            i = 0
            while i < len(obs):
                size = int(rng.integers(1, 17))
                a = new.act(obs[i : i + size], greedy=greedy, temperature=temperature)
                b = reference_act(old, obs[i : i + size], greedy=greedy, temperature=temperature)
                assert [(o.action, o.text, o.log_prob) for o in a] == [(o.action, o.text, o.log_prob) for o in b]
                i += size
                calls += 1
    assert calls > 12 and torch_generators_equal(new, old)
    new.train(True)  # acting from training mode samples the same and restores the mode
    assert new.act(obs[:3])[0].action == reference_act(old, obs[:3])[0].action and new.net.training


def torch_generators_equal(a: object, b: object) -> bool:
    import torch

    return bool(torch.equal(a._gen.get_state(), b._gen.get_state()))  # type: ignore[attr-defined]
