"""The launcher: home screen (clock, search widget, icons, dock) and the app drawer (swipe up)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

from digirl.core.actions import SwipeDirection
from digirl.sim import ui
from digirl.sim.apps.base import App, letter_tile
from digirl.sim.content import stable_rng
from digirl.sim.intents import MONTH_NAMES

__all__ = ["DOCK_APPS", "HOME_APPS", "Launcher", "app_icon_view"]

HOME_APPS = ("playstore", "gmail", "maps", "youtube", "settings", "clock", "photos", "calendar")
DOCK_APPS = ("phone", "messages", "chrome", "camera")
_MULTICOLOR = {"chrome", "google", "photos", "youtube", "store"}
_WALLPAPERS: tuple[ui.Color, ...] = ((38, 70, 115), (46, 94, 84), (74, 52, 104))
_MONTHS = tuple(m[:3] for m in MONTH_NAMES)


def app_icon_view(
    app: App | type[App],
    cx: float,
    y: float,
    *,
    ref: str,
    fg: ui.Color,
    size: int = 52,
    show_label: bool = True,
    on_tap: Callable[[], None] | None = None,
) -> ui.View:
    """An app icon (circle + glyph) with its label under it; the whole cell is one tap target."""
    cell = ui.View(
        (cx - 42, y, cx + 42, y + size + (26 if show_label else 4)),
        kind="app_icon",
        ref=ref,
        placeholder=app.label,
        on_tap=on_tap,
    )
    circle = (cx - size / 2, y, cx + size / 2, y + size)
    if app.icon == "letter":
        cell.children.append(letter_tile(circle, app.label[:1].upper(), app.color, radius=size // 2, size=22, bold=True))
    else:
        brand = app.icon in _MULTICOLOR  # a many-coloured logo keeps its colours on a white, outlined disc
        cell.children.append(
            ui.View(
                circle,
                kind="icon",
                icon=app.icon,
                icon_color=None if brand else app.icon_fg,
                fill=ui.WHITE if brand else app.color,
                radius=size // 2,
                element=False,
                placeholder="x",
                border=(218, 220, 224) if brand else None,
            )
        )
    if show_label:
        cell.children.append(
            ui.View(
                (cx - 44, y + size + 2, cx + 44, y + size + 22),
                kind="text",
                text=app.label,
                size=12,
                fg=fg,
                align="center",
                element=False,
            )
        )
    return cell


class Launcher(App, key="launcher", label="Home"):
    def init_state(self) -> None:
        self.page = "home"

    @property
    def bg(self) -> ui.Color:  # type: ignore[override]
        if self.page != "home":
            return ui.WHITE
        dev = self.phone.dyn.device
        return dev.wallpaper if dev is not None else _WALLPAPERS[self.phone.dyn.world_version % len(_WALLPAPERS)]

    def on_launch(self) -> None:
        self.page = "home"
        self.fields["drawer"] = ""
        self.phone.scroll.pop("drawer", None)

    def screen(self) -> str:
        return self.page

    def back(self) -> bool:
        if self.page == "drawer":
            self.on_launch()
        return True

    def on_swipe(self, d: SwipeDirection) -> None:
        if self.page == "home" and d is SwipeDirection.UP:
            self.page = "drawer"
        elif self.page == "drawer" and d is SwipeDirection.DOWN:
            self.on_launch()

    def home_order(self) -> list[str]:
        dyn = self.phone.dyn
        apps = ["google", *HOME_APPS] if dyn.search_widget == "none" else list(HOME_APPS)
        if dyn.device is not None:  # this owner's arrangement
            stable_rng("device-home", dyn.device.home_seed).shuffle(apps)
        if dyn.home_layout:  # a launcher update: the same new order on every phone of this world
            stable_rng("home-layout", dyn.home_layout).shuffle(apps)
        if dyn.home_shuffle:
            stable_rng("home", dyn.salt).shuffle(apps)
        return apps

    def open_drawer(self) -> None:
        self.page = "drawer"

    def build(self) -> list[ui.View]:
        return self._home() if self.page == "home" else self._drawer()

    def _home(self) -> list[ui.View]:
        phone = self.phone
        dyn = phone.dyn
        h, m = phone.clock
        bg = self.bg
        dev = dyn.device
        clock, date = f"{h}:{m:02d}", _date(dyn.salt % 7, dev.date_format if dev is not None else _DATE)
        order = tuple(self.home_order())
        dock = DOCK_APPS if dev is None else tuple(DOCK_APPS[i] for i in dev.dock)
        home = _Home(bg, dyn.search_widget, order, self._dock_color(), dyn.widget_hint, dock)
        if dyn.home_shuffle:  # an order per episode: built per phone, with the phone's callbacks
            views: list[ui.View] = [ui.box((0, ui.TOP, 360, ui.BOTTOM), bg, ref="home"), *_clock_views(clock, date)]
            views.extend(_home_icons(phone, home))
            return views
        # A few variants (clock, date), shared by every phone (SystemTap taps): the icons are one
        # cached layer, the whole home screen cached ops and elements. The clock and the icons are
        # children of the wallpaper box, not its siblings: the same paint order, fills and elements.
        key: tuple[object, ...] = ("home", bg, dyn.search_widget, order)
        if dyn.widget_hint != "Search" or dock != DOCK_APPS:
            key = (*key, dyn.widget_hint, dock)
        layer = ui.shared_view(key, partial(_home_layer, home))
        return [ui.shared_ops_view((*key, clock, date), partial(_home_screen, bg, clock, date, layer))]

    def _dock_color(self) -> ui.Color:
        r, g, b = self.bg
        return (min(255, r + 30), min(255, g + 30), min(255, b + 30))

    def open_search(self) -> None:
        """The home screen's search widget: the Google app, searching (after the Google app update of
        the drift timeline: the app's feed, whose search box takes one more tap)."""
        self.phone.launch("google")
        g = self.phone.apps["google"]
        start = getattr(g, "show_feed" if self.phone.dyn.widget_opens_feed else "start_search", None)
        if callable(start):
            start()

    def drawer_apps(self) -> list[str]:
        q = self.fields.get("drawer", "").strip().lower()
        keys = sorted(self.phone.installed, key=lambda k: self.phone.apps[k].label.lower())
        return [k for k in keys if not q or q in self.phone.apps[k].label.lower()]

    def submit(self, name: str) -> None:
        apps = self.drawer_apps()
        if apps and self.fields.get("drawer", "").strip():
            self.phone.launch(apps[0])

    def _drawer(self) -> list[ui.View]:
        phone = self.phone
        views: list[ui.View] = [ui.box((0, ui.TOP, 360, ui.BOTTOM), ui.WHITE, ref="drawer")]
        rows: list[ui.View] = []
        for i, key in enumerate(self.drawer_apps()):
            cx = 45 + 90 * (i % 4)
            y = 8 + 92 * (i // 4)
            rows.append(
                app_icon_view(phone.apps[key], cx, y, ref=f"drawer.app.{key}", fg=ui.TEXT, on_tap=partial(phone.launch, key))
            )
        views.append(ui.scroll_list("drawer", (0, ui.TOP + 72, 360, ui.BOTTOM), rows, phone.scroll))
        views.append(
            ui.box(
                (0, ui.TOP, 360, ui.TOP + 72),
                ui.WHITE,
                blocker=True,
                children=[
                    self.text_input(
                        (16, ui.TOP + 12, 344, ui.TOP + 60),
                        "drawer",
                        placeholder=phone.dyn.text("search_apps", "Search your apps"),
                        ref="drawer.search",
                        filled=True,
                    )
                ],
            )
        )
        return views


_DATE = "{wd}, {mon} {d}"
_WEEKDAYS = {"Mon": "Monday", "Tue": "Tuesday", "Wed": "Wednesday", "Thu": "Thursday", "Fri": "Friday"}


@functools.lru_cache(maxsize=64)
def _date(n: int, fmt: str = _DATE) -> str:
    """The home screen's date line (one of a few dates; ``fmt``: a device's locale-style format)."""
    r = stable_rng("date", n)
    wd, mon, d = r.choice(("Mon", "Tue", "Wed", "Thu", "Fri")), r.choice(_MONTHS), r.randint(1, 28)
    m = _MONTHS.index(mon) + 1
    return fmt.format(wd=wd, weekday=_WEEKDAYS[wd], mon=mon, d=d, m=m, mm=f"{m:02d}", dd=f"{d:02d}")


def _clock_views(clock: str, date: str) -> list[ui.View]:
    return [
        ui.label((0, ui.TOP + 36, 360, ui.TOP + 100), clock, size=52, fg=ui.WHITE, align="center"),
        ui.label((0, ui.TOP + 104, 360, ui.TOP + 128), date, size=15, fg=ui.WHITE, align="center"),
    ]


def _home_screen(bg: ui.Color, clock: str, date: str, layer: ui.View) -> ui.View:
    return ui.box((0, ui.TOP, 360, ui.BOTTOM), bg, ref="home", children=[*_clock_views(clock, date), layer])


class _Home(NamedTuple):
    """What the home screen's icons depend on: wallpaper, search widget (``widget``: top, bottom or
    none; its text ``hint``), the apps' order, the dock's colour and its apps."""

    bg: ui.Color
    widget: str
    order: tuple[str, ...]
    dock: ui.Color
    hint: str = "Search"
    dock_apps: tuple[str, ...] = DOCK_APPS


def _home_layer(home: _Home) -> ui.View:
    """The home screen below the clock as one subtree on the wallpaper (it repaints the wallpaper
    under itself, so the picture is the same as the views drawn one by one)."""
    layer = ui.box((0, ui.TOP + 136, 360, ui.BOTTOM), home.bg)
    layer.children = _home_icons(None, home)
    return layer


def _home_icons(phone: Any, home: _Home) -> list[ui.View]:
    """Search widget, app grid and dock. Without a phone the taps are :class:`SystemTap` (shared)."""
    _, widget, order, dock, hint, dock_apps = home  # the icons do not paint the wallpaper
    sy = ui.BOTTOM - 190 if widget == "bottom" else ui.TOP + 150
    bar = ui.View(
        (20, sy, 340, sy + 48),
        kind="input",
        ref="home.search",
        fill=ui.WHITE,
        radius=24,
        icon="google",
        placeholder=hint,
        on_tap=ui.SystemTap("open_search", app="launcher") if phone is None else phone.apps["launcher"].open_search,
        size=15,
    )
    bar.children.append(ui.View((292, sy + 4, 332, sy + 44), kind="icon", icon="mic", icon_color=(66, 133, 244), element=False))
    views: list[ui.View] = [] if widget == "none" else [bar]

    from digirl.sim.apps import BUILTIN  # (a cycle at import time: the package imports this module)

    apps: Any = BUILTIN if phone is None else phone.apps  # app icons read class attributes only

    def launch(key: str) -> Callable[[], None]:
        return ui.SystemTap("launch", key) if phone is None else partial(phone.launch, key)

    gy = ui.TOP + 230 if widget == "top" else ui.TOP + 170
    for i, key in enumerate(order):
        cx = 45 + 90 * (i % 4)
        y = gy + 96 * (i // 4)
        views.append(app_icon_view(apps[key], cx, y, ref=f"home.app.{key}", fg=ui.WHITE, on_tap=launch(key)))
    views.append(ui.box((160, ui.BOTTOM - 118, 200, ui.BOTTOM - 114), (200, 210, 225), radius=2))
    views.append(
        ui.box(
            (12, ui.BOTTOM - 104, 348, ui.BOTTOM - 16),
            dock,
            radius=28,
            ref="home.dock",
            children=[
                app_icon_view(
                    apps[k], 54 + 84 * i, ui.BOTTOM - 92, ref=f"home.app.{k}", fg=ui.WHITE, show_label=False, on_tap=launch(k)
                )
                for i, k in enumerate(dock_apps)
            ],
        )
    )
    return views
