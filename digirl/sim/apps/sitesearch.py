"""Search on a website that is not one of the six shops (reddit.com, amazon.com, wikipedia.org,
any other site; issue 42), shown when ``phone.surfaces`` is on: a search row under the site's
header (the shops' field and button, so the browser's ``site`` field, enter and suggestions work as
there) and a results page ``<domain>/search?q=<query>`` (page kind ``site_results``) listing the
site's pages about the query. With the flag off the sites' pages are the pinned ones."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from digirl.sim import ui
from digirl.sim.apps.base import letter_tile
from digirl.sim.apps.search import suggestion_list
from digirl.sim.content import stable_rng, title_case

if TYPE_CHECKING:
    from digirl.sim.apps.browser import Browser
    from digirl.sim.apps.web import Page

__all__ = ["SEARCH_ROW_H", "search_extra", "search_row", "site_result_titles", "site_results_views"]

#: Height of the search row under a site's header.
SEARCH_ROW_H = 58


def search_row(b: Browser, y: float, accent: ui.Color, query: str = "") -> ui.View:
    """The site's search field and button at content y (a blocker, like the shops' search bar)."""
    row = ui.box((0, y, 360, y + SEARCH_ROW_H), ui.BG, blocker=True, ref="site.searchbar")
    row.children.append(
        ui.input_field(
            (12, y + 7, 300, y + 51),
            b.fields.get("site", query) if b.focused == "site" else query,
            placeholder=f"Search {b.page.domain}",
            focused=b.focused == "site",
            on_tap=b.tap_field("site"),
            ref="site.search",
            on_clear=b.clear_field("site"),
            radius=8,
            fill=ui.WHITE,
            icon="",
        )
    )
    row.children.append(
        ui.icon_button(
            (304, y + 7, 348, y + 51),
            "search",
            b.site_search,
            ref="site.search_button",
            desc="Search",
            color=ui.WHITE,
            fill=accent,
            radius=8,
        )
    )
    return row


def search_extra(b: Browser, y: float, accent: ui.Color) -> tuple[float, list[ui.View]]:
    """Where a site's page body starts below its header (at y) and the views above it: with
    ``phone.surfaces``, the search row and, while its field is focused, the suggestions under it;
    otherwise none (the pinned page; the interstitial ad has no search either)."""
    if not b.phone.surfaces or b.page.domain == "ad.example":
        return y, []
    out = [search_row(b, y, accent)]
    if b.focused == "site":
        out.append(suggestion_list(y + SEARCH_ROW_H, b.fields.get("site", ""), b.site_search_text, ref="site.sugg"))
    return y + SEARCH_ROW_H, out


def site_result_titles(domain: str, query: str, world_version: int = 0, n: int = 6) -> list[tuple[str, str]]:
    """(title, meta) of the site's pages about ``query``: each names the query, as a site search's do."""
    r = stable_rng("site-search", domain, query.lower().strip(), world_version)
    q = title_case(query.strip())
    forms = (
        "{q}",
        "{q}: everything you need to know",
        "Best {q} of the year",
        "Ask the community: {q}",
        "{q} - reviews and discussion",
        "A beginner's guide to {q}",
        "{q} news and updates",
        "Top 10 {q}",
    )
    picks = r.sample(forms, n)
    return [(f.format(q=q), f"{domain} · {r.randint(1, 30)} days ago") for f in picks]


def site_results_views(b: Browser, page: Page, top: float) -> list[ui.View]:
    """The results page's views; ``top`` is where the page (under the browser's toolbar) starts."""
    head, color = _header(page.domain, top)
    bar = search_row(b, top + 56, color, page.query)
    body = top + 56 + SEARCH_ROW_H
    rows: list[ui.View] = [
        ui.label((16, 4, 344, 30), f"Results for “{page.query}”", size=13, fg=ui.SUBTLE, ref="site.results.title")
    ]
    y = 34.0
    for i, (title, meta) in enumerate(site_result_titles(page.domain, page.query, b.phone.dyn.world_version)):
        item = ui.box((0, y, 360, y + 76), ui.WHITE, ref=f"site.result.{i}", on_tap=partial(_noop), kind="list_item")
        item.children.append(ui.label((16, y + 8, 344, y + 48), title, size=16, lines=2, fg=ui.TEXT))
        item.children.append(ui.label((16, y + 50, 344, y + 70), meta, size=12, fg=ui.SUBTLE))
        item.children.append(ui.box((16, y + 75, 344, y + 76), ui.FAINT))
        rows.append(item)
        y += 76
    views: list[ui.View] = [
        ui.scroll_list(f"page:{page.url}", (0, body, 360, ui.BOTTOM), rows, b.phone.scroll, fill=ui.WHITE),
        head,
        bar,
    ]
    if b.focused == "site":
        views.append(suggestion_list(body, b.fields.get("site", ""), b.site_search_text, ref="site.sugg"))
    return views


def _header(domain: str, top: float) -> tuple[ui.View, ui.Color]:
    """The site's header as its front page draws it (reddit's own; any other site's by its colour)."""
    if domain == "reddit.com":
        orange: ui.Color = (255, 69, 0)
        head = ui.box((0, top, 360, top + 56), ui.WHITE, blocker=True, ref="site.header")
        head.children.append(letter_tile((12, top + 12, 44, top + 44), "r", orange, radius=16, size=18, bold=True))
        head.children.append(ui.label((52, top, 200, top + 56), "reddit", size=22, bold=True))
        return head, orange
    color = stable_rng("sitecolor", domain).choice(((33, 33, 33), (0, 82, 147), (140, 20, 30), (20, 110, 70), (90, 40, 120)))
    head = ui.box((0, top, 360, top + 56), color, blocker=True, ref="site.header")
    head.children.append(ui.label((16, top, 300, top + 56), domain.split(".")[0].upper(), size=22, fg=ui.WHITE, bold=True))
    return head, color


def _noop() -> None:
    """A result opens nothing further (the site's article pages are not modelled)."""
