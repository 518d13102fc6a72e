"""Resizing gives the same pixels under every Pillow version (Pillow 13 reorders its two passes)."""

from __future__ import annotations

import hashlib

import numpy as np
import PIL
import pytest
from PIL import Image

from digirl.policies.screens import resize_screen
from digirl.sim.env import SimEnv
from digirl.utils.images import resize, resize_array

FILTERS = (Image.Resampling.BILINEAR, Image.Resampling.BICUBIC, Image.Resampling.LANCZOS, Image.Resampling.BOX)
SIZES = ((13, 29), (50, 20), (80, 90), (37, 20), (13, 61))  # from 37×61: down, mixed, up, one axis
PILLOW_MAJOR = int(PIL.__version__.split(".")[0])


def _inputs() -> list[Image.Image]:
    rng = np.random.default_rng(7)
    rgb = rng.integers(0, 256, (61, 37, 3), dtype=np.uint8)
    rgba = rng.integers(0, 256, (61, 37, 4), dtype=np.uint8)
    return [Image.fromarray(rgb), Image.fromarray(rgba), Image.fromarray(rgb[..., 0])]


def test_pixels_are_pinned_across_pillow_versions() -> None:
    # Computed under Pillow 12.3 and 13.0 alike; a bare Image.resize gives another digest under 13.
    h = hashlib.sha256()
    for img in _inputs():
        for f in FILTERS:
            for size in SIZES:
                out = resize(img, size, f)
                assert out.size == size and out.mode == img.mode
                h.update(np.asarray(out).tobytes())
    assert h.hexdigest() == "b435b30ce5557eb8943c784da7d01aac132f841a2a48b441f9114138874a31de"


@pytest.mark.skipif(PILLOW_MAJOR >= 13, reason="Pillow 13 may run the vertical pass first")
def test_equals_image_resize_up_to_pillow_12() -> None:
    for img in _inputs():
        for f in FILTERS:
            for size in SIZES:
                assert np.array_equal(np.asarray(resize(img, size, f)), np.asarray(img.resize(size, f))), (img.mode, f, size)


def test_one_axis_and_nearest_are_plain_resizes() -> None:
    img = _inputs()[0]
    for size in ((37, 20), (13, 61), (37, 61)):
        assert np.array_equal(
            np.asarray(resize(img, size, Image.Resampling.BILINEAR)), np.asarray(img.resize(size, Image.Resampling.BILINEAR))
        )
    near = resize(img, (13, 29), Image.Resampling.NEAREST)
    assert np.array_equal(np.asarray(near), np.asarray(img.resize((13, 29), Image.Resampling.NEAREST)))
    arr = np.asarray(img)
    assert np.array_equal(
        resize_array(arr, (13, 29), Image.Resampling.BILINEAR), np.asarray(resize(img, (13, 29), Image.Resampling.BILINEAR))
    )


def test_what_the_policy_sees_is_pinned() -> None:
    """Simulator frames and their shrunk form for the default policy: the same bytes under Pillow 12
    and 13, so a dependency update cannot change a trained result."""
    env = SimEnv(taskset="general", perturbation=1)
    frames, shrunk = hashlib.sha256(), hashlib.sha256()
    n = 0
    for seed in (0, 1):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            frames.update(obs.screenshot.tobytes())
            shrunk.update(resize_screen(obs.screenshot, 48, 104).tobytes())
            n += 1
            obs, _, term, trunc, _ = env.step(env.cheat())
            done = term or trunc
    assert n == 4
    assert frames.hexdigest() == "a561de7837080ba582df05844f85cc6df81965b31b3deeb023a4985306af8177"
    assert shrunk.hexdigest() == "1dcbbf33c7667590e09c857fc7a109bf4d8d5ad762484aa62e00c600c4d41ff7"
