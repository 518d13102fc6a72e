"""Shop families of the newer surfaces (issue 42): results sorted, and the cart taken to checkout.

- ``shop_sort`` (``site``, ``query``, ``sort``: a key of :data:`~digirl.sim.apps.web.SORTS`): the shop
  shows that search's results in that order ("search Best Buy for a Switch and sort by price low to
  high").
- ``shop_checkout`` (``site``): the shop's checkout page is shown with something in the cart ("go to my
  cart and proceed to checkout"). Placing the order is not asked; a task that starts with the
  site's cart empty gets one of its best sellers in it.

``add_to_cart`` (:mod:`.compound`) and ``shop_select`` take a ``sort`` too: "add the cheapest one to the
cart" is the first result under ``price_asc``; "sort by rating and open the top one" opens the first
under ``rating``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from digirl.core.actions import Action
from digirl.sim.content import products, terms_in
from digirl.sim.family_registry import builtin_family
from digirl.sim.goals import TaskContext, browser_page, query_terms, site_domain
from digirl.sim.intents import Intent
from digirl.sim.plans import ExpertStep, sort_step, to_shop_results, to_site

if TYPE_CHECKING:
    import numpy as np

    from digirl.sim.phone import Phone


# ---- sorted results ----------------------------------------------------------------------------
def _sorted(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    page = browser_page(phone)
    return (
        page is not None
        and page.kind == "shop_results"
        and page.domain == site_domain(intent.get("site"))
        and page.sort == intent.get("sort")
        and terms_in(query_terms(intent), page.query)
    )


@builtin_family("shop_sort", "phone", predicate=_sorted, doc="the shop shows the search's results in that order")
def _sort_plan(e: ExpertStep) -> Action:
    return to_shop_results(e) or sort_step(e, e.intent.get("sort")) or Action.back()


# ---- checkout ------------------------------------------------------------------------------------
def _at_checkout(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    page = browser_page(phone)
    site = site_domain(intent.get("site"))
    b: Any = phone.apps["chrome"]
    return page is not None and page.kind == "checkout" and page.domain == site and b.in_cart(site) > 0


def _something_in_cart(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    b: Any = phone.apps["chrome"]
    site = site_domain(intent.get("site"))
    if not b.in_cart(site):
        pick = products(site, "best sellers", phone.dyn.world_version, n=4)[int(rng.integers(4))]
        b.cart.append((site, pick.pid, "", -1))


@builtin_family(
    "shop_checkout",
    "phone",
    predicate=_at_checkout,
    setup=_something_in_cart,
    doc="the shop's checkout page is shown with the cart not empty",
)
def _checkout_plan(e: ExpertStep) -> Action:
    site = site_domain(e.intent.get("site"))
    b: Any = e.phone.apps["chrome"]
    return (
        to_site(e, site)  # None once Chrome shows a page of the site: then its page kind is read
        or (Action.back() if b.focused is not None else None)
        or e.goto("cart.checkout" if b.page.kind == "cart" else f"{site}.cart")
        or Action.back()
    )
