"""A shop's cart page (``<site>/cart``, page kind ``cart``): what :meth:`Browser.add_to_cart` put in
that site's cart, with prices and a subtotal, or an empty-cart note. The header's cart icon opens it.

With the newer surfaces "Proceed to checkout" opens the checkout (``<site>/checkout``: where it ships,
how it is paid, the items and the order total, "Place order"), and placing the order empties that
site's cart into :attr:`Browser.orders` and shows its confirmation (``<site>/order``)."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from digirl.sim import ui
from digirl.sim.content import Product, products

if TYPE_CHECKING:
    from digirl.sim.apps.browser import Browser

__all__ = ["cart_items", "cart_rows", "checkout_rows", "order_rows"]

#: Where the phone's owner ships to and how they pay (the same on every shop, as a saved profile).
SHIP_TO = ("Alex Morgan", "1200 Pine St, Apt 4B", "Seattle, WA 98101")
PAY_WITH = "Visa ending in 4242"


def cart_items(b: Browser, site: str) -> list[Product]:
    """The products in ``site``'s cart, in the order they were added."""
    wv = b.phone.dyn.world_version
    out = []
    for dom, pid, query, _rank in b.cart:
        if dom == site:
            item = next((x for x in products(site, query or "best sellers", wv) if x.pid == pid), None)
            if item is not None:
                out.append(item)
    return out


def _heading(b: Browser, site: str, y: float, title: str, ref: str) -> tuple[list[Product], list[ui.View], float]:
    """The site's cart items, a page's title row (with an empty-cart note when there are none) and
    where the next row starts."""
    items = cart_items(b, site)
    rows: list[ui.View] = [ui.label((16, y + 8, 344, y + 40), title, size=20, bold=True, ref=ref)]
    y += 48
    if not items:
        rows.append(ui.label((16, y + 16, 344, y + 48), "Your cart is empty", size=15, fg=ui.SUBTLE, ref="cart.empty"))
    return items, rows, y


def cart_rows(b: Browser, site: str, y: float, accent: ui.Color) -> list[ui.View]:
    """The cart's rows in scroll-list coordinates from ``y``."""
    items, rows, y = _heading(b, site, y, "Shopping Cart", "cart.title")
    if not items:
        return rows
    for i, item in enumerate(items):
        row = ui.box((0, y, 360, y + 96), ui.WHITE, ref=f"cart.item.{i}", kind="list_item")
        row.children.append(ui.box((16, y + 12, 88, y + 84), (236, 239, 244), radius=8))
        row.children.append(ui.label((100, y + 10, 344, y + 52), item.title, size=14, lines=2))
        row.children.append(ui.label((100, y + 56, 250, y + 80), f"${item.price:,.2f}", size=16, bold=True))
        row.children.append(ui.label((256, y + 56, 344, y + 80), "Qty: 1", size=13, fg=ui.SUBTLE, align="right"))
        row.children.append(ui.box((16, y + 95, 344, y + 96), ui.FAINT))
        rows.append(row)
        y += 96
    total = sum(x.price for x in items)
    n = len(items)
    rows.append(
        ui.label(
            (16, y + 12, 344, y + 40), f"Subtotal ({n} item{'s' if n != 1 else ''}): ${total:,.2f}", size=16, ref="cart.subtotal"
        )
    )
    checkout = partial(b.open_url, f"{site}/checkout") if b.phone.surfaces else lambda: None
    rows.append(ui.button((16, y + 48, 344, y + 96), "Proceed to checkout", checkout, ref="cart.checkout", color=accent))
    return rows


def _block(y: float, heading: str, lines: tuple[str, ...], ref: str) -> list[ui.View]:
    out = [ui.label((16, y, 344, y + 24), heading, size=13, fg=ui.SUBTLE, bold=True)]
    for i, line in enumerate(lines):
        out.append(ui.label((16, y + 26 + 22 * i, 344, y + 48 + 22 * i), line, size=15, ref=f"{ref}.{i}"))
    return out


def checkout_rows(b: Browser, site: str, y: float, accent: ui.Color) -> list[ui.View]:
    """The checkout page's rows: shipping address, payment, the items, the total and "Place order"."""
    items, rows, y = _heading(b, site, y, "Checkout", "checkout.title")
    if not items:
        return rows
    rows += _block(y, "SHIPPING TO", SHIP_TO, "checkout.address")
    y += 26 + 22 * len(SHIP_TO) + 14
    rows += _block(y, "PAYMENT", (PAY_WITH,), "checkout.payment")
    y += 26 + 22 + 14
    rows.append(ui.label((16, y, 344, y + 24), "ITEMS", size=13, fg=ui.SUBTLE, bold=True))
    y += 28
    for i, item in enumerate(items):
        rows.append(ui.label((16, y, 260, y + 40), item.title, size=13, lines=2, ref=f"checkout.item.{i}"))
        rows.append(ui.label((264, y, 344, y + 20), f"${item.price:,.2f}", size=13, align="right"))
        y += 46
    total = sum(x.price for x in items)
    rows.append(ui.box((16, y, 344, y + 1), ui.FAINT))
    rows.append(ui.label((16, y + 10, 344, y + 40), f"Order total: ${total:,.2f}", size=17, bold=True, ref="checkout.total"))
    rows.append(
        ui.button((16, y + 50, 344, y + 98), "Place order", partial(b.place_order, site), ref="checkout.place", color=accent)
    )
    return rows


def order_rows(b: Browser, site: str, y: float, accent: ui.Color) -> list[ui.View]:
    """The confirmation after "Place order": the order's number, what it holds and where it ships."""
    mine = [pids for s, pids in b.orders if s == site]
    if not mine:
        return [ui.label((16, y + 24, 344, y + 56), "No recent orders", size=15, fg=ui.SUBTLE, ref="order.none")]
    n, count = len(b.orders), len(mine[-1])
    thanks = "Thank you, your order has been placed"
    rows: list[ui.View] = [
        ui.label((16, y + 16, 344, y + 48), thanks, size=17, bold=True, lines=2, ref="order.title"),
        ui.label((16, y + 60, 344, y + 82), f"Order #{112_40_000 + 17 * n}", size=14, fg=ui.SUBTLE, ref="order.number"),
        ui.label((16, y + 86, 344, y + 108), f"{count} item{'s' if count != 1 else ''} · arriving in 3 days", size=14),
        ui.label((16, y + 110, 344, y + 132), f"Shipping to {SHIP_TO[0]}, {SHIP_TO[2]}", size=14, fg=ui.SUBTLE),
    ]
    rows.append(
        ui.button((16, y + 150, 344, y + 198), "Continue shopping", partial(b.open_url, site), ref="order.continue", color=accent)
    )
    return rows
