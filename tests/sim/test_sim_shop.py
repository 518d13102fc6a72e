"""A shop's sorted results and checkout (issue 42, session 25): ``shop_sort``, ``shop_checkout`` and
``add_to_cart``'s ``sort`` parsed from compound requests and solved by the expert; the orders are
right, the predicates want exactly what was asked, placing an order empties the cart; none of it
shows on the pinned (shipped) tasks' phone."""

from __future__ import annotations

from typing import Any

import pytest

from digirl.sim.apps.web import parse_url, shop_results
from digirl.sim.env import SimEnv
from digirl.sim.intents import Intent
from digirl.sim.predicates import check
from digirl.sim.samples import spec_for
from digirl.sim.tasks.parser import explain_instruction
from digirl.sim.tasks.shop_steps import sort_key
from tests.sim.conftest import assert_expert_solves, plan_steps

_SWITCH = {"site": "bestbuy.com", "query": "Nintendo Switch"}


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        (
            "Search Best Buy for a Nintendo Switch and sort by price low to high",
            [("shop_search", _SWITCH), ("shop_sort", {**_SWITCH, "sort": "price_asc"})],
        ),
        (
            "search best buy for a nintendo switch, sort by price high to low, and add the first to cart",
            [
                ("shop_search", {**_SWITCH, "query": "nintendo switch"}),
                ("shop_sort", {**_SWITCH, "query": "nintendo switch", "sort": "price_desc"}),
                ("add_to_cart", {**_SWITCH, "query": "nintendo switch", "sort": "price_desc"}),
            ],
        ),
        (
            "Head to walmart.com, search for size 4 diapers, and add the cheapest pack to the cart",
            [
                ("shop_goto", {"site": "walmart.com"}),
                ("shop_search", {"site": "walmart.com", "query": "size 4 diapers"}),
                ("add_to_cart", {"site": "walmart.com", "query": "size 4 diapers", "sort": "price_asc"}),
            ],
        ),
        (
            'go to amazon, look up "usb c cable", sort by customer reviews, and add the top one to cart',
            [
                ("shop_goto", {"site": "amazon.com"}),
                ("shop_search", {"site": "amazon.com", "query": "usb c cable"}),
                ("shop_sort", {"site": "amazon.com", "query": "usb c cable", "sort": "rating"}),
                ("add_to_cart", {"site": "amazon.com", "query": "usb c cable", "sort": "rating"}),
            ],
        ),
        (
            "Go to Walmart, search for a 12 pack of Coke, add it to the cart, and check out",
            [
                ("shop_goto", {"site": "walmart.com"}),
                ("shop_search", {"site": "walmart.com", "query": "12 pack of Coke"}),
                ("add_to_cart", {"site": "walmart.com", "query": "12 pack of Coke"}),
                ("shop_checkout", {"site": "walmart.com"}),
            ],
        ),
        (
            "search walmart for a 55 inch tv, sort by customer rating, and open the top one",
            [
                ("shop_search", {"site": "walmart.com", "query": "55 inch tv"}),
                ("shop_sort", {"site": "walmart.com", "query": "55 inch tv", "sort": "rating"}),
                ("shop_select", {"site": "walmart.com", "query": "55 inch tv", "sort": "rating"}),
            ],
        ),
        (
            "Open Amazon, go to my cart, and proceed to checkout",
            [
                ("shop_goto", {"site": "amazon.com"}),
                ("shop_cart", {"site": "amazon.com"}),
                ("shop_checkout", {"site": "amazon.com"}),
            ],
        ),
    ],
)
def test_shop_phrasings_parse_and_the_expert_solves_them(text: str, steps: list[tuple[str, dict[str, str]]]) -> None:
    assert plan_steps(text) == [{"family": f, "slots": s} for f, s in steps]
    assert_expert_solves(text)


def test_an_order_no_shop_offers_is_refused_not_misread() -> None:
    assert sort_key("newly listed") is None and sort_key("distance") is None
    got = explain_instruction("Go to ebay, search for Pokemon cards, sort by newly listed")
    assert got.intent is None and "sort by newly listed" in got.reason


@pytest.mark.parametrize(
    ("words", "key"),
    [
        ("price low to high", "price_asc"),
        ("lowest price", "price_asc"),
        ("Price: Low to High", "price_asc"),
        ("price (high to low)", "price_desc"),
        ("most expensive first", "price_desc"),
        ("customer reviews", "rating"),
        ("avg. customer review", "rating"),
        ("top rated", "rating"),
    ],
)
def test_sort_words(words: str, key: str) -> None:
    assert sort_key(words) == key


def _env(intent: Intent) -> SimEnv:
    env = SimEnv(taskset="phone", perturbation=0)
    env.reset(seed=0, options={"task": spec_for("t", intent, task_id="t")})
    return env


def _done(env: SimEnv) -> bool:
    return check(env.phone, env.ctx)


def _chrome(env: SimEnv) -> Any:
    return env.phone.apps["chrome"]


def test_each_order_sorts_the_results_and_keeps_the_same_products() -> None:
    env = _env(Intent("shop_sort", {**_SWITCH, "sort": "price_asc"}))
    b = _chrome(env)
    featured = shop_results(b, "bestbuy.com", "nintendo switch")
    cheap = shop_results(b, "bestbuy.com", "nintendo switch", "price_asc")
    dear = shop_results(b, "bestbuy.com", "nintendo switch", "price_desc")
    rated = shop_results(b, "bestbuy.com", "nintendo switch", "rating")
    assert sorted(p.pid for p in featured) == sorted(p.pid for p in cheap) == sorted(p.pid for p in rated)
    assert [p.price for p in cheap] == sorted(p.price for p in featured)
    assert [p.price for p in dear] == sorted((p.price for p in featured), reverse=True)
    assert [p.rating for p in rated] == sorted((p.rating for p in featured), reverse=True)
    assert parse_url("bestbuy.com/search?q=switch&sort=price_asc").sort == "price_asc"
    assert parse_url("bestbuy.com/search?q=switch&sort=bogus").sort == ""  # an unknown order is the site's own


def test_the_cheapest_is_wanted_not_the_first_featured_result() -> None:
    intent = Intent("add_to_cart", {"site": "walmart.com", "query": "size 4 diapers", "sort": "price_asc"})
    env = _env(intent)
    b = _chrome(env)
    featured = shop_results(b, "walmart.com", "size 4 diapers")
    cheapest = min(featured, key=lambda p: p.price)
    assert featured[0].pid != cheapest.pid  # this search's first result is not its cheapest
    b.cart.append(("walmart.com", featured[0].pid, "size 4 diapers", 0))
    assert not _done(env)
    b.cart.append(("walmart.com", cheapest.pid, "size 4 diapers", 0))
    assert _done(env)


def test_checkout_needs_the_page_and_a_cart_and_placing_the_order_empties_it() -> None:
    env = _env(Intent("shop_checkout", {"site": "amazon.com"}))
    b = _chrome(env)
    assert b.in_cart("amazon.com") == 1  # the setup put a best seller in the empty cart
    env.phone.fg = "chrome"
    b.open_url("amazon.com/checkout")
    env.phone.loading = 0
    env.phone.invalidate()
    assert _done(env)
    b.place_order("amazon.com")
    env.phone.loading = 0
    env.phone.invalidate()
    assert b.in_cart("amazon.com") == 0 and b.orders and b.orders[0][0] == "amazon.com"
    assert b.page.kind == "order"
    assert env.phone.find("order.title") is not None
    assert not _done(env)  # the checkout is left, the cart empty


def test_the_pinned_phone_shows_no_sort_chips_and_an_inert_checkout() -> None:
    env = _env(Intent("shop_search", {"site": "amazon.com", "query": "usb c cable"}))
    assert not env.phone.surfaces
    b = _chrome(env)
    env.phone.fg = "chrome"
    b.open_url("amazon.com/search?q=usb+c+cable")
    env.phone.loading = 0
    env.phone.invalidate()
    assert env.phone.find("site.sort") is None
    env2 = _env(Intent("shop_sort", {"site": "amazon.com", "query": "usb c cable", "sort": "rating"}))
    env2.phone.fg = "chrome"
    _chrome(env2).open_url("amazon.com/search?q=usb+c+cable")
    env2.phone.loading = 0
    env2.phone.invalidate()
    assert env2.phone.find("site.sort.rating") is not None


def test_a_sorted_first_result_is_not_the_site_orders_first() -> None:
    from digirl.sim.intents import pinned

    intent = Intent("shop_select", {"site": "walmart.com", "query": "55 inch tv", "sort": "rating"})
    assert not pinned(intent) and pinned(Intent("shop_select", {"site": "walmart.com", "query": "55 inch tv"}))
    env = _env(intent)
    b = _chrome(env)
    env.phone.fg = "chrome"
    b.open_url("walmart.com/product/x?q=55+inch+tv&rank=0")  # the first of the site's own order
    env.phone.loading = 0
    assert not _done(env)
    b.open_url("walmart.com/product/x?q=55+inch+tv&rank=0&sort=rating")
    env.phone.loading = 0
    assert _done(env)
