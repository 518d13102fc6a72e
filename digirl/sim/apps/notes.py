"""A notes app (as Google Keep or a phone's own Notes look), the newer surface of a notes app's name:
a list of notes under a search-less bar, a "+" button that opens an editor with a title and a body,
Save (or back, which keeps what was written, as Keep does). Shown only with ``Phone.surfaces``; with
the pinned screens, a notes app is the generic welcome screen it always was."""

from __future__ import annotations

from typing import TYPE_CHECKING

from digirl.sim import ui
from digirl.sim.apps.base import app_bar, fab

if TYPE_CHECKING:
    from digirl.sim.apps.base import App

__all__ = ["NOTES_APPS", "NotesState", "notes_views"]

#: App keys (``resolve_app`` of their names) of notes apps: they get this app with the newer surfaces.
NOTES_APPS = frozenset({"x.notes", "x.keep", "x.googlekeep", "x.keepnotes", "x.samsungnotes", "x.notepad"})
#: The notes a phone already holds, newest first.
SEEDED = (
    ("Wi-Fi at the cabin", "Network Pinewood, the password is on the fridge"),
    ("Books to read", "Piranesi, The Overstory, Klara and the Sun"),
    ("Parking", "Level 3, row F"),
)


class NotesState:
    """The notes (title, body), newest first, and whether the editor is open."""

    def __init__(self) -> None:
        self.notes: list[tuple[str, str]] = list(SEEDED)
        self.editing = False

    def open_editor(self, app: App) -> None:
        self.editing = True
        app.fields["title"], app.fields["body"] = "", ""
        app.focus("title")

    def close_editor(self, app: App) -> None:
        """Keep what was written (an empty note is dropped), back to the list."""
        title, body = app.fields.get("title", "").strip(), app.fields.get("body", "").strip()
        if title or body:
            self.notes.insert(0, (title, body))
        self.editing = False
        app.fields["title"], app.fields["body"] = "", ""
        app.blur()


def notes_views(app: App, st: NotesState, color: ui.Color) -> list[ui.View]:
    """The list of notes, or the editor."""
    key = app.key
    if st.editing:
        views = app.form_page("Note", ref=f"{key}.edit", save=lambda: st.close_editor(app))
        for y, name, hint, size in ((72, "title", "Title", 18), (136, "body", "Note", 15)):
            rect = (16, ui.TOP + y, 344, ui.TOP + y + 52)
            views.append(
                app.text_input(rect, name, placeholder=hint, ref=f"{key}.edit.{name}", clear=False, radius=8, icon="", size=size)
            )
        return views
    rows = [
        ui.list_row(
            72.0 * i,
            72,
            title or body[:30],
            sub=body if title else "",
            icon="edit",
            icon_color=color,
            ref=f"{key}.note.{i}",
            on_tap=lambda: None,
        )
        for i, (title, body) in enumerate(st.notes)
    ]
    bar = app_bar(app.label, ref=f"{key}.bar", fill=color, fg=ui.WHITE)
    new = fab("plus", lambda: st.open_editor(app), ref=f"{key}.new", desc="New note", color=color)
    return app.list_page(f"{key}.list", 56, rows, bar, new)
