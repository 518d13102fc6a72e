"""The screenshot cache shrinks exactly as :func:`resize_screen` does, on every path it takes."""

from __future__ import annotations

import numpy as np
import pytest

from digirl.policies.screens import ScreenCache, resize_screen, shrink
from digirl.sim.env import SimEnv


def _frames(rng: np.random.Generator, shape: tuple[int, int, int], n: int) -> list[np.ndarray]:
    """A sequence of frames like an episode's: each changes a few bands of the previous one."""
    out = [rng.integers(0, 256, shape, dtype=np.uint8)]
    for _ in range(n - 1):
        f = out[-1].copy()
        for _ in range(int(rng.integers(0, 4))):
            y0 = int(rng.integers(0, shape[0]))
            y1 = min(shape[0], y0 + int(rng.integers(1, 60)))
            f[y0:y1, int(rng.integers(0, shape[1])) :] = rng.integers(0, 256, 3, dtype=np.uint8)
        out.append(f)
    return out


@pytest.mark.parametrize(
    ("shape", "size"),
    [
        ((600, 270, 3), (48, 104)),  # the default: both passes
        ((601, 271, 3), (48, 104)),  # odd sizes
        ((104, 270, 3), (48, 104)),  # horizontal pass only
        ((600, 48, 3), (48, 104)),  # vertical pass only
        ((104, 48, 3), (48, 104)),  # no resize at all
        ((90, 40, 3), (48, 104)),  # upscaling
        ((1200, 540, 3), (64, 128)),
    ],
)
def test_every_path_matches_pillow(shape: tuple[int, int, int], size: tuple[int, int]) -> None:
    rng = np.random.default_rng(sum(shape))
    cache = ScreenCache(*size, size=5)
    frames = _frames(rng, shape, 40)
    for i, f in enumerate(frames):
        prev = frames[i - 1] if i else None
        want = resize_screen(f, *size)
        got = cache.get(f, prev)
        assert got.dtype == want.dtype == np.float32 and np.array_equal(got, want), i
        assert np.array_equal(cache.get(f.copy(), None), want)  # a hit, by content
    # frames seen long ago, with a wrong "previous": still exact
    for i in rng.permutation(len(frames))[:15]:
        assert np.array_equal(cache.get(frames[i], frames[(i + 7) % len(frames)]), resize_screen(frames[i], *size))
    s = cache.stats
    assert s["hits"] > 0 and s["full"] > 0 and s["partial"] > 0  # band reuse is exact under every Pillow


def test_mutating_a_cached_array_cannot_give_a_stale_result() -> None:
    rng = np.random.default_rng(1)
    cache = ScreenCache(48, 104)
    a = rng.integers(0, 256, (600, 270, 3), dtype=np.uint8)
    first = cache.get(a)
    a[100:140] = 7  # the caller reuses its buffer
    assert np.array_equal(cache.get(a, a), resize_screen(a, 48, 104))
    assert not np.array_equal(first, cache.get(a))
    with pytest.raises(ValueError):
        first[0, 0, 0] = 1.0  # results are shared: read-only


def test_simulator_episodes_match_pillow() -> None:
    env = SimEnv(taskset="general", perturbation=2)
    rng = np.random.default_rng(0)
    n = 0
    for ep in range(8):
        obs, _ = env.reset(seed=ep)
        done = False
        while not done:
            for shot, prev in ((obs.screenshot, obs.previous_screenshot), (obs.screenshot, None)):
                assert np.array_equal(shrink(shot, 48, 104, prev), resize_screen(shot, 48, 104))
                n += 1
            a = env.cheat() if rng.random() < 0.6 else None
            obs, _, term, trunc, _ = env.step(a if a is not None else env.action_space.sample(rng))
            done = term or trunc
    assert n > 40


def test_other_inputs_fall_back_to_pillow() -> None:
    cache = ScreenCache(12, 26)
    rgba = np.full((60, 27, 4), 9, np.uint8)
    assert np.array_equal(cache.get(rgba), resize_screen(rgba, 12, 26))
    gray = np.zeros((600, 270), np.uint8)  # no screenshot for the default policy: the same error as before
    for fn in (lambda: resize_screen(gray, 12, 26), lambda: cache.get(gray)):
        with pytest.raises(ValueError):
            fn()
