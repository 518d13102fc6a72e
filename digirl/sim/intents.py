"""What a simulator task asks for, as data: an intent family plus slots.

The instruction parser (``digirl.sim.tasks.parser``) turns AitW-style text into an
:class:`Intent`; the simulator's success predicates and its scripted expert read the intent.
Families and their slots (all slot values are strings; ``query`` is what a person would type):

General (AitW "General" phrasing families):
- ``web_search``: ``query``, ``key_terms`` (space-separated words that must all appear in the
  submitted query, lower-case), ``answer`` (optional answer-card kind: weather, time, exchange,
  capital, news, restaurants, price, flights, hotels, rent, speed, size, menu, person, generic).
  Success: a results page (not the suggestion list) of the search engine, in the browser or the
  search app, whose query contains every key term.
- ``open_app``: ``app``. Success: that app is in the foreground.
- ``app_settings``: ``app``. Success: Settings › Apps › <app> page is open.
- ``app_notifications``: ``app``, ``state`` (on | off | toggle). Success: the app's notification
  switch has the requested state (toggle: differs from the initial state) and its page is open.
- ``install_app``: ``app``. Success: the app is installed (Play Store shows "Open").
- ``youtube_play``: ``channel`` (artist or channel name), ``kind`` (new | latest). Success: the
  YouTube app plays a video whose channel is the named one (latest: its newest upload).
- ``maps_search``: ``query``. Success: Maps shows results for a query containing the key terms.
- ``maps_directions``: ``destination``. Success: Maps shows directions to a place of that kind.
- ``set_alarm``: ``time`` (24h ``HH:MM``). Success: an enabled alarm at that time exists.
- ``browser_tab``: ``mode`` (tab | incognito_tab | window | incognito_window). Success: the browser
  shows a new, empty tab/window of that mode.
- ``check_email``: (no slots). Success: the mail app's inbox is open.
- ``open_site``: ``site`` (e.g. reddit.com). Success: the browser shows that site's front page.

Web Shopping (AitW "Web Shopping" after DigiRL's post-processing):
- ``shop_goto``: ``site`` (costco.com, bestbuy.com, target.com, walmart.com, newegg.com, ebay.com).
- ``shop_search``: ``site``, ``query``. Success: that site's results page for the query.
- ``shop_select``: ``site``, ``query``. Success: the product page of the *first* result of that
  site's search for the query is open.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

GENERAL_FAMILIES = (
    "web_search",
    "open_app",
    "app_settings",
    "app_notifications",
    "install_app",
    "youtube_play",
    "maps_search",
    "maps_directions",
    "set_alarm",
    "browser_tab",
    "check_email",
    "open_site",
)
WEBSHOP_FAMILIES = ("shop_goto", "shop_search", "shop_select")
FAMILIES = GENERAL_FAMILIES + WEBSHOP_FAMILIES
SHOP_SITES = ("costco.com", "bestbuy.com", "target.com", "walmart.com", "newegg.com", "ebay.com")


@dataclass(frozen=True)
class Intent:
    """A parsed instruction. ``slots`` maps slot names (see module doc) to strings."""

    family: str
    slots: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"unknown intent family {self.family!r}; known: {', '.join(FAMILIES)}")

    def get(self, key: str, default: str = "") -> str:
        return self.slots.get(key, default)

    def to_dict(self) -> dict[str, Any]:
        return {"family": self.family, "slots": dict(self.slots)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Intent:
        return cls(str(d["family"]), {str(k): str(v) for k, v in dict(d.get("slots") or {}).items()})

    @property
    def taskset(self) -> str:
        return "webshop" if self.family in WEBSHOP_FAMILIES else "general"
