"""Phrasings of the surfaces added in round 3's last pass (issue 42): search inside Gmail and
Settings (``app_search``), Gmail's folders and YouTube's tabs (``app_page``). They join
:data:`~digirl.sim.tasks.app_rules.APPS_EARLY`, before the AitW rules, which would read "search my
email for X" as a web search; the shipped task sets parse as before (tests/sim/test_sim_compound.py
checks every shipped line)."""

from __future__ import annotations

import re

from digirl.sim.intents import Intent
from digirl.sim.tasks.app_rules import APPS_EARLY, unquote

__all__ = ["plain_query"]

_MAIL = "(?:my~|the~)?(?:gmail|e-?mails?|mails?|inbox|mailbox)(?:~app|~inbox)?"
_SETTINGS = "(?:the~|my~)?(?:phone's~|phone~|system~|android~)?settings(?:~app)?"


def plain_query(q: str) -> bool:
    """Whether a search's text is only a query: no second request in it ('"notes", then open the
    first', 'tickets and star the first one') and no other place to search ("google for news")."""
    return bool(q) and not re.search(r"[,;\"“”]|\b(?:then|and)\b", q, re.I) and not re.match(r"^\S+\s+for\s", q, re.I)


def _search(app: str, q: str, most_words: int = 6) -> Intent | None:
    q = unquote(q)
    return Intent("app_search", {"app": app, "query": q}) if plain_query(q) and len(q.split()) <= most_words else None


@APPS_EARLY.rule(
    f"(?:search|look)~(?:in~|through~|inside~)?{_MAIL}~for~{{q}}",
    f"(?:search|look)~(?:for~|up~)?{{q}}~(?:in|inside|within)~{_MAIL}",
    "(?:find|show|search~for|look~for)(?:~me)?~(?:my~|the~|all~(?:my~|the~)?)?(?:e-?mails?|mails?)~(?:from|about|with)~{q}",
    "find~{q}~in~(?:my~|the~)?(?:gmail|e-?mails?|mails?|inbox)",
)
def _mail_search(g: dict[str, str]) -> Intent | None:
    return _search("gmail", g["q"])


@APPS_EARLY.rule(
    f"(?:search|look)~(?:in~|through~|inside~)?{_SETTINGS}~for~{{q}}",
    f"(?:search|look)~(?:for~|up~)?{{q}}~(?:in|inside|within)~{_SETTINGS}",
    f"find~{{q}}~in~{_SETTINGS}",
)
def _settings_search(g: dict[str, str]) -> Intent | None:
    return _search("settings", g["q"], 4)


_MAIL_FOLDER = {"sent": "Sent", "starred": "Starred", "drafts": "Drafts", "spam": "Spam", "trash": "Trash", "snoozed": "Snoozed"}


@APPS_EARLY.rule(
    "(?:open|show|check|view|go~to)(?:~me)?~(?:my~|the~)?(?P<f>sent|starred|drafts|spam|trash|snoozed)"
    "(?:~(?:e-?mails?|mails?|messages|folder|box))?(?:~(?:in|on|of)~(?:my~|the~)?(?:gmail|e-?mail|mail)(?:~app)?)?",
    "(?:open|show|check|view|go~to)(?:~me)?~(?:my~|the~)?(?:gmail|e-?mail|mail)(?:'s)?~(?P<f>sent|starred|drafts|spam|trash|snoozed)"
    "(?:~folder)?",
)
def _mail_folder(g: dict[str, str]) -> Intent:
    return Intent("app_page", {"app": "gmail", "page": _MAIL_FOLDER[g["f"].lower()]})


_YT_TAB = {"subscriptions": "Subscriptions", "subs": "Subscriptions", "library": "Library", "shorts": "Shorts"}


@APPS_EARLY.rule(
    "(?:open|show|check|view|go~to|take~me~to)(?:~me)?~(?:my~|the~)?(?:youtube|yt)(?:'s)?~(?P<t>subscriptions|subs|library|shorts)"
    "(?:~(?:tab|page|feed))?",
    "(?:open|show|check|view|go~to|take~me~to)(?:~me)?~(?:my~|the~)?(?P<t>subscriptions|subs|library|shorts)"
    "(?:~(?:tab|page|feed))?~(?:on|in|of)~(?:the~)?(?:youtube|yt)(?:~app)?",
)
def _youtube_tab(g: dict[str, str]) -> Intent:
    return Intent("app_page", {"app": "youtube", "page": _YT_TAB[g["t"].lower()]})


def _site_of(name: str) -> str | None:
    """The domain a search names: a written domain ("amazon.com"), or a site's name that is not also
    an app of the phone ("reddit", "wikipedia"; "YouTube" is the app's own search)."""
    from digirl.sim.phone import resolve_app
    from digirl.sim.tasks.normalize import canonical_shop_site, canonical_site

    shop = canonical_shop_site(name)
    if shop:  # a shop's domain is the shipped phrasings' ("search for X on target.com"); its bare name is not
        return None if "." in name else shop
    site = canonical_site(name)
    if site is None or site == "google.com":
        return None
    if "." not in name and not resolve_app(name).startswith("x."):
        return None
    return site


@APPS_EARLY.rule(
    "search~(?:on~|in~)?{site}~for~{q}",
    "(?:search|look)~for~{q}~(?:on|at)~{site}",
    "find~{q}~on~{site}",
)
def _site_search(g: dict[str, str]) -> Intent | None:
    from digirl.sim.intents import SHOP_SITES

    site = _site_of(unquote(g["site"]))
    q = re.sub(r"^(?:a|an|the|some)\s+", "", unquote(g["q"]), flags=re.I)
    if site is None or not plain_query(q) or len(q.split()) > 6:
        return None
    return Intent("shop_search" if site in SHOP_SITES else "site_search", {"site": site, "query": q})
