"""Small apps that are mostly there to be opened: Calculator (works), Camera, Contacts, Calendar, Files,
Messages, Music, Photos, Phone, and any third-party app (installed from the Play Store or preinstalled)."""

from __future__ import annotations

from functools import partial

from digirl.sim.apps.base import App, app_bar, fab
from digirl.sim.content import stable_rng, title_case
from digirl.sim.ui import (
    BLUE,
    BOTTOM,
    FAINT,
    LIGHT_BLUE,
    SUBTLE,
    TEXT,
    TOP,
    WHITE,
    Color,
    View,
    box,
    label,
    list_row,
    scroll_list,
)

__all__ = ["Calculator", "Calendar", "Camera", "Contacts", "Files", "GenericApp", "Messages", "Music", "PhoneApp", "Photos"]

_PEOPLE = (
    "Alex Kim",
    "Ben Carter",
    "Chloe Martin",
    "David Chen",
    "Emma Wilson",
    "Farah Said",
    "George Brown",
    "Hana Sato",
    "Isaac Green",
    "Julia Rossi",
    "Kevin Park",
    "Lena Fischer",
)


def _avatar(x: float, y: float, name: str, size: float = 40) -> View:
    col = stable_rng("avatar", name).choice(((66, 133, 244), (52, 168, 83), (251, 140, 0), (142, 36, 170)))
    return View(
        (x, y, x + size, y + size),
        kind="text",
        text=name[:1],
        fill=col,
        fg=WHITE,
        radius=int(size / 2),
        size=int(size * 0.45),
        align="center",
        element=False,
    )


class Calculator(App):
    key = "calculator"
    label = "Calculator"
    icon = "calc"
    color = (60, 64, 67)

    def __init__(self, phone: object) -> None:
        super().__init__(phone)  # type: ignore[arg-type]
        self.expr = ""
        self.result = ""

    def screen(self) -> str:
        return "calculator"

    def press(self, k: str) -> None:
        if k == "AC":
            self.expr, self.result = "", ""
        elif k == "⌫":
            self.expr = self.expr[:-1]
        elif k == "=":
            self.result = self._eval(self.expr)
        else:
            self.expr += k

    @staticmethod
    def _eval(expr: str) -> str:
        """Evaluate + − × ÷ left to right with precedence, without ``eval``."""
        import re

        toks = re.findall(r"\d+\.?\d*|[+\-×÷]", expr)
        if not toks:
            return ""
        try:
            vals: list[float] = [float(toks[0])]
            ops: list[str] = []
            for i in range(1, len(toks) - 1, 2):
                op, v = toks[i], float(toks[i + 1])
                if op == "×":
                    vals[-1] *= v
                elif op == "÷":
                    vals[-1] = vals[-1] / v if v else float("nan")
                else:
                    ops.append(op)
                    vals.append(v)
            out = vals[0]
            for op, v in zip(ops, vals[1:]):
                out = out + v if op == "+" else out - v
            return f"{out:g}"
        except (ValueError, IndexError):
            return "Error"

    def build(self) -> list[View]:
        views: list[View] = [box((0, TOP, 360, BOTTOM), WHITE)]
        views.append(label((16, TOP + 60, 344, TOP + 130), self.expr or "0", size=40, align="right", ref="calc.expr"))
        views.append(label((16, TOP + 130, 344, TOP + 170), self.result, size=24, fg=SUBTLE, align="right", ref="calc.result"))
        keys = ("AC", "⌫", "%", "÷", "7", "8", "9", "×", "4", "5", "6", "-", "1", "2", "3", "+", "0", ".", "=", "")
        for i, k in enumerate(keys):
            if not k:
                continue
            x, y = 12 + 86 * (i % 4), TOP + 250 + 90 * (i // 4)
            fill: Color = (194, 231, 255) if k in "÷×-+=" else ((255, 218, 214) if k in ("AC", "⌫", "%") else (241, 243, 244))
            views.append(
                View(
                    (x, y, x + 78, y + 78),
                    kind="button",
                    text=k,
                    fill=fill,
                    radius=39,
                    size=24,
                    align="center",
                    ref=f"calc.key.{i}",
                    on_tap=partial(self.press, k),
                )
            )
        return views


class Camera(App):
    key = "camera"
    label = "Camera"
    icon = "camera"
    color = (60, 64, 67)
    bg = (0, 0, 0)
    status_color = (0, 0, 0)

    def __init__(self, phone: object) -> None:
        super().__init__(phone)  # type: ignore[arg-type]
        self.shots = 0

    def screen(self) -> str:
        return "viewfinder"

    def _shoot(self) -> None:
        self.shots += 1

    def build(self) -> list[View]:
        views = [
            box((0, TOP, 360, BOTTOM), (0, 0, 0)),
            box((0, TOP + 60, 360, TOP + 540), (58, 66, 62), ref="camera.viewfinder"),
            box((40, TOP + 300, 320, TOP + 540), (92, 100, 84)),
            label((0, TOP + 560, 360, TOP + 590), "PHOTO      VIDEO      PORTRAIT", size=13, fg=WHITE, align="center"),
            View(
                (145, TOP + 610, 215, TOP + 680),
                kind="button",
                fill=WHITE,
                radius=35,
                ref="camera.shutter",
                on_tap=self._shoot,
                placeholder="Shutter",
            ),
        ]
        if self.shots:
            views.append(box((40, TOP + 622, 86, TOP + 668), (120, 130, 110), radius=23, ref="camera.last"))
        return views


class Contacts(App):
    key = "contacts"
    label = "Contacts"
    icon = "person"
    color = (26, 115, 232)

    def screen(self) -> str:
        return "contacts"

    def build(self) -> list[View]:
        rows = []
        for i, n in enumerate(_PEOPLE):
            row = list_row(64 * i, 64, n, ref=f"contacts.{i}", on_tap=lambda: None, divider=False)
            row.children.insert(0, _avatar(12, 64 * i + 12, n))
            rows.append(row)
        return [
            box((0, TOP, 360, BOTTOM), WHITE),
            scroll_list("contacts", (0, TOP + 64, 360, BOTTOM), rows, self.phone.scroll),
            app_bar("Contacts", ref="contacts.bar"),
            fab("plus", lambda: None, ref="contacts.add", desc="Create contact"),
        ]


class Calendar(App):
    key = "calendar"
    label = "Calendar"
    icon = "calendar"
    color = (26, 115, 232)

    def screen(self) -> str:
        return "month"

    def build(self) -> list[View]:
        views: list[View] = [box((0, TOP, 360, BOTTOM), WHITE), app_bar("June", ref="calendar.bar")]
        for i, d in enumerate("SMTWTFS"):
            views.append(label((8 + 49 * i, TOP + 60, 56 + 49 * i, TOP + 84), d, size=12, fg=SUBTLE, align="center"))
        for day in range(1, 31):
            i = day + 5
            x, y = 8 + 49 * (i % 7), TOP + 90 + 70 * (i // 7)
            today = day == 4
            views.append(
                View(
                    (x, y, x + 48, y + 66),
                    kind="text",
                    text=str(day),
                    size=13,
                    align="center",
                    fill=LIGHT_BLUE if today else None,
                    radius=8,
                    ref=f"calendar.day.{day}",
                    bold=today,
                )
            )
            if day in (4, 11, 19, 26):
                views.append(box((x + 4, y + 50, x + 44, y + 62), (3, 155, 229), radius=3))
        views.append(fab("plus", lambda: None, ref="calendar.add", desc="Create event"))
        return views


class Files(App):
    key = "files"
    label = "Files"
    icon = "folder"
    color = (26, 115, 232)

    def screen(self) -> str:
        return "browse"

    def build(self) -> list[View]:
        cats = (
            ("Downloads", "12 files"),
            ("Images", "248 files"),
            ("Videos", "31 files"),
            ("Audio", "54 files"),
            ("Documents", "17 files"),
            ("Apps", "23 apps"),
        )
        rows = [
            list_row(72 * i, 72, t, sub=s, icon="folder", icon_color=BLUE, ref=f"files.{i}", on_tap=lambda: None)
            for i, (t, s) in enumerate(cats)
        ]
        return [
            box((0, TOP, 360, BOTTOM), WHITE),
            scroll_list("files", (0, TOP + 56, 360, BOTTOM), rows, self.phone.scroll),
            app_bar("Files", ref="files.bar"),
        ]


class Messages(App):
    key = "messages"
    label = "Messages"
    icon = "message"
    color = (26, 115, 232)

    def screen(self) -> str:
        return "conversations"

    def build(self) -> list[View]:
        texts = (
            "See you at 6!",
            "Thanks 🙂",
            "Can you call me?",
            "Your code is 482913",
            "On my way",
            "Sounds good",
            "Happy birthday!",
            "Where are you?",
        )
        rows = []
        for i, n in enumerate(_PEOPLE[:8]):
            row = list_row(76 * i, 76, n, sub=texts[i], ref=f"messages.{i}", on_tap=lambda: None, divider=False)
            row.children.insert(0, _avatar(12, 76 * i + 16, n, 44))
            rows.append(row)
        return [
            box((0, TOP, 360, BOTTOM), WHITE),
            scroll_list("messages", (0, TOP + 56, 360, BOTTOM), rows, self.phone.scroll),
            app_bar("Messages", ref="messages.bar"),
            fab("message", lambda: None, ref="messages.new", desc="Start chat", text="Start chat"),
        ]


class Music(App):
    key = "music"
    label = "Music"
    icon = "music"
    color = (230, 81, 0)

    def __init__(self, phone: object) -> None:
        super().__init__(phone)  # type: ignore[arg-type]
        self.playing = ""

    def screen(self) -> str:
        return "library"

    def build(self) -> list[View]:
        songs = ("Blinding Lights", "Levitating", "As It Was", "Anti-Hero", "Flowers", "Stay", "Heat Waves", "Bad Habit")
        rows = [
            list_row(
                64 * i,
                64,
                s,
                sub="Song · 3:2" + str(i),
                icon="music",
                icon_color=(230, 81, 0),
                ref=f"music.song.{i}",
                on_tap=partial(setattr, self, "playing", s),
            )
            for i, s in enumerate(songs)
        ]
        views = [
            box((0, TOP, 360, BOTTOM), WHITE),
            scroll_list("music", (0, TOP + 56, 360, BOTTOM - 64), rows, self.phone.scroll),
            app_bar("Library", ref="music.bar"),
        ]
        if self.playing:
            bar = box((0, BOTTOM - 64, 360, BOTTOM), (255, 236, 224), ref="music.player")
            bar.children.append(label((16, BOTTOM - 64, 300, BOTTOM), self.playing, size=15, bold=True))
            bar.children.append(
                View((308, BOTTOM - 56, 348, BOTTOM - 8), kind="icon", icon="pause", icon_color=TEXT, element=False)
            )
            views.append(bar)
        return views


class Photos(App):
    key = "photos"
    label = "Photos"
    icon = "photos"
    color = WHITE

    def screen(self) -> str:
        return "grid"

    def build(self) -> list[View]:
        rows = []
        r = stable_rng("photos")
        for i in range(24):
            x, y = 2 + 119 * (i % 3), 30 + 119 * (i // 3)
            rows.append(
                box(
                    (x, y, x + 117, y + 117),
                    (r.randint(90, 220), r.randint(90, 220), r.randint(90, 220)),
                    ref=f"photos.{i}",
                    on_tap=lambda: None,
                )
            )
        rows.append(label((12, 0, 300, 28), "Today", size=15, bold=True))
        return [
            box((0, TOP, 360, BOTTOM), WHITE),
            scroll_list("photos", (0, TOP + 56, 360, BOTTOM), rows, self.phone.scroll),
            app_bar("Photos", ref="photos.bar"),
        ]


class PhoneApp(App):
    key = "phone"
    label = "Phone"
    icon = "phone"
    color = (52, 168, 83)

    def __init__(self, phone: object) -> None:
        super().__init__(phone)  # type: ignore[arg-type]
        self.number = ""

    def screen(self) -> str:
        return "dialer"

    def _press(self, k: str) -> None:
        self.number = (self.number + k)[:15]

    def build(self) -> list[View]:
        views: list[View] = [
            box((0, TOP, 360, BOTTOM), WHITE),
            label((16, TOP + 80, 344, TOP + 140), self.number, size=32, align="center", ref="phone.number"),
        ]
        for i, k in enumerate("123456789*0#"):
            x, y = 50 + 92 * (i % 3), TOP + 180 + 84 * (i // 3)
            views.append(
                View(
                    (x, y, x + 76, y + 76),
                    kind="button",
                    text=k,
                    fill=(241, 243, 244),
                    radius=38,
                    size=26,
                    align="center",
                    ref=f"phone.key.{k}",
                    on_tap=partial(self._press, k),
                )
            )
        views.append(
            View(
                (146, TOP + 530, 214, TOP + 598),
                kind="icon",
                icon="phone",
                icon_color=WHITE,
                fill=(52, 168, 83),
                radius=34,
                ref="phone.call",
                on_tap=lambda: None,
                placeholder="Call",
            )
        )
        return views


class GenericApp(App):
    """Any app by name: a branded welcome screen with a few cards."""

    icon = "letter"

    def __init__(self, phone: object, name: str) -> None:
        super().__init__(phone)  # type: ignore[arg-type]
        from digirl.sim.phone import resolve_app

        self.label = title_case(name.strip()) or "App"
        self.key = resolve_app(name)
        r = stable_rng("generic", self.key)
        self.color = r.choice(
            (
                (59, 89, 152),
                (225, 48, 108),
                (37, 211, 102),
                (29, 185, 84),
                (229, 9, 20),
                (0, 132, 255),
                (255, 87, 34),
                (103, 58, 183),
            )
        )

    def screen(self) -> str:
        return "main"

    def build(self) -> list[View]:
        views: list[View] = [
            box((0, TOP, 360, BOTTOM), (245, 246, 248)),
            app_bar(self.label, fill=self.color, fg=WHITE, ref=f"{self.key}.bar"),
        ]
        views.append(
            label((16, TOP + 76, 344, TOP + 110), f"Welcome to {self.label}", size=20, bold=True, ref=f"{self.key}.welcome")
        )
        for i in range(4):
            y = TOP + 124 + 130 * i
            card = box((12, y, 348, y + 118), WHITE, radius=12, border=FAINT, ref=f"{self.key}.card.{i}", on_tap=lambda: None)
            card.children.append(box((24, y + 12, 84, y + 72), self.color, radius=30))
            card.children.append(label((96, y + 16, 336, y + 40), f"{self.label} update {i + 1}", size=15, bold=True))
            card.children.append(
                label(
                    (96, y + 42, 336, y + 100), "Something new is waiting for you. Tap to see more.", size=13, fg=SUBTLE, lines=2
                )
            )
            views.append(card)
        return views
