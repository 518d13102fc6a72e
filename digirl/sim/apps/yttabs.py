"""YouTube's bottom navigation (issue 42), shown when ``phone.surfaces`` is on: Home (the feed),
Explore (trending videos), Shorts (one full-screen short), Subscriptions (the channels subscribed to this episode and their
newest uploads, or an empty state) and Library (history, the episode's watched videos, and fixed
playlists). The tab lives in ``YouTube.tab``; it shows on the bottom screen of the app's stack only,
as on the phone, where pushing a video or a search covers it."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from digirl.sim import ui
from digirl.sim.apps.base import letter_tile
from digirl.sim.content import channel_videos, stable_rng, title_case

if TYPE_CHECKING:
    from digirl.sim.apps.youtube import YouTube

__all__ = ["YT_TABS", "tab_views"]

YT_TABS = ("Home", "Explore", "Shorts", "Subscriptions", "Library")
_ICONS = {"Home": "home", "Explore": "search", "Shorts": "play", "Subscriptions": "video", "Library": "folder"}
_TAB_W = 72  # five tabs across the 360-wide bar
#: The channels whose newest uploads trend (the same for every phone of a world).
_TRENDING = ("MrBeast", "Taylor Swift", "NBA", "Marques Brownlee", "Tasty", "Veritasium", "BBC News", "Dude Perfect")
_NAV = 64  # the bottom bar's height
_RED = (204, 0, 0)


def select_tab(yt: YouTube, tab: str) -> None:
    yt.tab = tab
    yt.blur()


def _nav(yt: YouTube) -> ui.View:
    bar = ui.box((0, ui.BOTTOM - _NAV, 360, ui.BOTTOM), ui.WHITE, blocker=True, ref="yt.tabs")
    bar.children.append(ui.box((0, ui.BOTTOM - _NAV, 360, ui.BOTTOM - _NAV + 1), (229, 229, 229)))
    for i, t in enumerate(YT_TABS):
        sel = t == yt.tab
        x0 = _TAB_W * i
        item = ui.View(
            (x0, ui.BOTTOM - _NAV, x0 + _TAB_W, ui.BOTTOM),
            kind="tab",
            ref=f"yt.tab.{t.lower()}",
            placeholder=t,
            on_tap=partial(select_tab, yt, t),
        )
        item.children.append(
            ui.View(
                (x0 + 24, ui.BOTTOM - 58, x0 + 48, ui.BOTTOM - 34), kind="icon", icon=_ICONS[t], icon_color=ui.TEXT, element=False
            )
        )
        item.children.append(ui.label((x0, ui.BOTTOM - 30, x0 + _TAB_W, ui.BOTTOM - 10), t, size=10, align="center", bold=sel))
        bar.children.append(item)
    return bar


def tab_views(yt: YouTube, home: list[ui.View]) -> list[ui.View]:
    """The bottom screen's views for the current tab (``home``: the feed's views) and the nav bar."""
    if yt.tab == "Explore":
        views = _explore(yt)
    elif yt.tab == "Shorts":
        views = _shorts(yt)
    elif yt.tab == "Subscriptions":
        views = _subscriptions(yt)
    elif yt.tab == "Library":
        views = _library(yt)
    else:
        views = home
    return [*views, _nav(yt)]


def _explore(yt: YouTube) -> list[ui.View]:
    """Trending: the videos everyone watches this week (the same list for every phone of a world)."""
    rows: list[ui.View] = []
    wv = yt.phone.dyn.world_version
    for i, ch in enumerate(_TRENDING):
        rows.append(yt._video_row(100.0 * i, channel_videos(ch, wv)[0], f"yt.trending.{i}"))
    head = ui.box((0, ui.TOP, 360, ui.TOP + 52), ui.WHITE, blocker=True)
    head.children.append(ui.label((16, ui.TOP, 300, ui.TOP + 52), "Trending", size=19, bold=True, ref="yt.trending.title"))
    return [ui.scroll_list("yt.trending", (0, ui.TOP + 52, 360, ui.BOTTOM - _NAV), rows, yt.phone.scroll, fill=ui.WHITE), head]


def _shorts(yt: YouTube) -> list[ui.View]:
    r = stable_rng("yt-short", yt.phone.dyn.world_version)
    who = r.choice(("DailyLaughs", "ChefInAMinute", "TechTips", "PetPals", "StreetDance"))
    low = ui.BOTTOM - _NAV
    # Children of the dark player, as the watch page's player: text and icon are drawn on its fill.
    player = ui.box((0, ui.TOP, 360, low), (18, 18, 18), ref="yt.short")
    player.children.append(ui.label((16, ui.TOP + 12, 200, ui.TOP + 40), "Shorts", size=19, fg=ui.WHITE, bold=True))
    player.children.append(
        ui.View((156, ui.TOP + 236, 204, ui.TOP + 284), kind="icon", icon="pause", icon_color=ui.WHITE, element=False)
    )
    player.children.append(ui.label((16, low - 92, 280, low - 68), f"@{who}", size=15, fg=ui.WHITE, bold=True))
    player.children.append(ui.label((16, low - 66, 300, low - 20), "Wait for the end #shorts", size=14, fg=ui.WHITE, lines=2))
    return [player]


def _subscriptions(yt: YouTube) -> list[ui.View]:
    names = sorted(yt.channel_names[c] for c in yt.subscriptions if c in yt.channel_names)
    rows: list[ui.View] = []
    if not names:
        rows.append(ui.label((24, 40, 336, 72), "No subscriptions yet", size=18, bold=True, align="center"))
        rows.append(
            ui.label(
                (24, 76, 336, 124),
                "Subscribe to channels to see their newest videos here",
                size=14,
                fg=ui.SUBTLE,
                align="center",
                lines=2,
            )
        )
    else:
        for i, n in enumerate(names[:5]):
            x0 = 12 + 68 * i
            rows.append(letter_tile((x0 + 8, 8, x0 + 56, 56), n[:1].upper(), _RED, radius=24, size=20))
            rows.append(ui.label((x0, 58, x0 + 64, 76), n, size=11, align="center", ref=f"yt.subs.channel.{i}"))
        y = 88.0
        vids = sorted((v for n in names for v in channel_videos(n, yt.phone.dyn.world_version)[:2]), key=lambda v: v.age_days)
        for i, v in enumerate(vids):
            rows.append(yt._video_row(y, v, f"yt.subs.video.{i}"))
            y += 100
    head = ui.box((0, ui.TOP, 360, ui.TOP + 52), ui.WHITE, blocker=True)
    head.children.append(ui.label((16, ui.TOP, 300, ui.TOP + 52), "Subscriptions", size=19, bold=True, ref="yt.subs.title"))
    return [ui.scroll_list("yt.subs", (0, ui.TOP + 52, 360, ui.BOTTOM - _NAV), rows, yt.phone.scroll, fill=ui.WHITE), head]


def _library(yt: YouTube) -> list[ui.View]:
    rows: list[ui.View] = []
    watched = list(dict.fromkeys(title_case(c) for c in yt.history))
    rows.append(ui.label((16, 0, 344, 32), "History", size=16, bold=True))
    if watched:
        rows.append(ui.label((16, 32, 344, 56), "Watched today: " + ", ".join(watched[:3]), size=13, fg=ui.SUBTLE))
    else:
        rows.append(ui.label((16, 32, 344, 56), "Videos you watch will show up here", size=13, fg=ui.SUBTLE))
    for i, (t, icon) in enumerate((("Your videos", "video"), ("Watch later", "clock"), ("Liked videos", "star"))):
        rows.append(ui.list_row(64 + 64 * i, 64, t, ref=f"yt.library.{i}", icon=icon, icon_color=ui.TEXT, divider=False))
    head = ui.box((0, ui.TOP, 360, ui.TOP + 52), ui.WHITE, blocker=True)
    head.children.append(ui.label((16, ui.TOP, 300, ui.TOP + 52), "Library", size=19, bold=True, ref="yt.library.title"))
    return [ui.scroll_list("yt.library", (0, ui.TOP + 52, 360, ui.BOTTOM - _NAV), rows, yt.phone.scroll, fill=ui.WHITE), head]
