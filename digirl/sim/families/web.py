"""Chrome families: close tabs, bookmark a site, open the bookmarks / history / downloads page, a shop's cart."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from digirl.core.actions import Action
from digirl.sim.apps.browser import Tab
from digirl.sim.content import terms_in
from digirl.sim.family_registry import builtin_family
from digirl.sim.goals import TaskContext, site_domain
from digirl.sim.intents import Intent
from digirl.sim.plans import ExpertStep, in_app, to_site

if TYPE_CHECKING:
    import numpy as np

    from digirl.sim.phone import Phone


def _chrome(phone: Phone) -> Any:
    return phone.apps["chrome"]


# ---- close tabs ----------------------------------------------------------------------------
def _closed(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    left = {t.tid for t in _chrome(phone).tabs}
    tabs, cur = ctx.initial["tabs"], ctx.initial["current"]
    if intent.get("scope", "all") == "all":
        return not (left & set(tabs))
    return cur not in left and bool(left & (set(tabs) - {cur}))


def _three_tabs(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    if intent.get("scope", "all") not in ("all", "current"):
        raise ValueError(f"scope must be all or current, got {intent.get('scope')!r}")
    b = _chrome(phone)
    first = b.tabs[0].history
    b.tabs = [Tab(0, history=list(first)), Tab(1, history=["wikipedia.org"]), Tab(2, history=["espn.com"])]
    b.cur = int(rng.integers(3))
    ctx.initial.update(tabs=[0, 1, 2], current=b.cur)


@builtin_family(
    "close_tabs", "phone", predicate=_closed, setup=_three_tabs, doc="the tabs open at the start (or the current one) are closed"
)
@in_app("chrome")
def _close_plan(e: ExpertStep) -> Action:
    b, scope = _chrome(e.phone), e.intent.get("scope", "all")
    if b.mode == "tabs_menu":
        return (e.goto("chrome.menu.close_all") if scope == "all" else None) or Action.back()
    if b.mode == "tabs":
        if b.tab_group_incognito:
            return e.goto("chrome.switcher.normal") or Action.back()
        if scope == "all":
            return e.goto("chrome.switcher.menu") or Action.back()
        shown = [t for t in b.tabs if not t.incognito]
        for i, t in enumerate(shown):
            if t.tid == e.ctx.initial["current"]:
                return e.goto(f"chrome.tab.{i}.close") or Action.back()
        return Action.back()
    if b.mode != "page":
        return Action.back()
    return e.goto("chrome.tabs") or Action.back()


# ---- bookmarks -----------------------------------------------------------------------------
def _target_domain(intent: Intent, ctx: TaskContext) -> str:
    return site_domain(intent.get("site")) if intent.get("site") else str(ctx.initial["page"])


def _bookmarked(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    want = _target_domain(intent, ctx)
    old = set(ctx.initial["bookmarks"])
    return any(u not in old and u.split("/")[0] == want for u in _chrome(phone).bookmarks)


def _bookmark_setup(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    b = _chrome(phone)
    if not intent.get("site"):  # "Bookmark this page": the tab shows a site to bookmark
        if b.tabs[0].history == ["newtab"]:
            b.tabs[0].history = ["nytimes.com"]
        ctx.initial["page"] = b.tabs[0].url.split("/")[0]
    want = _target_domain(intent, ctx)
    b.bookmarks = [u for u in b.bookmarks if u.split("/")[0] != want]
    ctx.initial["bookmarks"] = list(b.bookmarks)


@builtin_family("bookmark_site", "phone", predicate=_bookmarked, setup=_bookmark_setup, doc="that site is in Chrome's bookmarks")
def _bookmark_plan(e: ExpertStep) -> Action:
    domain, b = _target_domain(e.intent, e.ctx), _chrome(e.phone)
    if e.phone.fg == "chrome" and b.mode == "menu" and b.page.domain == domain:
        return e.goto("chrome.menu.add_bookmark") or Action.back()
    step = to_site(e, domain)
    if step is not None:
        return step
    if b.focused is not None or b.mode != "page":
        return Action.back()
    return e.goto("chrome.menu") or Action.back()


# ---- Chrome pages ----------------------------------------------------------------------------
def _page_open(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    return phone.fg == "chrome" and _chrome(phone).mode == intent.get("page")


@builtin_family("browser_page", "phone", predicate=_page_open, doc="Chrome shows its bookmarks / history / downloads")
@in_app("chrome")
def _page_plan(e: ExpertStep) -> Action:
    b, page = _chrome(e.phone), e.intent.get("page")
    if b.mode == "menu":
        return e.goto(f"chrome.menu.{page}") or Action.back()
    if b.mode != "page" or b.focused is not None:
        return Action.back()
    return e.goto("chrome.menu") or Action.back()


def _some_history(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    """Chrome has history to clear (a few sites visited before the episode)."""
    b = _chrome(phone)
    sites = ["nytimes.com", "wikipedia.org", "reddit.com", "espn.com", "weather.com"]
    for i in rng.permutation(len(sites))[: 2 + int(rng.integers(3))]:
        b.visited.append(sites[int(i)])


def _history_cleared(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    return not _chrome(phone).visited


@builtin_family("clear_history", "phone", predicate=_history_cleared, setup=_some_history, doc="Chrome's history is cleared")
@in_app("chrome")
def _clear_history_plan(e: ExpertStep) -> Action:
    b = _chrome(e.phone)
    if b.mode == "history":
        return e.goto("chrome.history.clear") or Action.back()
    if b.mode == "menu":
        return e.goto("chrome.menu.history") or Action.back()
    if b.mode != "page" or b.focused is not None:
        return Action.back()
    return e.goto("chrome.menu") or Action.back()


# ---- the first result of a web search ------------------------------------------------------------
def _first_result_url(phone: Phone, query: str) -> str | None:
    """Where the search's first organic result leads (normalized as the browser keeps it)."""
    from digirl.sim.apps.browser import normalize_url
    from digirl.sim.content import web_results

    res = web_results(query, phone.dyn.world_version)
    if not res:
        return None
    return normalize_url(res[phone.dyn.order(len(res), "serp", query.lower())[0]].url)


def _result_open(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    if phone.fg != "chrome" or phone.loading > 0:
        return False
    t = _chrome(phone).tab
    want = _first_result_url(phone, intent.get("query"))
    return want is not None and t.history[t.idx] == want


@builtin_family("open_result", "phone", predicate=_result_open, doc="the browser shows the search's first result")
def _open_result_plan(e: ExpertStep) -> Action:
    from digirl.sim.goals import query_terms, shown_search_query
    from digirl.sim.plans import PLANS

    shown = shown_search_query(e.phone)
    if shown is not None and terms_in(query_terms(e.intent), shown):
        return e.goto("result.0") or Action.scroll("up")
    if e.phone.fg == "chrome" and _chrome(e.phone).mode == "page":
        return Action.back()  # another page: back to the results (or start again)
    return PLANS["web_search"](e)


# ---- a shop's cart ---------------------------------------------------------------------------
def _cart_shown(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    b = _chrome(phone)
    return bool(phone.fg == "chrome" and b.mode == "page" and b.page.kind == "cart" and b.page.domain == intent.get("site"))


@builtin_family("shop_cart", "phone", predicate=_cart_shown, doc="the shop's cart page is shown")
def _cart_page_plan(e: ExpertStep) -> Action:
    site = e.intent.get("site")
    step = to_site(e, site)
    if step is not None:
        return step
    if _chrome(e.phone).focused is not None:
        return Action.back()
    return e.goto(f"{site}.cart") or Action.back()
