"""A shop's cart page (``<site>/cart``, page kind ``cart``): what :meth:`Browser.add_to_cart` put in
that site's cart, with prices and a subtotal, or an empty-cart note. The header's cart icon opens it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from digirl.sim import ui
from digirl.sim.content import Product, products

if TYPE_CHECKING:
    from digirl.sim.apps.browser import Browser

__all__ = ["cart_items", "cart_rows"]


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


def cart_rows(b: Browser, site: str, y: float, accent: ui.Color) -> list[ui.View]:
    """The cart's rows in scroll-list coordinates from ``y``."""
    items = cart_items(b, site)
    rows: list[ui.View] = [ui.label((16, y + 8, 344, y + 40), "Shopping Cart", size=20, bold=True, ref="cart.title")]
    y += 48
    if not items:
        rows.append(ui.label((16, y + 16, 344, y + 48), "Your cart is empty", size=15, fg=ui.SUBTLE, ref="cart.empty"))
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
    rows.append(ui.button((16, y + 48, 344, y + 96), "Proceed to checkout", lambda: None, ref="cart.checkout", color=accent))
    return rows
