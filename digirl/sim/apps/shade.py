"""The notification shade (swipe down from the status bar): quick-settings tiles (with the newer
surfaces, a Screenshot tile), a brightness slider and the notifications with "Clear all". Not an app
of the drawer."""

from __future__ import annotations

from functools import partial

from digirl.sim import ui
from digirl.sim.apps.base import App
from digirl.sim.device import Photo, get_setting, set_setting

__all__ = ["TILES", "Shade"]

_BG: ui.Color = (32, 33, 36)
_TILE_OFF: ui.Color = (60, 64, 67)
_TILE_ON: ui.Color = (168, 199, 250)
_CARD: ui.Color = (48, 49, 52)
#: Quick-settings tiles: (setting, label, icon), four per row.
TILES = (
    ("wifi", "Internet", "wifi"),
    ("bluetooth", "Bluetooth", "bluetooth"),
    ("flashlight", "Flashlight", "flashlight"),
    ("do_not_disturb", "Do Not Disturb", "moon"),
    ("airplane_mode", "Airplane mode", "plane"),
    ("auto_rotate", "Auto-rotate", "rotate"),
    ("battery_saver", "Battery Saver", "battery"),
    ("dark_mode", "Dark theme", "moon"),
    ("location", "Location", "pin"),
    ("hotspot", "Hotspot", "hotspot"),
    ("mobile_data", "Mobile data", "signal"),
)


class Shade(App, key="shade", label="Notifications", icon="bell", bg=_BG):
    def init_state(self) -> None:
        self.shots = 0  # screenshots taken in the episode (their gallery ids)

    def screen(self) -> str:
        return "shade"

    def state(self) -> dict[str, object]:
        p = self.phone
        return {"screen": "shade", "notifications": len(p.notices), "from": p.shade_from}

    def back(self) -> bool:
        self.phone.close_shade()
        return True

    def _toggle(self, name: str) -> None:
        set_setting(self.phone, name, not get_setting(self.phone, name))

    def _brightness(self, v: int) -> None:
        self.phone.settings.brightness = v

    def _open_notice(self, i: int) -> None:
        p = self.phone
        if 0 <= i < len(p.notices):
            app = p.notices.pop(i).app
            p.shade_from = app if app in p.installed else p.shade_from
            p.close_shade()

    def _clear(self) -> None:
        self.phone.notices.clear()

    def _screenshot(self) -> None:
        """Quick settings' "Screenshot": the shade closes and a picture of the screen under it lands in
        the gallery (tagged ``screenshot`` and the app it shows)."""
        p = self.phone
        p.close_shade()
        self.shots += 1
        p.gallery.insert(0, Photo(f"s{self.shots}", "photo", ("screenshot", p.fg), False, "Just now", (210, 214, 222)))

    def build(self) -> list[ui.View]:
        p = self.phone
        views: list[ui.View] = [ui.box((0, ui.TOP, 360, ui.BOTTOM), _BG, ref="shade")]
        h, m = p.clock
        views.append(ui.label((20, ui.TOP + 6, 200, ui.TOP + 46), f"{h}:{m:02d}", size=26, fg=ui.WHITE, ref="shade.clock"))
        views.append(ui.label((200, ui.TOP + 6, 340, ui.TOP + 46), "Tue, Jun 4", size=13, fg=(200, 200, 205), align="right"))
        if p.surfaces:  # the newer shade's lock button, by the clock
            views.append(
                ui.icon_button((150, ui.TOP + 6, 194, ui.TOP + 46), "lock", p.lock, ref="shade.lock", desc="Lock", color=ui.WHITE)
            )
        for i, (name, text, icon) in enumerate(TILES):
            x, y = 12 + 86 * (i % 4), ui.TOP + 56 + 72 * (i // 4)
            on = get_setting(p, name)
            tile = ui.View(
                (x, y, x + 80, y + 64),
                kind="button",
                ref=f"shade.tile.{name}",
                fill=_TILE_ON if on else _TILE_OFF,
                radius=18,
                on_tap=partial(self._toggle, name),
                placeholder=f"{text} {'on' if on else 'off'}",
                checked=on,
            )
            fg = (32, 33, 36) if on else ui.WHITE
            tile.children.append(ui.View((x + 28, y + 8, x + 52, y + 32), kind="icon", icon=icon, icon_color=fg, element=False))
            tile.children.append(ui.label((x + 2, y + 36, x + 78, y + 58), text, size=10, fg=fg, align="center"))
            views.append(tile)
        if p.surfaces:  # in the free twelfth slot (the pinned screens of the shipped sets have none)
            x, y = 12 + 86 * 3, ui.TOP + 56 + 72 * 2
            shot = ui.View(
                (x, y, x + 80, y + 64),
                kind="button",
                ref="shade.tile.screenshot",
                fill=_TILE_OFF,
                radius=18,
                on_tap=self._screenshot,
                placeholder="Screenshot",
            )
            shot.children.append(
                ui.View((x + 28, y + 8, x + 52, y + 32), kind="icon", icon="image", icon_color=ui.WHITE, element=False)
            )
            shot.children.append(ui.label((x + 2, y + 36, x + 78, y + 58), "Screenshot", size=10, fg=ui.WHITE, align="center"))
            views.append(shot)
        y0 = ui.TOP + 56 + 72 * ((len(TILES) + 3) // 4) + 4.0
        views.append(
            ui.slider((24, y0, 336, y0 + 36), p.settings.brightness, self._brightness, ref="shade.brightness", desc="Brightness")
        )
        y0 += 48
        rows: list[ui.View] = []
        for i, n in enumerate(p.notices):
            ny = 96.0 * i
            app = p.apps.get(n.app)
            card = ui.box((12, ny, 348, ny + 88), _CARD, radius=18, ref=f"shade.notice.{i}", on_tap=partial(self._open_notice, i))
            card.kind = "list_item"
            card.children.append(
                ui.label((28, ny + 8, 300, ny + 28), f"{app.label if app else n.app} · {n.when}", size=11, fg=(190, 192, 198))
            )
            card.children.append(ui.label((28, ny + 30, 330, ny + 54), n.title, size=15, fg=ui.WHITE, bold=True))
            card.children.append(ui.label((28, ny + 54, 330, ny + 78), n.text, size=13, fg=(220, 221, 225)))
            rows.append(card)
        if rows:
            rows.append(
                ui.button(
                    (220, 96.0 * len(rows) + 4, 348, 96.0 * len(rows) + 44),
                    "Clear all",
                    self._clear,
                    ref="shade.clear",
                    style="tonal",
                )
            )
        else:
            rows.append(
                ui.label((0, 20, 360, 60), "No notifications", size=15, fg=(190, 192, 198), align="center", ref="shade.empty")
            )
        views.append(ui.scroll_list("shade.list", (0, y0, 360, ui.BOTTOM), rows, p.scroll))
        return views
