"""A Chrome-like browser: URL bar, tabs (normal and incognito, windows), tab switcher (close one, close
all), menu, history, bookmarks (add the page) and downloads."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from urllib.parse import quote_plus

from digirl.sim import ui
from digirl.sim.apps.base import App, app_bar
from digirl.sim.apps.web import PAGE_TOP, Page, page_views, parse_url

__all__ = ["Browser", "Tab", "normalize_url"]

_DOMAIN = re.compile(r"^[a-z0-9-]+(\.[a-z0-9-]+)+(/\S*)?$")
_INCOG: ui.Color = (53, 54, 58)


def normalize_url(text: str) -> str | None:
    """``https://www.Costco.com/`` → ``costco.com``; ``None`` when ``text`` is not a web address."""
    t = text.strip().lower()
    t = re.sub(r"^[a-z]+://", "", t)
    t = re.sub(r"^www\.", "", t).rstrip("/")
    return t if _DOMAIN.match(t) else None


@dataclass
class Tab:
    tid: int
    incognito: bool = False
    window: int = 0
    history: list[str] = field(default_factory=lambda: ["newtab"])
    idx: int = 0
    #: Domain whose cookie banner covers the page, if any.
    cookie: str = ""
    #: Whether a full-screen interstitial ad covers the page (closed by its ✕).
    interstitial: bool = False
    #: Opened during this episode (not part of the initial state).
    new: bool = False

    @property
    def url(self) -> str:
        return self.history[self.idx]

    @property
    def empty(self) -> bool:
        return self.history == ["newtab"]


def _menu_over(scrim: ui.View, items: tuple[tuple[str, str, Callable[[], None]], ...]) -> ui.View:
    """Chrome's overflow menu (the page's or the tab switcher's): one row per ``(text, ref suffix, action)``, on ``scrim``."""
    panel = ui.box(
        (150, ui.TOP + 6, 354, ui.TOP + 14 + 48 * len(items)),
        ui.WHITE,
        radius=8,
        border=ui.FAINT,
        blocker=True,
        ref="chrome.menu.panel",
    )
    for i, (text, ref, fn) in enumerate(items):
        y = ui.TOP + 10 + 48 * i
        panel.children.append(
            ui.View((150, y, 354, y + 48), kind="list_item", text=text, ref=f"chrome.menu.{ref}", on_tap=fn, size=15)
        )
    scrim.children.append(panel)
    return scrim


class Browser(App, key="chrome", label="Chrome", icon="chrome", color=ui.WHITE):
    def init_state(self) -> None:
        self.tabs: list[Tab] = [Tab(0, history=["google.com"])]
        self.cur = 0
        self.mode = "page"  # page | urlbar | tabs | menu | tabs_menu | history | bookmarks | downloads
        self.tab_group_incognito = False
        self.windows = 1
        self.seen_cookie: set[str] = set()
        self.visited: list[str] = []
        self.bookmarks: list[str] = ["google.com", "wikipedia.org"]
        #: Items added to a shopping site's cart: (site, product id, the search query, result rank).
        self.cart: list[tuple[str, str, str, int]] = []
        #: Orders placed at a shop's checkout (newer surfaces): (site, the product ids it held).
        self.orders: list[tuple[str, tuple[str, ...]]] = []

    # ---------------------------------------------------------------- state
    @property
    def tab(self) -> Tab:
        return next(t for t in self.tabs if t.tid == self.cur)

    @property
    def page(self) -> Page:
        return parse_url(self.tab.url)

    @property
    def bg(self) -> ui.Color:  # type: ignore[override]
        return _INCOG if self.tab.incognito else ui.WHITE

    def screen(self) -> str:
        if self.mode != "page":
            return self.mode
        return self.page.kind

    def state(self) -> dict[str, object]:
        t = self.tab
        return {
            "screen": self.screen(),
            "url": t.url,
            "incognito": t.incognito,
            "tabs": len(self.tabs),
            "cookie": t.cookie,
            "bookmarks": list(self.bookmarks),
            "cart": [list(x) for x in self.cart],
            "orders": [[site, list(pids)] for site, pids in self.orders],
            "focused": self.focused,
            "fields": dict(self.fields),
        }

    def keyboard_action(self) -> str:
        return "enter" if self.focused == "url" else "search"

    # ---------------------------------------------------------------- navigation
    def open_url(self, url: str) -> None:
        """Navigate the current tab to ``url`` (a domain/path or any text to search for)."""
        norm = normalize_url(url)
        if norm is None:
            norm = f"google.com/search?q={quote_plus(url.strip())}"
        t = self.tab
        t.history = [*t.history[: t.idx + 1], norm]
        t.idx += 1
        self._arrive(norm)
        self.visited.append(norm)

    def _arrive(self, url: str, *, load: bool = True) -> None:
        t = self.tab
        self.mode = "page"
        self.blur()
        page = parse_url(url)
        self.fields["gq"] = page.query
        self.fields["site"] = page.query
        t.cookie = ""
        t.interstitial = False
        dyn = self.phone.dyn
        if load and page.kind != "newtab":
            self.phone.start_loading(dyn.load_steps())
        if page.domain and page.kind not in ("google", "serp", "newtab") and page.domain not in self.seen_cookie:
            self.seen_cookie.add(page.domain)
            if dyn.chance(dyn.cookie_p):
                t.cookie = page.domain
                self.phone.interruptions.append("cookie")
        if page.kind not in ("google", "serp", "newtab") and dyn.chance(dyn.interstitial_p):
            t.interstitial = True
            self.phone.interruptions.append("interstitial")
        self.phone.scroll.pop(f"page:{url}", None)

    def google_search(self, q: str) -> None:
        if q.strip():
            self.open_url(f"google.com/search?q={quote_plus(q.strip())}")

    def site_search_text(self, q: str) -> None:
        page = self.page
        if q.strip() and page.domain:
            self.open_url(f"{page.domain}/search?q={quote_plus(q.strip())}")

    def site_search(self) -> None:
        self.site_search_text(self.fields.get("site", ""))

    def submit(self, name: str) -> None:
        text = self.fields.get(name, "").strip()
        if not text:
            return
        if name == "url":
            self.open_url(text)
        elif name == "gq":
            self.google_search(text)
        elif name == "site":
            self.site_search_text(text)

    def edit_url(self) -> None:
        self.mode = "urlbar"
        self.fields["url"] = "" if self.tab.url == "newtab" else self.tab.url
        self.focus("url", select_all=True)

    def new_tab(self, incognito: bool = False, window: bool = False) -> None:
        tid = max(t.tid for t in self.tabs) + 1
        if window:
            self.windows += 1
        self.tabs.append(Tab(tid, incognito=incognito, window=self.windows - 1 if window else self.tab.window, new=True))
        self.cur = tid
        self.mode = "page"
        self.blur()

    def close_tab(self, tid: int) -> None:
        self.tabs = [t for t in self.tabs if t.tid != tid]
        if not self.tabs:
            self.tabs = [Tab(tid + 1, new=True)]
        if self.cur == tid or all(t.tid != self.cur for t in self.tabs):
            self.cur = self.tabs[-1].tid

    def close_all_tabs(self) -> None:
        """Close every tab of the group the switcher shows (a fresh new tab remains when none is left)."""
        inc = self.tab_group_incognito
        for t in [t for t in self.tabs if t.incognito == inc]:
            self.close_tab(t.tid)
        self.mode = "tabs"

    def add_bookmark(self) -> None:
        url = self.tab.url
        if url != "newtab" and url not in self.bookmarks:
            self.bookmarks.append(url)
        self.mode = "page"

    def add_to_cart(self, page: Page) -> None:
        """The product page's "Add to cart": the item goes in that site's cart (once)."""
        item = (page.domain, page.pid, page.query, page.rank)
        if not any(x[:2] == item[:2] for x in self.cart):
            self.cart.append(item)

    def place_order(self, site: str) -> None:
        """The checkout's "Place order": that site's cart becomes an order, and its confirmation shows."""
        pids = tuple(pid for s, pid, _q, _r in self.cart if s == site)
        if pids:
            self.orders.append((site, pids))
            self.cart = [x for x in self.cart if x[0] != site]
        self.open_url(f"{site}/order")

    def in_cart(self, site: str) -> int:
        return sum(1 for x in self.cart if x[0] == site)

    def back(self) -> bool:
        if self.mode == "tabs_menu":
            self.mode = "tabs"
            return True
        if self.mode != "page":
            self.mode = "page"
            return True
        t = self.tab
        if t.idx > 0:
            t.idx -= 1
            self._arrive(t.url, load=False)
            return True
        return False

    # ---------------------------------------------------------------- views
    def loading_header(self) -> list[ui.View]:
        return [self._toolbar()]

    def _toolbar(self) -> ui.View:
        t = self.tab
        inc = t.incognito
        bg = _INCOG if inc else ui.WHITE
        fg = ui.WHITE if inc else ui.TEXT
        bar = ui.box((0, ui.TOP, 360, ui.TOP + 56), bg, blocker=True, ref="chrome.toolbar")
        host = "" if t.url == "newtab" else t.url.split("/")[0]
        url = ui.View(
            (8, ui.TOP + 8, 256, ui.TOP + 48),
            kind="input",
            ref="chrome.url",
            text=host,
            placeholder="Search or type web address",
            fill=(80, 81, 86) if inc else (241, 243, 244),
            radius=20,
            fg=fg,
            icon="lock" if host else "search",
            on_tap=self.edit_url,
            size=14,
        )
        bar.children.append(url)
        n = len([x for x in self.tabs if x.incognito == inc])
        tabs_btn = ui.View(
            (262, ui.TOP + 10, 300, ui.TOP + 46),
            kind="button",
            text=str(min(n, 99)),
            ref="chrome.tabs",
            border=fg,
            radius=6,
            fg=fg,
            size=12,
            align="center",
            bold=True,
            fill=bg,
            on_tap=self._show_tabs,
            placeholder="Switch tabs",
        )
        bar.children.append(tabs_btn)
        bar.children.append(self._menu_button("chrome.menu", fg))
        return bar

    def _menu_button(self, ref: str, fg: ui.Color) -> ui.View:
        """The ⋮ at the right of the toolbar and of the tab switcher's bar: it opens the menu."""
        return ui.icon_button(
            (308, ui.TOP + 8, 352, ui.TOP + 48), "more", self._show_menu, ref=ref, desc="More options", color=fg
        )

    def _show_tabs(self) -> None:
        self.mode = "tabs"
        self.tab_group_incognito = self.tab.incognito

    def _show_menu(self) -> None:
        self.mode = "tabs_menu" if self.mode == "tabs" else "menu"

    def _switch(self, tid: int) -> None:
        self.cur = tid
        self.mode = "page"

    def build(self) -> list[ui.View]:
        if self.mode == "urlbar":
            return self._urlbar()
        if self.mode in ("tabs", "tabs_menu"):
            views = self._tabs()
            if self.mode == "tabs_menu":
                views.append(self._tabs_menu())
            return views
        if self.mode == "history":
            return self._history()
        if self.mode in ("bookmarks", "downloads"):
            return self._saved(self.mode)
        views = page_views(self, self.page)
        t = self.tab
        if t.cookie:
            views.append(self._cookie_banner(t.cookie))
        if t.interstitial:
            views.append(self._interstitial())
        views.append(self._toolbar())
        if self.mode == "menu":
            views.append(self._menu())
        return views

    def _interstitial(self) -> ui.View:
        """A full-page ad after a page load: its ✕ closes it, the ad itself leads elsewhere."""

        def close() -> None:
            self.tab.interstitial = False

        ad = ui.box((0, PAGE_TOP, 360, ui.BOTTOM), (32, 33, 36), blocker=True, ref="interstitial", kind="dialog")
        ad.children += [
            ui.label((16, PAGE_TOP + 14, 200, PAGE_TOP + 34), "Advertisement", size=12, fg=(189, 193, 198)),
            ui.icon_button(
                (304, PAGE_TOP + 6, 348, PAGE_TOP + 50), "close", close, ref="interstitial.close", desc="Close ad", color=ui.WHITE
            ),
            ui.box((40, PAGE_TOP + 90, 320, PAGE_TOP + 330), (66, 133, 244), radius=18),
            ui.label(
                (40, PAGE_TOP + 350, 320, PAGE_TOP + 390),
                "Play Galaxy Quest now",
                size=22,
                bold=True,
                fg=ui.WHITE,
                align="center",
            ),
            ui.label(
                (40, PAGE_TOP + 394, 320, PAGE_TOP + 420), "Free to install · 4.6★", size=14, fg=(189, 193, 198), align="center"
            ),
            ui.button(
                (60, PAGE_TOP + 440, 300, PAGE_TOP + 488),
                "Install",
                lambda: self.open_url("ad.example/game"),
                ref="interstitial.ad",
                radius=24,
            ),
        ]
        return ad

    def _cookie_banner(self, domain: str) -> ui.View:
        scrim = ui.box((0, PAGE_TOP, 360, ui.BOTTOM), ui.SCRIM, blocker=True, ref="cookie.scrim")
        card = ui.box((0, ui.BOTTOM - 250, 360, ui.BOTTOM), ui.WHITE, blocker=True, ref="cookie", kind="dialog")
        card.children.append(
            ui.label((20, ui.BOTTOM - 236, 340, ui.BOTTOM - 206), "We value your privacy", size=18, bold=True, ref="cookie.title")
        )
        card.children.append(
            ui.label(
                (20, ui.BOTTOM - 202, 340, ui.BOTTOM - 136),
                f"{domain} uses cookies to improve your experience and show personalised ads. You can accept or reject them.",
                size=13,
                fg=ui.SUBTLE,
                lines=3,
            )
        )

        def close() -> None:
            self.tab.cookie = ""

        card.children.append(
            ui.button(
                (20, ui.BOTTOM - 124, 340, ui.BOTTOM - 80),
                self.phone.dyn.text("accept", "Accept all"),
                close,
                ref="cookie.dismiss",
                radius=22,
            )
        )
        card.children.append(
            ui.button(
                (20, ui.BOTTOM - 72, 340, ui.BOTTOM - 28), "Reject all", close, ref="cookie.reject", style="outlined", radius=22
            )
        )
        scrim.children.append(card)
        return scrim

    def _menu(self) -> ui.View:
        scrim = ui.box((0, ui.TOP, 360, ui.BOTTOM), None, blocker=True, ref="chrome.menu.scrim", on_tap=self._close_menu)
        items = (
            ("New tab", "new_tab", lambda: self.new_tab()),
            ("New Incognito tab", "new_incognito_tab", lambda: self.new_tab(incognito=True)),
            ("New window", "new_window", lambda: self.new_tab(window=True)),
            ("New Incognito window", "new_incognito_window", lambda: self.new_tab(incognito=True, window=True)),
            ("History", "history", self._show_history),
            ("Bookmarks", "bookmarks", lambda: setattr(self, "mode", "bookmarks")),
            ("Downloads", "downloads", lambda: setattr(self, "mode", "downloads")),
            ("Settings", "settings", self._close_menu),
            ("Add bookmark", "add_bookmark", self.add_bookmark),
        )
        return _menu_over(scrim, items)

    def _close_menu(self) -> None:
        self.mode = "page"

    def _show_history(self) -> None:
        self.mode = "history"

    def _urlbar(self) -> list[ui.View]:
        inc = self.tab.incognito
        bg = _INCOG if inc else ui.WHITE
        views = [ui.box((0, ui.TOP, 360, ui.BOTTOM), bg)]
        bar = ui.box((0, ui.TOP, 360, ui.TOP + 56), bg, blocker=True)
        bar.children.append(
            self.back_button((4, ui.TOP + 8, 44, ui.TOP + 48), ref="chrome.url.back", color=ui.WHITE if inc else ui.TEXT)
        )
        text = self.fields.get("url", "")
        bar.children.append(
            self.text_input(
                (48, ui.TOP + 8, 352, ui.TOP + 48),
                "url",
                placeholder="Search or type web address",
                ref="chrome.url",
                filled=True,
                radius=20,
                icon="globe",
                size=14,
            )
        )
        views.append(bar)
        typed = "" if "url" in self.selected else text.strip()
        sugg: list[tuple[str, str, str]] = []
        if typed:
            norm = normalize_url(typed)
            if norm:
                sugg.append((norm, "globe", norm))
            sugg.append((f"{typed} - Google Search", "search", typed))
        for u in reversed(self.visited):
            if (not typed or typed in u) and all(u != s[2] for s in sugg) and len(sugg) < 6:
                sugg.append((u, "history", u))
        for i, (title, icon, target) in enumerate(sugg):
            views.append(
                ui.list_row(
                    ui.TOP + 60 + 56 * i,
                    56,
                    title,
                    ref=f"chrome.sugg.{i}",
                    icon=icon,
                    icon_color=ui.SUBTLE,
                    on_tap=partial(self.open_url, target),
                    divider=False,
                )
            )
        return views

    def _tabs(self) -> list[ui.View]:
        inc = self.tab_group_incognito
        bg = (32, 33, 36) if inc else (241, 243, 244)
        fg = ui.WHITE if inc else ui.TEXT
        views = [ui.box((0, ui.TOP, 360, ui.BOTTOM), bg, ref="chrome.switcher")]
        rows = []
        shown = [t for t in self.tabs if t.incognito == inc]
        for i, t in enumerate(shown):
            x0, y = 12 + 172 * (i % 2), 8 + 196 * (i // 2)
            card = ui.box(
                (x0, y, x0 + 164, y + 184),
                ui.WHITE if not inc else (60, 64, 67),
                radius=12,
                ref=f"chrome.tab.{i}",
                on_tap=partial(self._switch, t.tid),
                kind="list_item",
            )
            title = "New tab" if t.url == "newtab" else t.url.split("/")[0]
            card.children.append(ui.label((x0 + 10, y + 6, x0 + 124, y + 34), title, size=13, fg=fg))
            card.children.append(
                ui.icon_button(
                    (x0 + 126, y + 2, x0 + 162, y + 38),
                    "close",
                    partial(self.close_tab, t.tid),
                    ref=f"chrome.tab.{i}.close",
                    desc="Close tab",
                    color=fg,
                )
            )
            card.children.append(
                ui.box((x0 + 6, y + 40, x0 + 158, y + 178), (250, 250, 250) if not inc else (80, 81, 86), radius=8)
            )
            rows.append(card)
        views.append(ui.scroll_list("chrome.tabs", (0, ui.TOP + 56, 360, ui.BOTTOM), rows, self.phone.scroll))
        bar = ui.box((0, ui.TOP, 360, ui.TOP + 56), bg, blocker=True, ref="chrome.switcher.bar")
        bar.children.append(
            ui.icon_button(
                (8, ui.TOP + 8, 48, ui.TOP + 48),
                "plus",
                lambda: self.new_tab(incognito=inc),
                ref="chrome.switcher.new",
                desc="New tab",
                color=fg,
            )
        )
        bar.children.append(
            ui.View(
                (96, ui.TOP + 10, 176, ui.TOP + 46),
                kind="tab",
                text="Tabs",
                ref="chrome.switcher.normal",
                fg=fg,
                bold=not inc,
                align="center",
                on_tap=lambda: self._group(False),
            )
        )
        bar.children.append(
            ui.View(
                (184, ui.TOP + 10, 264, ui.TOP + 46),
                kind="icon",
                icon="incognito",
                icon_color=fg,
                ref="chrome.switcher.incognito",
                placeholder="Incognito tabs",
                on_tap=lambda: self._group(True),
            )
        )
        bar.children.append(self._menu_button("chrome.switcher.menu", fg))
        views.append(bar)
        return views

    def _group(self, incognito: bool) -> None:
        self.tab_group_incognito = incognito

    def _history(self) -> list[ui.View]:
        views: list[ui.View] = [ui.box((0, ui.TOP, 360, ui.BOTTOM), ui.WHITE)]
        rows = [
            ui.list_row(
                56 * i, 56, u, ref=f"chrome.history.{i}", icon="globe", icon_color=ui.SUBTLE, on_tap=partial(self.open_url, u)
            )
            for i, u in enumerate(reversed(self.visited))
        ]
        if not rows:
            rows = [ui.label((16, 20, 344, 60), "No history yet", size=15, fg=ui.SUBTLE, align="center")]
        top = ui.TOP + 56
        if self.phone.surfaces:  # the newer History page can clear itself
            views.append(
                ui.button(
                    (16, top + 8, 220, top + 48), "Clear browsing data", self.visited.clear, ref="chrome.history.clear",
                    style="text", size=14,
                )
            )  # fmt: skip
            top += 56
        views.append(ui.scroll_list("chrome.history", (0, top, 360, ui.BOTTOM), rows, self.phone.scroll))
        views.append(app_bar("History", back=self.phone.key_back, ref="chrome.history.bar"))
        return views

    def _tabs_menu(self) -> ui.View:
        scrim = ui.box((0, ui.TOP, 360, ui.BOTTOM), None, blocker=True, ref="chrome.menu.scrim", on_tap=self._show_tabs)
        items = (
            ("New tab", "new_tab", lambda: self.new_tab(incognito=self.tab_group_incognito)),
            ("Close all tabs", "close_all", self.close_all_tabs),
            ("Settings", "settings", self._show_tabs),
        )
        return _menu_over(scrim, items)

    def _saved(self, which: str) -> list[ui.View]:
        views: list[ui.View] = [ui.box((0, ui.TOP, 360, ui.BOTTOM), ui.WHITE)]
        items: list[tuple[str, str, str, Callable[[], None] | None]]
        if which == "bookmarks":
            items = [(u.split("/")[0], u, "bookmark", partial(self.open_url, u)) for u in self.bookmarks]
        else:
            files = ("boarding_pass.pdf", "IMG_2041.jpg", "recipe_lasagna.pdf", "invoice_0524.pdf")
            items = [(f, f"{(len(f) * 37) % 900 + 40} KB · May {20 + i}", "download", None) for i, f in enumerate(files)]
        rows = [
            ui.list_row(
                64 * i, 64, t, sub=sub, ref=f"chrome.{which}.{i}", icon=icon, icon_color=ui.SUBTLE, on_tap=fn or (lambda: None)
            )
            for i, (t, sub, icon, fn) in enumerate(items)
        ]
        if not rows:
            rows = [ui.label((16, 20, 344, 60), f"No {which} yet", size=15, fg=ui.SUBTLE, align="center")]
        views.append(ui.scroll_list(f"chrome.{which}", (0, ui.TOP + 56, 360, ui.BOTTOM), rows, self.phone.scroll))
        views.append(app_bar(which.title(), back=self.phone.key_back, ref=f"chrome.{which}.bar"))
        return views
