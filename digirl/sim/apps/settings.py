"""Settings: network toggles, connected devices, apps (scrollable) with per-app pages, display, battery."""

from __future__ import annotations

from functools import partial

from digirl.sim.apps.base import App, app_bar
from digirl.sim.ui import (
    BLUE,
    BOTTOM,
    SUBTLE,
    TOP,
    WHITE,
    View,
    box,
    button,
    label,
    list_row,
    scroll_list,
    switch,
)

__all__ = ["Settings"]

_BG = (241, 243, 248)
_MAIN = (
    ("network", "Network & internet", "Wi‑Fi, mobile, data usage", "wifi"),
    ("connected", "Connected devices", "Bluetooth, pairing", "bluetooth"),
    ("apps", "Apps", "Recent apps, default apps", "apps"),
    ("notifications", "Notifications", "Notification history, conversations", "bell"),
    ("battery", "Battery", "{battery}% - Should last until 10 PM", "battery"),
    ("storage", "Storage", "38% used - 79 GB free", "folder"),
    ("display", "Display", "Dark theme, font size, brightness", "sun"),
    ("sound", "Sound & vibration", "Volume, haptics, Do Not Disturb", "bell"),
    ("security", "Security & privacy", "App security, device lock", "lock"),
    ("about", "About phone", "Pixel Sim", "info"),
)
_TITLES = {k: t for k, t, _, _ in _MAIN}


class Settings(App):
    key = "settings"
    label = "Settings"
    icon = "gear"
    color = (95, 99, 104)
    bg = _BG
    status_color = _BG

    def __init__(self, phone: object) -> None:
        super().__init__(phone)  # type: ignore[arg-type]
        self.stack: list[tuple[str, str]] = [("main", "")]
        self.dark = False
        self.saver = False

    @property
    def top(self) -> tuple[str, str]:
        return self.stack[-1]

    def screen(self) -> str:
        return self.top[0]

    def state(self) -> dict[str, object]:
        return {"screen": self.top[0], "arg": self.top[1]}

    def push(self, name: str, arg: str = "") -> None:
        self.stack.append((name, arg))

    def back(self) -> bool:
        if len(self.stack) > 1:
            self.stack.pop()
            return True
        return False

    def build(self) -> list[View]:
        s, arg = self.top
        builder = {
            "main": self._main,
            "network": self._network,
            "connected": self._connected,
            "apps": self._apps,
            "app_info": self._app_info,
            "display": self._display,
            "battery": self._battery,
            "about": self._about,
        }.get(s, self._placeholder)
        return builder(arg)

    def _page(self, key: str, title: str, rows: list[View], *, back: bool = True) -> list[View]:
        return [
            box((0, TOP, 360, BOTTOM), _BG),
            scroll_list(f"settings.{key}", (0, TOP + 64, 360, BOTTOM), rows, self.phone.scroll),
            app_bar(title, back=self.phone.key_back if back else None, fill=_BG, ref=f"settings.{key}.bar", height=64, size=22),
        ]

    def _main(self, _: str) -> list[View]:
        rows: list[View] = [
            View(
                (16, 4, 344, 52),
                kind="input",
                placeholder="Search settings",
                fill=WHITE,
                radius=24,
                icon="search",
                ref="settings.search",
                size=15,
            )
        ]
        for i, (key, title, sub, icon) in enumerate(_MAIN):
            rows.append(
                list_row(
                    60 + 72 * i,
                    72,
                    title,
                    sub=sub.format(battery=self.phone.battery),
                    icon=icon,
                    icon_color=BLUE,
                    ref=f"settings.{key}",
                    on_tap=partial(self.push, key),
                    divider=False,
                )
            )
        return self._page("main", "Settings", rows, back=False)

    def _toggle_row(self, y: float, title: str, sub: str, on: bool, fn: object, ref: str) -> View:
        sw = switch((300, y + 16, 348, y + 56), on, fn, ref=ref + ".switch")  # type: ignore[arg-type]
        return list_row(y, 72, title, sub=sub, ref=ref, on_tap=fn, right=sw)  # type: ignore[arg-type]

    def _network(self, _: str) -> list[View]:
        p = self.phone

        def wifi() -> None:
            p.wifi = not p.wifi

        def airplane() -> None:
            p.airplane = not p.airplane
            if p.airplane:
                p.wifi = False
                p.bluetooth = False

        rows = [
            self._toggle_row(0, "Wi‑Fi", "HomeNetwork-5G" if p.wifi else "Off", p.wifi, wifi, "settings.wifi"),
            list_row(72, 72, "Mobile network", sub="Sim Mobile", ref="settings.mobile", on_tap=lambda: None),
            self._toggle_row(144, "Airplane mode", "", p.airplane, airplane, "settings.airplane"),
            list_row(216, 72, "Hotspot & tethering", sub="Off", ref="settings.hotspot", on_tap=lambda: None),
            list_row(288, 72, "Data Saver", sub="Off", ref="settings.datasaver", on_tap=lambda: None),
        ]
        return self._page("network", "Network & internet", rows)

    def _connected(self, _: str) -> list[View]:
        p = self.phone

        def bt() -> None:
            p.bluetooth = not p.bluetooth

        rows = [
            self._toggle_row(0, "Bluetooth", "On" if p.bluetooth else "Off", p.bluetooth, bt, "settings.bluetooth"),
            list_row(72, 72, "Pair new device", ref="settings.pair", icon="plus", icon_color=BLUE, on_tap=lambda: None),
            list_row(144, 72, "Connection preferences", sub="NFC, Android Auto", ref="settings.prefs", on_tap=lambda: None),
        ]
        return self._page("connected", "Connected devices", rows)

    def app_keys(self) -> list[str]:
        apps = self.phone.apps
        return sorted(self.phone.installed, key=lambda k: apps[k].label.lower())

    def _apps(self, _: str) -> list[View]:
        apps = self.phone.apps
        rows: list[View] = [label((16, 0, 344, 32), "All apps", size=14, fg=BLUE, bold=True)]
        for i, k in enumerate(self.app_keys()):
            a = apps[k]
            rows.append(
                list_row(
                    36 + 64 * i,
                    64,
                    a.label,
                    sub=f"{(len(a.label) * 37) % 300 + 12} MB",
                    icon="apps" if a.icon == "letter" else a.icon,
                    icon_color=a.color if a.color != WHITE else BLUE,
                    ref=f"settings.app.{k}",
                    on_tap=partial(self.push, "app_info", k),
                    divider=False,
                )
            )
        return self._page("apps", "Apps", rows)

    def _app_info(self, key: str) -> list[View]:
        p = self.phone
        a = p.apps[key]
        on = p.notifications.get(key, True)
        rows: list[View] = [
            View(
                (148, 8, 212, 72),
                kind="text",
                text=a.label[:1].upper(),
                fill=a.color if a.color != WHITE else BLUE,
                fg=WHITE,
                radius=32,
                size=26,
                align="center",
                element=False,
            ),
            label((16, 80, 344, 110), a.label, size=22, align="center", ref="settings.appinfo.name"),
            button((40, 124, 172, 164), "Open", lambda: p.launch(key), ref="settings.appinfo.open", style="tonal"),
            button((188, 124, 320, 164), "Force stop", lambda: None, ref="settings.appinfo.stop", style="tonal"),
            self._toggle_row(
                180,
                "Notifications",
                "On" if on else "Off",
                on,
                lambda: p.toggle_notifications(key),
                "settings.appinfo.notifications",
            ),
            list_row(252, 72, "Permissions", sub="Camera, Location", ref="settings.appinfo.perms", on_tap=lambda: None),
            list_row(
                324,
                72,
                "Storage & cache",
                sub="84 MB used in internal storage",
                ref="settings.appinfo.storage",
                on_tap=lambda: None,
            ),
            list_row(396, 72, "Mobile data & Wi‑Fi", sub="No data used", ref="settings.appinfo.data", on_tap=lambda: None),
            list_row(
                468, 72, "Battery", sub="0% use since last full charge", ref="settings.appinfo.battery", on_tap=lambda: None
            ),
        ]
        return self._page("appinfo", "App info", rows)

    def _display(self, _: str) -> list[View]:
        def dark() -> None:
            self.dark = not self.dark

        rows = [
            list_row(0, 72, "Brightness level", sub="62%", ref="settings.brightness", on_tap=lambda: None),
            self._toggle_row(72, "Dark theme", "", self.dark, dark, "settings.dark"),
            list_row(144, 72, "Screen timeout", sub="After 30 seconds", ref="settings.timeout", on_tap=lambda: None),
            list_row(216, 72, "Font size", sub="Default", ref="settings.font", on_tap=lambda: None),
        ]
        return self._page("display", "Display", rows)

    def _battery(self, _: str) -> list[View]:
        def saver() -> None:
            self.saver = not self.saver

        rows = [
            label((16, 8, 344, 60), f"{self.phone.battery}%", size=36, bold=True, ref="settings.battery.level"),
            label((16, 60, 344, 84), "Should last until about 10:00 PM", size=13, fg=SUBTLE),
            self._toggle_row(96, "Battery Saver", "", self.saver, saver, "settings.saver"),
            list_row(168, 72, "Battery usage", ref="settings.usage", on_tap=lambda: None),
        ]
        return self._page("battery", "Battery", rows)

    def _about(self, _: str) -> list[View]:
        rows = [
            list_row(72 * i, 72, t, sub=s, ref=f"settings.about.{i}", on_tap=lambda: None)
            for i, (t, s) in enumerate(
                (
                    ("Device name", "Pixel Sim"),
                    ("Phone number", "+1 650-555-0100"),
                    ("Android version", "14"),
                    ("Model", "Pixel Sim 8"),
                    ("Build number", "UQ1A.240105.004"),
                )
            )
        ]
        return self._page("about", "About phone", rows)

    def _placeholder(self, _: str) -> list[View]:
        key = self.top[0]
        rows = [
            list_row(72 * i, 72, t, ref=f"settings.{key}.{i}", on_tap=lambda: None)
            for i, t in enumerate(("General", "Advanced", "Reset options"))
        ]
        return self._page(key, _TITLES.get(key, key.title()), rows)
