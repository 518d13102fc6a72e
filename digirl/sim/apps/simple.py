"""Small apps: Calculator (works), Files, Music, and any third-party app (installed from the Play Store or
preinstalled). The Phone, Messages, Contacts, Calendar, Camera and Photos apps have their own modules."""

from __future__ import annotations

import functools
from functools import partial

from digirl.sim import ui
from digirl.sim.apps.base import App, app_bar
from digirl.sim.apps.notes import NOTES_APPS, NotesState, notes_views
from digirl.sim.apps.player import MUSIC_SERVICES, PlayerState, player_views
from digirl.sim.content import stable_rng, title_case

__all__ = ["Calculator", "Files", "GenericApp", "Music"]


class Calculator(App, key="calculator", label="Calculator", icon="calc", color=(60, 64, 67)):
    def init_state(self) -> None:
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

    def build(self) -> list[ui.View]:
        views: list[ui.View] = [ui.box((0, ui.TOP, 360, ui.BOTTOM), ui.WHITE)]
        views.append(ui.label((16, ui.TOP + 60, 344, ui.TOP + 130), self.expr or "0", size=40, align="right", ref="calc.expr"))
        views.append(
            ui.label((16, ui.TOP + 130, 344, ui.TOP + 170), self.result, size=24, fg=ui.SUBTLE, align="right", ref="calc.result")
        )
        keys = ("AC", "⌫", "%", "÷", "7", "8", "9", "×", "4", "5", "6", "-", "1", "2", "3", "+", "0", ".", "=", "")
        for i, k in enumerate(keys):
            if not k:
                continue
            x, y = 12 + 86 * (i % 4), ui.TOP + 250 + 90 * (i // 4)
            fill: ui.Color = (194, 231, 255) if k in "÷×-+=" else ((255, 218, 214) if k in ("AC", "⌫", "%") else (241, 243, 244))
            views.append(
                ui.View(
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


#: The Files app's folders: (name, what the browse list says about it, file kind, icon of its files).
FILE_FOLDERS = (
    ("Downloads", "12 files", "pdf", "download"),
    ("Images", "248 files", "jpg", "image"),
    ("Videos", "31 files", "mp4", "video"),
    ("Audio", "54 files", "mp3", "music"),
    ("Documents", "17 files", "docx", "edit"),
    ("Apps", "23 apps", "apk", "apps"),
    ("Recent", "Last 7 days", "recent", "history"),
)
_FILE_STEMS = {
    "pdf": ("Boarding pass", "Receipt", "Invoice_0412", "Lease agreement", "Concert tickets", "Manual"),
    "jpg": ("IMG_2024", "PXL_2024", "Screenshot", "IMG_beach", "Scan"),
    "mp4": ("VID_2024", "PXL_video", "Screen recording", "Birthday"),
    "mp3": ("Recording", "Voice memo", "Podcast episode", "Ringtone"),
    "docx": ("Resume", "Notes", "Budget", "Meeting minutes", "Essay draft"),
    "apk": ("Update", "Installer", "Beta build"),
}


@functools.lru_cache(maxsize=16)
def folder_files(folder: str) -> tuple[tuple[str, str], ...]:
    """(file name, size and date) of a folder's newest files (seeded by its name; 8 shown)."""
    kind = next((k for n, _, k, _ in FILE_FOLDERS if n == folder), "pdf")
    r = stable_rng("files", folder)
    out = []
    for i in range(8):
        if folder == "Recent":  # the newest files of every kind
            kind = r.choice(sorted(_FILE_STEMS))
        stem = r.choice(_FILE_STEMS[kind])
        out.append((f"{stem} ({i + 1}).{kind}", f"{r.randint(1, 900)} {r.choice(('KB', 'MB'))} · Jun {4 - i // 3}"))
    return tuple(out)


class Files(App, key="files", label="Files", icon="folder", color=(26, 115, 232)):
    def init_state(self) -> None:
        #: The folder open (None: the browse list).
        self.folder: str | None = None
        #: Newer surfaces: the file open in the viewer; files a task put in a folder (newest first);
        #: files deleted in the episode.
        self.viewing: str | None = None
        self.added: dict[str, list[tuple[str, str]]] = {}
        self.deleted: list[str] = []

    def screen(self) -> str:
        if self.viewing is not None:
            return "viewer"
        return "browse" if self.folder is None else self.folder.lower()

    def files(self, folder: str) -> list[tuple[str, str]]:
        """A folder's files as the list shows them, newest first (a task's own first, deleted ones gone)."""
        return [f for f in [*self.added.get(folder, []), *folder_files(folder)] if f[0] not in self.deleted]

    def open_folder(self, name: str) -> None:
        self.folder = name

    def view(self, name: str) -> None:
        self.viewing = name

    def delete_viewed(self) -> None:
        if self.viewing is not None:
            self.deleted.append(self.viewing)
            self.viewing = None

    def back(self) -> bool:
        if self.viewing is not None:
            self.viewing = None
            return True
        if self.folder is not None:
            self.folder = None
            return True
        return False

    def build(self) -> list[ui.View]:
        if self.viewing is not None:
            return self._viewer(self.viewing)
        if self.folder is not None:
            return self._folder(self.folder)
        rows = [
            ui.list_row(
                72 * i, 72, t, sub=s, icon="folder", icon_color=ui.BLUE, ref=f"files.{i}", on_tap=partial(self.open_folder, t)
            )
            for i, (t, s, _, _) in enumerate(FILE_FOLDERS)
        ]
        return self.list_page("files", 56, rows, app_bar("Files", ref="files.bar"))

    def _folder(self, name: str) -> list[ui.View]:
        icon = next((ic for n, _, _, ic in FILE_FOLDERS if n == name), "folder")
        newer = self.phone.surfaces  # the newer Files opens a file on a tap (the pinned one does nothing)
        rows = [
            ui.list_row(
                72 * i, 72, f, sub=meta, icon=icon, icon_color=ui.BLUE, ref=f"files.file.{i}",
                on_tap=partial(self.view, f) if newer else lambda: None,
            )
            for i, (f, meta) in enumerate(self.files(name) if newer else folder_files(name))
        ]  # fmt: skip
        return self.list_page(f"files.{name.lower()}", 56, rows, app_bar(name, back=self.phone.key_back, ref="files.folder.bar"))

    def _viewer(self, name: str) -> list[ui.View]:
        views: list[ui.View] = [
            ui.box((0, ui.TOP, 360, ui.BOTTOM), (245, 246, 248)),
            app_bar(
                name,
                back=self.phone.key_back,
                ref="files.viewer.bar",
                actions=[ui.icon_button((0, 0, 1, 1), "trash", self.delete_viewed, ref="files.viewer.delete", desc="Delete")],
            ),
            ui.box((40, ui.TOP + 90, 320, ui.TOP + 450), ui.WHITE, border=ui.FAINT, ref="files.viewer.page"),
        ]
        for i in range(8):
            views.append(ui.box((64, ui.TOP + 120 + 36 * i, 296 - 40 * (i % 3), ui.TOP + 132 + 36 * i), (225, 227, 232)))
        views.append(
            ui.label((40, ui.TOP + 464, 320, ui.TOP + 488), name, size=14, fg=ui.SUBTLE, align="center", ref="files.viewer.name")
        )
        return views


_SONGS = ("Blinding Lights", "Levitating", "As It Was", "Anti-Hero", "Flowers", "Stay", "Heat Waves", "Bad Habit")


class _PlayerApp(App):
    """An app that is a music player with the newer surfaces (:mod:`.player`)."""

    player: PlayerState

    def is_player(self) -> bool:
        return bool(self.phone.surfaces)

    def submit(self, name: str) -> None:
        if self.is_player() and name == "q":
            self.player.results_for = self.fields.get("q", "").strip() or None
            self.blur()
            return
        super().submit(name)

    def back(self) -> bool:
        if self.is_player() and (self.player.results_for is not None or self.focused == "q"):
            self.player.results_for = None
            self.fields["q"] = ""
            self.blur()
            return True
        return super().back()


class Music(_PlayerApp, key="music", label="Music", icon="music", color=(230, 81, 0)):
    def init_state(self) -> None:
        self.playing = ""
        self.player = PlayerState(_SONGS)

    def screen(self) -> str:
        if self.is_player() and self.player.results_for is not None:
            return "results"
        return "library"

    def build(self) -> list[ui.View]:
        if self.is_player():
            return player_views(self, self.player, (230, 81, 0))
        songs = _SONGS
        rows = [
            ui.list_row(
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
            ui.box((0, ui.TOP, 360, ui.BOTTOM), ui.WHITE),
            ui.scroll_list("music", (0, ui.TOP + 56, 360, ui.BOTTOM - 64), rows, self.phone.scroll),
            app_bar("Library", ref="music.bar"),
        ]
        if self.playing:
            bar = ui.box((0, ui.BOTTOM - 64, 360, ui.BOTTOM), (255, 236, 224), ref="music.player")
            bar.children.append(ui.label((16, ui.BOTTOM - 64, 300, ui.BOTTOM), self.playing, size=15, bold=True))
            bar.children.append(
                ui.View((308, ui.BOTTOM - 56, 348, ui.BOTTOM - 8), kind="icon", icon="pause", icon_color=ui.TEXT, element=False)
            )
            views.append(bar)
        return views


class GenericApp(_PlayerApp, icon="letter"):
    """Any app by name: a branded welcome screen with a few cards (with the newer surfaces a music
    service's app is a player, and a notes app holds notes)."""

    def __init__(self, phone: object, name: str) -> None:
        super().__init__(phone)  # type: ignore[arg-type]
        self.label, self.key, self.color = _generic_identity(name)
        self.player = PlayerState()
        self.notes = NotesState()

    def is_player(self) -> bool:
        return bool(self.phone.surfaces) and self.key in MUSIC_SERVICES

    def is_notes(self) -> bool:
        return bool(self.phone.surfaces) and self.key in NOTES_APPS

    def screen(self) -> str:
        if self.is_player():
            return "results" if self.player.results_for is not None else "library"
        if self.is_notes():
            return "note" if self.notes.editing else "notes"
        return "main"

    def submit(self, name: str) -> None:
        if self.is_notes() and self.notes.editing:
            if name == "title":  # enter in the title goes on to the note's text
                self.focus("body")
            else:
                self.blur()
            return
        super().submit(name)

    def keyboard_action(self) -> str:
        return "enter" if self.is_notes() and self.notes.editing else super().keyboard_action()

    def back(self) -> bool:
        if self.is_notes() and self.notes.editing:
            self.notes.close_editor(self)
            return True
        return super().back()

    def build(self) -> list[ui.View]:
        if self.is_player():
            return player_views(self, self.player, self.color)
        if self.is_notes():
            return notes_views(self, self.notes, self.color)
        views: list[ui.View] = [
            ui.box((0, ui.TOP, 360, ui.BOTTOM), (245, 246, 248)),
            app_bar(self.label, fill=self.color, fg=ui.WHITE, ref=f"{self.key}.bar"),
        ]
        views.append(
            ui.label(
                (16, ui.TOP + 76, 344, ui.TOP + 110), f"Welcome to {self.label}", size=20, bold=True, ref=f"{self.key}.welcome"
            )
        )
        for i in range(4):
            y = ui.TOP + 124 + 130 * i
            card = ui.box(
                (12, y, 348, y + 118), ui.WHITE, radius=12, border=ui.FAINT, ref=f"{self.key}.card.{i}", on_tap=lambda: None
            )
            card.children.append(ui.box((24, y + 12, 84, y + 72), self.color, radius=30))
            card.children.append(ui.label((96, y + 16, 336, y + 40), f"{self.label} update {i + 1}", size=15, bold=True))
            card.children.append(
                ui.label(
                    (96, y + 42, 336, y + 100),
                    "Something new is waiting for you. Tap to see more.",
                    size=13,
                    fg=ui.SUBTLE,
                    lines=2,
                )
            )
            views.append(card)
        return views


@functools.lru_cache(maxsize=1024)
def _generic_identity(name: str) -> tuple[str, str, ui.Color]:
    """Label, key and brand colour of an app by name; cached because every reset installs the same
    extra apps (a stable-hash RNG per app is most of a phone's construction time)."""
    from digirl.sim.apps import resolve_app

    key = resolve_app(name)
    color = stable_rng("generic", key).choice(
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
    return title_case(name.strip()) or "App", key, color
