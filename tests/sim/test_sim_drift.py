"""World versions from 3 on: a timeline of app updates that move and rename what policies rely on.

Versions 0-2 are pinned (the golden digests cover 0 and 1; their Dynamics fields are checked here);
the updates must change what the screen shows and where, deterministically, and the expert must
still solve every task under them.
"""

from __future__ import annotations

import numpy as np
import pytest

from digirl.core.actions import Action
from digirl.sim.env import SimEnv
from digirl.sim.perturb import _RENAMES, DRIFT_FROM, UPDATES, Dynamics, drift_stage
from digirl.sim.ui import H, W


def _expert_episode(env: SimEnv, task: object, seed: int) -> tuple[float, int]:
    env.reset(seed=seed, options={"task": task})
    total, n, done = 0.0, 0, False
    while not done:
        _, r, term, trunc, _ = env.step(env.cheat())
        total, n, done = total + r, n + 1, term or trunc
    return total, n


def _tap(env: SimEnv, ref: str) -> None:
    v = env.phone.tree().find(ref)
    assert v is not None, f"{ref} not on screen ({env.phone.fg}/{env.phone.current.screen()})"
    cx, cy = v.center()
    env.step(Action.tap(cx / W, cy / H))


def test_pinned_versions_have_no_updates() -> None:
    assert DRIFT_FROM == 3 and [drift_stage(v) for v in range(6)] == [0, 0, 0, 1, 2, 3]
    for v in (0, 1, 2):
        for level in (0, 1, 2):
            d = Dynamics.sample(level, v, np.random.default_rng(7))
            assert d.stage == 0 and not d.widget_opens_feed and d.widget_hint == "Search"
            assert (d.home_layout, d.settings_layout, d.serp_cards, d.shop_cards) == (0, 0, 0, 0)
            assert d.renames == _RENAMES[v]
    assert Dynamics().renames == {} and Dynamics().text("install", "Install") == "Install"


def test_timeline_stages_are_cumulative() -> None:
    assert {s for s, _ in UPDATES} == {1, 2, 3}
    d3, d4 = (Dynamics.sample(0, v, np.random.default_rng(0)) for v in (3, 4))
    assert (d3.stage, d3.search_widget, d3.widget_hint, d3.serp_cards, d3.shop_cards) == (1, "bottom", "Ask Google", 1, 0)
    assert (d4.stage, d4.search_widget, d4.serp_cards, d4.shop_cards) == (2, "none", 1, 1)
    assert d3.widget_opens_feed and d4.widget_opens_feed
    assert d3.text("install", "Install") == "Get" and d4.text("install", "Install") == "Install app"
    assert d3.text("settings.apps", "Apps") == "Apps & notifications" and d4.text("settings.apps", "Apps") == "Applications"
    # The draws from the reset generator are those of the pinned versions (the episode stream is the same).
    for level in (0, 1, 2):
        rngs = [np.random.default_rng(3) for _ in range(2)]
        a, b = Dynamics.sample(level, 1, rngs[0]), Dynamics.sample(level, 3, rngs[1])
        assert a.salt == b.salt and a.list_offset == b.list_offset and rngs[0].random() == rngs[1].random()


def test_widget_opens_the_feed_and_search_takes_one_more_step() -> None:
    task = "What's the weather like in Paris?"
    steps = {}
    for v in (0, 1, 3):
        env = SimEnv(taskset="general", perturbation=0, world_version=v)
        total, steps[v] = _expert_episode(env, task, 0)
        assert total == 1.0
    assert steps[3] == steps[1] + 1 == steps[0] + 1
    env = SimEnv(taskset="general", perturbation=0, world_version=3)
    env.reset(seed=0, options={"task": task})
    widget = env.phone.tree().find("home.search")
    assert widget is not None and widget.placeholder == "Ask Google"
    _tap(env, "home.search")
    g = env.phone.apps["google"]
    assert env.phone.fg == "google" and g.screen() == "feed" and g.focused is None
    _, _, _, _, info = env.step(Action.type_text("weather"))
    assert info["no_focus"] is True  # typing straight away, as before the update, does nothing


def _home_order(v: int, seed: int) -> list[str]:
    env = SimEnv(taskset="general", perturbation=0, world_version=v)
    env.reset(seed=seed, options={"task": "Open Gmail"})
    icons = [n for n in env.phone.nodes() if n.ref.startswith("home.app.")]
    return [n.ref for n in sorted(icons, key=lambda n: (n.rect[1], n.rect[0]))]


def test_launcher_update_moves_icons_the_same_way_in_every_episode() -> None:
    base = _home_order(0, 0)
    for v in (3, 4):
        moved = _home_order(v, 0)
        assert moved == _home_order(v, 5)  # a property of the world, not of the episode
        assert moved != base and set(moved) - {"home.app.google"} == set(base)
    assert _home_order(3, 0) != _home_order(4, 0)


def test_settings_update_reorders_and_renames_the_menu() -> None:
    def menu(v: int) -> list[str]:
        env = SimEnv(taskset="phone", perturbation=0, world_version=v)
        env.reset(seed=0, options={"task": "Open settings"})
        env.phone.launch("settings")
        return [title for _, title, _, _ in env.phone.apps["settings"].menu()]

    assert menu(0) == menu(1) == menu(2)
    assert menu(3) != menu(0) and sorted(menu(3)) == sorted(menu(0)) and menu(4) != menu(3)
    env = SimEnv(taskset="phone", perturbation=0, world_version=3)
    env.reset(seed=0, options={"task": "Open settings"})
    env.phone.launch("settings")
    texts = {n.text for n in env.phone.nodes() if n.text}
    assert "Apps & notifications" in texts or "Connections" in texts
    assert "Apps" not in texts and "Network & internet" not in texts
    env.phone.apps["settings"].push("apps")
    env.phone.invalidate()
    assert "Apps & notifications" in {n.text for n in env.phone.nodes() if n.text}  # the page title follows


def test_result_cards_are_redesigned() -> None:
    def first_result(v: int, ref: str, task: str, taskset: str) -> tuple[float, ...]:
        env = SimEnv(taskset=taskset, perturbation=0, world_version=v)
        env.reset(seed=0, options={"task": task})
        for _ in range(20):  # the expert's episode ends on the results page of a search task: look after each step
            if env.phone.find(ref) is not None:
                break
            env.step(env.cheat())
        v_ = env.phone.find(ref)
        assert v_ is not None
        return v_.rect

    for v, h in ((0, 96), (3, 120), (4, 120)):
        r = first_result(v, "result.1", "What's the weather like in Paris?", "general")
        assert r[3] - r[1] == h
    shop = "Go to bestbuy.com, search for usb cable and select the first entry"
    for v, h in ((0, 116), (3, 116), (4, 132)):
        r = first_result(v, "product.1", shop, "webshop")
        assert r[3] - r[1] == h


def test_updated_worlds_are_deterministic() -> None:
    def run(seed: int) -> list[bytes]:
        env = SimEnv(taskset="webshop", perturbation=2, world_version=4)
        obs, _ = env.reset(seed=seed)
        shots = [obs.screenshot.tobytes()]
        rng = np.random.default_rng(seed)
        for _ in range(12):
            a = env.cheat() if rng.random() < 0.7 else env.action_space.sample(rng)
            obs, _, term, trunc, _ = env.step(a)
            shots.append(obs.screenshot.tobytes())
            if term or trunc:
                break
        return shots

    assert run(3) == run(3) and run(3) != run(4)


@pytest.mark.parametrize("version", [3, 4, 5])
@pytest.mark.parametrize("taskset", ["general", "webshop", "phone"])
def test_expert_solves_sampled_tasks_after_updates(taskset: str, version: int) -> None:
    env = SimEnv(taskset=taskset, split="test", perturbation=version - 3, world_version=version)
    tasks = env.tasks()
    for i in range(0, len(tasks), max(1, len(tasks) // 12)):
        total, _ = _expert_episode(env, tasks[i], i)
        assert total == 1.0, (tasks[i].instruction, version)


@pytest.mark.slow
@pytest.mark.parametrize("taskset", ["general", "webshop", "phone"])
def test_expert_solves_every_task_after_updates(taskset: str) -> None:
    for version in (3, 4):
        for level in (0, 1, 2):
            for split in ("train", "test"):
                env = SimEnv(taskset=taskset, split=split, perturbation=level, world_version=version)
                for i, task in enumerate(env.tasks()):
                    total, _ = _expert_episode(env, task, i)
                    assert total == 1.0, (task.instruction, version, level, split)


def test_stage_three_moves_toggles_to_other_settings_pages() -> None:
    from digirl.sim.intents import Intent
    from digirl.sim.samples import spec_for

    for name, old, new in (("hotspot", "network", "connected"), ("location", "location", "security")):
        task = spec_for(f"Turn on {name}", Intent("toggle_setting", {"setting": name, "state": "on"}))
        for v, page in ((0, old), (4, old), (5, new)):
            env = SimEnv(taskset="phone", perturbation=0, world_version=v)
            total, _ = _expert_episode(env, task, 0)
            assert total == 1.0 and env.phone.apps["settings"].top[0] == page, (name, v)
        env = SimEnv(taskset="phone", perturbation=0, world_version=5)
        env.reset(seed=0, options={"task": task})
        env.phone.launch("settings")
        env.phone.apps["settings"].push(old)
        env.phone.invalidate()
        assert env.phone.find(f"settings.{name}.switch") is None  # no longer on its factory page
