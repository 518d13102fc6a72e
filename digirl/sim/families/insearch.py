"""``app_search`` inside Gmail and Settings (:mod:`digirl.sim.apps.insearch`): success and the
expert's steps; :mod:`.compound` hands these two apps over here. And ``site_search`` (``site``,
``query``): a website other than the six shops shows its own results page for the query
(:mod:`digirl.sim.apps.sitesearch`).

- Gmail: success when Gmail shows the results of a *submitted* search whose query holds the query's
  terms (a mail opened from them, the search screen or its suggestions are not results).
- Settings: success when Settings' search page is shown and its field holds the query's terms (the
  list filters as one types, as Contacts' does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from digirl.core.actions import Action
from digirl.sim.content import terms_in
from digirl.sim.family_registry import builtin_family
from digirl.sim.goals import TaskContext, browser_page, query_terms, site_domain
from digirl.sim.intents import Intent
from digirl.sim.plans import ExpertStep, to_site

if TYPE_CHECKING:
    from digirl.sim.phone import Phone

__all__ = ["IN_APP_SEARCH", "in_app_search_plan", "in_app_searched"]

#: Apps whose search this module covers.
IN_APP_SEARCH = ("gmail", "settings")


def in_app_searched(phone: Phone, intent: Intent) -> bool:
    app = intent.get("app")
    if phone.fg != app:
        return False
    a: Any = phone.apps[app]
    if app == "gmail":
        return bool(a.screen() == "results" and terms_in(query_terms(intent), a.search[1]))
    return bool(a.top[0] == "search" and terms_in(query_terms(intent), a.fields.get("q", "")))


def in_app_search_plan(e: ExpertStep) -> Action:
    app = e.intent.get("app")
    if not e.phone.surfaces:  # the pinned screens' search bars take no tap
        return Action.impossible()
    step = e.open_app(app)
    if step is not None:
        return step
    a: Any = e.phone.apps[app]
    q = e.intent.get("query")
    if app == "gmail":
        screen = a.screen()
        if screen == "search":
            return e.type_into(a, "q", "gmail.search.query", q)
        if screen == "results":  # a search for something else: edit the query
            return e.goto("gmail.results.query") or Action.back()
        if screen in ("inbox", "folder"):
            return e.goto("gmail.search") or Action.back()
        return Action.back()
    if a.top[0] == "search":
        return e.type_into(a, "q", "settings.search.query", q, submit=False)
    if a.top[0] != "main":
        return Action.back()
    return e.goto("settings.search") or Action.back()


# ---------------------------------------------------------------- site_search
def _site_searched(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    page = browser_page(phone)
    return bool(
        page is not None
        and page.kind == "site_results"
        and page.domain == site_domain(intent.get("site"))
        and terms_in(query_terms(intent), page.query)
    )


@builtin_family(
    "site_search", "phone", predicate=_site_searched, doc="the site (not one of the shops) shows its results for the query"
)
def _site_search_plan(e: ExpertStep) -> Action:
    if not e.phone.surfaces:  # the pinned sites have no search row
        return Action.impossible()
    step = to_site(e, site_domain(e.intent.get("site")))
    if step is not None:
        return step
    b: Any = e.phone.apps["chrome"]
    q = e.intent.get("query")
    if b.focused == "site":
        return e.type_into(b, "site", "site.search", q)
    if b.focused is not None:
        return Action.back()
    return e.goto("site.search") or Action.back()
