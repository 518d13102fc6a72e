"""Clock: alarms (list, enable switches, delete, a time picker with hour/minute fields, ▲/▼ and AM/PM),
world clock (its cities; "Add city" searches one and a tap adds it), a timer (type its duration,
Start; one step is one second) and a stopwatch."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from digirl.sim import ui
from digirl.sim.apps.base import App, fab
from digirl.sim.apps.clock_picker import picker_view

__all__ = ["DEFAULT_CITIES", "WORLD_CITIES", "Alarm", "Clock", "city_matches", "fmt12", "fmt_compact", "timer_digits"]

_BG = (248, 250, 255)
_DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
TABS = ("Alarm", "Clock", "Timer", "Stopwatch")
_TAB_ICONS = {"Alarm": "alarm", "Clock": "clock", "Timer": "history", "Stopwatch": "clock"}

#: The world clock's cities → minutes ahead of the phone's local time (local is US Pacific in summer;
#: the cities' summer offsets, so that New York is 3 h ahead as the default list has always shown).
WORLD_CITIES: dict[str, int] = {
    name: round(hours * 60)
    for name, hours in (
        ("Honolulu", -3), ("Anchorage", -1), ("Los Angeles", 0), ("Vancouver", 0), ("Denver", 1),
        ("Mexico City", 1), ("Chicago", 2), ("New York", 3), ("Toronto", 3), ("Boston", 3), ("Miami", 3),
        ("Buenos Aires", 4), ("Sao Paulo", 4), ("Reykjavik", 7), ("London", 8), ("Dublin", 8), ("Lisbon", 8),
        ("Lagos", 8), ("Paris", 9), ("Berlin", 9), ("Madrid", 9), ("Rome", 9), ("Amsterdam", 9),
        ("Stockholm", 9), ("Johannesburg", 9), ("Cairo", 10), ("Istanbul", 10), ("Moscow", 10), ("Nairobi", 10),
        ("Dubai", 11), ("Karachi", 12), ("Mumbai", 12.5), ("New Delhi", 12.5), ("Bangkok", 14), ("Jakarta", 14),
        ("Singapore", 15), ("Hong Kong", 15), ("Beijing", 15), ("Shanghai", 15), ("Manila", 15), ("Seoul", 16),
        ("Tokyo", 16), ("Sydney", 17), ("Melbourne", 17), ("Auckland", 19),
    )
}  # fmt: skip
DEFAULT_CITIES = ("New York", "London", "Tokyo")


def city_matches(query: str) -> list[str]:
    """The world clock's search: cities whose name (or a word of it) starts with ``query``, A–Z."""
    q = " ".join(query.lower().split())
    if not q:
        return sorted(WORLD_CITIES)
    return sorted(c for c in WORLD_CITIES if c.lower().startswith(q) or any(w.startswith(q) for w in c.lower().split()))


@dataclass
class Alarm:
    hour: int  # 0-23
    minute: int
    enabled: bool = True
    label: str = ""
    days: tuple[int, ...] = ()  # repeat days, 0 = Monday (the newer surfaces set them)


def fmt12(h: int, m: int) -> tuple[str, str]:
    """(``"7:05"``, ``"AM"``) for 24-hour ``h``:``m``."""
    return f"{(h % 12) or 12}:{m:02d}", "AM" if h < 12 else "PM"


def fmt_compact(h: int, m: int) -> str:
    """A time as instructions write it: ``"6pm"``, ``"6:45pm"``, ``"12am"`` for 24-hour ``h``:``m``."""
    return f"{(h % 12) or 12}{f':{m:02d}' if m else ''}{'am' if h < 12 else 'pm'}"


def timer_digits(seconds: int) -> str:
    """What to type into the timer for ``seconds`` (digits fill h, mm, ss from the right: 90 → "130")."""
    h, rest = divmod(int(seconds), 3600)
    m, sec = divmod(rest, 60)
    return f"{h}{m:02d}{sec:02d}".lstrip("0") or "0"


def _hms(seconds: int) -> str:
    h, rest = divmod(max(0, int(seconds)), 3600)
    m, sec = divmod(rest, 60)
    return f"{h:02d}:{m:02d}:{sec:02d}"


@dataclass
class Picker:
    """The open time picker: which alarm it edits (-1: a new one) and its fields."""

    index: int
    pm: bool
    error: str = ""


class Clock(App, key="clock", label="Clock", icon="alarm", color=(26, 115, 232), bg=_BG):
    def init_state(self) -> None:
        self.tab = "Alarm"
        self.alarms: list[Alarm] = [Alarm(7, 0, False, "Weekdays"), Alarm(8, 30, True, "")]
        self.picker: Picker | None = None
        self.timer_running = False
        #: The duration the timer was started with, and what is left (seconds).
        self.timer_total = 0
        self.timer_left = 0
        self.stopwatch_running = False
        self.stopwatch_elapsed = 0
        self.cities: list[str] = list(DEFAULT_CITIES)
        #: The world clock's "Add city" search is open.
        self.adding_city = False
        #: The alarm whose label is being typed (newer surfaces).
        self.label_for: int | None = None

    def screen(self) -> str:
        if self.adding_city:
            return "add_city"
        return "picker" if self.picker is not None else self.tab.lower()

    def state(self) -> dict[str, object]:
        return {
            "screen": self.screen(),
            "alarms": [(a.hour, a.minute, a.enabled) for a in self.alarms],
            "timer": {"running": self.timer_running, "total": self.timer_total, "left": self.timer_left},
            "stopwatch": {"running": self.stopwatch_running, "elapsed": self.stopwatch_elapsed},
            "cities": list(self.cities),
            "picker": None
            if self.picker is None
            else {"hour": self.fields.get("hour"), "minute": self.fields.get("minute"), "pm": self.picker.pm},
        }

    def keyboard_action(self) -> str:
        return "enter"

    def back(self) -> bool:
        if self.focused == "label":  # the label edit is dropped
            self.label_for = None
            self.blur()
            return True
        if self.adding_city:
            self.close_city_search()
            return True
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

    # ---------------------------------------------------------------- world clock
    def open_city_search(self) -> None:
        self.adding_city = True
        self.fields["city"] = ""
        self.focus("city")

    def close_city_search(self) -> None:
        self.adding_city = False
        self.blur()

    def add_city(self, name: str) -> None:
        """Add ``name`` to the world clock (at the end; a city already there stays where it is)."""
        if name not in self.cities:
            self.cities.append(name)
        self.phone.scroll.pop("clock.cities", None)
        self.close_city_search()

    def type_text(self, text: str) -> None:
        if self.focused in ("city", "label"):
            App.type_text(self, text)
            return
        if self.focused == "timer":  # up to six digits, read as hh mm ss from the right
            digits = (self.fields.get("timer", "") + "".join(c for c in text if c.isdigit()))[-6:]
            self.fields["timer"] = digits.lstrip("0")
            return
        if self.focused in ("hour", "minute") and self._type_time(text):
            return
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

    def _type_time(self, text: str) -> bool:
        """A whole time typed as people write it ("6:45pm", "7 am", "18:30") sets hour, minute and AM/PM."""
        from digirl.sim.tasks.normalize import parse_time

        t = text.strip()
        if t.isdigit() or self.picker is None:
            return False  # plain digits fill the fields one by one
        hhmm = parse_time(t)
        if hhmm is None:
            return False
        h, m = int(hhmm[:2]), int(hhmm[3:])
        self.fields["hour"], self.fields["minute"] = f"{(h % 12) or 12:02d}", f"{m:02d}"
        self.picker.pm = h >= 12
        self.selected.clear()
        self.blur()
        return True

    def submit(self, name: str) -> None:
        if name == "label":  # enter keeps the typed label
            if self.label_for is not None and self.label_for < len(self.alarms):
                self.alarms[self.label_for].label = self.fields.get("label", "").strip()
            self.label_for = None
            self.blur()
            return
        if name == "city":  # enter picks the only match
            hits = city_matches(self.fields.get("city", ""))
            if len(hits) == 1:
                self.add_city(hits[0])
            return
        if name == "timer":
            self.start_timer()
        elif name == "hour":
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

    def delete(self, i: int) -> None:
        if 0 <= i < len(self.alarms):
            del self.alarms[i]

    # ---------------------------------------------------------------- timer, stopwatch
    def typed_seconds(self) -> int:
        d = self.fields.get("timer", "").rjust(6, "0")
        return int(d[:2]) * 3600 + int(d[2:4]) * 60 + int(d[4:])

    def start_timer(self) -> None:
        if self.timer_running:
            self.timer_running = False  # pause
        elif self.timer_left > 0:
            self.timer_running = True  # resume
        elif self.typed_seconds() > 0:
            self.timer_total = self.timer_left = self.typed_seconds()
            self.timer_running = True
        self.blur()

    def reset_timer(self) -> None:
        self.timer_running, self.timer_total, self.timer_left = False, 0, 0
        self.fields["timer"] = ""

    def toggle_stopwatch(self) -> None:
        self.stopwatch_running = not self.stopwatch_running

    def reset_stopwatch(self) -> None:
        self.stopwatch_running, self.stopwatch_elapsed = False, 0

    def tick(self) -> None:
        if self.timer_running:
            self.timer_left -= 1
            if self.timer_left <= 0:
                self.timer_running, self.timer_left = False, 0
            self.phone.invalidate()
        if self.stopwatch_running:
            self.stopwatch_elapsed += 1
            self.phone.invalidate()

    # ---------------------------------------------------------------- views
    def build(self) -> list[ui.View]:
        views: list[ui.View] = [ui.box((0, ui.TOP, 360, ui.BOTTOM), _BG)]
        if self.tab == "Alarm":
            views += self._alarms()
        elif self.tab == "Clock":
            views += self._world()
        elif self.tab == "Timer":
            views += self._timer()
        else:
            views += self._stopwatch()
        views.append(self._tabs())
        if self.picker is not None:
            views.append(picker_view(self))
        if self.adding_city:
            views += self._city_search()
        return views

    def _tabs(self) -> ui.View:
        bar = ui.box((0, ui.BOTTOM - 72, 360, ui.BOTTOM), (238, 241, 250), blocker=True, ref="clock.tabs")
        for i, t in enumerate(TABS):
            sel = t == self.tab
            x0 = 90 * i
            item = ui.View(
                (x0, ui.BOTTOM - 72, x0 + 90, ui.BOTTOM),
                kind="tab",
                ref=f"clock.tab.{t.lower()}",
                placeholder=t,
                on_tap=partial(self._select, t),
            )
            item.children.append(
                ui.View(
                    (x0 + 25, ui.BOTTOM - 66, x0 + 65, ui.BOTTOM - 38),
                    kind="icon",
                    icon=_TAB_ICONS[t],
                    icon_color=ui.TEXT,
                    fill=ui.LIGHT_BLUE if sel else None,
                    radius=14 if sel else 0,
                    element=False,
                )
            )
            item.children.append(ui.label((x0, ui.BOTTOM - 34, x0 + 90, ui.BOTTOM - 12), t, size=12, align="center", bold=sel))
            bar.children.append(item)
        return bar

    def _select(self, t: str) -> None:
        self.tab = t
        self.blur()

    def _alarms(self) -> list[ui.View]:
        rows: list[ui.View] = []
        more = self.phone.surfaces  # repeat days and a label on every alarm (the pinned cards have neither)
        step = 160.0 if more else 112.0
        for i, a in enumerate(self.alarms):
            y = 8.0 + step * i
            t, ampm = fmt12(a.hour, a.minute)
            card = ui.box(
                (12, y, 348, y + step - 8),
                ui.WHITE if a.enabled else (240, 241, 245),
                radius=20,
                ref=f"clock.alarm.{i}",
                kind="list_item",
            )
            col = ui.TEXT if a.enabled else ui.SUBTLE
            card.children.append(
                ui.View(
                    (28, y + 12, 200, y + 64),
                    kind="text",
                    text=f"{t} {ampm}",
                    size=34,
                    fg=col,
                    ref=f"clock.alarm.{i}.time",
                    on_tap=partial(self.open_picker, i),
                )
            )
            if more:
                card.children += self._alarm_details(i, a, y)
            else:
                card.children.append(
                    ui.label(
                        (28, y + 66, 240, y + 90),
                        a.label or "Not scheduled" if not a.enabled else (a.label or "Tomorrow"),
                        size=13,
                        fg=ui.SUBTLE,
                    )
                )
            card.children.append(
                ui.switch((280, y + 24, 340, y + 64), a.enabled, partial(self.toggle, i), ref=f"clock.alarm.{i}.switch")
            )
            card.children.append(
                ui.icon_button(
                    (296, y + 66, 332, y + 100),
                    "trash",
                    partial(self.delete, i),
                    ref=f"clock.alarm.{i}.delete",
                    desc="Delete alarm",
                )
            )
            rows.append(card)
        views: list[ui.View] = [ui.scroll_list("clock.alarms", (0, ui.TOP + 64, 360, ui.BOTTOM - 72), rows, self.phone.scroll)]
        views.append(ui.label((20, ui.TOP, 340, ui.TOP + 64), "Alarm", size=24, ref="clock.title"))
        views.append(fab("plus", lambda: self.open_picker(-1), ref="clock.add", desc="Add alarm", y=ui.BOTTOM - 72 - 76))
        return views

    def _alarm_details(self, i: int, a: Alarm, y: float) -> list[ui.View]:
        """The newer alarm card's label (tap to edit) and its row of repeat days (tap to toggle)."""
        if self.focused == "label" and self.label_for == i:
            label: ui.View = self.text_input(
                (28, y + 64, 270, y + 94), "label", placeholder="Label", ref=f"clock.alarm.{i}.label"
            )
        else:
            label = ui.View(
                (28, y + 64, 270, y + 94),
                kind="text",
                text=a.label or "Add label",
                size=14,
                fg=ui.TEXT if a.label else ui.SUBTLE,
                ref=f"clock.alarm.{i}.label",
                on_tap=partial(self.edit_label, i),
            )
        views = [label]
        for d, letter in enumerate("MTWTFSS"):
            x, on = 28 + 42 * d, d in a.days
            chip = ui.box(
                (x, y + 104, x + 34, y + 138),
                ui.BLUE if on else (232, 234, 240),
                radius=17,
                ref=f"clock.alarm.{i}.day.{d}",
                on_tap=partial(self.toggle_day, i, d),
            )
            chip.kind, chip.placeholder = "button", f"{_DAY_NAMES[d]} {'on' if on else 'off'}"
            chip.children.append(
                ui.label((x, y + 110, x + 34, y + 132), letter, size=14, fg=ui.WHITE if on else ui.TEXT, align="center")
            )
            views.append(chip)
        return views

    def edit_label(self, i: int) -> None:
        self.label_for = i
        self.fields["label"] = self.alarms[i].label
        self.focus("label", select_all=True)

    def toggle_day(self, i: int, d: int) -> None:
        days = set(self.alarms[i].days) ^ {d}
        self.alarms[i].days = tuple(sorted(days))

    def _world(self) -> list[ui.View]:
        h, m = self.phone.clock
        t, ampm = fmt12(h, m)
        views = [
            ui.label((0, ui.TOP + 40, 360, ui.TOP + 110), f"{t} {ampm}", size=48, align="center", ref="clock.now"),
            ui.label((0, ui.TOP + 112, 360, ui.TOP + 136), "Local time", size=14, fg=ui.SUBTLE, align="center"),
        ]
        # Three cities fit above the button; more scroll (the list's own coordinates start at 0).
        scrolls = len(self.cities) > 3
        top = ui.TOP + 170
        cards: list[ui.View] = []
        for i, city in enumerate(self.cities):
            y = (0.0 if scrolls else top) + 76 * i
            minutes = (h * 60 + m + WORLD_CITIES.get(city, 0)) % (24 * 60)
            ct, cap = fmt12(minutes // 60, minutes % 60)
            card = ui.box((12, y, 348, y + 68), ui.WHITE, radius=16, ref=f"clock.city.{i}")
            card.children.append(ui.label((28, y, 200, y + 68), city, size=17))
            card.children.append(ui.label((200, y, 332, y + 68), f"{ct} {cap}", size=20, align="right"))
            cards.append(card)
        if scrolls:
            cards = [ui.scroll_list("clock.cities", (0, top, 360, ui.BOTTOM - 160), cards, self.phone.scroll, fill=_BG)]
        views += cards
        views.append(fab("globe", self.open_city_search, ref="clock.addcity", desc="Add city", y=ui.BOTTOM - 72 - 76))
        return views

    def _city_search(self) -> list[ui.View]:
        """ "Add city": a search field over the matching cities (tap one to add it)."""
        bar = ui.box((0, ui.TOP, 360, ui.TOP + 64), ui.WHITE, blocker=True)
        bar.children.append(self.back_button((4, ui.TOP + 12, 44, ui.TOP + 52), ref="clock.city.back"))
        bar.children.append(
            self.text_input((48, ui.TOP + 8, 352, ui.TOP + 56), "city", placeholder="Search for a city", ref="clock.city.query")
        )
        rows: list[ui.View] = []
        for i, city in enumerate(city_matches(self.fields.get("city", ""))):
            y = 56.0 * i
            off = WORLD_CITIES[city]
            ahead = f"{abs(off) // 60} h{f' {abs(off) % 60} min' if off % 60 else ''} {'ahead' if off >= 0 else 'behind'}"
            row = ui.box(
                (0, y, 360, y + 56), ui.WHITE, ref=f"clock.cityresult.{i}", on_tap=partial(self.add_city, city), kind="list_item"
            )
            row.children.append(ui.label((20, y + 8, 250, y + 32), city, size=16))
            row.children.append(ui.label((20, y + 32, 250, y + 50), ahead if off else "Same time", size=12, fg=ui.SUBTLE))
            rows.append(row)
        page = ui.box((0, ui.TOP, 360, ui.BOTTOM), ui.WHITE, blocker=True)
        return [page, ui.scroll_list("clock.cityresults", (0, ui.TOP + 64, 360, ui.BOTTOM), rows, self.phone.scroll), bar]

    def _timer(self) -> list[ui.View]:
        editing = self.focused == "timer"
        if self.timer_total:
            text = _hms(self.timer_left)
        else:
            d = self.fields.get("timer", "").rjust(6, "0")
            text = f"{d[:2]}:{d[2:4]}:{d[4:]}"
        views: list[ui.View] = [
            ui.View(
                (30, ui.TOP + 150, 330, ui.TOP + 240),
                kind="input",
                text=text,
                ref="clock.timer",
                fill=ui.LIGHT_BLUE if editing else _BG,
                border=ui.BLUE if editing else None,
                radius=16,
                size=48,
                icon="",
                focused=editing,
                placeholder="Timer duration",
                on_tap=None if self.timer_total else partial(self.focus, "timer"),
            ),
            ui.label((0, ui.TOP + 244, 360, ui.TOP + 270), "h        m        s", size=13, fg=ui.SUBTLE, align="center"),
        ]
        if self.timer_total == 0 and self.timer_left == 0 and not self.fields.get("timer") and not editing:
            views.append(
                ui.label(
                    (0, ui.TOP + 110, 360, ui.TOP + 140), "Tap the time to set a duration", size=14, fg=ui.SUBTLE, align="center"
                )
            )
        start = "Pause" if self.timer_running else ("Resume" if self.timer_left else "Start")
        reset = "Delete" if self.timer_total else None
        return views + _run_buttons("clock.timer", start, self.start_timer, reset, self.reset_timer)

    def _stopwatch(self) -> list[ui.View]:
        e = self.stopwatch_elapsed
        views: list[ui.View] = [
            ui.label(
                (0, ui.TOP + 160, 360, ui.TOP + 240),
                f"{e // 60:02d}:{e % 60:02d}.00",
                size=52,
                align="center",
                ref="clock.stopwatch",
            ),
        ]
        start = "Pause" if self.stopwatch_running else "Start"
        return views + _run_buttons("clock.stopwatch", start, self.toggle_stopwatch, "Reset" if e else None, self.reset_stopwatch)


def _run_buttons(
    ref: str, start: str, on_start: Callable[[], None], reset: str | None, on_reset: Callable[[], None]
) -> list[ui.View]:
    """The timer's and the stopwatch's controls: the round start/pause button and, with ``reset``, a
    text button under it."""
    views = [ui.button((120, ui.TOP + 320, 240, ui.TOP + 376), start, on_start, ref=f"{ref}.start", radius=28, size=16)]
    if reset is not None:
        views.append(ui.button((120, ui.TOP + 390, 240, ui.TOP + 430), reset, on_reset, ref=f"{ref}.reset", style="text"))
    return views
