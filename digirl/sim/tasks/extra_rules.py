"""Phrasings of the families issue 42 added outside the shipped task sets: ``go_home``,
``app_search`` (a search inside the Play Store) and ``add_to_cart`` ("add the first X on
bestbuy.com to the cart"). They join :data:`~digirl.sim.tasks.app_rules.APPS_EARLY` (before the
AitW rules, which would read "search the Play Store for X" as a web search); the shipped task sets
parse exactly as before (tests/sim/test_sim_compound.py checks every shipped line)."""

from __future__ import annotations

from digirl.sim.intents import Intent
from digirl.sim.tasks.app_rules import APPS_EARLY, unquote
from digirl.sim.tasks.normalize import canonical_shop_site

__all__: list[str] = []


@APPS_EARLY.rule(
    "(?:go|get|head|return|navigate)(?:~back)?(?:~to)?(?:~the)?~home(?:~screen|~page)?",
    "(?:go|get|head|return)~back~home",
    "(?:press|tap|hit)~(?:the~)?home(?:~button|~key)?",
    "(?:show|open)~(?:me~)?(?:the~)?home~screen",
    "(?:close|exit|leave)~(?:the~|this~)?app(?:~and~go~home)?",
)
def _home(g: dict[str, str]) -> Intent:
    return Intent("go_home")


@APPS_EARLY.rule(
    "(?:search|look|check)~(?:in~|on~)?(?:the~)?(?:google~)?play~store~for~{q}",
    "(?:search|look)~(?:up~|for~)?{q}~(?:in|on)~(?:the~)?(?:google~)?play~store",
    "find~{q}~(?:in|on)~(?:the~)?(?:google~)?play~store",
)
def _store_search(g: dict[str, str]) -> Intent | None:
    q = unquote(g["q"])
    return Intent("app_search", {"app": "playstore", "query": q}) if q else None


@APPS_EARLY.rule(
    "add~(?:the~)?(?:first|top)~{q}~(?:on|from|at)~{site}~to~(?:the~|my~)?(?:shopping~)?(?:cart|basket)",
)
def _cart(g: dict[str, str]) -> Intent | None:
    site = canonical_shop_site(g["site"])
    q = unquote(g["q"])
    return Intent("add_to_cart", {"site": site, "query": q}) if site and q else None
