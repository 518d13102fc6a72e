"""Calendar: a month grid (‹ › to change month, tap a day to select it), that day's events, and an
event editor (title, time or all day) whose saved events stay for the episode."""

from __future__ import annotations

import calendar as _cal
from dataclasses import dataclass
from datetime import date
from functools import partial

from digirl.sim import ui
from digirl.sim.apps.base import App, app_bar, fab
from digirl.sim.intents import MONTH_NAMES, TODAY

__all__ = ["Calendar", "Event", "parse_clock_time"]


@dataclass
class Event:
    title: str
    day: date
    time: str = ""  # "HH:MM"; "" = all day
    #: Created during this episode.
    new: bool = False


def parse_clock_time(text: str) -> str | None:
    """ "15:00", "3:00 PM", "3pm", "noon" → "HH:MM" (24 h); ``None`` if not a time."""
    from digirl.sim.intents import parse_time

    t = text.strip().lower()
    if t in ("noon", "midday"):
        return "12:00"
    if t == "midnight":
        return "00:00"
    try:
        h, m = parse_time(t)
    except ValueError:
        return None
    return f"{h:02d}:{m:02d}"


def _fmt(hhmm: str) -> str:
    if not hhmm:
        return "All day"
    h, m = (int(x) for x in hhmm.split(":"))
    return f"{(h % 12) or 12}:{m:02d} {'AM' if h < 12 else 'PM'}"


class Calendar(App, key="calendar", label="Calendar", icon="calendar", color=(26, 115, 232)):
    def init_state(self) -> None:
        self.month = (TODAY.year, TODAY.month)
        self.day = TODAY
        self.editing = False
        self.error = ""
        self.events: list[Event] = [
            Event("Team sync", date(2024, 6, 4), "11:00"),
            Event("Dentist", date(2024, 6, 11), "09:30"),
            Event("Book club", date(2024, 6, 19), "19:00"),
            Event("Rent due", date(2024, 6, 26)),
        ]

    def screen(self) -> str:
        return "edit" if self.editing else "month"

    def state(self) -> dict[str, object]:
        return {
            "screen": self.screen(),
            "month": f"{self.month[0]}-{self.month[1]:02d}",
            "selected": self.day.isoformat(),
            "new_events": [(e.title, e.day.isoformat(), e.time) for e in self.events if e.new],
        }

    def keyboard_action(self) -> str:
        return "enter"

    def back(self) -> bool:
        if self.editing:
            self.editing = False
            self.blur()
            return True
        return False

    def shift_month(self, delta: int) -> None:
        y, m = self.month
        m += delta
        self.month = (y + (m - 1) // 12, (m - 1) % 12 + 1)

    def select(self, d: date) -> None:
        self.day = d

    def new_event(self) -> None:
        self.editing, self.error = True, ""
        self.fields["title"] = ""
        self.fields["time"] = ""
        self.focus("title")

    def save(self) -> None:
        title = self.fields.get("title", "").strip()
        raw = self.fields.get("time", "").strip()
        hhmm = parse_clock_time(raw) if raw else ""
        if not title:
            self.error = "Add a title"
            return
        if hhmm is None:
            self.error = f"{raw!r} is not a time"
            return
        self.events.append(Event(title, self.day, hhmm, new=True))
        self.editing = False
        self.blur()

    def submit(self, name: str) -> None:
        if name == "title":
            self.focus("time")
        else:
            self.save()

    # ---------------------------------------------------------------- views
    def build(self) -> list[ui.View]:
        if self.editing:
            return self._editor()
        y, m = self.month
        views: list[ui.View] = [ui.box((0, ui.TOP, 360, ui.BOTTOM), ui.WHITE)]
        views.append(app_bar(f"{MONTH_NAMES[m - 1]} {y}", ref="calendar.bar"))
        views.append(
            ui.icon_button(
                (264, ui.TOP + 8, 304, ui.TOP + 48),
                "back",
                partial(self.shift_month, -1),
                ref="calendar.prev",
                desc="Previous month",
                color=ui.SUBTLE,
            )
        )
        views.append(
            ui.icon_button(
                (308, ui.TOP + 8, 348, ui.TOP + 48),
                "chevron",
                partial(self.shift_month, 1),
                ref="calendar.next",
                desc="Next month",
                color=ui.SUBTLE,
            )
        )
        for i, letter in enumerate("SMTWTFS"):
            views.append(
                ui.label((8 + 49 * i, ui.TOP + 60, 56 + 49 * i, ui.TOP + 84), letter, size=12, fg=ui.SUBTLE, align="center")
            )
        first = (date(y, m, 1).weekday() + 1) % 7  # Sunday = 0
        days_with = {e.day.day for e in self.events if (e.day.year, e.day.month) == (y, m)}
        for day in range(1, _cal.monthrange(y, m)[1] + 1):
            i = day + first - 1
            x, yy = 8 + 49 * (i % 7), ui.TOP + 88 + 56 * (i // 7)
            d = date(y, m, day)
            sel, today = d == self.day, d == TODAY
            views.append(
                ui.View(
                    (x, yy, x + 48, yy + 52),
                    kind="button",
                    text=str(day),
                    size=13,
                    align="center",
                    fill=ui.BLUE if sel else (ui.LIGHT_BLUE if today else None),
                    fg=ui.WHITE if sel else (ui.BLUE if today else (32, 33, 36)),
                    radius=24,
                    ref=f"calendar.day.{day}",
                    bold=today,
                    on_tap=partial(self.select, d),
                )
            )
            if day in days_with:
                views.append(ui.box((x + 20, yy + 44, x + 28, yy + 48), ui.RED if sel else (3, 155, 229), radius=2))
        top = ui.TOP + 88 + 56 * 6 + 4
        views.append(
            ui.label((16, top, 344, top + 28), f"{self.day:%A, %B} {self.day.day}", size=14, bold=True, ref="calendar.selected")
        )
        rows = [
            ui.list_row(
                56.0 * i,
                56,
                e.title,
                sub=_fmt(e.time),
                ref=f"calendar.event.{i}",
                icon="calendar",
                icon_color=ui.BLUE,
                on_tap=lambda: None,
            )
            for i, e in enumerate(sorted((e for e in self.events if e.day == self.day), key=lambda e: e.time))
        ] or [ui.label((16, 8, 344, 36), "No events", size=14, fg=ui.SUBTLE, ref="calendar.noevents")]
        views.append(ui.scroll_list("calendar.events", (0, top + 30, 360, ui.BOTTOM), rows, self.phone.scroll))
        views.append(fab("plus", self.new_event, ref="calendar.add", desc="Create event"))
        return views

    def _editor(self) -> list[ui.View]:
        views = self.form_page("New event", ref="calendar.edit", save=self.save)
        views.append(
            self.text_input(
                (16, ui.TOP + 72, 344, ui.TOP + 124),
                "title",
                placeholder="Add title",
                ref="calendar.edit.title",
                icon="",
                size=20,
                radius=8,
            )
        )
        views.append(
            ui.label(
                (16, ui.TOP + 140, 344, ui.TOP + 168),
                f"{self.day:%a, %b} {self.day.day}, {self.day.year}",
                size=15,
                ref="calendar.edit.date",
            )
        )
        views.append(
            self.text_input(
                (16, ui.TOP + 176, 344, ui.TOP + 224),
                "time",
                placeholder="Time (all day if empty), e.g. 3:00 PM",
                ref="calendar.edit.time",
                icon="clock",
                radius=8,
            )
        )
        if self.error:
            views.append(
                ui.label((16, ui.TOP + 232, 344, ui.TOP + 256), self.error, size=13, fg=ui.RED, ref="calendar.edit.error")
            )
        return views
