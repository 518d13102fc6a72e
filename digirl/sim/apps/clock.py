"""Clock: alarms (list, enable switches, a time picker with hour/minute fields, ▲/▼ and AM/PM), world clock,
timer and stopwatch."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from digirl.sim.apps.base import App, fab
from digirl.sim.ui import (
    BLUE,
    BOTTOM,
    FAINT,
    LIGHT_BLUE,
    RED,
    SCRIM,
    SUBTLE,
    TEXT,
    TOP,
    WHITE,
    View,
    box,
    button,
    icon_button,
    label,
    scroll_list,
    switch,
)

__all__ = ["Alarm", "Clock", "fmt12"]

_BG = (248, 250, 255)
TABS = ("Alarm", "Clock", "Timer", "Stopwatch")
_TAB_ICONS = {"Alarm": "alarm", "Clock": "clock", "Timer": "history", "Stopwatch": "clock"}


@dataclass
class Alarm:
    hour: int  # 0-23
    minute: int
    enabled: bool = True
    label: str = ""


def fmt12(h: int, m: int) -> tuple[str, str]:
    """(``"7:05"``, ``"AM"``) for 24-hour ``h``:``m``."""
    return f"{(h % 12) or 12}:{m:02d}", "AM" if h < 12 else "PM"


@dataclass
class Picker:
    """The open time picker: which alarm it edits (-1: a new one) and its fields."""

    index: int
    pm: bool
    error: str = ""


class Clock(App):
    key = "clock"
    label = "Clock"
    icon = "alarm"
    color = (26, 115, 232)
    bg = _BG
    status_color = _BG

    def __init__(self, phone: object) -> None:
        super().__init__(phone)  # type: ignore[arg-type]
        self.tab = "Alarm"
        self.alarms: list[Alarm] = [Alarm(7, 0, False, "Weekdays"), Alarm(8, 30, True, "")]
        self.picker: Picker | None = None
        self.timer_running = False
        self.stopwatch_running = False

    def screen(self) -> str:
        return "picker" if self.picker is not None else self.tab.lower()

    def state(self) -> dict[str, object]:
        return {
            "screen": self.screen(),
            "alarms": [(a.hour, a.minute, a.enabled) for a in self.alarms],
            "picker": None
            if self.picker is None
            else {"hour": self.fields.get("hour"), "minute": self.fields.get("minute"), "pm": self.picker.pm},
        }

    def keyboard_action(self) -> str:
        return "enter"

    def back(self) -> bool:
        if self.picker is not None:
            self.picker = None
            self.blur()
            return True
        if self.tab != "Alarm":
            self.tab = "Alarm"
            return True
        return False

    # ---------------------------------------------------------------- picker
    def open_picker(self, index: int) -> None:
        if 0 <= index < len(self.alarms):
            a = self.alarms[index]
            h, m, pm = (a.hour % 12) or 12, a.minute, a.hour >= 12
        else:
            h, m, pm = 6, 0, False
        self.picker = Picker(index, pm)
        self.fields["hour"] = f"{h:02d}"
        self.fields["minute"] = f"{m:02d}"
        self.focus("hour", select_all=True)

    def type_text(self, text: str) -> None:
        # Digits fill the focused field; after two hour digits the minute field takes over.
        for ch in text:
            f = self.focused
            if f is None:
                return
            if not ch.isdigit():
                continue
            if f in self.selected:
                self.selected.discard(f)
                self.fields[f] = ""
            self.fields[f] = (
                (self.fields.get(f, "") + ch)[-2:] if len(self.fields.get(f, "")) >= 2 else self.fields.get(f, "") + ch
            )
            if f == "hour" and len(self.fields["hour"]) == 2:
                self.focus("minute", select_all=True)

    def submit(self, name: str) -> None:
        if name == "hour":
            self.focus("minute", select_all=True)
        else:
            self.confirm()

    def _step(self, name: str, delta: int) -> None:
        try:
            v = int(self.fields.get(name, "0") or 0)
        except ValueError:
            v = 0
        if name == "hour":
            v = ((v - 1 + delta) % 12) + 1
        else:
            v = (v + delta) % 60
        self.fields[name] = f"{v:02d}"
        self.blur()

    def set_pm(self, pm: bool) -> None:
        if self.picker is not None:
            self.picker.pm = pm

    def picked_time(self) -> tuple[int, int] | None:
        """The picker's time as 24-hour (h, m), or None when the fields are not a valid time."""
        if self.picker is None:
            return None
        try:
            h, m = int(self.fields.get("hour", "")), int(self.fields.get("minute", ""))
        except ValueError:
            return None
        if not (0 <= m <= 59) or not (0 <= h <= 23):
            return None
        if 1 <= h <= 12:
            h = (h % 12) + (12 if self.picker.pm else 0)
        return h, m

    def confirm(self) -> None:
        if self.picker is None:
            return
        t = self.picked_time()
        if t is None:
            self.picker.error = "Enter a valid time"
            return
        if 0 <= self.picker.index < len(self.alarms):
            a = self.alarms[self.picker.index]
            a.hour, a.minute, a.enabled = t[0], t[1], True
        else:
            self.alarms.append(Alarm(t[0], t[1], True))
        self.picker = None
        self.blur()

    def cancel(self) -> None:
        self.picker = None
        self.blur()

    def toggle(self, i: int) -> None:
        self.alarms[i].enabled = not self.alarms[i].enabled

    # ---------------------------------------------------------------- views
    def build(self) -> list[View]:
        views: list[View] = [box((0, TOP, 360, BOTTOM), _BG)]
        if self.tab == "Alarm":
            views += self._alarms()
        elif self.tab == "Clock":
            views += self._world()
        else:
            views += self._timer()
        views.append(self._tabs())
        if self.picker is not None:
            views.append(self._picker())
        return views

    def _tabs(self) -> View:
        bar = box((0, BOTTOM - 72, 360, BOTTOM), (238, 241, 250), blocker=True, ref="clock.tabs")
        for i, t in enumerate(TABS):
            sel = t == self.tab
            x0 = 90 * i
            item = View(
                (x0, BOTTOM - 72, x0 + 90, BOTTOM),
                kind="tab",
                ref=f"clock.tab.{t.lower()}",
                placeholder=t,
                on_tap=partial(self._select, t),
            )
            item.children.append(
                View(
                    (x0 + 25, BOTTOM - 66, x0 + 65, BOTTOM - 38),
                    kind="icon",
                    icon=_TAB_ICONS[t],
                    icon_color=TEXT,
                    fill=LIGHT_BLUE if sel else None,
                    radius=14 if sel else 0,
                    element=False,
                )
            )
            item.children.append(label((x0, BOTTOM - 34, x0 + 90, BOTTOM - 12), t, size=12, align="center", bold=sel))
            bar.children.append(item)
        return bar

    def _select(self, t: str) -> None:
        self.tab = t

    def _alarms(self) -> list[View]:
        rows: list[View] = []
        for i, a in enumerate(self.alarms):
            y = 8.0 + 112 * i
            t, ampm = fmt12(a.hour, a.minute)
            card = box(
                (12, y, 348, y + 104),
                WHITE if a.enabled else (240, 241, 245),
                radius=20,
                ref=f"clock.alarm.{i}",
                kind="list_item",
            )
            col = TEXT if a.enabled else SUBTLE
            card.children.append(
                View(
                    (28, y + 12, 200, y + 64),
                    kind="text",
                    text=f"{t} {ampm}",
                    size=34,
                    fg=col,
                    ref=f"clock.alarm.{i}.time",
                    on_tap=partial(self.open_picker, i),
                )
            )
            card.children.append(
                label(
                    (28, y + 66, 240, y + 90),
                    a.label or "Not scheduled" if not a.enabled else (a.label or "Tomorrow"),
                    size=13,
                    fg=SUBTLE,
                )
            )
            card.children.append(
                switch((280, y + 24, 340, y + 64), a.enabled, partial(self.toggle, i), ref=f"clock.alarm.{i}.switch")
            )
            rows.append(card)
        views: list[View] = [scroll_list("clock.alarms", (0, TOP + 64, 360, BOTTOM - 72), rows, self.phone.scroll)]
        views.append(label((20, TOP, 340, TOP + 64), "Alarm", size=24, ref="clock.title"))
        views.append(fab("plus", lambda: self.open_picker(-1), ref="clock.add", desc="Add alarm", y=BOTTOM - 72 - 76))
        return views

    def _world(self) -> list[View]:
        h, m = self.phone.clock
        t, ampm = fmt12(h, m)
        views = [
            label((0, TOP + 40, 360, TOP + 110), f"{t} {ampm}", size=48, align="center", ref="clock.now"),
            label((0, TOP + 112, 360, TOP + 136), "Local time", size=14, fg=SUBTLE, align="center"),
        ]
        for i, (city, off) in enumerate((("New York", 3), ("London", 8), ("Tokyo", 16))):
            y = TOP + 170 + 76 * i
            ct, cap = fmt12((h + off) % 24, m)
            card = box((12, y, 348, y + 68), WHITE, radius=16, ref=f"clock.city.{i}")
            card.children.append(label((28, y, 200, y + 68), city, size=17))
            card.children.append(label((200, y, 332, y + 68), f"{ct} {cap}", size=20, align="right"))
            views.append(card)
        views.append(fab("globe", lambda: None, ref="clock.addcity", desc="Add city", y=BOTTOM - 72 - 76))
        return views

    def _timer(self) -> list[View]:
        running = self.timer_running if self.tab == "Timer" else self.stopwatch_running
        text = "00:05:00" if self.tab == "Timer" else "00:00.00"

        def toggle() -> None:
            if self.tab == "Timer":
                self.timer_running = not self.timer_running
            else:
                self.stopwatch_running = not self.stopwatch_running

        return [
            label((0, TOP + 160, 360, TOP + 240), text, size=52, align="center", ref=f"clock.{self.tab.lower()}"),
            button(
                (120, TOP + 320, 240, TOP + 376),
                "Pause" if running else "Start",
                toggle,
                ref=f"clock.{self.tab.lower()}.start",
                radius=28,
                size=16,
            ),
        ]

    def _picker(self) -> View:
        p = self.picker
        assert p is not None
        scrim = box((0, TOP, 360, BOTTOM), SCRIM, blocker=True, ref="clock.picker.scrim")
        top = TOP + 120
        card = box((28, top, 332, top + 330), (236, 240, 250), radius=28, blocker=True, ref="clock.picker", kind="dialog")
        card.children.append(label((52, top + 16, 308, top + 40), "Enter time", size=13, fg=SUBTLE))
        for name, x0 in (("hour", 52), ("minute", 172)):
            foc = self.focused == name
            field = View(
                (x0, top + 96, x0 + 96, top + 168),
                kind="input",
                text=self.fields.get(name, ""),
                ref=f"clock.picker.{name}",
                fill=LIGHT_BLUE if foc else (225, 227, 236),
                radius=12,
                border=BLUE if foc else None,
                size=34,
                focused=foc,
                icon="",
                on_tap=partial(self.focus, name, select_all=True),
            )
            card.children.append(field)
            card.children.append(
                icon_button(
                    (x0 + 28, top + 52, x0 + 68, top + 92),
                    "up",
                    partial(self._step, name, 1),
                    ref=f"clock.picker.{name}.up",
                    desc=f"Increase {name}",
                    color=TEXT,
                )
            )
            card.children.append(
                icon_button(
                    (x0 + 28, top + 172, x0 + 68, top + 212),
                    "down",
                    partial(self._step, name, -1),
                    ref=f"clock.picker.{name}.down",
                    desc=f"Decrease {name}",
                    color=TEXT,
                )
            )
        card.children.append(label((148, top + 96, 172, top + 168), ":", size=34, align="center"))
        for i, (txt, pm) in enumerate((("AM", False), ("PM", True))):
            sel = p.pm == pm
            card.children.append(
                View(
                    (276, top + 96 + 36 * i, 316, top + 132 + 36 * i),
                    kind="button",
                    text=txt,
                    ref=f"clock.picker.{txt.lower()}",
                    fill=(255, 218, 214) if sel else WHITE,
                    border=FAINT,
                    radius=6,
                    size=12,
                    align="center",
                    bold=sel,
                    on_tap=partial(self.set_pm, pm),
                    fg=TEXT,
                )
            )
        if p.error:
            card.children.append(label((52, top + 218, 308, top + 240), p.error, size=12, fg=RED, ref="clock.picker.error"))
        card.children.append(label((52, top + 240, 308, top + 260), "Hour      Minute", size=11, fg=SUBTLE))
        card.children.append(
            button((132, top + 276, 216, top + 316), "Cancel", self.cancel, ref="clock.picker.cancel", style="text")
        )
        card.children.append(button((220, top + 276, 308, top + 316), "OK", self.confirm, ref="clock.picker.ok", style="text"))
        scrim.children.append(card)
        return scrim
