"""Settings toggles, brightness and volume, settings pages and the notification shade."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from digirl.core.actions import Action
from digirl.sim.device import LEVEL_STEP, NEWER_SETTINGS, OPTION_PAGE, OPTIONS, SETTING_NAMES, get_setting, set_setting
from digirl.sim.family_registry import builtin_family
from digirl.sim.goals import TaskContext
from digirl.sim.intents import Intent
from digirl.sim.plans import ExpertStep

if TYPE_CHECKING:
    import numpy as np

    from digirl.sim.phone import Phone

__all__ = ["SETTINGS_PAGE", "level_range", "open_shade", "to_settings_page"]

#: Which Settings page has each toggle (the flashlight is only in the shade's quick settings).
TOGGLE_PAGE = {
    "wifi": "network",
    "mobile_data": "network",
    "airplane_mode": "network",
    "hotspot": "network",
    "bluetooth": "connected",
    "dark_mode": "display",
    "auto_rotate": "display",
    "battery_saver": "battery",
    "do_not_disturb": "sound",
    "location": "location",
    "vibrate": "sound",  # the newer switches (NEWER_SETTINGS)
    "night_light": "display",
}
#: ``settings_page`` slot → the Settings screen that shows it.
SETTINGS_PAGE = {
    "battery": "battery",
    "storage": "storage",
    "display": "display",
    "sound": "sound",
    "network": "network",
    "bluetooth": "connected",
    "about": "about",
    "apps": "apps",
    "notifications": "notifications",
    "location": "location",
    "security": "security",
}


def to_settings_page(e: ExpertStep, page: str) -> Action | None:
    """Steps until Settings shows ``page`` (a screen key of the Settings app); None when it does."""
    step = e.open_app("settings")
    if step is not None:
        return step
    screen = e.phone.apps["settings"].top[0]  # type: ignore[attr-defined]
    if screen == page:
        return None
    if screen == "main":
        return e.goto(f"settings.{page}") or Action.back()
    return Action.back()


def open_shade(e: ExpertStep) -> Action | None:
    """Steps until the notification shade is open; None when it is."""
    if e.phone.fg == "shade":
        return None
    return Action.swipe((0.5, 0.01), (0.5, 0.5))


# ---- toggle_setting ---------------------------------------------------------------------
def _wanted(intent: Intent, ctx: TaskContext) -> bool:
    state = intent.get("state", "toggle").lower()
    if state in ("on", "off"):
        return state == "on"
    return not bool(ctx.initial.get("setting"))


def _toggle_ok(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    return get_setting(phone, intent.get("setting")) == _wanted(intent, ctx)


def _toggle_setup(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    name, state = intent.get("setting"), intent.get("state", "toggle").lower()
    if name not in SETTING_NAMES + NEWER_SETTINGS:
        raise ValueError(f"unknown setting {name!r}; known: {', '.join(SETTING_NAMES + NEWER_SETTINGS)}")
    start = state == "off" if state in ("on", "off") else bool(rng.integers(2))
    set_setting(phone, name, start)
    ctx.initial["setting"] = get_setting(phone, name)


@builtin_family("toggle_setting", "phone", predicate=_toggle_ok, setup=_toggle_setup, doc="a setting is on / off / flipped")
def _toggle_plan(e: ExpertStep) -> Action:
    name = e.intent.get("setting")
    if name == "flashlight":
        return open_shade(e) or e.goto(f"shade.tile.{name}") or Action.back()
    page = e.phone.dyn.moved_settings.get(name, TOGGLE_PAGE[name])  # a Settings update may have moved it
    return to_settings_page(e, page) or e.goto(f"settings.{name}.switch") or Action.back()


def _listed(slot: str, listing: str, radio: str) -> Any:
    """A setup: the network / device the task names is listed (at a random place in ``listing``), not
    the one in use; the radio may be off."""

    def setup(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
        st, name = phone.settings, intent.get(slot)
        if not name:
            raise ValueError(f"the task needs the {slot}'s name")
        rest = [n for n in getattr(st, listing) if n.lower() != name.lower()]
        rest.insert(int(rng.integers(len(rest) + 1)), name)
        setattr(st, listing, rest)
        if radio == "bluetooth":
            st.bt_device = ""
        set_setting(phone, radio, bool(rng.integers(2)))

    return setup


def _in_use(slot: str, attr: str, radio: str) -> Any:
    """A predicate: the radio is on and in use with the named network / device."""

    def ok(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
        return get_setting(phone, radio) and str(getattr(phone.settings, attr)).lower() == intent.get(slot).lower()

    return ok


_WIFI_OK, _WIFI_SETUP = _in_use("network", "wifi_network", "wifi"), _listed("network", "networks", "wifi")
_BT_OK, _BT_SETUP = _in_use("device", "bt_device", "bluetooth"), _listed("device", "paired", "bluetooth")


@builtin_family("connect_wifi", "phone", predicate=_WIFI_OK, setup=_WIFI_SETUP, doc="Wi-Fi is on and joined to that network")
def _wifi_plan(e: ExpertStep) -> Action:
    settings: Any = e.phone.apps["settings"]
    if e.phone.fg == "settings" and settings.top[0] == "wifi":
        if not get_setting(e.phone, "wifi"):
            return e.goto("settings.wifi.switch") or Action.back()
        nets = [n.lower() for n in e.phone.settings.networks]
        return e.goto(f"settings.wifi.net.{nets.index(e.intent.get('network').lower())}") or Action.back()
    return to_settings_page(e, "network") or e.goto("settings.wifi") or Action.back()


@builtin_family("connect_bluetooth", "phone", predicate=_BT_OK, setup=_BT_SETUP, doc="Bluetooth is on, connected to that device")
def _bt_plan(e: ExpertStep) -> Action:
    saved = [n.lower() for n in e.phone.settings.paired]
    return (
        to_settings_page(e, "connected") or e.goto(f"settings.bt.{saved.index(e.intent.get('device').lower())}") or Action.back()
    )


_OPTION_ROW = {
    "screen_timeout": "settings.timeout",
    "font_size": "settings.font",
    "ringtone": "settings.ringtone",
    "language": "settings.language",
    "time_zone": "settings.timezone",
}


def _option_setup(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    """Start from another value (for ``up`` / ``down``: one with room to move that way)."""
    name, value = intent.get("option"), intent.get("value")
    if name not in OPTIONS or value not in (*OPTIONS[name][1], "up", "down"):
        raise ValueError(f"unknown option {name!r} = {value!r}; known: {OPTIONS} (or up / down)")
    values = OPTIONS[name][1]
    starts = {"up": values[:-1], "down": values[1:]}.get(value, tuple(v for v in values if v != value))
    start = starts[int(rng.integers(len(starts)))]
    setattr(phone.settings, name, start)
    ctx.initial["option"] = start


def _option_target(intent: Intent, ctx: TaskContext) -> str:
    """The value to choose: the one asked for, or the next one up or down from the start."""
    values, value = OPTIONS[intent.get("option")][1], intent.get("value")
    if value in ("up", "down"):
        return values[values.index(ctx.initial["option"]) + (1 if value == "up" else -1)]
    return value


def _option_ok(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    """The value asked for; for ``up`` / ``down`` any value past the start that way."""
    name, value = intent.get("option"), intent.get("value")
    now = getattr(phone.settings, name)
    if value in ("up", "down"):
        values = OPTIONS[name][1]
        moved = values.index(now) - values.index(ctx.initial["option"])
        return moved > 0 if value == "up" else moved < 0
    return bool(now == value)


@builtin_family(
    "set_option",
    "phone",
    predicate=_option_ok,
    setup=_option_setup,
    doc="a choice of Settings (Display's screen timeout and font size, Sound's ringtone, System's language and time zone) is set",
)
def _option_plan(e: ExpertStep) -> Action:
    name = e.intent.get("option")
    settings: Any = e.phone.apps["settings"]
    if e.phone.fg == "settings" and settings.top == ("option", name):
        return e.goto(f"settings.option.{OPTIONS[name][1].index(_option_target(e.intent, e.ctx))}") or Action.back()
    return to_settings_page(e, OPTION_PAGE[name]) or e.goto(_OPTION_ROW[name]) or Action.back()


# ---- brightness, volume -----------------------------------------------------------------
def level_range(intent: Intent, initial: int) -> tuple[int, int]:
    """The levels that satisfy ``intent`` (``up``/``down``: at least 10 points away from where it started)."""
    level = intent.get("level")
    if level == "up":
        return min(initial + 10, 100), 100
    if level == "down":
        return 0, max(initial - 10, 0)
    n = int(level)
    if not 0 <= n <= 100:
        raise ValueError(f"level must be 0-100, up or down, got {level!r}")
    return max(0, n - 3), min(100, n + 3)


def _level_ok(attr: str) -> Any:
    def ok(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
        lo, hi = level_range(intent, int(ctx.initial["level"]))
        return lo <= int(getattr(phone.settings, attr)) <= hi

    return ok


def _level_setup(attr: str) -> Any:
    def setup(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
        level = intent.get("level")
        if level == "up":
            start = int(rng.integers(2, 13)) * LEVEL_STEP  # 10..60
        elif level == "down":
            start = int(rng.integers(8, 19)) * LEVEL_STEP  # 40..90
        else:
            n = int(level)
            if not 0 <= n <= 100:
                raise ValueError(f"level must be 0-100, up or down, got {level!r}")
            start = (n + LEVEL_STEP * int(rng.integers(6, 13))) % 105 // LEVEL_STEP * LEVEL_STEP
        setattr(phone.settings, attr, start)
        ctx.initial["level"] = start

    return setup


def _level_plan(attr: str, page: str) -> Any:
    def plan(e: ExpertStep) -> Action:
        lo, hi = level_range(e.intent, int(e.ctx.initial["level"]))
        target = min(100, -(-lo // LEVEL_STEP) * LEVEL_STEP)  # the lowest slider step in range
        if e.intent.get("level") == "down":
            target = hi // LEVEL_STEP * LEVEL_STEP
        return to_settings_page(e, page) or e.goto(f"settings.{attr}.slider.{target}") or Action.back()

    return plan


builtin_family(
    "set_brightness",
    "phone",
    predicate=_level_ok("brightness"),
    setup=_level_setup("brightness"),
    doc="screen brightness at a level",
)(_level_plan("brightness", "display"))
builtin_family("set_volume", "phone", predicate=_level_ok("volume"), setup=_level_setup("volume"), doc="media volume at a level")(
    _level_plan("volume", "sound")
)


# ---- settings pages ---------------------------------------------------------------------
def _page_ok(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    return phone.fg == "settings" and phone.apps["settings"].top[0] == SETTINGS_PAGE.get(intent.get("page"))  # type: ignore[attr-defined]


@builtin_family("settings_page", "phone", predicate=_page_ok, doc="a Settings page is open")
def _page_plan(e: ExpertStep) -> Action:
    page = SETTINGS_PAGE[e.intent.get("page")]
    return to_settings_page(e, page) or Action.complete()


# ---- the shade ------------------------------------------------------------------------------
def _shade_ok(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    return phone.fg == "shade"


@builtin_family("show_notifications", "phone", predicate=_shade_ok, doc="the notification shade is open")
def _shade_plan(e: ExpertStep) -> Action:
    return open_shade(e) or Action.complete()


def _cleared(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    return not phone.notices


def _some_notices(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    ctx.initial["notices"] = len(phone.notices)


@builtin_family("clear_notifications", "phone", predicate=_cleared, setup=_some_notices, doc="no notification is left")
def _clear_plan(e: ExpertStep) -> Action:
    return open_shade(e) or e.goto("shade.clear") or Action.back()


# ---- an app's info page: force stop, clear the cache (newer surfaces) ----------------------------
def _app_there(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    from digirl.sim.phone import resolve_app

    if intent.get("action") not in ("force_stop", "clear_cache"):
        raise ValueError(f"app action must be force_stop or clear_cache, got {intent.get('action')!r}")
    if resolve_app(intent.get("app")).startswith("x."):
        phone.install(intent.get("app"))


def _app_done(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    from digirl.sim.phone import resolve_app

    s: Any = phone.apps["settings"]
    return resolve_app(intent.get("app")) in (s.stopped if intent.get("action") == "force_stop" else s.cleared)


@builtin_family("app_action", "phone", predicate=_app_done, setup=_app_there, doc="the app is force-stopped / its cache cleared")
def _app_action_plan(e: ExpertStep) -> Action:
    from digirl.sim.phone import resolve_app
    from digirl.sim.plans import to_app_info

    s: Any = e.phone.apps["settings"]
    if e.intent.get("action") == "clear_cache":
        if e.phone.fg == "settings" and s.top == ("app_storage", resolve_app(e.intent.get("app"))):
            return e.goto("settings.appinfo.clear_cache") or Action.back()
        return to_app_info(e) or e.goto("settings.appinfo.storage") or Action.back()
    return to_app_info(e) or e.goto("settings.appinfo.stop") or Action.back()


# ---- the lock screen (newer surfaces) --------------------------------------------------------------
def _locked(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    return phone.fg == "lock"


@builtin_family("lock_screen", "phone", predicate=_locked, doc="the phone is locked (the lock screen shows)")
def _lock_plan(e: ExpertStep) -> Action:
    return open_shade(e) or e.goto("shade.lock") or Action.back()


# ---- the overview of recent apps (newer surfaces) ------------------------------------------------
def _some_recent(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    """Apps were used before the task, as a day's phone has; the one to close is among the newest
    three (on screen in the overview). Adds to what an earlier sub-task's setup put there."""
    from digirl.sim.phone import resolve_app

    if not phone.recent:
        pool = ["chrome", "gmail", "maps", "youtube", "messages", "photos"]
        phone.recent = [pool[int(i)] for i in rng.permutation(len(pool))[: 2 + int(rng.integers(3))]]
    app = intent.get("app")
    if app and app != "all":
        key = phone.install(app) if resolve_app(app).startswith("x.") else resolve_app(app)
        rest = [k for k in phone.recent if k != key]
        phone.recent = [*rest[: len(rest) - int(rng.integers(min(3, len(rest) + 1)))], key]
        phone.recent += [k for k in rest if k not in phone.recent]


def _overview_shown(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    return phone.fg == "overview"


@builtin_family(
    "show_recents", "phone", predicate=_overview_shown, setup=_some_recent, doc="the overview of recent apps is shown"
)
def _recents_plan(e: ExpertStep) -> Action:
    return e.goto("nav.recents") or Action.home()


def _closed(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    from digirl.sim.phone import resolve_app

    app = intent.get("app")
    return not phone.recent if app == "all" else resolve_app(app) not in phone.recent


@builtin_family(
    "close_recent", "phone", predicate=_closed, setup=_some_recent, doc="the app (or every app) is closed in the overview"
)
def _close_recent_plan(e: ExpertStep) -> Action:
    from digirl.sim.phone import resolve_app

    if e.phone.fg != "overview":
        return e.goto("nav.recents") or Action.home()
    app = e.intent.get("app")
    if app == "all":
        return e.goto("overview.clear_all") or Action.back()
    cards = e.phone.apps["overview"].cards()  # type: ignore[attr-defined]
    return e.goto(f"overview.card.{cards.index(resolve_app(app))}.close") or Action.back()


# ---- a screenshot (the shade's Screenshot tile, with the newer surfaces) ------------------------
def _shot_before(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    ctx.initial["shots"] = sum(1 for p in phone.gallery if "screenshot" in p.tags)


def _screenshot_taken(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    return sum(1 for p in phone.gallery if "screenshot" in p.tags) > int(ctx.initial.get("shots", 0))


@builtin_family(
    "take_screenshot", "phone", predicate=_screenshot_taken, setup=_shot_before, doc="a new screenshot is in the gallery"
)
def _screenshot_plan(e: ExpertStep) -> Action:
    if not e.phone.surfaces:  # the pinned shade has no Screenshot tile
        return Action.impossible()
    return open_shade(e) or e.goto("shade.tile.screenshot") or Action.back()
