"""SimEnv: every family solved by the expert, near-misses fail, phone semantics, determinism, dynamics."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from digirl.core.actions import Action
from digirl.core.errors import UnsupportedInstructionError
from digirl.core.types import TaskSpec
from digirl.sim.env import SimEnv
from digirl.sim.intents import FAMILIES, Intent
from digirl.sim.samples import SAMPLE_INTENTS, spec_for
from digirl.sim.ui import H, W


def _task(text: str, intent: Intent) -> TaskSpec:
    return spec_for(text, intent)


def _run_expert(env: SimEnv, spec: TaskSpec, seed: int, noise: float = 0.0) -> tuple[float, int, dict[str, Any]]:
    env.reset(seed=seed, options={"task": spec})
    rng = np.random.default_rng(seed)
    total, n, done = 0.0, 0, False
    info: dict[str, Any] = {}
    while not done:
        a = env.cheat()
        assert a is not None
        if noise and rng.random() < noise:
            a = env.action_space.sample(rng)
        _, r, term, trunc, info = env.step(a)
        total, n, done = total + r, n + 1, term or trunc
    return total, n, info


def _tap_ref(env: SimEnv, ref: str) -> tuple[float, float, bool, bool, dict[str, Any]]:
    v = env.phone.tree().find(ref)
    assert v is not None, f"{ref} not on screen ({env.phone.fg}/{env.phone.current.screen()})"
    cx, cy = v.center()
    _, r, term, trunc, info = env.step(Action.tap(cx / W, cy / H))
    return r, 0.0, term, trunc, info


def _cheat(env: SimEnv) -> Action:
    a = env.cheat()
    assert a is not None
    return a


def _env_for(intent: Intent, level: int = 1) -> SimEnv:
    return SimEnv(taskset=intent.taskset, perturbation=level)


@pytest.mark.parametrize("level", [0, 1, 2])
def test_expert_solves_every_sample_family(level: int) -> None:
    covered = set()
    for text, intent in SAMPLE_INTENTS:
        env = _env_for(intent, level)
        spec = _task(text, intent)
        for seed in range(2):
            total, n, info = _run_expert(env, spec, seed)
            assert total == 1.0, (text, seed, info, env.state_summary())
            assert n <= spec.horizon and info["success"]
        covered.add(intent.family)
    assert covered == set(FAMILIES)


def test_expert_recovers_from_noise() -> None:
    solved = 0
    runs = 0
    for text, intent in SAMPLE_INTENTS[::3]:
        env = _env_for(intent)
        spec = TaskSpec(**{**_task(text, intent).to_dict(), "horizon": 30})
        for seed in range(3):
            total, _, _ = _run_expert(env, spec, seed, noise=0.2)
            solved += total > 0
            runs += 1
    assert solved / runs >= 0.85


def test_reward_terminates_once_and_complete_action() -> None:
    env = SimEnv(perturbation=0)
    spec = _task("Open the calculator app", Intent("open_app", {"app": "calculator"}))
    env.reset(seed=0, options={"task": spec})
    _, r, term, _trunc, info = env.step(Action.complete())  # predicate false → reward 0, episode over
    assert (r, term, info["success"]) == (0.0, True, False)
    env.reset(seed=0, options={"task": spec})
    r, _, term, _, info = (
        _tap_ref(env, "home.app.calculator") if env.phone.tree().find("home.app.calculator") else (0.0, 0.0, False, False, {})
    )
    if not term:  # calculator lives in the drawer
        env.step(Action.scroll("up", center=(0.5, 0.6)))
        r, _, term, _, info = _tap_ref(env, "drawer.app.calculator")
    assert (r, term, info["app"]) == (1.0, True, "calculator")


def test_suggestions_are_not_results() -> None:
    intent = Intent("web_search", {"query": "weather in paris", "key_terms": "weather paris"})
    env = SimEnv(perturbation=0)
    env.reset(seed=0, options={"task": _task("weather in paris", intent)})
    _tap_ref(env, "home.search")
    _, r, term, _, info = env.step(Action.type_text("weather in paris"))
    assert env.phone.current.screen() == "suggestions" and r == 0.0 and not term
    _, r, term, _, info = env.step(Action.enter())
    assert r == 1.0 and term and info["screen"] == "results"


def test_search_missing_key_term_fails() -> None:
    intent = Intent("web_search", {"query": "weather in paris", "key_terms": "weather paris"})
    env = SimEnv(perturbation=0)
    env.reset(seed=0, options={"task": _task("weather in paris", intent)})
    _tap_ref(env, "home.search")
    env.step(Action.type_text("weather in rome"))
    _, r, term, _, info = env.step(Action.enter())
    assert r == 0.0 and not term and info["screen"] == "results"


def _browse(env: SimEnv, url: str) -> dict[str, Any]:
    env.phone.launch("chrome")
    env.phone.apps["chrome"].open_url(url)  # type: ignore[attr-defined]
    env.phone.loading = 0
    env.phone.apps["chrome"].tabs[0].cookie = ""  # type: ignore[attr-defined]
    for t in env.phone.apps["chrome"].tabs:  # type: ignore[attr-defined]
        t.cookie = ""
    env.phone.invalidate()
    _, _, _, _, info = env.step(Action.tap(0.02, 0.012))  # status bar: a no-op step to evaluate
    return info


def test_shop_near_misses() -> None:
    intent = Intent("shop_select", {"site": "bestbuy.com", "query": "usb-c cable"})
    env = SimEnv(taskset="webshop", perturbation=0)
    env.reset(seed=0, options={"task": _task("select first", intent)})
    assert not _browse(env, "walmart.com/search?q=usb-c+cable")["success"]  # wrong site
    assert not _browse(env, "bestbuy.com/search?q=usb-c+cable")["success"]  # results, not the product
    from digirl.sim.apps.web import shop_results

    second = shop_results(env.phone.apps["chrome"], "bestbuy.com", "usb-c cable")[1]  # type: ignore[arg-type]
    assert not _browse(env, f"bestbuy.com/product/{second.pid}?q=usb-c+cable&rank=1")["success"]  # 2nd entry
    first = shop_results(env.phone.apps["chrome"], "bestbuy.com", "usb-c cable")[0]  # type: ignore[arg-type]
    assert _browse(env, f"bestbuy.com/product/{first.pid}?q=usb-c+cable&rank=0")["success"]


def test_shop_search_needs_results_page_of_that_site() -> None:
    intent = Intent("shop_search", {"site": "costco.com", "query": "bose headphones"})
    env = SimEnv(taskset="webshop", perturbation=0)
    env.reset(seed=0, options={"task": _task("search", intent)})
    assert not _browse(env, "costco.com")["success"]
    assert not _browse(env, "target.com/search?q=bose+headphones")["success"]
    assert _browse(env, "costco.com/search?q=bose+headphones")["success"]


def test_youtube_wrong_channel_and_not_latest() -> None:
    from digirl.sim.content import channel_videos, youtube_results

    intent = Intent("youtube_play", {"channel": "Taylor Swift", "kind": "latest"})
    env = SimEnv(perturbation=0)
    env.reset(seed=0, options={"task": _task("latest", intent)})
    env.phone.launch("youtube")
    yt = env.phone.apps["youtube"]
    other = next(v for v in youtube_results("taylor swift") if v.channel != "Taylor Swift")
    yt.push("watch", other)  # type: ignore[attr-defined]
    assert not env.step(Action.tap(0.02, 0.012))[4]["success"]
    yt.push("watch", channel_videos("Taylor Swift")[2])  # type: ignore[attr-defined]
    assert not env.step(Action.tap(0.02, 0.012))[4]["success"]  # right channel, not the newest
    yt.push("watch", channel_videos("Taylor Swift")[0])  # type: ignore[attr-defined]
    assert env.step(Action.tap(0.02, 0.012))[4]["success"]


def test_alarm_wrong_time_or_disabled() -> None:
    from digirl.sim.apps.clock import Alarm

    intent = Intent("set_alarm", {"time": "19:30"})
    env = SimEnv(perturbation=0)
    env.reset(seed=0, options={"task": _task("alarm", intent)})
    clock = env.phone.apps["clock"]
    clock.alarms.append(Alarm(7, 30, True))  # type: ignore[attr-defined]  # 7:30 AM, not PM
    clock.alarms.append(Alarm(19, 30, False))  # type: ignore[attr-defined]
    assert not env.step(Action.tap(0.02, 0.012))[4]["success"]
    clock.alarms[-1].enabled = True  # type: ignore[attr-defined]
    assert env.step(Action.tap(0.02, 0.012))[4]["success"]


def test_alarm_picker_by_arrows_and_ampm() -> None:
    intent = Intent("set_alarm", {"time": "13:05"})
    env = SimEnv(perturbation=0)
    spec = TaskSpec(**{**_task("alarm", intent).to_dict(), "horizon": 30})
    env.reset(seed=0, options={"task": spec})
    env.phone.launch("clock")
    env.phone.invalidate()
    _tap_ref(env, "clock.add")  # picker opens at 06:00 AM
    env.step(Action.back())  # hide the keyboard
    for _ in range(7):  # 6 → 1 with the hour ▲ (wraps 12 → 1)
        _tap_ref(env, "clock.picker.hour.up")
    for _ in range(5):
        _tap_ref(env, "clock.picker.minute.up")
    _tap_ref(env, "clock.picker.pm")
    r, _, term, _, info = _tap_ref(env, "clock.picker.ok")
    assert info["success"] and r == 1.0 and term


def test_notifications_switch_and_settings_page() -> None:
    intent = Intent("app_notifications", {"app": "YouTube", "state": "off"})
    env = SimEnv(perturbation=0)
    env.reset(seed=1, options={"task": _task("notif", intent)})
    assert env.phone.notifications["youtube"] is True  # the task starts from the other state
    total, _, _info = _run_expert(env, _task("notif", intent), 1)
    assert total == 1.0 and env.phone.notifications["youtube"] is False


def test_browser_tab_modes() -> None:
    for mode, item in (
        ("tab", "new_tab"),
        ("incognito_tab", "new_incognito_tab"),
        ("window", "new_window"),
        ("incognito_window", "new_incognito_window"),
    ):
        env = SimEnv(perturbation=0)
        env.reset(seed=0, options={"task": _task("tab", Intent("browser_tab", {"mode": mode}))})
        env.phone.launch("chrome")
        env.phone.invalidate()
        _tap_ref(env, "chrome.menu")
        wrong = "new_tab" if mode != "tab" else "new_incognito_tab"
        if mode in ("tab", "incognito_tab"):
            _, _, term, _, info = _tap_ref(env, f"chrome.menu.{wrong}")
            assert not info["success"]
            _tap_ref(env, "chrome.menu")
        _, _, term, _, info = _tap_ref(env, f"chrome.menu.{item}")
        assert info["success"] and term


def test_back_home_and_typing_without_focus() -> None:
    env = SimEnv(perturbation=0)
    env.reset(seed=0, options={"task": _task("x", Intent("check_email"))})
    _, _r, _, _, info = env.step(Action.type_text("hello"))
    assert info["no_focus"] and info["app"] == "launcher"
    _, _, _, _, info = env.step(Action.tap(0.5, 0.5))  # nothing there: harmless
    assert info["app"] == "launcher"
    _tap_ref(env, "home.search")
    assert env.phone.keyboard_visible()
    env.step(Action.back())  # 1st back: keyboard
    assert not env.phone.keyboard_visible() and env.phone.fg == "google"
    env.step(Action.back())  # 2nd: leave search mode, 3rd: home
    env.step(Action.back())
    assert env.phone.fg == "launcher"
    env.step(Action.scroll("up", center=(0.5, 0.6)))
    assert env.phone.current.screen() == "drawer"
    _, _, _, _, info = env.step(Action.home())
    assert info["screen"] == "home"
    _, _, _, _, info = env.step(Action.enter())
    assert info["no_focus"]


def test_scrolling_reveals_below() -> None:
    env = SimEnv(perturbation=0)
    spec = TaskSpec(**{**_task("x", Intent("check_email")).to_dict(), "horizon": 30})
    env.reset(seed=0, options={"task": spec})
    env.phone.launch("settings")
    env.phone.invalidate()
    _tap_ref(env, "settings.apps")
    before = {e.text for e in env._elements()}
    env.step(Action.scroll("up", center=(0.5, 0.6), length=0.5))  # finger up: content moves up
    after = {e.text for e in env._elements()}
    labels = {a.label for a in env.phone.apps.values()}
    assert "Amazon Shopping" in before and "Amazon Shopping" not in after and (after - before) & labels
    for _ in range(3):
        env.step(Action.scroll("up", center=(0.5, 0.6), length=0.5))
    assert "WhatsApp" in {e.text for e in env._elements()}
    for _ in range(4):
        env.step(Action.scroll("down", center=(0.5, 0.6), length=0.5))
    assert "Amazon Shopping" in {e.text for e in env._elements()}


def test_determinism_same_seed_same_actions() -> None:
    spec = _task(*SAMPLE_INTENTS[-1])
    runs = []
    for _ in range(2):
        env = SimEnv(taskset="webshop", perturbation=2)
        obs, _ = env.reset(seed=11, options={"task": spec})
        rng = np.random.default_rng(3)
        shots, rewards = [obs.screenshot], []
        for _ in range(12):
            a = _cheat(env) if rng.random() < 0.7 else env.action_space.sample(rng)
            obs, r, term, trunc, _ = env.step(a)
            shots.append(obs.screenshot)
            rewards.append(r)
            if term or trunc:
                break
        runs.append((shots, rewards))
    assert runs[0][1] == runs[1][1]
    assert all(np.array_equal(a, b) for a, b in zip(runs[0][0], runs[1][0]))


def test_popups_appear_and_expert_dismisses_them() -> None:
    seen = {"cookie": 0, "rating": 0, "loading": 0}
    for seed in range(12):
        env = SimEnv(taskset="webshop", perturbation=2)
        spec = _task(*SAMPLE_INTENTS[16])
        env.reset(seed=seed, options={"task": spec})
        done = False
        while not done:
            tree = env.phone.tree()
            seen["cookie"] += tree.find("cookie.dismiss") is not None
            seen["loading"] += env.phone.loading > 0
            seen["rating"] += env.phone.popup is not None
            _, _, term, trunc, info = env.step(_cheat(env))
            done = term or trunc
        assert info["success"]
    assert seen["cookie"] > 0 and seen["loading"] > 0
    calm = SimEnv(taskset="webshop", perturbation=0)
    calm.reset(seed=0, options={"task": _task(*SAMPLE_INTENTS[16])})
    assert calm.phone.dyn.cookie_p == 0 and calm.phone.dyn.load_range == (0, 0)


def test_rating_popup_blocks_and_back_closes() -> None:
    env = SimEnv(perturbation=2)
    for seed in range(40):
        env.reset(seed=seed, options={"task": _task("x", Intent("check_email"))})
        env.phone.launch("youtube")
        if env.phone.popup is not None:
            break
    assert env.phone.popup is not None
    env.phone.invalidate()
    _, _, _, _, info = env.step(Action.tap(0.5, 0.1))  # behind the scrim: blocked
    assert env.phone.popup is not None and info["tapped"] == ""
    env.step(Action.back())
    assert env.phone.popup is None and env.phone.fg == "youtube"


def test_world_version_changes_content_and_layout() -> None:
    spec = _task(*SAMPLE_INTENTS[16])
    shots = []
    for wv in (0, 1):
        env = SimEnv(taskset="webshop", perturbation=0, world_version=wv)
        obs, _ = env.reset(seed=0, options={"task": spec})
        shots.append(obs.screenshot)
        total, _, _ = _run_expert(env, spec, 0)
        assert total == 1.0
    assert not np.array_equal(shots[0], shots[1])


def test_world_two_replaces_the_search_widget_with_a_google_icon() -> None:
    """A launcher update (world version 2, and stage 2 of the app-update timeline, version 4): no home
    search widget, a Google app icon in the grid; web search starts from that icon, one step longer
    for the expert."""
    spec = _task(*SAMPLE_INTENTS[0])
    steps = {}
    for wv, widget_at in ((0, "top"), (1, "bottom"), (2, "none"), (4, "none")):
        env = SimEnv(taskset="general", perturbation=0, world_version=wv)
        env.reset(seed=0, options={"task": spec})
        widget, icon = env.phone.find("home.search"), env.phone.find("home.app.google")
        assert (widget is None, icon is not None) == ((widget_at == "none"),) * 2
        assert env.phone.dyn.search_widget == widget_at
        total, steps[wv], _ = _run_expert(env, spec, 0)
        assert total == 1.0
    assert steps[2] == steps[4] == steps[0] + 1  # tap the icon, then the app's search box
    env = SimEnv(taskset="general", perturbation=0, world_version=2)
    env.reset(seed=0, options={"task": spec})
    _tap_ref(env, "home.app.google")
    assert env.phone.fg == "google" and env.phone.apps["google"].focused is None


def test_instruction_strings_and_generic() -> None:
    env = SimEnv()
    obs, _info = env.reset(seed=0, options={"task": "What's the weather like in Tokyo?"})
    assert env.intent.family == "web_search" and obs.instruction.startswith("What")
    with pytest.raises(UnsupportedInstructionError):
        env.reset(seed=0, options={"task": "plorb the frobnicator"})
    env = SimEnv(allow_generic=True)
    env.reset(seed=0, options={"task": "plorb the frobnicator"})
    assert env.intent.family == "web_search"
    env.reset(seed=0)  # sampled from the task set
    assert env.task is not None and env.task.horizon == 10


def test_elements_and_observation_contract() -> None:
    env = SimEnv(width=180, height=400)
    obs, _ = env.reset(seed=0, options={"task": _task(*SAMPLE_INTENTS[0])})
    assert obs.screenshot.shape == (400, 180, 3) and obs.screenshot.dtype == np.uint8
    els = obs.elements or ()
    assert any(e.text == "Search" and e.clickable for e in els)
    assert all(0 <= v <= 1 for e in els for v in e.bounds)
    env.step(_cheat(env))
    obs, *_ = env.step(_cheat(env))
    assert any(e.focused and e.kind == "input" for e in obs.elements or ())
    s = env.state_summary()
    assert s["app"] == "google" and s["intent"]["family"] == "web_search"


def test_registered_ids_and_check_env() -> None:
    from digirl.envs.registry import make

    for env_id, ts in (("digirl/sim-general-v0", "general"), ("digirl/sim-webshop-test-v0", "webshop")):
        env = make(env_id, perturbation=1)
        assert isinstance(env, SimEnv) and env.taskset == ts
        checker = pytest.importorskip("digirl.envs.checker")
        checker.check_env(env, seeds=(0, 1), check_expert=True, max_tasks=3)
