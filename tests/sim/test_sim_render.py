"""The fast renderer is exact: same pixels and UI elements as the frozen old code, screen by screen.

Episodes are driven through :class:`SimEnv` (expert, random and mixed policies, both task sets,
all perturbation levels, several resolutions, tiny caches that evict all the time), and every
observed screen is compared with :mod:`tests.sim.sim_reference` rendering the same view tree.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from digirl.core.actions import Action
from digirl.sim.elements import StaticElements, tree_elements
from digirl.sim.env import SimEnv
from digirl.sim.render import Renderer
from digirl.sim.text import TextRaster
from digirl.sim.ui import BLUE, H, View, W, box, label
from tests.sim.sim_reference import ReferenceRenderer, reference_elements
from tests.sim.sim_reference import TextRaster as ReferenceText


def _drive(env: SimEnv, policy: str, episodes: int, seed: int, seen: set[bytes] | None = None) -> int:
    """Run episodes and compare every observation with the reference; returns screens compared."""
    ref = ReferenceRenderer(env.renderer.width, env.renderer.height)
    rng = np.random.default_rng(seed)
    n = 0

    def check(obs_shot: np.ndarray, elements: tuple[object, ...] | None) -> None:
        nonlocal n
        tree = env.phone.tree()
        want = ref.render(tree)
        if not np.array_equal(obs_shot, want):
            diff = np.argwhere((obs_shot != want).any(axis=2))
            raise AssertionError(f"{policy} screen {n} differs in {len(diff)} pixels, first at {diff[0].tolist()}")
        assert elements == reference_elements(tree), f"{policy} screen {n}: elements differ"
        if seen is not None:
            seen.add(hashlib.blake2b(obs_shot.tobytes(), digest_size=16).digest())
        n += 1

    for ep in range(episodes):
        obs, _ = env.reset(seed=seed * 1000 + ep)
        check(obs.screenshot, obs.elements)
        done = False
        while not done:
            a: Action | None
            if policy == "expert" or (policy == "mixed" and rng.random() < 0.7):
                a = env.cheat()
            else:
                a = None
            if a is None:
                a = env.action_space.sample(rng)
            obs, _, term, trunc, _ = env.step(a)
            check(obs.screenshot, obs.elements)
            done = term or trunc
    return n


@pytest.mark.parametrize(
    ("taskset", "level", "size", "policy"),
    [
        ("general", 1, (270, 600), "expert"),
        ("general", 2, (270, 600), "mixed"),
        ("general", 0, (180, 400), "random"),
        ("webshop", 1, (270, 600), "expert"),
        ("webshop", 2, (333, 741), "mixed"),
        ("webshop", 0, (540, 1200), "random"),
    ],
)
def test_screens_match_reference(taskset: str, level: int, size: tuple[int, int], policy: str) -> None:
    env = SimEnv(taskset=taskset, width=size[0], height=size[1], perturbation=level, expert_jitter=0.3)
    assert _drive(env, policy, episodes=14, seed=level + 7) >= 60


def test_screens_match_reference_with_evicting_caches() -> None:
    """Tiny frame/patch caches: evictions and re-creations must not change a pixel."""
    env = SimEnv(taskset="general", width=270, height=600, perturbation=2, world_version=1)
    env.renderer = Renderer(270, 600, frame_cache=2, patch_cache=30)
    assert _drive(env, "mixed", episodes=12, seed=3) >= 50


@pytest.mark.slow
@pytest.mark.parametrize("taskset", ["general", "webshop"])
def test_many_screens_match_reference(taskset: str) -> None:
    seen: set[bytes] = set()
    total = 0
    for level in (0, 1, 2):
        for policy in ("expert", "mixed", "random"):
            env = SimEnv(taskset=taskset, perturbation=level, world_version=level % 2)
            total += _drive(env, policy, episodes=40, seed=100 + level, seen=seen)
    assert total >= 2000 and len(seen) >= 600  # many screens, hundreds of them distinct


def test_hand_built_trees_match_reference() -> None:
    """Clipping, off-screen and partly off-screen views, borders, switches, inputs, nested static layers."""
    trees = []
    for dy in (-30.0, 0.0, 17.5, 790.0):
        root = box((0, 0, W, H), (250, 250, 250))
        clip = (0.0, 100.0, float(W), 400.0)
        row = box((10, 90 + dy, 350, 160 + dy), (255, 255, 255), radius=12, border=BLUE)
        row.children.append(label((20, 95 + dy, 340, 150 + dy), "Clipped ★ row with a rather long title", lines=2))
        row.translate(0, clip)
        root.children.append(row)
        root.children.append(View((300, 200, 350, 230), kind="switch", checked=dy > 0))
        root.children.append(
            View((20, 250, 340, 298), kind="input", text="typed" if dy else "", placeholder="Search", focused=True, icon="search")
        )
        layer = box((0, 0, W, 24), (53, 54, 58))
        layer.children.append(label((12, 0, 80, 24), "9:41", size=12, fg=(255, 255, 255)))
        layer.static = True
        root.children.append(layer)
        root.children.append(box((-40, 700, 60, 900), (200, 0, 0)))  # partly off the screen
        trees.append(root)
    for w, h in ((270, 600), (91, 201), (541, 1203)):
        new, ref, cache = Renderer(w, h), ReferenceRenderer(w, h), StaticElements(size=2)
        for t in trees + trees:  # the second round comes from the caches
            assert np.array_equal(new.render(t), ref.render(t))
            assert tree_elements(t) == tree_elements(t, cache) == reference_elements(t)


def test_text_raster_matches_reference() -> None:
    new, ref = TextRaster(), ReferenceText()
    rng = np.random.default_rng(0)
    alphabet = list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789 .,:;!?'\"-()$%&@#") + list("★☆×÷⇧⌫✓↗⌃—–’“”€£🙂⏎é")
    strings = ["", " ", "  two  spaces ", "a", "W", "…", "Hello ★ world"]
    strings += ["".join(rng.choice(alphabet, size=int(rng.integers(1, 40)))) for _ in range(300)]
    digest_new, digest_ref = hashlib.sha256(), hashlib.sha256()
    for i, s in enumerate(strings):
        px = int(rng.integers(7, 40))
        fg = tuple(int(c) for c in rng.integers(0, 256, 3))
        bg = tuple(int(c) for c in rng.integers(0, 256, 3))
        bold = bool(i % 3 == 0)
        assert new.width(s, px) == ref.width(s, px), s
        a, b = new.patch(s, px, fg, bg, bold), ref.patch(s, px, fg, bg, bold)  # type: ignore[arg-type]
        assert a.shape == b.shape and np.array_equal(a, b), (s, px, bold)
        digest_new.update(a.tobytes())
        digest_ref.update(b.tobytes())
    assert digest_new.digest() == digest_ref.digest()


def test_text_fitting_matches_measuring_each_candidate() -> None:
    """``fill_line`` and ``fit_prefix`` find what measuring every candidate string finds."""
    raster, plain = TextRaster(), TextRaster()
    rng = np.random.default_rng(1)
    alphabet = list("abcdefghijklmnopqrstuvwxyz ABCXYZ0123456789.,:-'  ") + list("★×—é…")
    for _ in range(2000):
        text = "".join(rng.choice(alphabet, size=int(rng.integers(0, 90))))
        px, width = int(rng.choice([7, 9, 10, 12, 15, 26])), int(rng.integers(1, 320))
        fast, slow = text.split(" "), text.split(" ")
        while fast:
            line = slow.pop(0)
            while slow and plain.width(line + " " + slow[0], px) <= width:
                line += " " + slow.pop(0)
            assert raster.fill_line(fast, px, width) == line and fast == slow, (text, px, width)
        lo, hi = 0, len(text)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if plain.width(text[:mid] + "…", px) <= width else (lo, mid - 1)
        assert raster.fit_prefix(text, px, width) == lo, (text, px, width)
