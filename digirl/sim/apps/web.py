"""Websites shown in the browser: google.com, the six shopping sites, reddit.com and any other site.

Pages are a function of the URL (plus the episode's dynamics): ``costco.com``,
``costco.com/search?q=tv``, ``costco.com/product/<pid>?q=tv&rank=0``, ``reddit.com``, ``<any>.com``.
With the newer surfaces a shop's results can be sorted (``costco.com/search?q=tv&sort=price_asc``,
:data:`SORTS`) and its cart leads to a checkout (``costco.com/checkout``) and an order confirmation
(``costco.com/order``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, quote_plus, urlsplit

from digirl.sim import ui
from digirl.sim.apps import sitesearch
from digirl.sim.apps.base import FIELD_FILL, letter_tile
from digirl.sim.apps.cart import cart_rows, checkout_rows, order_rows
from digirl.sim.apps.search import google_logo, google_start, results_list, suggestion_list
from digirl.sim.content import Product, products, site_headlines, stable_rng
from digirl.sim.intents import SHOP_SITES

if TYPE_CHECKING:
    from digirl.sim.apps.browser import Browser

__all__ = ["SITE_STYLES", "SORTS", "Page", "page_views", "parse_url", "shop_results"]

PAGE_TOP = 24 + 56  # below the browser toolbar


@dataclass(frozen=True)
class Page:
    """A parsed URL: ``kind`` is newtab, google, serp, shop_home, shop_results, product, cart, checkout,
    order, reddit, site or site_results; ``sort`` is a shop's result order (a key of :data:`SORTS`)."""

    url: str
    kind: str
    domain: str = ""
    query: str = ""
    pid: str = ""
    rank: int = -1
    sort: str = ""


#: A shop's result orders (newer surfaces): URL key → the chip's label ("" is the site's own order).
SORTS: dict[str, str] = {"": "Featured", "price_asc": "Price: low", "price_desc": "Price: high", "rating": "Top rated"}


@dataclass(frozen=True)
class SiteStyle:
    name: str
    header: ui.Color
    logo: ui.Color
    accent: ui.Color
    box_in_header: bool
    logo2: ui.Color | None = None


SITE_STYLES: dict[str, SiteStyle] = {
    "costco.com": SiteStyle("COSTCO", ui.WHITE, (0, 93, 170), (0, 93, 170), False, (227, 25, 55)),
    "bestbuy.com": SiteStyle("BEST BUY", (0, 70, 190), (255, 224, 0), (0, 70, 190), True),
    "target.com": SiteStyle("Target", ui.WHITE, (204, 0, 0), (204, 0, 0), False),
    "walmart.com": SiteStyle("Walmart", (0, 113, 220), ui.WHITE, (0, 113, 220), True, (255, 194, 32)),
    "newegg.com": SiteStyle("newegg", (25, 33, 48), (247, 140, 0), (247, 140, 0), True),
    "ebay.com": SiteStyle("ebay", ui.WHITE, (229, 50, 56), (0, 100, 210), False, (0, 100, 210)),
    "amazon.com": SiteStyle("amazon", (19, 25, 33), ui.WHITE, (255, 153, 0), True, (255, 153, 0)),
}


@functools.lru_cache(maxsize=4096)  # a page is rebuilt (and its URL parsed) on every step; Page is frozen
def parse_url(url: str) -> Page:
    """Parse a normalized URL (no scheme, no www.) into a :class:`Page`."""
    if url in ("", "newtab"):
        return Page("newtab", "newtab")
    parts = urlsplit("//" + url)
    domain = (parts.hostname or "").lower()
    path = parts.path.rstrip("/")
    qs = parse_qs(parts.query)
    q = qs.get("q", [""])[0]
    sort = qs.get("sort", [""])[0]
    sort = sort if sort in SORTS else ""
    if domain == "google.com":
        return Page(url, "serp" if path == "/search" and q else "google", domain, q)
    if domain in SITE_STYLES:
        if path == "/search" and q:
            return Page(url, "shop_results", domain, q, sort=sort)
        if path in ("/cart", "/checkout", "/order"):
            return Page(url, path[1:], domain)
        if path.startswith("/product/"):
            try:
                rank = int(qs.get("rank", ["-1"])[0])
            except ValueError:
                rank = -1
            return Page(url, "product", domain, q, path.split("/")[2], rank, sort)
        return Page(url, "shop_home", domain)
    if path == "/search" and q and domain:  # another site's own search (:mod:`.sitesearch`)
        return Page(url, "site_results", domain, q)
    if domain == "reddit.com":
        return Page(url, "reddit", domain)
    return Page(url, "site", domain)


def shop_results(browser: Browser, site: str, query: str, sort: str = "") -> list[Product]:
    """The organic results in the order this episode shows them, or sorted by ``sort`` (:data:`SORTS`;
    ties keep the episode's order)."""
    dyn = browser.phone.dyn
    items = products(site, query, dyn.world_version)
    shown = [items[j] for j in dyn.order(len(items), "shop", site, query.lower())]
    if sort == "price_asc":
        shown.sort(key=lambda p: p.price)
    elif sort == "price_desc":
        shown.sort(key=lambda p: -p.price)
    elif sort == "rating":
        shown.sort(key=lambda p: (-p.rating, -p.reviews))
    return shown


def page_views(b: Browser, page: Page) -> list[ui.View]:
    """The views of a page (content area below the browser toolbar)."""
    builder = {
        "newtab": _newtab,
        "google": _google,
        "serp": _serp,
        "shop_home": _shop,
        "shop_results": _shop,
        "product": _shop,
        "cart": _shop,
        "checkout": _shop,
        "order": _shop,
        "reddit": _reddit,
        "site_results": _site_results,
    }.get(page.kind, _site)
    return builder(b, page)


# ---------------------------------------------------------------- new tab and google
def _newtab(b: Browser, page: Page) -> list[ui.View]:
    tab = b.tab
    if tab.incognito:
        v = ui.box((0, PAGE_TOP, 360, ui.BOTTOM), (53, 54, 58), ref="ntp.incognito")
        v.children.append(
            ui.View(
                (150, PAGE_TOP + 60, 210, PAGE_TOP + 120),
                kind="icon",
                icon="incognito",
                icon_color=(200, 200, 205),
                element=False,
            )
        )
        v.children.append(
            ui.label(
                (24, PAGE_TOP + 140, 336, PAGE_TOP + 172),
                "You've gone Incognito",
                size=20,
                fg=ui.WHITE,
                align="center",
                ref="ntp.incognito.title",
            )
        )
        v.children.append(
            ui.label(
                (32, PAGE_TOP + 180, 328, PAGE_TOP + 260),
                "Others who use this device won't see your activity, so you can browse more privately.",
                size=13,
                fg=(189, 193, 198),
                lines=3,
                align="center",
            )
        )
        return [v]
    views = [ui.box((0, PAGE_TOP, 360, ui.BOTTOM), ui.WHITE, ref="ntp")]
    views += google_start(PAGE_TOP + 50, b.edit_url, ref="ntp.box", placeholder="Search or type web address")
    for i, site in enumerate(("youtube.com", "reddit.com", "ebay.com", "espn.com")):
        cx = 54 + 84 * i
        tile = ui.View(
            (cx - 38, PAGE_TOP + 200, cx + 38, PAGE_TOP + 290),
            kind="list_item",
            ref=f"ntp.tile.{i}",
            placeholder=site.split(".")[0].title(),
            on_tap=partial(b.open_url, site),
        )
        tile.children.append(
            letter_tile(
                (cx - 24, PAGE_TOP + 206, cx + 24, PAGE_TOP + 254), site[0].upper(), FIELD_FILL, radius=24, size=20, fg=ui.BLUE
            )
        )
        tile.children.append(
            ui.label((cx - 40, PAGE_TOP + 258, cx + 40, PAGE_TOP + 280), site.split(".")[0].title(), size=12, align="center")
        )
        views.append(tile)
    return views


def _google(b: Browser, page: Page) -> list[ui.View]:
    views = [ui.box((0, PAGE_TOP, 360, ui.BOTTOM), ui.WHITE, ref="google.home")]
    views += google_logo(180, PAGE_TOP + 70)
    focused = b.focused == "gq"
    views.append(b.text_input((20, PAGE_TOP + 140, 340, PAGE_TOP + 188), "gq", placeholder="Search", ref="google.box"))
    if focused:
        views.append(suggestion_list(PAGE_TOP + 192, b.fields.get("gq", ""), b.google_search, ref="google.sugg"))
    return views


def _serp(b: Browser, page: Page) -> list[ui.View]:
    focused = b.focused == "gq"
    views = [
        results_list(
            page.query, b.phone.dyn, (0, PAGE_TOP + 64, 360, ui.BOTTOM), b.phone.scroll, b.open_url, key="serp:" + page.url
        )
    ]
    top = ui.box((0, PAGE_TOP, 360, PAGE_TOP + 64), ui.WHITE, blocker=True)
    top.children.append(ui.View((8, PAGE_TOP + 12, 48, PAGE_TOP + 52), kind="icon", icon="google", element=False))
    top.children.append(
        b.text_input(
            (52, PAGE_TOP + 8, 348, PAGE_TOP + 56),
            "gq",
            placeholder="Search",
            ref="google.box",
            text=b.fields.get("gq", page.query),
        )
    )
    views.append(top)
    if focused:
        views.append(suggestion_list(PAGE_TOP + 60, b.fields.get("gq", ""), b.google_search, ref="google.sugg"))
    return views


# ---------------------------------------------------------------- shopping sites
def _logo(style: SiteStyle, x: float, y: float, h: float) -> ui.View:
    if style.name == "ebay":
        v = ui.View((x, y, x + 80, y + h), kind="logo", placeholder="ebay", element=True)
        for i, (ch, col) in enumerate(zip("ebay", ((229, 50, 56), (0, 100, 210), (245, 175, 2), (134, 184, 23)))):
            v.children.append(
                ui.View(
                    (x + 17 * i, y, x + 17 * i + 17, y + h),
                    kind="text",
                    text=ch,
                    fg=col,
                    size=24,
                    bold=True,
                    align="center",
                    element=False,
                )
            )
        return v
    if style.name == "BEST BUY":
        return ui.View(
            (x, y + 6, x + 92, y + h - 6),
            kind="text",
            text=style.name,
            fill=style.logo,
            fg=(0, 0, 0),
            size=15,
            bold=True,
            align="center",
            radius=3,
        )
    v = ui.View((x, y, x + 140, y + h), kind="text", text=style.name, fg=style.logo, size=22, bold=True)
    if style.logo2 is not None:
        v.children.append(ui.box((x, y + h - 6, x + 100, y + h - 3), style.logo2))
    return v


def _site_header(b: Browser, site: str, query: str) -> tuple[list[ui.View], float]:
    """Header + search box; returns (views, y where the page body starts)."""
    style = SITE_STYLES[site]
    in_header = style.box_in_header != bool(b.phone.dyn.site_layout.get(site, 0))
    y0 = PAGE_TOP
    h = 104 if in_header else 52
    header = ui.box((0, y0, 360, y0 + h), style.header, blocker=True, ref=f"{site}.header")
    header.children.append(_logo(style, 16, y0 + 6, 40))
    dark = sum(style.header) < 400
    icon_col = ui.WHITE if dark else ui.TEXT
    header.children.append(
        ui.icon_button((268, y0 + 6, 308, y0 + 46), "person", None, ref=f"{site}.account", desc="Account", color=icon_col)
    )
    header.children.append(
        ui.icon_button(
            (312, y0 + 6, 352, y0 + 46),
            "cart",
            partial(b.open_url, f"{site}/cart"),
            ref=f"{site}.cart",
            desc="Cart",
            color=icon_col,
        )
    )
    n_cart = b.in_cart(site)
    if n_cart:  # the count badge a site shows on its cart icon once something is in it
        badge = ui.box((336, y0 + 6, 354, y0 + 24), (204, 0, 0), radius=9, ref=f"{site}.cart.count")
        badge.children.append(ui.label((336, y0 + 6, 354, y0 + 24), str(n_cart), size=11, fg=ui.WHITE, bold=True, align="center"))
        header.children.append(badge)
    views = [header]
    by = y0 + 54 if in_header else y0 + h + 6
    area = header if in_header else ui.box((0, y0 + h, 360, y0 + h + 58), ui.BG, blocker=True, ref=f"{site}.searchbar")
    area.children.append(
        b.text_input(
            (12, by, 300, by + 44),
            "site",
            placeholder=f"Search {style.name.title()}",
            ref="site.search",
            text=b.fields.get("site", query),
            radius=8,
            icon="",
        )
    )
    area.children.append(
        ui.icon_button(
            (304, by, 348, by + 44),
            "search",
            b.site_search,
            ref="site.search_button",
            desc="Search",
            color=ui.WHITE,
            fill=style.accent,
            radius=8,
        )
    )
    if not in_header:
        views.append(area)
    return views, y0 + (h if in_header else h + 58)


def _stars(rating: float) -> str:
    full = round(rating)
    return "★" * full + "☆" * (5 - full)


def _product_row(y: float, rank: int, on_tap: Callable[[], None], height: int = 116) -> ui.View:
    """A product's row without its contents (:func:`_dress_product` adds them when in view)."""
    return ui.box((0, y, 360, y + height), ui.WHITE, ref=f"product.{rank}", on_tap=on_tap, kind="list_item")


def _dress_card(row: ui.View, p: Product, style: SiteStyle) -> None:
    """A redesigned product card (a site update): price first, title, rating; the picture on the right."""
    y = row.rect[1]
    row.children.append(ui.label((16, y + 10, 236, y + 38), f"${p.price:,.2f}", size=20, bold=True, fg=style.accent))
    row.children.append(ui.label((16, y + 42, 236, y + 84), p.title, size=14, lines=2))
    row.children.append(ui.label((16, y + 90, 236, y + 110), f"{p.rating}★ · {p.reviews:,} ratings", size=12, fg=ui.SUBTLE))
    row.children.append(
        ui.box(
            (248, y + 12, 348, y + 112),
            _image_color(p.pid),
            radius=12,
            children=[ui.View((274, y + 38, 322, y + 86), kind="icon", icon="image", icon_color=(150, 156, 170), element=False)],
        )
    )
    row.children.append(ui.box((16, y + 131, 344, y + 132), ui.FAINT))


def _sort_bar(b: Browser, page: Page, y: float, accent: ui.Color) -> ui.View:
    """The results' sort chips (newer surfaces): the chosen order is filled, each chip reloads the results."""
    bar = ui.box((0, y, 360, y + 44), ui.WHITE, ref="site.sort")
    base = f"{page.domain}/search?q={quote_plus(page.query)}"
    for i, (key, label) in enumerate(SORTS.items()):
        x = 8 + 87 * i
        bar.children.append(
            ui.button(
                (x, y + 6, x + 83, y + 38),
                label,
                partial(b.open_url, base + (f"&sort={key}" if key else "")),
                ref=f"site.sort.{key or 'featured'}",
                style="filled" if key == page.sort else "outlined",
                radius=16,
                color=accent,
                size=12,
            )
        )
    return bar


def _filter_bar(y: float, accent: ui.Color) -> ui.View:
    """The redesigned results page's sort and filter chips (they change nothing here)."""
    bar = ui.box((0, y, 360, y + 44), ui.WHITE, ref="site.filters")
    for i, chip in enumerate(("Sort", "Filter", "Brand", "Price")):
        x = 12 + 84 * i
        bar.children.append(
            ui.button(
                (x, y + 6, x + 76, y + 38), chip, lambda: None, ref=f"site.filter.{i}", style="outlined", radius=16, color=accent
            )
        )
    return bar


@functools.lru_cache(maxsize=4096)
def _image_color(pid: str) -> ui.Color:
    return stable_rng("img", pid).choice(((224, 231, 255), (255, 236, 224), (226, 245, 232), (240, 240, 240)))


def _dress_product(row: ui.View, p: Product, style: SiteStyle) -> None:
    """The picture, title, rating and price of a product row (views without refs)."""
    y = row.rect[1]
    col = _image_color(p.pid)
    row.children.append(
        ui.box(
            (12, y + 10, 108, y + 106),
            col,
            radius=8,
            children=[ui.View((36, y + 34, 84, y + 82), kind="icon", icon="image", icon_color=(150, 156, 170), element=False)],
        )
    )
    row.children.append(ui.label((120, y + 8, 348, y + 50), p.title, size=14, lines=2))
    row.children.append(ui.label((120, y + 52, 348, y + 72), f"{_stars(p.rating)} ({p.reviews:,})", size=12, fg=(240, 150, 0)))
    row.children.append(
        ui.label(
            (120, y + 74, 348, y + 100),
            f"${p.price:,.2f}",
            size=18,
            bold=True,
            fg=style.accent if style.name in ("Target", "newegg") else ui.TEXT,
        )
    )
    row.children.append(ui.box((12, y + 115, 348, y + 116), ui.FAINT))


def _shop_home_rows(
    b: Browser, page: Page, style: SiteStyle, y: float, tall: int, rows: list[ui.View], shown: dict[int, Product]
) -> None:
    """A shop's home page below its header: deals banner, categories, best sellers (``shown``: row → product)."""
    site = page.domain
    dyn = b.phone.dyn
    banner = ui.box((12, y, 348, y + 120), style.accent, radius=14, ref=f"{site}.banner")
    banner.children.append(ui.label((28, y + 16, 330, y + 50), "Deals of the week", size=22, fg=ui.WHITE, bold=True))
    banner.children.append(ui.label((28, y + 56, 330, y + 80), "Save big on top brands", size=14, fg=ui.WHITE))
    rows.append(banner)
    y += 136
    rows.append(ui.label((16, y, 344, y + 28), "Shop by category", size=17, bold=True))
    y += 36
    for i, cat in enumerate(("TVs", "Laptops", "Phones", "Kitchen", "Toys", "Furniture")):
        cx, cy = 12 + 114 * (i % 3), y + 60 * (i // 3)
        rows.append(
            ui.button(
                (cx, cy, cx + 106, cy + 50),
                cat,
                partial(b.open_url, f"{site}/search?q={quote_plus(cat.lower())}"),
                ref=f"{site}.cat.{i}",
                style="tonal",
                radius=10,
                color=style.accent,
            )
        )
    y += 130
    for i, p in enumerate(products(site, "best sellers", dyn.world_version, n=4)):
        shown[len(rows)] = p
        rows.append(_product_row(y, 100 + i, partial(b.open_url, f"{site}/product/{p.pid}?q=best+sellers&rank=-1"), tall))
        y += tall


def _shop_results_rows(
    b: Browser, page: Page, style: SiteStyle, y: float, tall: int, rows: list[ui.View], shown: dict[int, Product]
) -> None:
    """A shop's search results: title, filters (card layout), a sponsored ad, the products (``shown``: row → product)."""
    site = page.domain
    dyn = b.phone.dyn
    rows.append(ui.label((16, y, 344, y + 30), f'Results for "{page.query}"', size=15, bold=True, ref="site.results_title"))
    y += 34
    if dyn.shop_cards:
        rows.append(_filter_bar(y, style.accent))
        y += 52
    if b.phone.surfaces:
        rows.append(_sort_bar(b, page, y, style.accent))
        y += 48
    if dyn.has_ad("shop", site, page.query.lower()):
        ad = ui.box(
            (12, y, 348, y + 64), (255, 248, 225), radius=10, ref="ad.shop", on_tap=lambda: b.open_url("ad.example/promo")
        )
        ad.children.append(ui.label((24, y + 6, 336, y + 24), "Sponsored", size=11, fg=ui.SUBTLE))
        ad.children.append(
            ui.label((24, y + 26, 336, y + 54), f"Top pick: {page.query.title()} Ultra — 30% off", size=15, fg=ui.BLUE)
        )
        rows.append(ad)
        y += 76
    sort = f"&sort={page.sort}" if page.sort else ""
    for rank, p in enumerate(shop_results(b, site, page.query, page.sort)):
        url = f"{site}/product/{p.pid}?q={quote_plus(page.query)}&rank={rank}{sort}"
        shown[len(rows)] = p
        rows.append(_product_row(y, rank, partial(b.open_url, url), tall))
        y += tall


def _product_rows(b: Browser, page: Page, style: SiteStyle, y: float, rows: list[ui.View]) -> None:
    """A product page: picture, title, rating, price, seller, Add to cart and Buy now."""
    site = page.domain
    dyn = b.phone.dyn
    item = next((x for x in products(site, page.query or "best sellers", dyn.world_version) if x.pid == page.pid), None)
    if item is None:
        rows.append(ui.label((16, y + 40, 344, y + 80), "Item not found", size=18, align="center"))
        return
    rows.append(
        ui.box(
            (40, y + 8, 320, y + 248),
            (236, 239, 244),
            radius=12,
            ref="product.image",
            children=[ui.View((140, y + 88, 220, y + 168), kind="icon", icon="image", icon_color=(150, 156, 170), element=False)],
        )
    )
    y += 260
    rows.append(ui.label((16, y, 344, y + 50), item.title, size=17, lines=2, ref="product.title"))
    rows.append(
        ui.label(
            (16, y + 52, 344, y + 72),
            f"{_stars(item.rating)} {item.rating} ({item.reviews:,} reviews)",
            size=13,
            fg=(240, 150, 0),
        )
    )
    rows.append(ui.label((16, y + 76, 344, y + 108), f"${item.price:,.2f}", size=24, bold=True, ref="product.price"))
    rows.append(ui.label((16, y + 110, 344, y + 130), item.seller, size=12, fg=ui.SUBTLE))
    rows.append(
        ui.button(
            (16, y + 140, 344, y + 188),
            "Added to cart" if any(x[:2] == (site, item.pid) for x in b.cart) else dyn.text("add_to_cart", "Add to cart"),
            partial(b.add_to_cart, page),
            ref="product.add_to_cart",
            color=style.accent,
            radius=24,
        )
    )
    rows.append(
        ui.button(
            (16, y + 196, 344, y + 244),
            "Buy now",
            lambda: None,
            ref="product.buy",
            style="outlined",
            color=style.accent,
            radius=24,
        )
    )


def _shop(b: Browser, page: Page) -> list[ui.View]:
    site = page.domain
    style = SITE_STYLES[site]
    dyn = b.phone.dyn
    head, body_y = _site_header(b, site, page.query)
    rect = (0, body_y, 360, ui.BOTTOM)
    rows: list[ui.View] = []
    shown: dict[int, Product] = {}  # row index → product, dressed only when in view
    y = float(dyn.list_offset)
    tall = 132 if dyn.shop_cards else 116
    if page.kind == "shop_home":
        _shop_home_rows(b, page, style, y, tall, rows, shown)
    elif page.kind == "shop_results":
        _shop_results_rows(b, page, style, y, tall, rows, shown)
    elif page.kind == "cart":
        rows += cart_rows(b, site, y, style.accent)
    elif page.kind == "checkout":
        rows += checkout_rows(b, site, y, style.accent)
    elif page.kind == "order":
        rows += order_rows(b, site, y, style.accent)
    else:
        _product_rows(b, page, style, y, rows)

    def dress(i: int, row: ui.View) -> None:
        if i in shown:
            (_dress_card if dyn.shop_cards else _dress_product)(row, shown[i], style)

    views: list[ui.View] = [ui.scroll_list(f"page:{page.url}", rect, rows, b.phone.scroll, fill=ui.WHITE, dress=dress)]
    views += head
    if b.focused == "site" and b.fields.get("site", "").strip():
        views.append(suggestion_list(body_y, b.fields.get("site", ""), b.site_search_text, ref="site.sugg"))
    return views


# ---------------------------------------------------------------- reddit and any other site
def _reddit(b: Browser, page: Page) -> list[ui.View]:
    head = ui.box((0, PAGE_TOP, 360, PAGE_TOP + 52), ui.WHITE, blocker=True, ref="reddit.header")
    head.children.append(letter_tile((12, PAGE_TOP + 10, 44, PAGE_TOP + 42), "r", (255, 69, 0), radius=16, size=18, bold=True))
    head.children.append(ui.label((52, PAGE_TOP, 200, PAGE_TOP + 52), "reddit", size=22, bold=True, ref="reddit.logo"))
    rows = []
    y = 8.0
    subs = ("r/news", "r/pics", "r/AskReddit", "r/technology", "r/movies", "r/gaming", "r/todayilearned")
    for i, (title, meta) in enumerate(site_headlines("reddit.com", b.phone.dyn.world_version)):
        card = ui.box((8, y, 352, y + 104), ui.WHITE, radius=8, border=ui.FAINT, ref=f"reddit.post.{i}", on_tap=lambda: None)
        card.children.append(
            ui.label((20, y + 8, 340, y + 26), f"{subs[i % len(subs)]} · Posted {meta.split(' · ')[0]}", size=12, fg=ui.SUBTLE)
        )
        card.children.append(ui.label((20, y + 28, 340, y + 72), title, size=15, lines=2))
        card.children.append(
            ui.label((20, y + 76, 340, y + 96), f"⇧ {(i * 937) % 20000 + 120}  ·  {meta.split(' · ')[1]}", size=12, fg=ui.SUBTLE)
        )
        rows.append(card)
        y += 112
    body, extra = sitesearch.search_extra(b, PAGE_TOP + 52, (255, 69, 0))  # none on the pinned screens
    return [
        ui.scroll_list(f"page:{page.url}", (0, body, 360, ui.BOTTOM), rows, b.phone.scroll, fill=(218, 224, 230)),
        head,
        *extra,
    ]


def _site(b: Browser, page: Page) -> list[ui.View]:
    r = stable_rng("sitecolor", page.domain)
    color = r.choice(((33, 33, 33), (0, 82, 147), (140, 20, 30), (20, 110, 70), (90, 40, 120)))
    name = page.domain.split(".")[0].upper() if page.domain != "ad.example" else "Special offer"
    head = ui.box((0, PAGE_TOP, 360, PAGE_TOP + 56), color, blocker=True, ref="site.header")
    head.children.append(ui.label((16, PAGE_TOP, 300, PAGE_TOP + 56), name, size=22, fg=ui.WHITE, bold=True, ref="site.logo"))
    head.children.append(
        ui.icon_button((312, PAGE_TOP + 8, 352, PAGE_TOP + 48), "menu", None, ref="site.menu", desc="Menu", color=ui.WHITE)
    )
    rows = []
    y = 8.0
    for i, (title, meta) in enumerate(site_headlines(page.domain, b.phone.dyn.world_version)):
        item = ui.box((0, y, 360, y + 84), ui.WHITE, ref=f"site.article.{i}", on_tap=lambda: None)
        item.children.append(ui.label((16, y + 8, 344, y + 54), title, size=16, lines=2, bold=i == 0))
        item.children.append(ui.label((16, y + 56, 344, y + 76), meta, size=12, fg=ui.SUBTLE))
        item.children.append(ui.box((16, y + 83, 344, y + 84), ui.FAINT))
        rows.append(item)
        y += 84
    body, extra = sitesearch.search_extra(b, PAGE_TOP + 56, color)  # none on the pinned screens
    return [ui.scroll_list(f"page:{page.url}", (0, body, 360, ui.BOTTOM), rows, b.phone.scroll, fill=ui.WHITE), head, *extra]


def _site_results(b: Browser, page: Page) -> list[ui.View]:
    return sitesearch.site_results_views(b, page, PAGE_TOP)


def is_shop(domain: str) -> bool:
    return domain in SHOP_SITES
