"""A music player's screens, the newer surface of the Music app and of music services' apps (Spotify and
the like): the library, a search, and a now-playing bar. Shown only with ``Phone.surfaces``; the
pinned screens of those apps are unchanged."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from digirl.sim import ui
from digirl.sim.apps.base import app_bar
from digirl.sim.content import title_case

if TYPE_CHECKING:
    from digirl.sim.apps.base import App

__all__ = ["LIBRARY", "MUSIC_SERVICES", "PlayerState", "player_views", "search_results"]

#: App keys of third-party music services that get the player (``resolve_app`` of their names).
MUSIC_SERVICES = frozenset(
    {"x.spotify", "x.pandora", "x.soundcloud", "x.applemusic", "x.amazonmusic", "x.deezer", "x.tidal", "x.youtubemusic"}
)
#: A service's library (playlists made for the user), top first.
LIBRARY = ("Liked Songs", "Discover Weekly", "Release Radar", "Daily Mix 1", "Chill Vibes")


def search_results(query: str) -> list[tuple[str, str]]:
    """What a search shows: (title, kind), the query's own song first."""
    t = title_case(query.strip())
    return [(t, "Song"), (f"{t} Radio", "Playlist"), (f"This Is {t}", "Playlist"), (f"{t} Mix", "Playlist")]


class PlayerState:
    """What a player app remembers: the search it shows (None: the library), what is playing, from
    which list (the next track is the list's next item), and the playback controls' state."""

    def __init__(self, library: tuple[str, ...] = LIBRARY) -> None:
        self.library = library
        self.results_for: str | None = None
        self.playing = ""
        self.queue: tuple[str, ...] = ()
        self.paused = False
        self.shuffle = False
        self.skips = 0

    def play(self, title: str, queue: tuple[str, ...] = ()) -> None:
        self.playing, self.queue, self.paused = title, queue or (title,), False

    def toggle_pause(self) -> None:
        self.paused = not self.paused

    def toggle_shuffle(self) -> None:
        self.shuffle = not self.shuffle

    def skip(self) -> None:
        """The next track (the list's next item, round to the first); playback goes on."""
        i = self.queue.index(self.playing) if self.playing in self.queue else -1
        self.playing = self.queue[(i + 1) % len(self.queue)] if len(self.queue) > 1 else f"{self.playing} (next track)"
        self.paused, self.skips = False, self.skips + 1


def player_views(app: App, st: PlayerState, color: ui.Color) -> list[ui.View]:
    """The player: an app bar, the search field, the library or the search's results, what is playing."""
    key = app.key
    rows: list[ui.View] = []
    if st.results_for is not None:
        items = search_results(st.results_for)
        rows.append(ui.label((16, 0, 344, 32), f"Results for {st.results_for!r}", size=14, fg=ui.SUBTLE))
        ref = f"{key}.result"
    else:
        items = [(t, "Playlist") for t in st.library]
        rows.append(ui.label((16, 0, 344, 32), "Your library", size=14, fg=ui.SUBTLE))
        ref = f"{key}.lib"
    queue = tuple(t for t, _ in items)
    for i, (title, kind) in enumerate(items):
        rows.append(
            ui.list_row(
                32 + 64.0 * i,
                64,
                title,
                sub=kind,
                icon="music",
                icon_color=color,
                ref=f"{ref}.{i}",
                on_tap=partial(st.play, title, queue),
            )
        )
    views: list[ui.View] = [
        ui.box((0, ui.TOP, 360, ui.BOTTOM), ui.WHITE),
        ui.scroll_list(f"{key}.list", (0, ui.TOP + 120, 360, ui.BOTTOM - 64), rows, app.phone.scroll),
        app_bar(app.label, ref=f"{key}.bar", fill=color, fg=ui.WHITE),
        app.text_input(
            (12, ui.TOP + 64, 348, ui.TOP + 112),
            "q",
            placeholder="What do you want to listen to?",
            ref=f"{key}.search",
            filled=True,
        ),
    ]
    if st.playing:
        bar = ui.box((0, ui.BOTTOM - 64, 360, ui.BOTTOM), (235, 245, 238), ref=f"{key}.player")
        bar.children.append(
            ui.label((16, ui.BOTTOM - 60, 212, ui.BOTTOM - 34), st.playing, size=15, bold=True, ref=f"{key}.playing")
        )
        said = "Paused" if st.paused else "Now playing" + (" · shuffle" if st.shuffle else "")
        bar.children.append(ui.label((16, ui.BOTTOM - 34, 212, ui.BOTTOM - 10), said, size=12, fg=ui.SUBTLE))
        for x, icon, ref, desc, tap in (
            (220, "shuffle", "shuffle", "Shuffle off" if st.shuffle else "Shuffle", st.toggle_shuffle),
            (264, "play" if st.paused else "pause", "pp", "Play" if st.paused else "Pause", st.toggle_pause),
            (308, "next", "next", "Next", st.skip),
        ):
            tint = color if icon == "shuffle" and st.shuffle else ui.TEXT
            bar.children.append(
                ui.icon_button((x, ui.BOTTOM - 56, x + 40, ui.BOTTOM - 8), icon, tap, ref=f"{key}.{ref}", desc=desc, color=tint)
            )
        views.append(bar)
    return views
