"""The overview of recent apps (the navigation bar's square button, with the newer surfaces): a card per
app used in the episode, newest first; a tap on a card opens its app, its × closes it, "Clear all"
closes them all. Not an app of the drawer."""

from __future__ import annotations

from functools import partial

from digirl.sim import ui
from digirl.sim.apps.base import SystemScreen, letter_tile

__all__ = ["Overview"]

_BG: ui.Color = (32, 33, 36)
_CARD: ui.Color = (241, 243, 244)
#: Cards that fit on the screen (older apps are still recent, only off screen).
SHOWN = 4


class Overview(SystemScreen, key="overview", label="Recent apps", icon="recents", bg=_BG):
    screen_name = "overview"

    def state(self) -> dict[str, object]:
        return {"screen": "overview", "recent": list(self.phone.recent)}

    def cards(self) -> list[str]:
        """The recent apps' keys as the cards show them, newest first."""
        return [k for k in reversed(self.phone.recent) if k in self.phone.installed]

    def back(self) -> bool:
        self.leave()
        return True

    def close(self, key: str) -> None:
        self.phone.recent = [k for k in self.phone.recent if k != key]

    def clear_all(self) -> None:
        self.phone.recent = []
        self.phone.go_home()

    def build(self) -> list[ui.View]:
        views: list[ui.View] = [ui.box((0, ui.TOP, 360, ui.BOTTOM), _BG, ref="overview")]
        cards = self.cards()
        if not cards:
            views.append(
                ui.label((0, ui.TOP + 300, 360, ui.TOP + 330), "No recent items", size=16, fg=(200, 200, 200), align="center")
            )
            return views
        for i, key in enumerate(cards[:SHOWN]):
            app, y = self.phone.apps[key], ui.TOP + 24 + 128.0 * i
            card = ui.box(
                (24, y, 336, y + 116), _CARD, radius=18, ref=f"overview.card.{i}", on_tap=partial(self.phone.launch, key)
            )
            card.kind, card.placeholder = "list_item", app.label
            card.children.append(letter_tile((40, y + 16, 80, y + 56), app.label[:1], (26, 115, 232), radius=20, size=18))
            card.children.append(ui.label((92, y + 20, 280, y + 50), app.label, size=17, bold=True))
            card.children.append(ui.label((92, y + 52, 300, y + 76), "Recently used", size=13, fg=ui.SUBTLE))
            close, ref = partial(self.close, key), f"overview.card.{i}.close"
            card.children.append(
                ui.icon_button((284, y + 12, 328, y + 56), "close", close, ref=ref, desc=f"Close {app.label}", color=ui.TEXT)
            )
            views.append(card)
        views.append(
            ui.button(
                (120, ui.BOTTOM - 64, 240, ui.BOTTOM - 20), "Clear all", self.clear_all, ref="overview.clear_all", style="tonal"
            )
        )
        return views
