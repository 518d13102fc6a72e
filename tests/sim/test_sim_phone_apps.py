"""The phone-side apps driven through taps and typing: shade, settings sliders and toggles, timer,
dialer, messages, contacts, calendar, camera and photos, Play Store updates and uninstall, Chrome."""

from __future__ import annotations

from typing import Any

from digirl.core.actions import Action
from digirl.sim.device import get_setting
from digirl.sim.phone import Phone
from digirl.sim.render import Renderer
from digirl.sim.ui import H, W


def _tap(phone: Phone, ref: str) -> None:
    v = phone.tree().find(ref)
    assert v is not None, f"{ref} not on screen ({phone.fg}/{phone.current.screen()})"
    phone.apply(Action.tap(v.center()[0] / W, v.center()[1] / H))
    phone.end_step()


def _type(phone: Phone, text: str, enter: bool = False) -> None:
    phone.apply(Action.type_text(text))
    if enter:
        phone.apply(Action.enter())
    phone.end_step()


def test_shade_from_the_top_edge_tiles_and_back() -> None:
    phone = Phone()
    phone.launch("settings")
    phone.apply(Action.swipe((0.5, 0.01), (0.5, 0.5)))
    assert phone.fg == "shade"
    Renderer(270, 600).render(phone.tree())
    _tap(phone, "shade.tile.flashlight")
    assert get_setting(phone, "flashlight")
    _tap(phone, "shade.clear")
    assert not phone.notices and phone.tree().find("shade.empty") is not None
    phone.apply(Action.back())
    assert phone.fg == "settings"
    phone.go_home()
    phone.apply(Action.scroll("down", center=(0.5, 0.5)))  # not from the status bar: no shade
    assert phone.fg == "launcher"


def test_settings_slider_and_airplane_mode() -> None:
    phone = Phone()
    phone.launch("settings")
    s: Any = phone.apps["settings"]
    s.push("display")
    phone.invalidate()
    _tap(phone, "settings.brightness.slider.85")
    assert phone.settings.brightness == 85
    assert "85%" in phone.tree().find("settings.brightness.slider").placeholder  # type: ignore[union-attr]
    s.push("network")
    phone.invalidate()
    _tap(phone, "settings.airplane_mode.switch")
    assert phone.airplane and not phone.wifi and not phone.settings.mobile_data


def test_timer_typed_and_started_then_ticks() -> None:
    phone = Phone()
    phone.launch("clock")
    _tap(phone, "clock.tab.timer")
    _tap(phone, "clock.timer")
    _type(phone, "130", enter=True)
    clock: Any = phone.apps["clock"]
    assert clock.timer_running and clock.timer_total == 90
    phone.end_step()
    assert clock.timer_left < 90


def test_dialer_messages_and_contacts() -> None:
    phone = Phone()
    phone.launch("phone")
    _tap(phone, "phone.search")
    _type(phone, "hana")
    _tap(phone, "phone.result.0.call")
    dialer: Any = phone.apps["phone"]
    assert dialer.in_call is not None and dialer.in_call.who == "Hana Sato"
    _tap(phone, "phone.end")
    phone.launch("messages")
    _tap(phone, "messages.new")
    _type(phone, "Kevin")
    _tap(phone, "messages.to.sugg.0")
    _type(phone, "on my way", enter=True)
    msgs: Any = phone.apps["messages"]
    assert msgs.threads["Kevin Park"][-1].text == "on my way" and msgs.threads["Kevin Park"][-1].new
    phone.launch("contacts")
    _tap(phone, "contacts.add")
    _type(phone, "Nia Long", enter=True)
    _type(phone, "555 010 4242", enter=True)
    _tap(phone, "contacts.edit.save")
    assert phone.contacts[-1].name == "Nia Long" and phone.contacts[-1].number == "5550104242"


def test_calendar_event_on_a_chosen_day() -> None:
    phone = Phone()
    phone.launch("calendar")
    _tap(phone, "calendar.next")
    _tap(phone, "calendar.day.2")
    _tap(phone, "calendar.add")
    _type(phone, "Picnic", enter=True)
    _type(phone, "1:30 pm", enter=True)
    cal: Any = phone.apps["calendar"]
    ev = cal.events[-1]
    assert (ev.title, ev.day.isoformat(), ev.time, ev.new) == ("Picnic", "2024-07-02", "13:30", True)


def test_camera_video_and_photos_viewer() -> None:
    phone = Phone()
    phone.launch("camera")
    _tap(phone, "camera.mode.video")
    _tap(phone, "camera.shutter")
    assert phone.apps["camera"].recording  # type: ignore[attr-defined]
    _tap(phone, "camera.shutter")
    assert phone.gallery[0].kind == "video"
    phone.launch("photos")
    _tap(phone, "photos.search")
    _type(phone, "dog", enter=True)
    _tap(phone, "photos.0")
    assert "dog" in phone.apps["photos"].viewing.tags  # type: ignore[attr-defined]


def test_store_updates_and_uninstall() -> None:
    phone = Phone()
    phone.launch("playstore")
    store: Any = phone.apps["playstore"]
    _tap(phone, "store.account")
    assert store.screen() == "manage" and store.pending
    _tap(phone, "store.manage.update_all")
    for _ in range(4):
        phone.end_step()
    assert not store.pending and not store.updating
    store.stack = [("home", None)]
    store.run_query("Spotify")
    phone.invalidate()
    _tap(phone, "store.result.0")
    _tap(phone, "store.app.uninstall")
    _tap(phone, "store.confirm.ok")
    assert not phone.is_installed("Spotify")


def test_chrome_close_all_bookmark_and_pages() -> None:
    phone = Phone()
    phone.launch("chrome")
    chrome: Any = phone.apps["chrome"]
    chrome.open_url("espn.com")
    for _ in range(3):
        phone.end_step()
    _tap(phone, "chrome.menu")
    _tap(phone, "chrome.menu.add_bookmark")
    assert "espn.com" in chrome.bookmarks
    _tap(phone, "chrome.menu")
    _tap(phone, "chrome.menu.bookmarks")
    assert chrome.mode == "bookmarks" and phone.tree().find("chrome.bookmarks.2") is not None
    phone.apply(Action.back())
    chrome.new_tab()
    _tap(phone, "chrome.tabs")
    _tap(phone, "chrome.switcher.menu")
    _tap(phone, "chrome.menu.close_all")
    assert len(chrome.tabs) == 1 and chrome.tabs[0].empty
