"""Every app renders and reacts; the toolkit, renderer and procedural content behave."""

from __future__ import annotations

import numpy as np
import pytest

from digirl.core.actions import Action
from digirl.sim.apps import BUILTIN
from digirl.sim.content import answer_card, card_kind, products, terms_in
from digirl.sim.phone import Phone, resolve_app
from digirl.sim.render import Renderer
from digirl.sim.ui import H, View, W, box, label, scroll_list


@pytest.fixture(scope="module")
def renderer() -> Renderer:
    return Renderer(270, 600)


def _tap(phone: Phone, ref: str) -> None:
    v = phone.tree().find(ref)
    assert v is not None, ref
    phone.apply(Action.tap(v.center()[0] / W, v.center()[1] / H))
    phone.end_step()


@pytest.mark.parametrize("key", [k for k in BUILTIN if k != "launcher"])
def test_each_app_renders_and_reacts(key: str, renderer: Renderer) -> None:
    phone = Phone()
    home = renderer.render(phone.tree())
    phone.launch(key)
    assert phone.fg == key
    shot = renderer.render(phone.tree())
    assert shot.shape == (600, 270, 3) and shot.dtype == np.uint8
    assert not np.array_equal(shot, home) and shot.std() > 5
    # tapping the first clickable element of the app's content changes something or is harmless
    before = phone.summary()
    clickable = [v for v in _content_views(phone.tree()) if v.on_tap is not None]
    assert clickable, f"{key} has nothing to tap"
    v = clickable[len(clickable) // 2]
    phone.apply(Action.tap(v.center()[0] / W, v.center()[1] / H))
    phone.end_step()
    renderer.render(phone.tree())
    assert phone.summary() is not before


def _content_views(root: View) -> list[View]:
    from digirl.sim.ui import flatten

    return [v for v in flatten(root) if v.ref and not v.ref.startswith(("nav.", "status", "kb."))]


def test_calculator_computes() -> None:
    phone = Phone()
    phone.launch("calculator")
    keys = {v.text: v.ref for v in _content_views(phone.tree()) if v.ref.startswith("calc.key")}
    for k in ("7", "×", "6", "+", "2", "="):
        _tap(phone, keys[k])
    assert phone.apps["calculator"].result == "44"  # type: ignore[attr-defined]


def test_play_store_install_progress_then_open() -> None:
    phone = Phone()
    phone.launch("playstore")
    store = phone.apps["playstore"]
    store.run_query("Duolingo")  # type: ignore[attr-defined]
    phone.invalidate()
    assert not phone.is_installed("Duolingo")
    _tap(phone, "store.result.0.install")
    assert phone.tree().find("store.result.0.progress") is not None
    _tap(phone, "status.clock")
    assert phone.is_installed("Duolingo") and phone.tree().find("store.result.0.open") is not None
    _tap(phone, "store.result.0.open")
    assert phone.fg == resolve_app("Duolingo") == "x.duolingo"


def test_keyboard_letters_backspace_and_enter() -> None:
    phone = Phone()
    _tap(phone, "home.search")
    for code in ("c", "a", "t", "s", "backspace"):
        _tap(phone, f"kb.{code}")
    g = phone.apps["google"]
    assert g.fields["q"] == "cat"
    _tap(phone, "kb.enter")
    assert g.screen() == "results" and g.query == "cat"  # type: ignore[attr-defined]


def test_drawer_search_and_swipes() -> None:
    phone = Phone()
    phone.apply(Action.scroll("up", center=(0.5, 0.6)))
    assert phone.current.screen() == "drawer"
    _tap(phone, "drawer.search")
    phone.apply(Action.type_text("netf"))
    phone.apply(Action.enter())
    assert phone.fg == "x.netflix"


def test_app_name_resolution() -> None:
    assert resolve_app("Google Maps") == "maps"
    assert resolve_app("the Gmail app") == "x.thegmail"  # the parser strips articles, not the phone
    assert resolve_app("Chrome") == resolve_app("Google Chrome") == "chrome"
    assert resolve_app("Some New App") == "x.somenew"


def test_scroll_list_clips_and_records_offscreen_rows() -> None:
    rows = [box((0, 60 * i, 360, 60 * i + 60), (255, 255, 255), ref=f"r{i}", on_tap=lambda: None) for i in range(30)]
    lst = scroll_list("k", (0, 100, 360, 500), rows, {"k": 200})
    shown = [c.ref for c in lst.children]
    assert "r0" not in shown and "r4" in shown and "r29" not in shown
    assert lst.scroll is not None and lst.scroll.rows["r29"] == (1740, 1800)
    r4 = lst.children[0]
    assert r4.clip == (0, 100, 360, 500) and r4.visible_rect() is not None


def test_renderer_caches_and_scales() -> None:
    tree = box((0, 0, W, H), (250, 250, 250), children=[label((20, 100, 340, 140), "Hello ★ world", size=20)])
    small, big = Renderer(180, 400), Renderer(540, 1200)
    a, b = small.render(tree), small.render(tree)  # a frame enters the cache when drawn a second time
    assert np.array_equal(a, b) and small.stats["frame_hits"] == 0
    a[:] = 0  # callers own their copy
    assert np.array_equal(small.render(tree), b) and small.stats["frame_hits"] == 1
    assert big.render(tree).shape == (1200, 540, 3)
    with pytest.raises(ValueError):
        Renderer(10, 10)


def test_content_is_procedural_and_deterministic() -> None:
    assert card_kind("weather in Ulaanbaatar tomorrow") == "weather"
    assert card_kind("1 usd to eur") == "exchange"
    assert card_kind("what is the capital of Freedonia") == "capital"
    assert card_kind("how fast is a cheetah") == "speed"
    assert card_kind("best pizza restaurants in Naples") == "restaurants"
    assert card_kind("some random words") == "generic"
    assert answer_card("weather in Zzyzx") == answer_card("weather in Zzyzx")
    assert "Peru" in answer_card("capital of peru").title and answer_card("capital of peru").headline == "Lima"
    p1, p2 = products("costco.com", "usb cable"), products("target.com", "usb cable")
    assert p1 == products("costco.com", "usb cable") and p1 != p2
    assert products("costco.com", "usb cable", world_version=1) != p1
    assert terms_in(["headphones", "bose"], "Bose headphone") and not terms_in(["bose"], "sony headphones")


def test_the_alarm_picker_takes_a_time_as_people_write_it():
    """Typing "6:45pm" sets hour, minute and PM at once, so a policy that types the instruction's own
    words can set any alarm; plain digits still fill the fields one by one."""
    from digirl.core.actions import Action
    from digirl.policies.features import text_to_mask, words
    from digirl.sim.env import SimEnv

    env = SimEnv(perturbation=0)
    for instruction, typed in (("Set an alarm for 6:45pm", "6:45pm"), ("Set an alarm for 12am", "12am")):
        env.reset(seed=0, options={"task": instruction})
        texts = []
        done = False
        while not done:
            a = env.cheat()
            assert a is not None
            if a.type.name == "TYPE":
                texts.append(a.text)
            _, r, term, trunc, _ = env.step(a)
            done = term or trunc
        assert r == 1.0 and texts == [typed]
        assert text_to_mask(typed, words(instruction)).sum() == 1  # one word of the instruction
    # a wrong time typed as words leaves the alarm wrong (success is read from the alarm list)
    env.reset(seed=0, options={"task": "Set an alarm for 6:45pm"})
    for _ in range(2):
        env.step(env.cheat())
    env.step(Action.type_text("6:45am"))
    clock = env.phone.apps["clock"]
    assert (clock.fields["hour"], clock.fields["minute"], clock.picker.pm) == ("06", "45", False)
