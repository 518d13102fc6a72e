"""The speed mechanisms of the simulator change no output, and leave nothing stale behind."""

from __future__ import annotations

import gc

import numpy as np

from digirl.sim.apps import App
from digirl.sim.env import SimEnv
from digirl.sim.phone import Phone
from digirl.sim.ui import View


def _episode(env: SimEnv, seed: int, rng: np.random.Generator) -> None:
    env.reset(seed=seed)
    done = False
    while not done:
        a = env.cheat() if rng.random() < 0.7 else None
        _, _, term, trunc, _ = env.step(a if a is not None else env.action_space.sample(rng))
        done = term or trunc


def test_reset_releases_the_old_phone_without_cyclic_garbage() -> None:
    """A phone dropped at reset is freed by reference counting: no phone, app or view is left for
    the cycle collector (each episode's phone used to be ~330 objects of cyclic garbage)."""
    rng = np.random.default_rng(0)
    for taskset in ("general", "webshop"):
        env = SimEnv(taskset=taskset, perturbation=2)
        _episode(env, 0, rng)
        gc.collect()
        flags = gc.get_debug()
        gc.disable()
        try:
            for seed in range(1, 9):
                old = env.phone
                _episode(env, seed, rng)
                assert not vars(old)  # released: holds nothing
            env.reset(seed=99)
            gc.set_debug(gc.DEBUG_SAVEALL)
            gc.collect()
            left = [o for o in gc.garbage if isinstance(o, Phone | App | View)]
        finally:
            gc.set_debug(flags)
            gc.garbage.clear()
            gc.enable()
        assert not left, f"{taskset}: {len(left)} phone/app/view objects in cycles, e.g. {type(left[0]).__name__}"


def test_frame_cache_keeps_the_frames_that_recur_most() -> None:
    """Frames enter from their second sighting; a frame shown often is not evicted by frames that
    came back once, and a burst of one repeated frame still hits (the window)."""
    from digirl.sim.framecache import FrameCache

    cache = FrameCache(4)  # a window of 1, a main LRU of 3

    def show(key: str) -> bool:
        if cache.get(key) is not None:
            return True
        if cache.wants(key):
            cache.put(key, np.zeros(1))
        return False

    for key in ["home"] * 3 + ["a", "b", "c", "d"] * 2:
        show(key)
    for _ in range(3):
        show("home")  # main: a, b (2 sightings each), home (6); window: d
    for key in ["x", "x", "y", "y", "z", "z"]:
        show(key)  # each leaves the window with 2 sightings: not more than main's LRU (a)
    assert show("home") and show("z")
    assert not show("x") and show("x")  # x (3 sightings) pushes z into main in place of a
    assert show("z") and not show("a")
    assert len(cache) <= 4
    assert cache.get("w") is None and not cache.wants("w")
    assert not FrameCache(0).wants("home")
