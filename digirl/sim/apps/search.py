"""The search engine (shared by the browser's google.com and the Google app) and the Google app.

A suggestion list is not a results page: results exist only after a query is *submitted*
(enter, the keyboard's search key, or tapping a suggestion).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from digirl.sim import ui
from digirl.sim.apps.base import FIELD_FILL, App, tab_label
from digirl.sim.content import Card, answer_card, suggestions, web_results
from digirl.sim.perturb import Dynamics

__all__ = ["GoogleApp", "ScreenStackApp", "SearchFlow", "google_logo", "results_list", "suggestion_list"]

_LOGO = ((66, 133, 244), (234, 67, 53), (251, 188, 5), (66, 133, 244), (52, 168, 83), (234, 67, 53))


def google_logo(cx: float, y: float, size: int = 34) -> list[ui.View]:
    """ "Google" in its four colours, one view per letter."""
    w = size * 0.62
    x = cx - w * 3
    out = []
    for ch, col in zip("Google", _LOGO):
        out.append(ui.View((x, y, x + w, y + size * 1.3), kind="text", text=ch, fg=col, size=size, align="center", element=False))
        x += w
    out.append(ui.View((cx - w * 3, y, cx + w * 3, y + size * 1.3), kind="logo", placeholder="Google", element=True))
    return out


def google_start(y: float, on_tap: Callable[[], None], *, ref: str, placeholder: str = "Search") -> list[ui.View]:
    """The Google logo over a box that starts a search when tapped (the Google app's feed, Chrome's new tab)."""
    return [
        *google_logo(180, y),
        ui.input_field((20, y + 70, 340, y + 118), "", placeholder=placeholder, focused=False, on_tap=on_tap, ref=ref),
    ]


def app_search_screen(
    app: Any,
    *,
    ref: str,
    back_ref: str,
    placeholder: str,
    height: float = 64,
    fill: tuple[int, int, int] = FIELD_FILL,
) -> list[ui.View]:
    """The search screen every app with a search box shares: back button, query field, suggestions."""
    bar = ui.box((0, ui.TOP, 360, ui.TOP + height), ui.WHITE, blocker=True)
    pad = (height - 40) / 2
    bar.children.append(app.back_button((4, ui.TOP + pad, 44, ui.TOP + height - pad), ref=back_ref))
    bar.children.append(
        app.text_input(
            (48, ui.TOP + 8, 352, ui.TOP + height - 8),
            "q",
            placeholder=placeholder,
            ref=f"{ref}.query",
            fill=fill,
            border=None,
            icon="",
        )
    )
    return [
        ui.box((0, ui.TOP, 360, ui.BOTTOM), ui.WHITE),
        suggestion_list(ui.TOP + height + 4, app.fields.get("q", ""), app.run_query, ref=f"{ref}.sugg"),
        bar,
    ]


@dataclass(frozen=True)
class SearchFlow:
    """A :class:`ScreenStackApp`'s search screen: its refs, placeholder and bar."""

    #: Prefix of the refs of the query field, its suggestions and the results list (``{ref}.query``, ...).
    ref: str
    back_ref: str
    placeholder: str
    bar_height: float = 64
    fill: ui.Color = FIELD_FILL

    @property
    def results_scroll(self) -> str:
        """The results list's scroll key (a new query shows its results from the top)."""
        return f"{self.ref}.results"


class ScreenStackApp(App):
    """An app whose screens form a back stack of ``(screen name, argument)`` pairs, with a search flow:
    the shared search screen (:func:`app_search_screen`, as :attr:`search_flow` declares it), then its results."""

    stack: list[tuple[str, object]]

    @property
    def top(self) -> tuple[str, object]:
        return self.stack[-1]

    def push(self, name: str, arg: object = None) -> None:
        self.stack.append((name, arg))
        self.blur()

    def back(self) -> bool:
        if len(self.stack) > 1:
            self.stack.pop()
            self.blur()
            return True
        return False

    #: The search screen ("search", None), whose query opens ("results", query).
    search_flow: SearchFlow

    def build(self) -> list[ui.View]:
        """The search flow's two screens (the search field; the results of the query on the stack),
        else :meth:`build_screen` for the app's own screens."""
        s, arg = self.top
        if s == "search":
            return self._search()
        if s == "results":
            return self._results(str(arg))
        return self.build_screen(s, arg)

    def _search(self) -> list[ui.View]:
        f = self.search_flow
        return app_search_screen(
            self, ref=f.ref, back_ref=f.back_ref, placeholder=f.placeholder, height=f.bar_height, fill=f.fill
        )

    def _results(self, q: str) -> list[ui.View]:
        raise NotImplementedError

    def build_screen(self, name: str, arg: object) -> list[ui.View]:
        """The views of the app's screen ``name`` (anything but "search" and "results")."""
        raise NotImplementedError

    def search_button(self, rect: ui.Rect, *, ref: str) -> ui.View:
        """A top bar's magnifier: it opens the search screen."""
        return ui.icon_button(rect, "search", self.start_search, ref=ref, desc="Search", color=ui.TEXT)

    def search_box(
        self, rect: ui.Rect, text: str, *, ref: str, fill: ui.Color, border: ui.Color | None, icon: str, radius: int = 22
    ) -> ui.View:
        """A page's query box (not focused): it shows ``text``; a tap opens the search screen with it."""
        placeholder = self.search_flow.placeholder
        return ui.input_field(
            rect,
            text,
            placeholder=placeholder,
            focused=False,
            on_tap=self.start_search,
            ref=ref,
            fill=fill,
            border=border,
            icon=icon,
            radius=radius,
        )

    def start_search(self) -> None:
        """Open the search screen, its field holding the query of the results on screen (if any)."""
        prev = self.top[1] if self.top[0] == "results" else ""
        self.push("search")
        self.fields["q"] = str(prev or "")
        self.focus("q")

    def submit(self, name: str) -> None:
        q = self.fields.get("q", "").strip()
        if q:
            self.run_query(q)

    def run_query(self, q: str) -> None:
        """Show the results of ``q`` in place of the search screen."""
        if self.top[0] == "search":
            self.stack.pop()
        self.push("results", q.strip())
        self.phone.scroll.pop(self.search_flow.results_scroll, None)


def suggestion_list(y: float, text: str, on_pick: Callable[[str], None], *, ref: str = "sugg") -> ui.View:
    """The drop-down of query completions under a focused search box (a blocker overlay).

    When ``on_pick`` is a method of one of the phone's apps, the list is shared by every phone
    (its taps are :class:`SystemTap`): the same query typed in another episode then costs no
    building, compiling or element extraction."""
    target = _app_method(on_pick)
    if target is None:
        return _suggestion_panel(y, text, ref, lambda s: partial(on_pick, s))
    app, method = target
    tap = partial(ui.SystemTap, method, app=app)  # SystemTap(method, s, app=app): the phone's app picks s
    return ui.shared_ops_view(("sugg", y, text, ref, app, method), partial(_suggestion_panel, y, text, ref, tap))


def _suggestion_panel(y: float, text: str, ref: str, tap: Callable[[str], Callable[[], None]]) -> ui.View:
    items = suggestions(text)
    panel = ui.box((0, y, 360, y + 52 * len(items) + 8), ui.WHITE, blocker=True, ref=ref)
    for i, s in enumerate(items):
        panel.children.append(
            ui.list_row(
                y + 4 + 52 * i,
                52,
                s,
                ref=f"{ref}.{i}",
                icon="search",
                icon_color=ui.SUBTLE,
                on_tap=tap(s),
                divider=False,
            )
        )
    return panel


def _app_method(fn: Callable[..., None]) -> tuple[str, str] | None:
    """(app key, method name) when ``fn`` is a bound method of an app that its phone knows by that key."""
    app, name = getattr(fn, "__self__", None), getattr(fn, "__name__", "")
    if not isinstance(app, App) or app.phone.apps.get(app.key) is not app or getattr(app, name, None) != fn:
        return None
    return app.key, name


def _card_views(card: Card, y: float) -> tuple[list[ui.View], float]:
    """The answer card's views starting at content y; returns (views, bottom)."""
    if card.kind == "generic":
        return [], y
    h = 76 + 22 * len(card.lines) + (0 if card.headline else -30)
    c = ui.box((12, y, 348, y + h), ui.WHITE, radius=14, border=ui.FAINT, ref=f"card.{card.kind}")
    c.children.append(ui.label((28, y + 10, 332, y + 32), card.title, size=13, fg=ui.SUBTLE))
    if card.headline:
        c.children.append(
            ui.label((28, y + 32, 332, y + 68), card.headline, size=24 if len(card.headline) < 22 else 17, bold=True)
        )
    for i, line in enumerate(card.lines):
        c.children.append(
            ui.label(
                (28, y + h - 16 - 22 * (len(card.lines) - i), 332, y + h - 16 - 22 * (len(card.lines) - i) + 22),
                line,
                size=13,
                fg=ui.TEXT,
            )
        )
    return [c], y + h + 12


def results_list(
    query: str,
    dyn: Dynamics,
    rect: tuple[float, float, float, float],
    offsets: dict[str, float],
    on_open: Callable[[str], None],
    *,
    key: str = "serp",
) -> ui.View:
    """The scrollable body of a results page: optional ad, the answer card, then organic results."""
    rows: list[ui.View] = []
    y = float(dyn.list_offset) * 0.5
    wv = dyn.world_version
    if dyn.has_ad("serp", query.lower()):
        ad = ui.box((12, y, 348, y + 74), (254, 247, 224), radius=12, ref="ad.serp", on_tap=lambda: on_open("ad.example/deal"))
        ad.children.append(ui.label((24, y + 6, 330, y + 24), "Sponsored · ad.example", size=11, fg=ui.SUBTLE))
        ad.children.append(ui.label((24, y + 24, 330, y + 48), f"Best deals on {query} - Shop now", size=15, fg=ui.BLUE))
        ad.children.append(ui.label((24, y + 48, 330, y + 68), "Free shipping. Limited time offer.", size=12, fg=ui.SUBTLE))
        rows.append(ad)
        y += 86
    card_views, y = _card_views(answer_card(query, wv), y)
    rows += card_views
    res = web_results(query, wv)
    order = dyn.order(len(res), "serp", query.lower())
    first = len(rows)
    tall = 120 if dyn.serp_cards else 96  # the redesigned cards (a search-results update) are taller
    for i, j in enumerate(order):
        rows.append(ui.box((0, y, 360, y + tall), ui.WHITE, ref=f"result.{i}", on_tap=partial(on_open, res[j].url)))
        y += tall

    def dress(k: int, item: ui.View) -> None:  # a result in view: its texts (no refs)
        if k < first:
            return
        r, y = res[order[k - first]], item.rect[1]
        if dyn.serp_cards:
            _dress_card(item, r.title, r.url.split("/")[0], r.snippet, y)
            return
        item.children.append(ui.label((16, y + 8, 344, y + 26), r.url.split("/")[0], size=12, fg=ui.SUBTLE))
        item.children.append(ui.label((16, y + 26, 344, y + 50), r.title, size=16, fg=(26, 13, 171)))
        item.children.append(ui.label((16, y + 50, 344, y + 90), r.snippet, size=13, fg=ui.SUBTLE, lines=2))
        item.children.append(ui.box((16, y + 95, 344, y + 96), ui.FAINT))

    return ui.scroll_list(key, rect, rows, offsets, fill=ui.WHITE, dress=dress)


def _dress_card(item: ui.View, title: str, site: str, snippet: str, y: float) -> None:
    """A redesigned result card: the title first, then a round site badge with the site, the snippet."""
    item.children.append(ui.label((16, y + 10, 344, y + 34), title, size=16, fg=(26, 13, 171), bold=True))
    item.children.append(ui.box((16, y + 40, 36, y + 60), (232, 240, 254), radius=10))
    item.children.append(ui.label((16, y + 40, 36, y + 60), site[:1].upper(), size=11, fg=ui.BLUE, align="center", bold=True))
    item.children.append(ui.label((44, y + 40, 344, y + 60), site, size=12, fg=ui.SUBTLE))
    item.children.append(ui.label((16, y + 66, 344, y + 110), snippet, size=13, fg=ui.SUBTLE, lines=2))
    item.children.append(ui.box((16, y + 119, 344, y + 120), ui.FAINT))


class GoogleApp(App, key="google", label="Google", icon="google", color=ui.WHITE):
    """The Google search app (opened by the home screen's search widget)."""

    def init_state(self) -> None:
        self.mode = "feed"  # feed | search | results
        self.query = ""
        self.history: list[str] = []

    def screen(self) -> str:
        if self.mode == "results" and self.focused is None:
            return "results"
        return "suggestions" if self.mode in ("search", "results") and self.focused else self.mode

    def start_search(self) -> None:
        self.mode = "search"
        self.fields["q"] = ""
        self.focus("q")

    def show_feed(self) -> None:
        """The app's start page (the feed), nothing focused."""
        self.mode = "feed"
        self.blur()

    def on_launch(self) -> None:
        if self.mode == "search" and self.focused is None:
            self.mode = "feed"

    def submit(self, name: str) -> None:
        q = self.fields.get("q", "").strip()
        if q:
            self.run_query(q)

    def run_query(self, q: str) -> None:
        if self.mode == "results" and self.query:
            self.history.append(self.query)
        self.query = q
        self.fields["q"] = q
        self.mode = "results"
        self.blur()
        self.phone.scroll.pop("gapp.serp", None)

    def back(self) -> bool:
        if self.mode == "results" and self.history:
            self.query = self.history.pop()
            self.fields["q"] = self.query
            return True
        if self.mode != "feed":
            self.mode = "feed"
            return True
        return False

    def _open(self, url: str) -> None:
        browser = self.phone.apps["chrome"]
        self.phone.launch("chrome")
        browser.open_url(url)  # type: ignore[attr-defined]

    def build(self) -> list[ui.View]:
        phone = self.phone
        views: list[ui.View] = [ui.box((0, ui.TOP, 360, ui.BOTTOM), ui.WHITE)]
        editing = self.focused == "q"
        if self.mode == "feed":
            views += google_start(ui.TOP + 60, self.start_search, ref="gapp.box")
            for i, (t, s) in enumerate(
                (
                    ("Trending: weather this weekend", "Discover · 2h"),
                    ("Top stories for you", "News · 5h"),
                    ("Recipes to try tonight", "Food · 1d"),
                )
            ):
                y = ui.TOP + 210 + 120 * i
                card = ui.box((16, y, 344, y + 108), ui.BG, radius=16, ref=f"gapp.feed.{i}")
                card.children.append(ui.label((32, y + 16, 328, y + 60), t, size=17, lines=2))
                card.children.append(ui.label((32, y + 70, 328, y + 92), s, size=12, fg=ui.SUBTLE))
                views.append(card)
            return views
        top = ui.box((0, ui.TOP, 360, ui.TOP + 64), ui.WHITE, blocker=True)
        top.children.append(self.back_button((4, ui.TOP + 10, 48, ui.TOP + 54), ref="gapp.back", color=ui.SUBTLE))
        top.children.append(
            self.text_input(
                (52, ui.TOP + 8, 348, ui.TOP + 56), "q", placeholder="Search or type URL", ref="gapp.box", filled=True
            )
        )
        if self.mode == "results" and not editing:
            views.append(
                results_list(self.query, phone.dyn, (0, ui.TOP + 108, 360, ui.BOTTOM), phone.scroll, self._open, key="gapp.serp")
            )
            tabs = ui.box((0, ui.TOP + 64, 360, ui.TOP + 108), ui.WHITE, blocker=True)
            for i, t in enumerate(("All", "Images", "News", "Videos", "Maps")):
                tabs.children.append(
                    tab_label(
                        (12 + 68 * i, ui.TOP + 70, 76 + 68 * i, ui.TOP + 102),
                        t,
                        i == 0,
                        ui.BLUE,
                        ref=f"gapp.tab.{t.lower()}",
                        on_tap=(lambda: None) if i else None,
                    )
                )
            tabs.children.append(ui.box((12, ui.TOP + 104, 76, ui.TOP + 107), ui.BLUE))
            views.append(tabs)
        else:
            views.append(suggestion_list(ui.TOP + 68, self.fields.get("q", ""), self.run_query, ref="gapp.sugg"))
        views.append(top)
        return views
