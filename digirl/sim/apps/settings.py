"""Settings: network toggles, connected devices, apps (scrollable) with per-app pages, display (brightness,
dark theme, auto-rotate), battery saver, sound (volume, Do Not Disturb), storage, notifications, location,
about. Toggles change the phone's shared state (:mod:`digirl.sim.device`)."""

from __future__ import annotations

from functools import partial

from digirl.sim import ui
from digirl.sim.apps import insearch
from digirl.sim.apps.base import App, app_bar, letter_tile
from digirl.sim.content import stable_rng
from digirl.sim.device import OPTIONS, get_setting, set_setting

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
    ("location", "Location", "On - 3 apps have access", "pin"),
    ("about", "About phone", "Pixel Sim", "info"),
)
_SYSTEM = ("system", "System", "Languages, time zone", "gear")
_TITLES = {k: t for k, t, _, _ in (*_MAIN, _SYSTEM)}


class Settings(App, key="settings", label="Settings", icon="gear", color=(95, 99, 104), bg=_BG):
    def init_state(self) -> None:
        self.stack: list[tuple[str, str]] = [("main", "")]
        #: Apps force-stopped and apps whose cache was cleared in the episode (newer surfaces).
        self.stopped: list[str] = []
        self.cleared: list[str] = []

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
            self.blur()  # the search page's keyboard goes with it
            return True
        return False

    def submit(self, name: str) -> None:
        self.blur()  # the search list filters as one types: enter only hides the keyboard

    def build(self) -> list[ui.View]:
        s, arg = self.top
        if s == "search":
            return insearch.settings_search_views(self)
        builder = {
            "main": self._main,
            "network": self._network,
            "connected": self._connected,
            "apps": self._apps,
            "app_info": self._app_info,
            "display": self._display,
            "battery": self._battery,
            "about": self._about,
            "sound": self._sound,
            "storage": self._storage,
            "notifications": self._notifications,
            "location": self._location,
            "security": self._security,
            "option": self._option,
            "system": self._system,
            "wifi": self._wifi,
            "app_storage": self._app_storage,
        }.get(s, self._placeholder)
        return builder(arg)

    def _page(self, key: str, title: str, rows: list[ui.View], *, back: bool = True) -> list[ui.View]:
        title = self.phone.dyn.text(f"settings.{key}", title)  # a page renamed by a Settings update
        return [
            ui.box((0, ui.TOP, 360, ui.BOTTOM), _BG),
            ui.scroll_list(f"settings.{key}", (0, ui.TOP + 64, 360, ui.BOTTOM), rows, self.phone.scroll),
            app_bar(title, back=self.phone.key_back if back else None, fill=_BG, ref=f"settings.{key}.bar", height=64, size=22),
        ]

    def _main(self, _: str) -> list[ui.View]:
        rows: list[ui.View] = [
            ui.View(
                (16, 4, 344, 52),
                kind="input",
                placeholder="Search settings",
                fill=ui.WHITE,
                radius=24,
                icon="search",
                ref="settings.search",
                size=15,
                on_tap=partial(insearch.start_settings_search, self) if self.phone.surfaces else None,
            )
        ]
        dyn = self.phone.dyn
        for i, (key, title, sub, icon) in enumerate(self.menu()):
            rows.append(
                ui.list_row(
                    60 + 72 * i,
                    72,
                    dyn.text(f"settings.{key}", title),
                    sub=sub.format(battery=self.phone.battery),
                    icon=icon,
                    icon_color=ui.BLUE,
                    ref=f"settings.{key}",
                    on_tap=partial(self.push, key),
                    divider=False,
                )
            )
        return self._page("main", "Settings", rows, back=False)

    def menu(self) -> list[tuple[str, str, str, str]]:
        """The main menu's entries in this world's order (a Settings update reorders them); the newer
        surfaces add System (languages, time zone) before About phone."""
        items = list(_MAIN)
        if self.phone.surfaces:
            items.insert(len(items) - 1, _SYSTEM)
        if self.phone.dyn.settings_layout:
            stable_rng("settings-layout", self.phone.dyn.settings_layout).shuffle(items)
        return items

    def _toggle_row(self, y: float, title: str, sub: str, on: bool, fn: object, ref: str, switch_fn: object = None) -> ui.View:
        """A row with a switch; a tap on the row does ``fn``, on the switch ``switch_fn`` (default ``fn``)."""
        sw = ui.switch((300, y + 16, 348, y + 56), on, switch_fn or fn, ref=ref + ".switch")  # type: ignore[arg-type]
        return ui.list_row(y, 72, title, sub=sub, ref=ref, on_tap=fn, right=sw)  # type: ignore[arg-type]

    def _setting_row(self, y: float, name: str, title: str, sub_on: str = "On", sub_off: str = "Off") -> ui.View:
        """A row with a switch bound to device setting ``name`` (ref ``settings.<name>``)."""
        p = self.phone
        on = get_setting(p, name)
        return self._toggle_row(
            y, title, sub_on if on else sub_off, on, lambda: set_setting(p, name, not get_setting(p, name)), f"settings.{name}"
        )

    def _moved(self, name: str, page: str) -> bool:
        """Whether an update moved the toggle ``name`` away from its factory page ``page``."""
        return self.phone.dyn.moved_settings.get(name, page) != page

    def _network(self, _: str) -> list[ui.View]:
        items = [
            ("wifi", "Wi‑Fi", "HomeNetwork-5G", "Off"),
            ("mobile_data", "Mobile data", "Sim Mobile · 4G", "Off"),
            ("airplane_mode", "Airplane mode", "Radios are off", ""),
            ("hotspot", "Hotspot & tethering", "Sharing the connection", "Off"),
            ("data_saver", "Data Saver", "On", "Off"),
        ]
        items = [it for it in items if not self._moved(it[0], "network")]
        rows = [self._setting_row(72 * i, *it) for i, it in enumerate(items)]
        if self.phone.surfaces and items and items[0][0] == "wifi":  # the newer row opens the list of networks
            on = get_setting(self.phone, "wifi")
            net = self.phone.settings.wifi_network if on else "Off"
            flip = partial(set_setting, self.phone, "wifi", not on)
            rows[0] = self._toggle_row(0, "Wi‑Fi", net, on, partial(self.push, "wifi"), "settings.wifi", switch_fn=flip)
        rows.append(
            ui.list_row(72 * len(items), 72, "Mobile network", sub="Sim Mobile", ref="settings.mobile", on_tap=lambda: None)
        )
        return self._page("network", "Network & internet", rows)

    def _connected(self, _: str) -> list[ui.View]:
        rows = [
            self._setting_row(0, "bluetooth", "Bluetooth"),
            ui.list_row(72, 72, "Pair new device", ref="settings.pair", icon="plus", icon_color=ui.BLUE, on_tap=lambda: None),
            ui.list_row(144, 72, "Connection preferences", sub="NFC, Android Auto", ref="settings.prefs", on_tap=lambda: None),
        ]
        if self.phone.dyn.moved_settings.get("hotspot") == "connected":
            rows.append(self._setting_row(216, "hotspot", "Hotspot & tethering", "Sharing the connection"))
        if self.phone.surfaces:  # the newer page lists the paired devices (a tap connects one)
            st, y = self.phone.settings, 72.0 * len(rows)
            rows.append(ui.label((16, y + 8, 344, y + 32), "Saved devices", size=13, fg=ui.BLUE))
            for i, name in enumerate(st.paired):
                on = name == st.bt_device and get_setting(self.phone, "bluetooth")
                rows.append(
                    ui.list_row(
                        y + 36 + 64 * i, 64, name, sub="Connected" if on else "Saved", icon="bluetooth",
                        icon_color=ui.BLUE if on else ui.SUBTLE, ref=f"settings.bt.{i}", on_tap=partial(self.pair, name),
                    )
                )  # fmt: skip
        return self._page("connected", "Connected devices", rows)

    def pair(self, name: str) -> None:
        """Connect a saved Bluetooth device (Bluetooth turns on)."""
        self.phone.settings.bt_device = name
        set_setting(self.phone, "bluetooth", True)

    def _security(self, _: str) -> list[ui.View]:
        if self.phone.dyn.moved_settings.get("location") != "security":
            return self._placeholder("")
        rows = [self._setting_row(0, "location", "Use location", "On - 3 apps have access")]
        rows += [
            ui.list_row(72 * (i + 1), 72, t, ref=f"settings.security.{i}", on_tap=lambda: None)
            for i, t in enumerate(("General", "Advanced", "Reset options"))
        ]
        return self._page("security", _TITLES["security"], rows)

    def app_keys(self) -> list[str]:
        apps = self.phone.apps
        return sorted(self.phone.installed, key=lambda k: apps[k].label.lower())

    def _apps(self, _: str) -> list[ui.View]:
        apps = self.phone.apps
        rows: list[ui.View] = [ui.label((16, 0, 344, 32), "All apps", size=14, fg=ui.BLUE, bold=True)]
        for i, k in enumerate(self.app_keys()):
            a = apps[k]
            rows.append(
                ui.list_row(
                    36 + 64 * i,
                    64,
                    a.label,
                    sub=f"{(len(a.label) * 37) % 300 + 12} MB",
                    icon="apps" if a.icon == "letter" else a.icon,
                    icon_color=a.color if a.color != ui.WHITE else ui.BLUE,
                    ref=f"settings.app.{k}",
                    on_tap=partial(self.push, "app_info", k),
                    divider=False,
                )
            )
        return self._page("apps", "Apps", rows)

    def _app_info(self, key: str) -> list[ui.View]:
        p = self.phone
        a = p.apps[key]
        on = p.notifications.get(key, True)
        rows: list[ui.View] = [
            letter_tile((148, 8, 212, 72), a.label[:1].upper(), a.color if a.color != ui.WHITE else ui.BLUE, radius=32, size=26),
            ui.label((16, 80, 344, 110), a.label, size=22, align="center", ref="settings.appinfo.name"),
            ui.button((40, 124, 172, 164), "Open", lambda: p.launch(key), ref="settings.appinfo.open", style="tonal"),
            ui.button(
                (188, 124, 320, 164), "Force stop", partial(self.force_stop, key), ref="settings.appinfo.stop", style="tonal"
            ),
            self._toggle_row(
                180,
                "Notifications",
                "On" if on else "Off",
                on,
                lambda: p.toggle_notifications(key),
                "settings.appinfo.notifications",
            ),
            ui.list_row(252, 72, "Permissions", sub="Camera, Location", ref="settings.appinfo.perms", on_tap=lambda: None),
            ui.list_row(
                324,
                72,
                "Storage & cache",
                sub="84 MB used in internal storage",
                ref="settings.appinfo.storage",
                on_tap=partial(self.push, "app_storage", key) if p.surfaces else lambda: None,
            ),
            ui.list_row(396, 72, "Mobile data & Wi‑Fi", sub="No data used", ref="settings.appinfo.data", on_tap=lambda: None),
            ui.list_row(
                468, 72, "Battery", sub="0% use since last full charge", ref="settings.appinfo.battery", on_tap=lambda: None
            ),
        ]
        return self._page("appinfo", "App info", rows)

    def force_stop(self, key: str) -> None:
        """Force stop: with the newer surfaces the app stops (it leaves the recent apps); the pinned
        button does nothing."""
        if self.phone.surfaces:
            self.stopped.append(key)
            self.phone.recent = [k for k in self.phone.recent if k != key]

    def _app_storage(self, key: str) -> list[ui.View]:
        """The newer Storage & cache page of an app: its sizes and Clear storage / Clear cache."""
        cache = "0 B" if key in self.cleared else f"{(len(key) * 13) % 90 + 9} MB"
        rows: list[ui.View] = [
            ui.list_row(0, 64, "App size", sub="71 MB", ref="settings.appstorage.size"),
            ui.list_row(64, 64, "Cache", sub=cache, ref="settings.appstorage.cache"),
            ui.button((40, 148, 172, 188), "Clear storage", lambda: None, ref="settings.appinfo.clear_storage", style="tonal"),
            ui.button(
                (188, 148, 320, 188),
                "Clear cache",
                partial(self.cleared.append, key),
                ref="settings.appinfo.clear_cache",
                style="tonal",
            ),
        ]
        return self._page("appstorage", "Storage & cache", rows)

    def _level_row(self, y: float, title: str, attr: str, ref: str) -> list[ui.View]:
        st = self.phone.settings
        value = int(getattr(st, attr))

        def set_level(v: int) -> None:
            setattr(st, attr, v)

        return [
            ui.label((16, y + 6, 250, y + 30), title, size=15),
            ui.label((250, y + 6, 344, y + 30), f"{value}%", size=13, fg=ui.SUBTLE, align="right", ref=f"{ref}.value"),
            ui.slider((20, y + 32, 340, y + 68), value, set_level, ref=f"{ref}.slider", desc=title),
        ]

    def _display(self, _: str) -> list[ui.View]:
        rows = [
            *self._level_row(0, "Brightness level", "brightness", "settings.brightness"),
            self._setting_row(80, "dark_mode", "Dark theme", "On", "Off"),
            self._setting_row(152, "auto_rotate", "Auto-rotate screen"),
            self._option_row(224, "screen_timeout", "settings.timeout", "After {}"),
            self._option_row(296, "font_size", "settings.font", "{}"),
        ]
        if self.phone.surfaces:
            rows.append(self._setting_row(368, "night_light", "Night Light", "On · amber tint", "Off"))
        return self._page("display", "Display", rows)

    def _wifi(self, _: str) -> list[ui.View]:
        """The newer Wi-Fi page: its switch, then the networks in range (a tap joins one)."""
        p, st = self.phone, self.phone.settings
        on = get_setting(p, "wifi")
        rows = [self._setting_row(0, "wifi", "Use Wi‑Fi")]
        rows.append(
            ui.label((16, 80, 344, 104), "Available networks" if on else "Turn on Wi‑Fi to see networks", size=13, fg=ui.BLUE)
        )
        for i, name in enumerate(st.networks if on else ()):
            here = name == st.wifi_network
            rows.append(
                ui.list_row(
                    108 + 64.0 * i,
                    64,
                    name,
                    sub="Connected" if here else ("Open" if "free" in name.lower() or "guest" in name.lower() else "Saved"),
                    icon="wifi",
                    icon_color=ui.BLUE if here else ui.SUBTLE,
                    ref=f"settings.wifi.net.{i}",
                    on_tap=partial(self.join, name),
                )
            )
        return self._page("wifi", "Wi‑Fi", rows)

    def join(self, name: str) -> None:
        self.phone.settings.wifi_network = name
        set_setting(self.phone, "wifi", True)

    def _option_row(self, y: float, name: str, ref: str, sub: str) -> ui.View:
        """A row showing a setting's value; with the newer surfaces a tap opens its page of choices."""
        value = str(getattr(self.phone.settings, name))
        tap = partial(self.push, "option", name) if self.phone.surfaces else lambda: None
        return ui.list_row(
            y, 72, OPTIONS[name][0], sub=sub.format(value.lower() if name == "screen_timeout" else value), ref=ref, on_tap=tap
        )

    def _option(self, name: str) -> list[ui.View]:
        title, values = OPTIONS[name]
        st = self.phone.settings

        def choose(v: str) -> None:
            setattr(st, name, v)
            self.back()

        rows = [
            ui.list_row(
                72.0 * i,
                72,
                v,
                ref=f"settings.option.{i}",
                on_tap=partial(choose, v),
                right=ui.View(
                    (308, 72.0 * i + 22, 336, 72.0 * i + 50), kind="icon", icon="check", icon_color=ui.BLUE, element=False
                )
                if getattr(st, name) == v
                else None,
            )
            for i, v in enumerate(values)
        ]
        return self._page("option", title, rows)

    def _system(self, _: str) -> list[ui.View]:
        """The newer System page: the phone's language and time zone (each a page of choices)."""
        rows = [
            self._option_row(0, "language", "settings.language", "{}"),
            self._option_row(72, "time_zone", "settings.timezone", "{}"),
        ]
        return self._page("system", "System", rows)

    def _battery(self, _: str) -> list[ui.View]:
        rows = [
            ui.label((16, 8, 344, 60), f"{self.phone.battery}%", size=36, bold=True, ref="settings.battery.level"),
            ui.label((16, 60, 344, 84), "Should last until about 10:00 PM", size=13, fg=ui.SUBTLE),
            self._setting_row(96, "battery_saver", "Battery Saver"),
            ui.list_row(168, 72, "Battery usage", ref="settings.usage", on_tap=lambda: None),
        ]
        return self._page("battery", "Battery", rows)

    def _sound(self, _: str) -> list[ui.View]:
        rows = [
            *self._level_row(0, "Media volume", "volume", "settings.volume"),
            self._setting_row(80, "do_not_disturb", "Do Not Disturb"),
            self._option_row(152, "ringtone", "settings.ringtone", "{}")
            if self.phone.surfaces
            else ui.list_row(152, 72, "Phone ringtone", sub="Pixel Sounds", ref="settings.ringtone", on_tap=lambda: None),
            # the pinned screens' static row; newer tasks get the switch (Phone.surfaces)
            self._setting_row(224, "vibrate", "Vibrate for calls")
            if self.phone.surfaces
            else ui.list_row(224, 72, "Vibration & haptics", sub="On", ref="settings.haptics", on_tap=lambda: None),
        ]
        return self._page("sound", "Sound & vibration", rows)

    def _storage(self, _: str) -> list[ui.View]:
        used = 38 + len(self.phone.installed) // 4
        rows = [
            ui.label((16, 8, 344, 52), f"{used}% used", size=30, bold=True, ref="settings.storage.used"),
            ui.label(
                (16, 52, 344, 76),
                f"{128 * (100 - used) // 100} GB free of 128 GB",
                size=14,
                fg=ui.SUBTLE,
                ref="settings.storage.free",
            ),
            ui.box(
                (16, 88, 344, 100),
                (218, 220, 224),
                radius=6,
                children=[ui.box((16, 88, 16 + 328 * used / 100, 100), ui.BLUE, radius=6)],
            ),
        ]
        for i, (t, sub) in enumerate((("Apps", "21 GB"), ("Images", "9.4 GB"), ("Videos", "6.1 GB"), ("System", "12 GB"))):
            rows.append(ui.list_row(112 + 72 * i, 72, t, sub=sub, ref=f"settings.storage.{i}", on_tap=lambda: None))
        return self._page("storage", "Storage", rows)

    def _notifications(self, _: str) -> list[ui.View]:
        rows = [
            ui.list_row(
                0,
                72,
                "App notifications",
                sub="Per-app settings in Apps",
                ref="settings.notif.apps",
                on_tap=lambda: self.push("apps"),
            ),
            ui.list_row(
                72,
                72,
                "Notification history",
                sub=f"{len(self.phone.notices)} recent",
                ref="settings.notif.history",
                on_tap=lambda: None,
            ),
            self._setting_row(144, "do_not_disturb", "Do Not Disturb"),
        ]
        return self._page("notifications", "Notifications", rows)

    def _location(self, _: str) -> list[ui.View]:
        up = 72 if self._moved("location", "location") else 0  # the switch moved to Security & privacy
        rows = [
            self._setting_row(0, "location", "Use location", "On - 3 apps have access"),
            ui.list_row(
                72 - up, 72, "App location permissions", sub="3 of 20 apps", ref="settings.location.apps", on_tap=lambda: None
            ),
            ui.list_row(
                144 - up,
                72,
                "Location services",
                sub="Wi‑Fi & Bluetooth scanning",
                ref="settings.location.services",
                on_tap=lambda: None,
            ),
        ]
        return self._page("location", "Location", rows[1:] if up else rows)

    def _about(self, _: str) -> list[ui.View]:
        rows = [
            ui.list_row(72 * i, 72, t, sub=s, ref=f"settings.about.{i}", on_tap=lambda: None)
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

    def _placeholder(self, _: str) -> list[ui.View]:
        key = self.top[0]
        rows = [
            ui.list_row(72 * i, 72, t, ref=f"settings.{key}.{i}", on_tap=lambda: None)
            for i, t in enumerate(("General", "Advanced", "Reset options"))
        ]
        return self._page(key, _TITLES.get(key, key.title()), rows)
