"""Compound steps on a shop's results and cart (issue 42, session 25): appended to
:data:`~digirl.sim.tasks.compound_rules.CONTEXT_RULES` on import, as :mod:`.in_app_steps` is.

- after a shop search, "sort by price low to high" / "sort by customer reviews" is ``shop_sort``;
- after a shop search (or a sort), "add the cheapest one to the cart" is ``add_to_cart`` with that
  order's first result, and after a sort "add the first one to the cart" / "open the top one" keep the sort;
- on a shop, "check out" / "proceed to checkout" is ``shop_checkout``.

An order the shops do not offer ("sort by newly listed") is not read: the line is refused.
"""

from __future__ import annotations

import re

from digirl.sim.intents import SHOP_SITES, Intent
from digirl.sim.tasks.compound_rules import CONTEXT_RULES, FIRST_ITEM, Context

__all__ = ["sort_key"]

_CHEAP = r"(?:cheapest|least\s+expensive|lowest[\s-]+priced?|lowest\s+price)"
_DEAR = r"(?:most\s+expensive|priciest|highest[\s-]+priced?|highest\s+price)"
_RATED = r"(?:(?:top|highest|best)[\s-]+rated|best\s+reviewed|highest\s+rating)"
#: How a person names each order of :data:`digirl.sim.apps.web.SORTS` (matched whole).
_ORDERS = {
    "price_asc": re.compile(
        rf"(?:{_CHEAP}(?:\s+first)?|price(?:\s*[:,(-]\s*|\s+from\s+|\s+)?(?:low(?:est)?\s*(?:to|-)\s*high(?:est)?|ascending)\)?"
        r"|low(?:est)?\s+to\s+high(?:est)?(?:\s+price)?|price)",
        re.I,
    ),
    "price_desc": re.compile(
        rf"(?:{_DEAR}(?:\s+first)?|price(?:\s*[:,(-]\s*|\s+from\s+|\s+)?(?:high(?:est)?\s*(?:to|-)\s*low(?:est)?|descending)\)?"
        r"|high(?:est)?\s+to\s+low(?:est)?(?:\s+price)?)",
        re.I,
    ),
    "rating": re.compile(
        rf"(?:{_RATED}(?:\s+first)?|(?:avg\.?\s+|average\s+)?(?:customer\s+)?(?:reviews?|ratings?|stars?)(?:\s+first)?)", re.I
    ),
}
_SORT = re.compile(
    r"^(?:and\s+)?(?:then\s+)?(?:sort|order|arrange)(?:\s+(?:them|it|the\s+(?:results|list|listings)|results|everything))?"
    r"\s+(?:by\s+|from\s+|with\s+)?(?P<how>.+)$",
    re.I,
)
_CART_TAIL = r"\s+(?:to|in|into)\s+(?:the\s+|my\s+)?(?:shopping\s+)?(?:cart|basket|bag)$"
_ADD_PICK = re.compile(
    rf"^(?:add|put)\s+(?:the\s+)?(?P<which>{_CHEAP}|{_DEAR}|{_RATED})"
    rf"(?:\s+(?:one|result|item|product|pack|option|listing|deal))?(?:\s+of\s+(?:them|those))?{_CART_TAIL}",
    re.I,
)
_OPEN_FIRST = re.compile(rf"^(?:open|select|tap|click|choose|pick|view)\s+(?:on\s+)?(?:{FIRST_ITEM}|the\s+top(?:\s+\w+)?)$", re.I)
_ADD_FIRST = re.compile(rf"^(?:add|put)\s+(?:it|that(?:\s+one)?|{FIRST_ITEM}){_CART_TAIL}", re.I)
_CHECKOUT = re.compile(
    r"^(?:and\s+)?(?:then\s+)?(?:check\s*out|(?:proceed|go|continue|head)\s+to\s+(?:the\s+)?check\s*out(?:\s+page)?"
    r"|start\s+(?:the\s+)?check\s*out)(?:\s+(?:now|with\s+(?:it|them|that)))?$",
    re.I,
)


def sort_key(how: str) -> str | None:
    """The :data:`~digirl.sim.apps.web.SORTS` key of an order said in words; None for one no shop offers."""
    how = re.sub(r"^(?:the\s+)?", "", how.strip(" .,"), flags=re.I)
    return next((key for key, pattern in _ORDERS.items() if pattern.fullmatch(how)), None)


def _on_shop(ctx: Context) -> str:
    return ctx.site if ctx.app == "chrome" and ctx.site in SHOP_SITES else ""


def _shop_step(text: str, ctx: Context) -> Intent | None:
    last, site = ctx.last, _on_shop(ctx)
    if last is None or not site:
        return None
    searched = last.family in ("shop_search", "shop_sort") and last.get("site") == site
    m = _SORT.match(text)
    if m is not None and searched:
        key = sort_key(m.group("how"))
        return None if key is None else Intent("shop_sort", {"site": site, "query": last.get("query"), "sort": key})
    m = _ADD_PICK.match(text)
    if m is not None and searched:
        key = sort_key(m.group("which"))
        return None if key is None else Intent("add_to_cart", {"site": site, "query": last.get("query"), "sort": key})
    if _ADD_FIRST.match(text) and last.family == "shop_sort" and last.get("site") == site:
        return Intent("add_to_cart", dict(last.slots))
    if _OPEN_FIRST.match(text) and last.family == "shop_sort" and last.get("site") == site:
        return Intent("shop_select", dict(last.slots))
    if _CHECKOUT.match(text):
        return Intent("shop_checkout", {"site": site})
    return None


CONTEXT_RULES.append(_shop_step)
