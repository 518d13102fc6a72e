"""The lock screen (newer surfaces): the time, the date and "Swipe up to unlock". Quick settings' lock
button shows it; a swipe up anywhere opens the phone again where it was. Nothing else on it reacts
(the navigation bar's buttons and the shade wait for the unlock). Not an app of the drawer."""

from __future__ import annotations

from digirl.sim import ui
from digirl.sim.apps.base import SystemScreen

__all__ = ["LockScreen"]

_BG: ui.Color = (24, 32, 48)


class LockScreen(SystemScreen, key="lock", label="Lock screen", icon="lock", bg=_BG):
    screen_name = "locked"

    def state(self) -> dict[str, object]:
        return {"screen": "locked"}

    def back(self) -> bool:
        return True  # back does nothing on the lock screen

    def build(self) -> list[ui.View]:
        h, m = self.phone.clock
        views: list[ui.View] = [ui.box((0, ui.TOP, 360, ui.BOTTOM), _BG, ref="lock", blocker=True)]
        views.append(ui.View((164, ui.TOP + 60, 196, ui.TOP + 92), kind="icon", icon="lock", icon_color=ui.WHITE, element=False))
        views.append(
            ui.label((0, ui.TOP + 110, 360, ui.TOP + 200), f"{h}:{m:02d}", size=72, fg=ui.WHITE, align="center", ref="lock.clock")
        )
        views.append(
            ui.label((0, ui.TOP + 204, 360, ui.TOP + 230), "Tuesday, June 4", size=16, fg=(210, 214, 222), align="center")
        )
        views.append(
            ui.label(
                (0, ui.BOTTOM - 70, 360, ui.BOTTOM - 44),
                "Swipe up to unlock",
                size=14,
                fg=(210, 214, 222),
                align="center",
                ref="lock.hint",
            )
        )
        return views
