"""The app base class and the chrome most apps share (top app bar, tabs, FAB, dialogs)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from digirl.sim import ui

if TYPE_CHECKING:
    from digirl.sim.phone import Phone

__all__ = [
    "FIELD_FILL",
    "App",
    "SystemScreen",
    "app_bar",
    "avatar",
    "dialog",
    "fab",
    "letter_tile",
    "person_row",
    "tab_bar",
    "tab_label",
]

#: The grey of borderless inputs (search boxes, the compose box).
FIELD_FILL: ui.Color = (241, 243, 244)


class App:
    """One app. Subclasses keep their screen state as attributes and rebuild views from it.

    Text input: ``fields`` holds each input's text, ``focused`` the field with the keyboard.
    The phone calls :meth:`type_text`, :meth:`key`, :meth:`submit`, :meth:`back`, :meth:`tick`.
    """

    key = "app"
    label = "App"
    icon = "apps"
    color: ui.Color = (95, 99, 104)
    icon_fg: ui.Color = ui.WHITE
    #: May show a "rate this app" pop-up on first launch (a perturbation).
    rates = False
    bg: ui.Color = ui.WHITE

    def __init_subclass__(
        cls,
        *,
        key: str | None = None,
        label: str | None = None,
        icon: str | None = None,
        color: ui.Color | None = None,
        rates: bool | None = None,
        bg: ui.Color | None = None,
        **kwargs: Any,
    ) -> None:
        """``class Maps(App, key="maps", label="Maps", icon="pin", ...)``: the app's identity in its class line."""
        super().__init_subclass__(**kwargs)
        given = {"key": key, "label": label, "icon": icon, "color": color, "rates": rates, "bg": bg}
        for name, value in given.items():
            if value is not None:
                setattr(cls, name, value)

    @property
    def status_color(self) -> ui.Color:
        """The status bar's background: the app's, so that bar and app read as one surface."""
        return self.bg

    def __init__(self, phone: Phone) -> None:
        self.phone = phone
        self.fields: dict[str, str] = {}
        self.focused: str | None = None
        #: Fields whose whole text is selected (the next typed text replaces it).
        self.selected: set[str] = set()
        self.launched = False
        self.init_state()

    def init_state(self) -> None:
        """Set the app's own screen state (``phone`` and the text fields are set by then)."""

    # ---------------------------------------------------------------- lifecycle
    def on_launch(self) -> None:
        """Called each time the app comes to the foreground."""

    def build(self) -> list[ui.View]:
        """The app's views for the content area (between status bar and navigation bar)."""
        return [ui.label((0, ui.TOP, 360, ui.BOTTOM), self.label, size=22, align="center")]

    def back(self) -> bool:
        """Handle the back key; return False to let the phone leave the app."""
        return False

    def tick(self) -> None:
        """Called once per step after the action (progress bars, timers)."""

    def screen(self) -> str:
        """A short name of what is shown (for ``info['screen']`` and predicates)."""
        return "main"

    def state(self) -> dict[str, Any]:
        """Debug summary of the app's state."""
        return {"screen": self.screen(), "fields": dict(self.fields), "focused": self.focused}

    # ---------------------------------------------------------------- text input
    def focus(self, name: str, *, select_all: bool = False) -> None:
        self.focused = name
        self.fields.setdefault(name, "")
        if select_all and self.fields[name]:
            self.selected.add(name)
        else:
            self.selected.discard(name)

    def blur(self) -> None:
        if self.focused is not None:
            self.selected.discard(self.focused)
        self.focused = None

    def set_field(self, name: str, text: str) -> None:
        self.fields[name] = text
        self.selected.discard(name)
        self.on_change(name)

    def type_text(self, text: str) -> None:
        f = self.focused
        if f is None:
            return
        if f in self.selected:
            self.selected.discard(f)
            self.fields[f] = ""
        self.fields[f] = (self.fields.get(f, "") + text)[:200]
        self.on_change(f)

    def press_key(self, code: str) -> None:
        """A key of the on-screen keyboard."""
        f = self.focused
        if f is None:
            return
        if code == "enter":
            self.submit(f)
        elif code == "backspace":
            self.set_field(f, "" if f in self.selected else self.fields.get(f, "")[:-1])
        elif len(code) == 1:
            self.type_text(code)

    def on_change(self, name: str) -> None:
        """A field's text changed."""

    def submit(self, name: str) -> None:
        """Enter / the keyboard's action key on a focused field."""

    def keyboard_action(self) -> str:
        return "search"

    # ---------------------------------------------------------------- helpers
    def tap_field(self, name: str, *, select_all: bool = False) -> Callable[[], None]:
        return lambda: self.focus(name, select_all=select_all)

    def clear_field(self, name: str) -> Callable[[], None]:
        def _clear() -> None:
            self.focus(name)
            self.set_field(name, "")

        return _clear

    def text_of(self, name: str) -> str:
        return self.fields.get(name, "")

    def clear_query(self, name: str = "q") -> bool:
        """Back on a search with text: empty the field and hide the keyboard; False when it was empty."""
        if not self.fields.get(name):
            return False
        self.fields[name] = ""
        self.blur()
        return True

    def back_button(self, rect: ui.Rect, *, ref: str, desc: str = "Back", color: ui.Color = ui.TEXT) -> ui.View:
        """The arrow at the left of a screen's top bar: it does what the phone's back key does."""
        return ui.icon_button(rect, "back", self.phone.key_back, ref=ref, desc=desc, color=color)

    def list_page(self, key: str, head: float, rows: list[ui.View], *over: ui.View) -> list[ui.View]:
        """A white page whose ``rows`` scroll (as ``key``) below a head ``head`` tall, then the views
        drawn over it (the head's bar, a FAB)."""
        page = ui.box((0, ui.TOP, 360, ui.BOTTOM), ui.WHITE)
        return [page, ui.scroll_list(key, (0, ui.TOP + head, 360, ui.BOTTOM), rows, self.phone.scroll), *over]

    def form_page(self, title: str, *, ref: str, save: Callable[[], None] | None = None) -> list[ui.View]:
        """A full white page under a bar with the back arrow and ``title`` (``{ref}.bar``) and, given
        ``save``, a Save button at its right (``{ref}.save``): a detail page or an editor."""
        views = [ui.box((0, ui.TOP, 360, ui.BOTTOM), ui.WHITE), app_bar(title, back=self.phone.key_back, ref=f"{ref}.bar")]
        if save is not None:
            views.append(ui.button((262, ui.TOP + 10, 348, ui.TOP + 46), "Save", save, ref=f"{ref}.save"))
        return views

    def text_input(
        self,
        rect: ui.Rect,
        name: str,
        *,
        placeholder: str,
        ref: str,
        text: str | None = None,
        clear: bool = True,
        fill: ui.Color = ui.WHITE,
        radius: int = 22,
        border: ui.Color | None = ui.FAINT,
        icon: str = "search",
        size: int = 15,
        filled: bool = False,
    ) -> ui.View:
        """An input bound to ``fields[name]`` (or showing ``text``): a tap focuses it, its × (with ``clear``) empties it.

        The style defaults are :func:`~digirl.sim.ui.input_field`'s; ``filled`` is the grey borderless
        look of search and compose boxes (it replaces ``fill`` and ``border``)."""
        if filled:
            fill, border = FIELD_FILL, None
        return ui.input_field(
            rect,
            self.fields.get(name, "") if text is None else text,
            placeholder=placeholder,
            focused=self.focused == name,
            on_tap=self.tap_field(name),
            ref=ref,
            on_clear=self.clear_field(name) if clear else None,
            fill=fill,
            radius=radius,
            border=border,
            icon=icon,
            size=size,
        )


class SystemScreen(App):
    """A full-screen surface of the system over the apps (the lock screen, the overview of recent apps):
    not an app of the drawer; leaving it brings back what was in front when it came up."""

    screen_name = "system"

    def init_state(self) -> None:
        self.came_from = "launcher"

    def screen(self) -> str:
        return self.screen_name

    def show_over(self, key: str) -> None:
        """Come up over ``key``, which leaving brings back (the launcher for another system screen)."""
        p = self.phone
        self.came_from = key if key in p.apps and not isinstance(p.apps[key], SystemScreen) else "launcher"
        p.fg = self.key
        p.invalidate()

    def leave(self) -> None:
        self.phone.fg = self.came_from
        self.phone.invalidate()


def app_bar(
    title: str,
    *,
    back: Callable[[], None] | None = None,
    actions: list[ui.View] | None = None,
    fill: ui.Color = ui.WHITE,
    fg: ui.Color = ui.TEXT,
    ref: str = "appbar",
    height: int = 56,
    size: int = 20,
) -> ui.View:
    """A top app bar (blocks taps that miss its buttons)."""
    bar = ui.box((0, ui.TOP, 360, ui.TOP + height), fill, blocker=True, ref=ref)
    x = 16
    if back is not None:
        bar.children.append(
            ui.icon_button(
                (4, ui.TOP + 4, 52, ui.TOP + height - 4), "back", back, ref=f"{ref}.back", desc="Navigate up", color=fg
            )
        )
        x = 60
    right = 360 - 48 * len(actions or [])
    bar.children.append(ui.label((x, ui.TOP, right, ui.TOP + height), title, size=size, fg=fg, ref=f"{ref}.title"))
    for i, a in enumerate(actions or []):
        a.rect = (right + 48 * i, ui.TOP + 4, right + 48 * (i + 1), ui.TOP + height - 4)
        bar.children.append(a)
    return bar


def tab_bar(
    y: float,
    names: list[str],
    current: str,
    on_select: Callable[[str], None],
    *,
    ref: str,
    fill: ui.Color = ui.WHITE,
    color: ui.Color = ui.BLUE,
    height: int = 44,
) -> ui.View:
    bar = ui.box((0, y, 360, y + height), fill, blocker=True)
    w = 360 / len(names)
    for i, n in enumerate(names):
        sel = n == current
        bar.children.append(
            tab_label((i * w, y, (i + 1) * w, y + height), n, sel, color, ref=f"{ref}.{n.lower()}", on_tap=partial(on_select, n))
        )
        if sel:
            bar.children.append(ui.box((i * w + 12, y + height - 3, (i + 1) * w - 12, y + height), color))
    return bar


def tab_label(
    rect: ui.Rect,
    text: str,
    selected: bool,
    color: ui.Color,
    *,
    ref: str = "",
    on_tap: Callable[[], None] | None = None,
    size: int = 13,
    idle: ui.Color = ui.SUBTLE,
    element: bool | None = None,
) -> ui.View:
    """One tab of a row of tabs: bold in ``color`` when selected, else in ``idle``."""
    return ui.View(
        rect,
        kind="tab",
        text=text,
        ref=ref,
        size=size,
        align="center",
        fg=color if selected else idle,
        bold=selected,
        on_tap=on_tap,
        element=element,
    )


def fab(
    icon: str,
    on_tap: Callable[[], None],
    *,
    ref: str,
    desc: str,
    color: ui.Color = ui.BLUE,
    y: float = ui.BOTTOM - 88,
    text: str = "",
) -> ui.View:
    """A floating action button (bottom right)."""
    if text:
        return ui.View(
            (360 - 24 - 140, y, 360 - 24, y + 56),
            kind="button",
            icon=icon,
            text=text,
            ref=ref,
            fill=color,
            fg=ui.WHITE,
            icon_color=ui.WHITE,
            radius=16,
            on_tap=on_tap,
            bold=True,
            size=14,
            align="center",
        )
    return ui.icon_button(
        (360 - 24 - 56, y, 360 - 24, y + 56), icon, on_tap, ref=ref, desc=desc, color=ui.WHITE, fill=color, radius=16
    )


def dialog(
    title: str,
    body: str,
    buttons: list[tuple[str, str, Callable[[], None]]],
    *,
    ref: str,
    height: int = 200,
    extra: list[ui.View] | None = None,
) -> ui.View:
    """A modal dialog over a scrim: blocks every tap outside its buttons."""
    scrim = ui.box((0, ui.TOP, 360, ui.BOTTOM), ui.SCRIM, blocker=True, ref=f"{ref}.scrim")
    top = (ui.TOP + ui.BOTTOM) / 2 - height / 2
    card = ui.box((24, top, 336, top + height), ui.WHITE, radius=24, blocker=True, ref=ref, kind="dialog")
    card.children.append(ui.label((48, top + 20, 312, top + 52), title, size=19, bold=True, ref=f"{ref}.title"))
    if body:
        card.children.append(ui.label((48, top + 56, 312, top + height - 64), body, size=14, fg=ui.SUBTLE, lines=4))
    x = 312
    for text, bref, fn in reversed(buttons):
        w = max(64, 10 * len(text) + 24)
        card.children.append(ui.button((x - w, top + height - 56, x, top + height - 16), text, fn, ref=bref, style="text"))
        x -= w + 8
    card.children.extend(extra or [])
    scrim.children.append(card)
    return scrim


def avatar(x: float, y: float, name: str, size: float = 40) -> ui.View:
    """A round avatar with the name's initial, coloured by a hash of the name."""
    from digirl.sim.content import stable_rng

    col = stable_rng("avatar", name).choice(((66, 133, 244), (52, 168, 83), (251, 140, 0), (142, 36, 170)))
    return letter_tile((x, y, x + size, y + size), name[:1].upper(), col, radius=int(size / 2), size=int(size * 0.45))


def letter_tile(
    rect: ui.Rect, text: str, fill: ui.Color, *, radius: int, size: int, fg: ui.Color = ui.WHITE, bold: bool = False
) -> ui.View:
    """A filled tile with a letter or two: an avatar, an app's or a channel's icon, a site's logo (a picture, not an element)."""
    return ui.View(
        rect, kind="text", text=text, fill=fill, fg=fg, radius=radius, size=size, bold=bold, align="center", element=False
    )


def person_row(
    y: float, h: float, name: str, *, sub: str = "", ref: str, on_tap: Callable[[], None] | None, size: float = 40
) -> ui.View:
    """A list row for a person: their avatar, then the name (and a subtitle)."""

    row = ui.list_row(y, h, name, sub=sub, ref=ref, icon="person", on_tap=on_tap, divider=False)
    row.children[0] = avatar(12, y + (h - size) / 2, name, size)
    return row
