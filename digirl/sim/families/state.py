"""The phone's state as a flat, JSON-able dict of named values: what a user-defined family's
success conditions (:mod:`.spec`) read. Lists hold the items the user would see (alarm times,
bookmarks, sent texts, ...). docs/tasks.md lists every name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from digirl.sim.device import SETTING_NAMES, get_setting

if TYPE_CHECKING:
    from digirl.sim.phone import Phone

__all__ = ["STATE_NAMES", "device_state"]

#: Every name :func:`device_state` returns (``settings.<toggle>`` for each toggle).
STATE_NAMES = (
    "app",
    "app.label",
    "screen",
    "loading",
    "popup",
    *(f"settings.{n}" for n in (*SETTING_NAMES, "data_saver")),
    "settings.brightness",
    "settings.volume",
    "settings.page",
    "installed",
    "notifications.count",
    "clock.tab",
    "clock.alarms.on",
    "clock.alarms.off",
    "clock.timer.running",
    "clock.timer.seconds",
    "clock.stopwatch.running",
    "browser.url",
    "browser.mode",
    "browser.tabs",
    "browser.bookmarks",
    "search.query",
    "maps.screen",
    "maps.query",
    "youtube.screen",
    "youtube.playing.title",
    "youtube.playing.channel",
    "youtube.subscriptions",
    "calls",
    "messages.sent",
    "contacts",
    "contacts.shown",
    "calendar.events",
    "gallery.count",
    "photos.viewing",
    "gmail.screen",
    "gmail.sent",
    "store.screen",
    "store.updates",
)


def device_state(phone: Phone) -> dict[str, Any]:
    """The values of :data:`STATE_NAMES` on ``phone`` now."""
    from digirl.sim.goals import shown_search_query

    a: Any = phone.apps
    clock, chrome, yt, store = a["clock"], a["chrome"], a["youtube"], a["playstore"]
    playing = yt.playing
    out: dict[str, Any] = {
        "app": phone.fg,
        "app.label": phone.current.label,
        "screen": phone.current.screen(),
        "loading": phone.loading,
        "popup": phone.popup.kind if phone.popup else "",
        **{f"settings.{n}": get_setting(phone, n) for n in (*SETTING_NAMES, "data_saver")},
        "settings.brightness": phone.settings.brightness,
        "settings.volume": phone.settings.volume,
        "settings.page": a["settings"].top[0],
        "installed": [a[k].label for k in phone.installed],
        "notifications.count": len(phone.notices),
        "clock.tab": clock.tab,
        "clock.alarms.on": [f"{x.hour:02d}:{x.minute:02d}" for x in clock.alarms if x.enabled],
        "clock.alarms.off": [f"{x.hour:02d}:{x.minute:02d}" for x in clock.alarms if not x.enabled],
        "clock.timer.running": bool(clock.timer_running),
        "clock.timer.seconds": int(clock.timer_total),
        "clock.stopwatch.running": bool(clock.stopwatch_running),
        "browser.url": chrome.tab.url,
        "browser.mode": chrome.mode,
        "browser.tabs": len(chrome.tabs),
        "browser.bookmarks": list(chrome.bookmarks),
        "search.query": shown_search_query(phone) or "",
        "maps.screen": a["maps"].screen(),
        "maps.query": str(getattr(a["maps"], "query", "")),
        "youtube.screen": yt.screen(),
        "youtube.playing.title": playing.title if playing else "",
        "youtube.playing.channel": playing.channel if playing else "",
        "youtube.subscriptions": sorted(yt.subscriptions),
        "calls": [c.who for c in a["phone"].calls],
        "messages.sent": [f"{name}: {m.text}" for name, msgs in a["messages"].threads.items() for m in msgs if m.new],
        "contacts": [c.name for c in phone.contacts],
        "contacts.shown": a["contacts"].shown.name if a["contacts"].page == "detail" and a["contacts"].shown else "",
        "calendar.events": [f"{e.title} {e.day.isoformat()} {e.time}".strip() for e in a["calendar"].events],
        "gallery.count": len(phone.gallery),
        "photos.viewing": " ".join(a["photos"].viewing.tags) if a["photos"].viewing else "",
        "gmail.screen": a["gmail"].screen(),
        "gmail.sent": [f"{m.to} | {m.subject} | {m.body}" for m in a["gmail"].sent],
        "store.screen": store.top[0],
        "store.updates": list(store.pending),
    }
    return out
