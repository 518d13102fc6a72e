"""The Phone app: search contacts, a keypad with a number field, recents, and the in-call screen."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial

from digirl.sim import ui
from digirl.sim.apps.base import App, avatar, person_row, tab_label
from digirl.sim.device import Contact, find_contacts

__all__ = ["Call", "PhoneApp"]

_GREEN: ui.Color = (52, 168, 83)
_CALL_BG: ui.Color = (32, 45, 52)
_TABS = ("Recents", "Contacts", "Keypad")


class Call:
    """A call in the log: who (a contact name, else the number) and the digits; ``missed`` (with the
    time it rang) for a call that came in before the episode, empty for one placed in it."""

    def __init__(self, who: str, number: str, missed: str = "") -> None:
        self.who, self.number, self.missed = who, number, missed
        self.speaker = self.muted = False  # the call screen's switches (newer surfaces)

    def __repr__(self) -> str:
        return f"Call({self.who!r}, {self.number!r})"


def _call_button(y: float, fill: ui.Color, on_tap: Callable[[], None], *, ref: str, desc: str) -> ui.View:
    """The round phone button of the keypad (call) and of the call screen (end call)."""
    return ui.View(
        (146, y, 214, y + 68),
        kind="icon",
        icon="phone",
        icon_color=ui.WHITE,
        fill=fill,
        radius=34,
        ref=ref,
        on_tap=on_tap,
        placeholder=desc,
    )


def _pretty(number: str) -> str:
    d = re.sub(r"\D", "", number)
    return f"({d[:3]}) {d[3:6]}-{d[6:]}" if len(d) == 10 else number


class PhoneApp(App, key="phone", label="Phone", icon="phone", color=_GREEN):
    def init_state(self) -> None:
        self.tab = "Keypad"
        self.calls: list[Call] = []
        self.in_call: Call | None = None

    @property
    def bg(self) -> ui.Color:  # type: ignore[override]
        return _CALL_BG if self.in_call is not None else ui.WHITE

    def screen(self) -> str:
        if self.in_call is not None:
            return "call"
        if self.focused == "q" or self.fields.get("q"):
            return "search"
        return "dialer" if self.tab == "Keypad" else self.tab.lower()

    def state(self) -> dict[str, object]:
        return {"screen": self.screen(), "in_call": repr(self.in_call), "calls": [repr(c) for c in self.calls]}

    def keyboard_action(self) -> str:
        return "search" if self.focused == "q" else "enter"

    def back(self) -> bool:
        if self.in_call is not None:
            self.end_call()
            return True
        return self.clear_query()

    # ---------------------------------------------------------------- calls
    def call(self, number: str, name: str = "") -> None:
        digits = re.sub(r"[^\d+*#]", "", number)
        if not digits and not name:
            return
        if not name:
            known = [c for c in self.phone.contacts if c.number and c.number.endswith(digits.lstrip("+")[-10:])]
            name = known[0].name if known else ""
        self.in_call = Call(name or digits, digits)
        self.calls.append(self.in_call)
        self.fields["q"] = ""
        self.blur()

    def call_contact(self, c: Contact) -> None:
        self.call(c.number, c.name)

    def end_call(self) -> None:
        self.in_call = None

    def submit(self, name: str) -> None:
        if name == "number":
            self.call(self.fields.get("number", ""))
        elif name == "q":
            hits = find_contacts(self.phone.contacts, self.fields.get("q", ""))
            if hits:
                self.call_contact(hits[0])

    def _press(self, k: str) -> None:
        self.fields["number"] = (self.fields.get("number", "") + k)[:15]

    def _select(self, tab: str) -> None:
        self.tab = tab
        self.blur()

    # ---------------------------------------------------------------- views
    def build(self) -> list[ui.View]:
        if self.in_call is not None:
            return self._call_screen(self.in_call)
        views: list[ui.View] = [ui.box((0, ui.TOP, 360, ui.BOTTOM), ui.WHITE)]
        q = self.fields.get("q", "")
        if self.focused == "q" or q:
            views.append(self._results(q))
        elif self.tab == "Keypad":
            views += self._keypad()
        else:
            views.append(self._list())
        views.append(
            ui.box(
                (0, ui.TOP, 360, ui.TOP + 64),
                ui.WHITE,
                blocker=True,
                children=[
                    self.text_input(
                        (12, ui.TOP + 8, 348, ui.TOP + 56), "q", placeholder="Search contacts", ref="phone.search", filled=True
                    )
                ],
            )
        )
        bar = ui.box((0, ui.BOTTOM - 64, 360, ui.BOTTOM), (243, 246, 244), blocker=True, ref="phone.tabs")
        for i, t in enumerate(_TABS):
            sel = t == self.tab
            bar.children.append(
                tab_label(
                    (120 * i, ui.BOTTOM - 64, 120 * (i + 1), ui.BOTTOM),
                    t,
                    sel,
                    _GREEN,
                    ref=f"phone.tab.{t.lower()}",
                    on_tap=partial(self._select, t),
                )
            )
        views.append(bar)
        return views

    def _row(self, y: float, c: Contact, ref: str) -> ui.View:
        row = person_row(y, 64, c.name, sub=_pretty(c.number), ref=ref, on_tap=partial(self.call_contact, c))
        row.children.append(
            ui.icon_button(
                (300, y + 12, 340, y + 52),
                "phone",
                partial(self.call_contact, c),
                ref=f"{ref}.call",
                desc=f"Call {c.name}",
                color=_GREEN,
            )
        )
        return row

    def _results(self, q: str) -> ui.View:
        rows = [self._row(64.0 * i, c, f"phone.result.{i}") for i, c in enumerate(find_contacts(self.phone.contacts, q))]
        digits = re.sub(r"\D", "", q)
        if len(digits) >= 3:
            rows.append(
                ui.list_row(
                    64.0 * len(rows),
                    64,
                    f"Call {q}",
                    icon="phone",
                    icon_color=_GREEN,
                    ref="phone.result.number",
                    on_tap=partial(self.call, digits),
                )
            )
        if not rows:
            rows.append(ui.label((16, 16, 344, 48), "No contacts found", size=15, fg=ui.SUBTLE, ref="phone.result.none"))
        return ui.scroll_list("phone.results", (0, ui.TOP + 64, 360, ui.BOTTOM - 64), rows, self.phone.scroll)

    def _list(self) -> ui.View:
        if self.tab == "Contacts":
            rows = [self._row(64.0 * i, c, f"phone.contact.{i}") for i, c in enumerate(find_contacts(self.phone.contacts, ""))]
        else:
            rows = [
                ui.list_row(
                    64.0 * i,
                    64,
                    c.who,
                    sub=f"Missed · {c.missed}" if c.missed else f"{_pretty(c.number)} · just now",
                    icon="phone",
                    icon_color=(217, 48, 37) if c.missed else ui.SUBTLE,
                    ref=f"phone.recent.{i}",
                    on_tap=partial(self.call, c.number, c.who),
                )
                for i, c in enumerate(reversed(self.calls))
            ] or [ui.label((16, 16, 344, 48), "No recent calls", size=15, fg=ui.SUBTLE, ref="phone.recent.none")]
        return ui.scroll_list(f"phone.{self.tab.lower()}", (0, ui.TOP + 64, 360, ui.BOTTOM - 64), rows, self.phone.scroll)

    def _keypad(self) -> list[ui.View]:
        number = self.fields.get("number", "")
        views: list[ui.View] = [
            ui.View(
                (16, ui.TOP + 76, 344, ui.TOP + 132),
                kind="input",
                text=number,
                ref="phone.number",
                size=30,
                align="center",
                icon="",
                placeholder="Enter a number",
                focused=self.focused == "number",
                fill=ui.LIGHT_BLUE if self.focused == "number" else ui.WHITE,
                radius=12,
                on_tap=self.tap_field("number"),
            )
        ]
        if number:
            views.append(
                ui.icon_button(
                    (300, ui.TOP + 84, 340, ui.TOP + 124),
                    "navback",
                    lambda: self.fields.__setitem__("number", self.fields["number"][:-1]),
                    ref="phone.backspace",
                    desc="Backspace",
                    color=ui.SUBTLE,
                )
            )
        for i, k in enumerate("123456789*0#"):
            x, y = 50 + 92 * (i % 3), ui.TOP + 150 + 78 * (i // 3)
            views.append(
                ui.View(
                    (x, y, x + 76, y + 70),
                    kind="button",
                    text=k,
                    fill=(241, 243, 244),
                    radius=35,
                    size=26,
                    align="center",
                    ref=f"phone.key.{k}",
                    on_tap=partial(self._press, k),
                )
            )
        views.append(
            _call_button(ui.TOP + 470, _GREEN, lambda: self.call(self.fields.get("number", "")), ref="phone.call", desc="Call")
        )
        return views

    @staticmethod
    def _switch(c: Call, which: str) -> None:
        if which == "speaker":
            c.speaker = not c.speaker
        else:
            c.muted = not c.muted

    def _call_screen(self, c: Call) -> list[ui.View]:
        views: list[ui.View] = [ui.box((0, ui.TOP, 360, ui.BOTTOM), _CALL_BG, ref="phone.incall")]
        views.append(avatar(140, ui.TOP + 100, c.who, 80))
        views.append(
            ui.label((0, ui.TOP + 200, 360, ui.TOP + 240), c.who, size=26, fg=ui.WHITE, align="center", ref="phone.incall.name")
        )
        views.append(
            ui.label(
                (0, ui.TOP + 240, 360, ui.TOP + 266),
                f"Calling {_pretty(c.number)}…" if c.number else "Calling…",
                size=14,
                fg=(200, 205, 210),
                align="center",
            )
        )
        live = self.phone.surfaces  # the newer call screen: Mute and Speaker switch, and show it
        for i, (icon, text) in enumerate((("mic", "Mute"), ("apps", "Keypad"), ("bell", "Speaker"))):
            x = 50 + 100 * i
            on = live and (c.muted if text == "Mute" else c.speaker if text == "Speaker" else False)
            views.append(
                ui.icon_button(
                    (x, ui.TOP + 380, x + 60, ui.TOP + 440),
                    icon,
                    partial(self._switch, c, text.lower()) if live and text != "Keypad" else lambda: None,
                    ref=f"phone.incall.{text.lower()}",
                    desc=f"{text} {'on' if on else 'off'}" if live and text != "Keypad" else text,
                    color=_CALL_BG if on else ui.WHITE,
                    fill=ui.WHITE if on else None,
                    radius=30 if live else 0,
                )
            )
        views.append(_call_button(ui.TOP + 560, ui.RED, self.end_call, ref="phone.end", desc="End call"))
        views[-1].fg = ui.TEXT
        return views
