"""Success predicates of the AitW families, evaluated on the phone's state (never on pixels or on
the actions taken), and :func:`check`, which evaluates any registered family's predicate (the
public face is :mod:`digirl.sim.predicates`, which loads every built-in family first).

Each predicate is ``fn(phone, intent, ctx) -> bool``; :data:`PREDICATES` maps the General and Web
Shopping families to theirs. The phone families and user-defined ones bring their predicates in
their :class:`~digirl.sim.families.TaskFamily` (:mod:`digirl.sim.families`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from digirl.sim.content import channel_videos, key_terms, norm_name, terms_in
from digirl.sim.family_registry import get_family, keyed
from digirl.sim.intents import Intent, parse_time

if TYPE_CHECKING:
    from digirl.sim.apps.browser import Browser
    from digirl.sim.apps.web import Page
    from digirl.sim.phone import Phone

__all__ = [
    "PREDICATES",
    "TaskContext",
    "browser_page",
    "check",
    "destination_terms",
    "query_terms",
    "shown_search_query",
    "site_domain",
    "wanted_notifications",
]


@dataclass
class TaskContext:
    """What a predicate needs besides the phone: the intent and the task's initial state."""

    intent: Intent
    #: For app_notifications/toggle: the switch state when the episode started.
    initial_notifications: bool | None = None
    #: What a family's setup recorded about the initial state (tabs open, contacts, a level, ...).
    initial: dict[str, Any] = field(default_factory=dict)


def query_terms(intent: Intent, slot: str = "query") -> list[str]:
    """The terms that must appear in a submitted query: ``key_terms`` slot, else the query's content words."""
    explicit = intent.get("key_terms").strip()
    if explicit:
        return explicit.lower().split()
    return key_terms(intent.get(slot))


@functools.lru_cache(maxsize=4096)  # predicates and the expert ask on every step
def site_domain(site: str) -> str:
    """``"https://www.Costco.com/"`` → ``costco.com``; a bare name gets ``.com``."""
    from digirl.sim.apps.browser import normalize_url

    s = normalize_url(site) or norm_name(site)
    s = s.split("/")[0]
    return s if "." in s else f"{s}.com"


# ---------------------------------------------------------------- helpers on the phone
def browser_page(phone: Phone) -> Page | None:
    """The page the browser shows, when Chrome is in front, loaded, and no URL/search editing is open."""
    if phone.fg != "chrome" or phone.loading > 0:
        return None
    b: Browser = phone.apps["chrome"]  # type: ignore[assignment]
    if b.mode != "page" or b.focused is not None:
        return None
    return b.page


def shown_search_query(phone: Phone) -> str | None:
    """The query of a search-engine results page on screen (None for suggestions or other screens)."""
    if phone.loading > 0:
        return None
    if phone.fg == "google":
        g = phone.apps["google"]
        if g.screen() == "results":
            return str(getattr(g, "query", ""))
        return None
    page = browser_page(phone)
    if page is not None and page.kind == "serp":
        return page.query
    return None


# ---------------------------------------------------------------- predicates
#: The AitW families' predicates, by family (each function is keyed by the families it checks).
PREDICATES: dict[str, Callable[[Phone, Intent, TaskContext], bool]] = {}


@keyed(PREDICATES, "web_search")
def _web_search(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    q = shown_search_query(phone)
    return q is not None and terms_in(query_terms(intent), q)


@keyed(PREDICATES, "open_app")
def _open_app(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    from digirl.sim.phone import resolve_app

    return phone.fg == resolve_app(intent.get("app")) and phone.loading == 0


def _app_info_open(phone: Phone, intent: Intent) -> str | None:
    from digirl.sim.phone import resolve_app

    if phone.fg != "settings":
        return None
    top = getattr(phone.apps["settings"], "top", ("", ""))
    key = resolve_app(intent.get("app"))
    return key if top == ("app_info", key) else None


@keyed(PREDICATES, "app_settings")
def _app_settings(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    return _app_info_open(phone, intent) is not None


def wanted_notifications(intent: Intent, ctx: TaskContext) -> bool:
    state = intent.get("state", "toggle").lower()
    if state in ("on", "enable", "enabled", "true"):
        return True
    if state in ("off", "disable", "disabled", "false"):
        return False
    return not bool(ctx.initial_notifications if ctx.initial_notifications is not None else True)


@keyed(PREDICATES, "app_notifications")
def _app_notifications(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    key = _app_info_open(phone, intent)
    return key is not None and phone.notifications.get(key, True) == wanted_notifications(intent, ctx)


@keyed(PREDICATES, "install_app")
def _install_app(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    return phone.is_installed(intent.get("app"))


@keyed(PREDICATES, "youtube_play")
def _youtube_play(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    if phone.fg != "youtube":
        return False
    v = getattr(phone.apps["youtube"], "playing", None)
    if v is None or norm_name(v.channel) != norm_name(intent.get("channel")):
        return False
    if intent.get("kind", "new").lower() == "latest":
        return bool(v.vid == channel_videos(intent.get("channel"), phone.dyn.world_version)[0].vid)
    return True


def _maps_screen(phone: Phone, screen: str) -> object | None:
    if phone.fg != "maps" or phone.loading > 0:
        return None
    m = phone.apps["maps"]
    if m.screen() != screen or m.focused is not None:
        return None
    return m


@keyed(PREDICATES, "maps_search")
def _maps_search(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    m = _maps_screen(phone, "results")
    return m is not None and terms_in(query_terms(intent), str(getattr(m, "query", "")))


def destination_terms(intent: Intent) -> list[str]:
    from digirl.sim.apps.maps import place_query

    return key_terms(place_query(intent.get("destination")))


@keyed(PREDICATES, "maps_directions")
def _maps_directions(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    m = _maps_screen(phone, "directions")
    if m is None:
        return False
    place = m.top[1]  # type: ignore[attr-defined]
    mode = intent.get("mode")  # newer tasks: the travel mode asked for
    return terms_in(destination_terms(intent), f"{place.category} {place.name}") and (not mode or m.travel == mode)  # type: ignore[attr-defined]


def alarm_matches(a: Any, intent: Intent) -> bool:
    """An alarm has what a ``set_alarm`` intent asks for besides its time: the label (case aside) and
    exactly the repeat days, when they are asked for."""
    label, days = intent.get("label"), intent.get("days")
    if label and a.label.strip().lower() != label.strip().lower():
        return False
    return not days or tuple(int(d) for d in days) == tuple(a.days)


@keyed(PREDICATES, "set_alarm")
def _set_alarm(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    h, m = parse_time(intent.get("time"))
    alarms = phone.apps["clock"].alarms  # type: ignore[attr-defined]
    return any(a.enabled and a.hour == h and a.minute == m and alarm_matches(a, intent) for a in alarms)


@keyed(PREDICATES, "browser_tab")
def _browser_tab(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    page = browser_page(phone)
    if page is None or page.kind != "newtab":
        return False
    t = phone.apps["chrome"].tab  # type: ignore[attr-defined]
    if not (t.new and t.empty):
        return False
    mode = intent.get("mode", "tab").lower()
    incognito = mode.startswith("incognito")
    if t.incognito != incognito:
        return False
    return t.window > 0 if mode.endswith("window") else True


@keyed(PREDICATES, "check_email")
def _check_email(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    return phone.fg == "gmail" and phone.apps["gmail"].screen() == "inbox"


@keyed(PREDICATES, "open_site", "shop_goto")
def _front_page(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    page = browser_page(phone)
    if page is None:
        return False
    return page.domain == site_domain(intent.get("site")) and page.kind in ("shop_home", "reddit", "site", "google")


def _shop_results(phone: Phone, intent: Intent) -> Page | None:
    page = browser_page(phone)
    if page is None or page.domain != site_domain(intent.get("site")):
        return None
    return page


@keyed(PREDICATES, "shop_search")
def _shop_search(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    page = _shop_results(phone, intent)
    return page is not None and page.kind == "shop_results" and terms_in(query_terms(intent), page.query)


@keyed(PREDICATES, "shop_select")
def _shop_select(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    page = _shop_results(phone, intent)
    return (
        page is not None
        and page.kind == "product"
        and page.rank == 0
        and page.sort == intent.get("sort")  # the first in the order asked ("" is the site's own)
        and terms_in(query_terms(intent), page.query)
    )


def check(phone: Phone, ctx: TaskContext) -> bool:
    """Whether the task of ``ctx`` is accomplished on ``phone``.

    Never while the screen shows "Loading…" (a slow page load): the person doing the task cannot
    see the result yet, whatever the family.
    """
    if phone.loading > 0:
        return False
    return get_family(ctx.intent.family).predicate(phone, ctx.intent, ctx)
