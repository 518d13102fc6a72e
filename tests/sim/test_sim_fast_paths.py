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
