"""A YouTube-like app: home feed, search with suggestions, results (channel + videos), channel page, player."""

from __future__ import annotations

from functools import partial

from digirl.sim import ui
from digirl.sim.apps import yttabs
from digirl.sim.apps.base import letter_tile, tab_label
from digirl.sim.apps.search import ScreenStackApp, SearchFlow
from digirl.sim.content import (
    Video,
    channel_videos,
    norm_name,
    stable_rng,
    title_case,
    video_age,
    youtube_results,
)

__all__ = ["YouTube"]

Screen = tuple[str, object]
#: A channel's avatar colour.
_CHANNEL_RED = (204, 0, 0)


def _thumb(x0: float, y0: float, x1: float, y1: float, key: str) -> ui.View:
    col = stable_rng("thumb", key).choice(((60, 64, 80), (120, 60, 60), (40, 90, 120), (90, 110, 60), (110, 80, 140)))
    t = ui.box((x0, y0, x1, y1), col, radius=8)
    s = min(x1 - x0, y1 - y0) * 0.4
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    t.children.append(
        ui.View(
            (cx - s / 2, cy - s / 2, cx + s / 2, cy + s / 2), kind="icon", icon="play", icon_color=(235, 235, 235), element=False
        )
    )
    return t


class YouTube(ScreenStackApp, key="youtube", label="YouTube", icon="youtube", color=ui.WHITE, rates=True):
    search_flow = SearchFlow("yt", back_ref="yt.search.back", placeholder="Search YouTube", bar_height=56, fill=(242, 242, 242))

    def init_state(self) -> None:
        self.stack: list[Screen] = [("home", None)]
        #: Channels subscribed to during the episode (``norm_name`` of the channel).
        self.subscriptions: set[str] = set()
        #: The bottom navigation's tab (:mod:`.yttabs`, with ``phone.surfaces``), the subscribed
        #: channels' names as shown, and the channels of the videos watched (the Library's history).
        self.tab = "Home"
        self.channel_names: dict[str, str] = {}
        self.history: list[str] = []

    def toggle_subscription(self, channel: str) -> None:
        self.subscriptions ^= {norm_name(channel)}
        self.channel_names[norm_name(channel)] = channel

    def push(self, name: str, arg: object = None) -> None:
        super().push(name, arg)
        if name == "watch" and isinstance(arg, Video):
            self.history.append(arg.channel)

    def _subscribe_button(self, rect: tuple[float, float, float, float], channel: str, ref: str) -> ui.View:
        on = norm_name(channel) in self.subscriptions
        return ui.button(
            rect,
            "Subscribed" if on else "Subscribe",
            lambda: self.toggle_subscription(channel),
            ref=ref,
            color=ui.TEXT,
            radius=16,
            size=13,
            style="tonal" if on else "filled",
        )

    def screen(self) -> str:
        return self.top[0]

    @property
    def playing(self) -> Video | None:
        s, arg = self.top
        return arg if s == "watch" and isinstance(arg, Video) else None

    def state(self) -> dict[str, object]:
        v = self.playing
        return {
            "screen": self.screen(),
            "stack": [s for s, _ in self.stack],
            "playing": {"title": v.title, "channel": v.channel, "vid": v.vid} if v else None,
            "subscriptions": sorted(self.subscriptions),
        }

    def build_screen(self, s: str, arg: object) -> list[ui.View]:
        if s == "channel":
            return self._channel(str(arg))
        if s == "watch" and isinstance(arg, Video):
            return self._watch(arg)
        return self._home()

    def _bar(self, back: bool = False) -> ui.View:
        bar = ui.box((0, ui.TOP, 360, ui.TOP + 52), ui.WHITE, blocker=True, ref="yt.bar")
        x = 12
        if back:
            bar.children.append(self.back_button((4, ui.TOP + 6, 44, ui.TOP + 46), ref="yt.back", desc="Navigate up"))
            x = 48
        bar.children.append(ui.View((x, ui.TOP + 12, x + 38, ui.TOP + 40), kind="icon", icon="youtube", element=False))
        bar.children.append(ui.label((x + 42, ui.TOP, x + 140, ui.TOP + 52), "YouTube", size=19, bold=True, ref="yt.logo"))
        bar.children.append(self.search_button((264, ui.TOP + 6, 304, ui.TOP + 46), ref="yt.search"))
        bar.children.append(
            ui.icon_button((308, ui.TOP + 6, 352, ui.TOP + 46), "person", None, ref="yt.account", desc="Account", color=ui.TEXT)
        )
        return bar

    def _video_row(self, y: float, v: Video, ref: str) -> ui.View:
        row = ui.box((0, y, 360, y + 96), ui.WHITE, ref=ref, on_tap=partial(self.push, "watch", v), kind="list_item")
        row.children.append(_thumb(12, y + 8, 152, y + 88, v.vid))
        row.children.append(ui.label((162, y + 8, 350, y + 50), v.title, size=14, lines=2))
        row.children.append(ui.label((162, y + 52, 350, y + 70), v.channel, size=12, fg=ui.SUBTLE, ref=f"{ref}.channel"))
        row.children.append(ui.label((162, y + 70, 350, y + 88), f"{v.views} · {video_age(v)}", size=12, fg=ui.SUBTLE))
        return row

    def _home(self) -> list[ui.View]:
        feed = youtube_results("trending music", self.phone.dyn.world_version)
        rows = [self._video_row(8 + 100 * i, v, f"yt.feed.{i}") for i, v in enumerate(feed)]
        if self.phone.surfaces:  # the bottom navigation (Home, Shorts, Subscriptions, Library)
            feed_list = ui.scroll_list("yt.home", (0, ui.TOP + 52, 360, ui.BOTTOM - 64), rows, self.phone.scroll, fill=ui.WHITE)
            return yttabs.tab_views(self, [feed_list, self._bar()])
        return [ui.scroll_list("yt.home", (0, ui.TOP + 52, 360, ui.BOTTOM), rows, self.phone.scroll, fill=ui.WHITE), self._bar()]

    def _results(self, q: str) -> list[ui.View]:
        dyn = self.phone.dyn
        rows: list[ui.View] = []
        y = 8.0 + dyn.list_offset * 0.5
        if dyn.has_ad("yt", q.lower()):
            ad = ui.box((12, y, 348, y + 64), (255, 248, 225), radius=10, ref="ad.yt", on_tap=lambda: None)
            ad.children.append(ui.label((24, y + 6, 336, y + 24), "Ad · Sponsored", size=11, fg=ui.SUBTLE))
            ad.children.append(ui.label((24, y + 26, 336, y + 54), "Try Premium free for 1 month", size=15))
            rows.append(ad)
            y += 76
        name = title_case(q)
        ch = ui.box(
            (0, y, 360, y + 88), ui.WHITE, ref="yt.channel_result", on_tap=lambda: self.push("channel", name), kind="list_item"
        )
        ch.children.append(letter_tile((20, y + 12, 84, y + 76), name[:1].upper(), _CHANNEL_RED, radius=32, size=26))
        ch.children.append(ui.label((100, y + 14, 350, y + 38), name, size=16, bold=True))
        subs = stable_rng("subs", norm_name(q)).randint(2, 900)
        ch.children.append(
            ui.label((100, y + 38, 350, y + 58), f"@{norm_name(q)[:18]} · {subs / 10:.1f}M subscribers", size=12, fg=ui.SUBTLE)
        )
        ch.children.append(ui.box((0, y + 87, 360, y + 88), ui.FAINT))
        rows.append(ch)
        y += 96
        vids = youtube_results(q, dyn.world_version)
        for i, j in enumerate(dyn.order(len(vids), "yt", q.lower())):
            rows.append(self._video_row(y, vids[j], f"yt.result.{i}"))
            y += 100
        bar = ui.box((0, ui.TOP, 360, ui.TOP + 56), ui.WHITE, blocker=True)
        bar.children.append(self.back_button((4, ui.TOP + 8, 44, ui.TOP + 48), ref="yt.back"))
        bar.children.append(
            self.search_box((48, ui.TOP + 8, 352, ui.TOP + 48), q, ref="yt.query", fill=(242, 242, 242), border=None, icon="")
        )
        return [
            ui.scroll_list(
                self.search_flow.results_scroll, (0, ui.TOP + 56, 360, ui.BOTTOM), rows, self.phone.scroll, fill=ui.WHITE
            ),
            bar,
        ]

    def _channel(self, name: str) -> list[ui.View]:
        vids = channel_videos(name, self.phone.dyn.world_version)
        rows: list[ui.View] = [
            ui.box((0, 0, 360, 90), (180, 30, 30), children=[ui.label((16, 20, 344, 70), name, size=24, fg=ui.WHITE, bold=True)])
        ]
        rows.append(ui.label((16, 98, 250, 122), name, size=18, bold=True, ref="yt.channel.name"))
        rows.append(self._subscribe_button((260, 96, 348, 128), name, "yt.channel.subscribe"))
        for i, t in enumerate(("Home", "Videos", "Shorts", "Playlists")):
            rows.append(tab_label((12 + 84 * i, 136, 92 + 84 * i, 172), t, t == "Videos", ui.TEXT, element=True))
        rows.append(ui.box((96, 170, 176, 173), ui.TEXT))
        y = 180.0
        for i, v in enumerate(vids):
            rows.append(self._video_row(y, v, f"yt.chvideo.{i}"))
            y += 100
        return [
            ui.scroll_list("yt.channel", (0, ui.TOP + 52, 360, ui.BOTTOM), rows, self.phone.scroll, fill=ui.WHITE),
            self._bar(back=True),
        ]

    def _watch(self, v: Video) -> list[ui.View]:
        views: list[ui.View] = [ui.box((0, ui.TOP, 360, ui.BOTTOM), ui.WHITE)]
        player = ui.box((0, ui.TOP, 360, ui.TOP + 202), (0, 0, 0), ref="yt.player")
        player.children.append(
            ui.View((156, ui.TOP + 77, 204, ui.TOP + 125), kind="icon", icon="pause", icon_color=ui.WHITE, element=False)
        )
        player.children.append(ui.box((0, ui.TOP + 198, 140, ui.TOP + 202), ui.RED))
        player.children.append(ui.label((12, ui.TOP + 172, 200, ui.TOP + 194), "0:12 / 3:45", size=11, fg=ui.WHITE))
        views.append(player)
        views.append(ui.label((12, ui.TOP + 210, 348, ui.TOP + 258), v.title, size=16, bold=True, lines=2, ref="yt.watch.title"))
        views.append(ui.label((12, ui.TOP + 260, 348, ui.TOP + 280), f"{v.views} · {video_age(v)}", size=12, fg=ui.SUBTLE))
        chan = ui.box(
            (0, ui.TOP + 288, 360, ui.TOP + 340), ui.WHITE, ref="yt.watch.channel", on_tap=lambda: self.push("channel", v.channel)
        )
        chan.children.append(letter_tile((12, ui.TOP + 294, 52, ui.TOP + 334), v.channel[:1], _CHANNEL_RED, radius=20, size=18))
        chan.children.append(ui.label((62, ui.TOP + 288, 250, ui.TOP + 340), v.channel, size=15, bold=True))
        chan.children.append(self._subscribe_button((260, ui.TOP + 298, 348, ui.TOP + 330), v.channel, "yt.subscribe"))
        views.append(chan)
        views.append(ui.label((12, ui.TOP + 348, 348, ui.TOP + 372), "Up next", size=14, bold=True))
        nxt = youtube_results(v.channel, self.phone.dyn.world_version)[:3]
        for i, n in enumerate(nxt):
            views.append(self._video_row(ui.TOP + 376 + 100 * i, n, f"yt.next.{i}"))
        return views
