"""Opt-in variation knobs: per-device variation (``device_variation``) and interruptions (``interruptions``).

Off by default (the golden digests pin the default ids); on, each is seeded by the reset seed, and
the expert solves every task under it.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from digirl.core.actions import Action
from digirl.envs.registry import make
from digirl.sim.apps.launcher import _date
from digirl.sim.env import SimEnv
from digirl.sim.perturb import DATE_FORMATS, DEVICE_POOLS, LEVELS, Device, Dynamics, dark_theme
from digirl.sim.ui import H, W


def _expert_episode(env: SimEnv, task: object, seed: int) -> tuple[float, dict[str, object]]:
    env.reset(seed=seed, options={"task": task})
    total, done, info = 0.0, False, {}
    while not done:
        _, r, term, trunc, info = env.step(env.cheat())
        total, done = total + r, term or trunc
    return total, info


# ---------------------------------------------------------------- devices
def test_device_pools_hold_out_every_fifth_device() -> None:
    train, test = set(DEVICE_POOLS["train"]), set(DEVICE_POOLS["test"])
    assert not train & test and train | test == set(range(1000)) and len(test) == 200
    assert all(i % 5 == 4 for i in test)


def test_a_device_id_names_the_same_phone() -> None:
    a, b = Device.build(17), Device.build(17)
    assert a == b and a != Device.build(18)
    devices = [Device.build(i) for i in range(200)]
    assert {d.date_format for d in devices} == set(DATE_FORMATS)
    assert 0.2 < sum(d.dark for d in devices) / 200 < 0.5  # about a third run the dark theme
    assert len({d.wallpaper for d in devices}) > 150 and len({d.dock for d in devices}) == 24


def test_devices_are_off_by_default_and_drawn_from_their_pool() -> None:
    env = SimEnv(taskset="general", perturbation=0)
    env.reset(seed=0)
    assert env.phone.dyn.device is None
    for pool in ("train", "test"):
        env = SimEnv(taskset="general", perturbation=0, device_variation=pool)
        ids = set()
        for seed in range(20):
            env.reset(seed=seed)
            assert env.phone.dyn.device is not None
            ids.add(env.phone.dyn.device.id)
        assert ids <= set(DEVICE_POOLS[pool]) and len(ids) >= 15
    with pytest.raises(ValueError, match="device_variation"):
        SimEnv(device_variation="holdout")


def test_registered_device_ids() -> None:
    for ts in ("general", "webshop", "phone"):
        env = make(f"digirl/sim-{ts}-devices-test-v0")
        assert env.split == "test" and env.device_variation == "test"
        env = make(f"digirl/sim-{ts}-devices-v0")
        assert env.split == "train" and env.device_variation == "train"


def test_dark_theme_inverts_lightness_and_keeps_hue() -> None:
    px = np.array([[[255, 255, 255], [0, 0, 0], [66, 133, 244], [32, 33, 36]]], np.uint8)
    assert dark_theme(px.copy()).tolist() == [[[0, 0, 0], [255, 255, 255], [11, 78, 189], [219, 220, 223]]]


def _home(env: SimEnv, seed: int) -> tuple[list[str], np.ndarray]:
    obs, _ = env.reset(seed=seed, options={"task": "Open Gmail"})
    icons = sorted((n for n in env.phone.nodes() if n.ref.startswith("home.app.")), key=lambda n: (n.rect[1], n.rect[0]))
    return [n.ref for n in icons], obs.screenshot


def test_devices_change_layout_wallpaper_theme_and_date() -> None:
    env = SimEnv(taskset="general", perturbation=0, device_variation="train")
    factory, _ = _home(SimEnv(taskset="general", perturbation=0), 0)
    layouts, darks = set(), set()
    for seed in range(12):
        order, shot = _home(env, seed)
        dev = env.phone.dyn.device
        assert dev is not None and sorted(order) == sorted(factory)
        layouts.add(tuple(order))
        darks.add(dev.dark)
        light = dev.wallpaper if not dev.dark else dark_theme(np.array([[dev.wallpaper]], np.uint8))[0, 0].tolist()
        assert shot[300, 3].tolist() == list(light)  # the wallpaper at the left edge
        date = _date(env.phone.dyn.salt % 7, dev.date_format)
        assert date in {e.text for e in env._elements()} and ("/" in date) == (dev.date_format == "{mm}/{dd}")
        assert (order, shot.tobytes()) == tuple(x if i == 0 else x.tobytes() for i, x in enumerate(_home(env, seed)))
    assert len(layouts) >= 10 and darks == {True, False}


@pytest.mark.parametrize("taskset", ["general", "webshop", "phone"])
def test_expert_solves_tasks_on_held_out_devices(taskset: str) -> None:
    env = SimEnv(taskset=taskset, split="test", perturbation=1, device_variation="test")
    tasks = env.tasks()
    for i in range(0, len(tasks), max(1, len(tasks) // 10)):
        total, _ = _expert_episode(env, tasks[i], i)
        assert total == 1.0, tasks[i].instruction


# ---------------------------------------------------------------- interruptions
def test_interruptions_off_by_default() -> None:
    env = SimEnv(taskset="webshop", perturbation=1)
    _, info = env.reset(seed=0)
    _, _, _, _, info = env.step(env.cheat())
    assert "interruptions" not in info
    d = Dynamics.sample(1, 0, np.random.default_rng(0))
    assert (d.cookie_p, d.rating_p, d.interstitial_p, d.update_p) == (LEVELS[1].cookie, LEVELS[1].rating, 0.0, 0.0)
    with pytest.raises(ValueError, match="interruptions"):
        SimEnv(interruptions=1.5)


def test_interruptions_rate_zero_shows_none() -> None:
    env = SimEnv(taskset="webshop", perturbation=2, interruptions=0.0)
    for seed in range(6):
        _, info = _expert_episode(env, None, seed)
        assert info["interruptions"] == 0 and env.phone.interruptions == []


def test_every_kind_of_interruption_appears_is_counted_and_the_expert_gets_past_it() -> None:
    env = SimEnv(taskset="webshop", split="test", perturbation=0, interruptions=0.5)
    kinds: Counter[str] = Counter()
    for seed in range(24):
        total, info = _expert_episode(env, None, seed)
        assert total == 1.0
        assert info["interruptions"] == len(env.phone.interruptions)
        kinds.update(env.phone.interruptions)
    env = SimEnv(taskset="phone", split="test", perturbation=0, interruptions=0.5)
    for seed in range(24):
        total, _ = _expert_episode(env, None, seed)
        assert total == 1.0
        kinds.update(env.phone.interruptions)
    assert set(kinds) == {"cookie", "interstitial", "rating", "permission", "update"}, kinds


def test_interruptions_are_seeded() -> None:
    def run(seed: int) -> list[str]:
        env = SimEnv(taskset="webshop", perturbation=1, interruptions=0.6)
        _expert_episode(env, None, seed)
        return list(env.phone.interruptions)

    runs = [run(s) for s in range(8)]
    assert runs == [run(s) for s in range(8)] and len({tuple(r) for r in runs}) > 1


def test_interstitial_closes_and_its_ad_leads_away() -> None:
    env = SimEnv(taskset="webshop", perturbation=0, interruptions=1.0)
    env.reset(seed=0, options={"task": "Go to costco.com, search for usb cable and select the first entry"})
    for _ in range(12):
        if env.phone.find("interstitial.close") is not None:
            break
        env.step(env.cheat())
    close = env.phone.find("interstitial.close")
    assert close is not None and env.phone.interruptions[-1] == "interstitial"
    cx, cy = close.center()
    _, _, _, _, info = env.step(Action.tap(cx / W, cy / H))
    assert env.phone.find("interstitial") is None and info["interruptions"] == len(env.phone.interruptions)
    browser = env.phone.apps["chrome"]
    browser.open_url("bestbuy.com")  # a new page load: the interstitial again (rate 1)
    env.phone.loading = 0
    env.phone.invalidate()
    ad = env.phone.find("interstitial.ad")
    assert ad is not None
    cx, cy = ad.center()
    env.step(Action.tap(cx / W, cy / H))
    assert browser.tab.url.startswith("ad.example")


@pytest.mark.slow
@pytest.mark.parametrize("taskset", ["general", "webshop", "phone"])
def test_expert_solves_every_task_on_varied_devices_with_interruptions(taskset: str) -> None:
    for split, pool in (("train", "train"), ("test", "test")):
        for level in (0, 1, 2):
            env = SimEnv(taskset=taskset, split=split, perturbation=level, device_variation=pool, interruptions=0.5)
            for i, task in enumerate(env.tasks()):
                total, _ = _expert_episode(env, task, i)
                assert total == 1.0, (task.instruction, split, level)
