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
- ``set_alarm``: ``time`` (24h ``HH:MM``); newer tasks also ``label`` and ``days`` (repeat days,
  a digit a day from 0 = Monday: ``01234`` for weekdays). Success: an enabled alarm at that
  time exists (with that label, case aside, and exactly those repeat days when they are asked for).
- ``browser_tab``: ``mode`` (tab | incognito_tab | window | incognito_window). Success: the browser
  shows a new, empty tab/window of that mode.
- ``check_email``: (no slots). Success: the mail app's inbox is open.
- ``open_site``: ``site`` (e.g. reddit.com). Success: the browser shows that site's front page.

Web Shopping (AitW "Web Shopping" after DigiRL's post-processing):
- ``shop_goto``: ``site`` (costco.com, bestbuy.com, target.com, walmart.com, newegg.com, ebay.com).
- ``shop_search``: ``site``, ``query``. Success: that site's results page for the query.
- ``shop_select``: ``site``, ``query``. Success: the product page of the *first* result of that
  site's search for the query is open.

Phone (the ``phone`` task set: settings, clock, calls, messages, contacts, calendar, camera,
photos, YouTube, Play Store, Chrome, mail and notifications; :data:`PHONE_FAMILIES`). Their slots
and success predicates are listed in docs/tasks.md and implemented in :mod:`digirl.sim.families`.
User-defined families are declared with :func:`declare_family`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
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
#: On-device families (the ``phone`` task set); slots and success in docs/tasks.md.
PHONE_FAMILIES = (
    "toggle_setting",
    "set_brightness",
    "set_volume",
    "settings_page",
    "start_timer",
    "start_stopwatch",
    "delete_alarm",
    "disable_alarm",
    "make_call",
    "send_message",
    "add_contact",
    "view_contact",
    "create_event",
    "take_photo",
    "view_photo",
    "youtube_video",
    "youtube_subscribe",
    "uninstall_app",
    "update_app",
    "close_tabs",
    "bookmark_site",
    "browser_page",
    "send_email",
    "show_notifications",
    "clear_notifications",
)
FAMILIES = GENERAL_FAMILIES + WEBSHOP_FAMILIES + PHONE_FAMILIES
#: The slots the shipped sets' tasks of a family use, where newer tasks of that family use more (an
#: alarm's label or repeat days): a task with other slots gets the newer surfaces (:func:`pinned`).
PINNED_SLOTS: dict[str, frozenset[str]] = {
    "set_alarm": frozenset({"time"}),
    "take_photo": frozenset({"mode"}),
    "maps_directions": frozenset({"destination"}),
    "shop_select": frozenset({"site", "query"}),  # a ``sort`` (session 25) needs the newer sort chips
}
#: Slot values only newer tasks of a shipped family use (a switch added later): those get them too.
NEWER_VALUES: dict[str, tuple[str, frozenset[str]]] = {"toggle_setting": ("setting", frozenset({"vibrate", "night_light"}))}


def pinned(intent: Intent) -> bool:
    """Whether the task keeps the phone the shipped sets' golden episodes pin (no newer surfaces)."""
    if intent.family not in FAMILIES or not set(intent.slots) <= PINNED_SLOTS.get(intent.family, set(intent.slots)):
        return False
    slot, newer = NEWER_VALUES.get(intent.family, ("", frozenset()))
    return not slot or intent.get(slot) not in newer


#: Families outside the shipped task sets (issue 42), run by the phone env: ``compound`` (an ordered
#: plan of sub-tasks of any family: :mod:`digirl.sim.families.compound`), ``go_home`` (the home screen
#: is in front), ``add_to_cart`` (``site``, ``query``: the first result of that search is in the
#: site's cart), ``app_search`` (``app``, ``query``: the app shows its own search results for the
#: query; the Play Store and Contacts), ``calculate`` (``expr``, ``value``: the Calculator shows that
#: expression and its result) and ``app_page`` (``app``, ``page``: a tab of the Clock or Phone app is
#: shown; these two in :mod:`digirl.sim.families.surface`). They are not in :data:`FAMILIES`, so the
#: shipped sets and their tests keep their meaning.
#: ``site_search`` (``site``, ``query``: a site other than the six shops shows its own results for the
#: query; :mod:`digirl.sim.families.insearch`) came with the last surfaces of round 3.
#: ``open_thread`` (``contact``: that conversation is open in Messages), ``add_world_clock`` (``city``:
#: the city is on the Clock's world clock), ``shop_cart`` (``site``: that shop's cart page is shown) and
#: ``stop_stopwatch`` (no slots: the stopwatch is stopped with time on it), ``camera_lens`` (``lens``:
#: front or back, the camera shows it), ``latest_thread`` (the newest conversation is open) and
#: ``open_mail`` (``query`` optional: Gmail shows the newest mail, or the search's first result) and
#: ``calendar_day`` (``date``: the calendar shows that day's agenda) and ``reply_latest`` (``body``: a reply
#: sent in the newest conversation), ``youtube_channel`` (``channel``: YouTube shows its page) and
#: ``take_screenshot`` (a new screenshot is in the gallery: quick settings' Screenshot tile) and
#: ``favorite_contact`` (``name``: the contact is starred) came with the compound-instruction work.
#: The families after ``favorite_contact`` below came with round 3's session 23, each on a newer surface
#: (docs/tasks.md has their slots and success): a running timer cancelled, a missed call returned, a call
#: on speaker, a place called from Maps, a photo deleted or sent, a Display choice, a Wi-Fi network or
#: Bluetooth device joined, Chrome's history cleared, a mail replied to / forwarded / starred / deleted,
#: music played, a web search's first result opened, the recent apps shown or closed, a file opened or
#: deleted, a contact deleted or given a new number, an app force-stopped or its cache cleared, the
#: phone locked; ``toggle_setting`` also takes the newer switches (vibrate, night light). ``create_note``
#: (``app``, ``title``, ``body``: a new note in a notes app, :mod:`digirl.sim.families.notes`) came with
#: session 24, with ``music_control`` (``app``, ``action``: pause, resume, skip, shuffle on a music app
#: that is playing). ``shop_sort`` (``site``, ``query``, ``sort``) and ``shop_checkout`` (``site``) came with
#: session 25 (:mod:`digirl.sim.families.shop`), with ``add_to_cart``'s optional ``sort``.
EXTRA_FAMILIES = (
    "compound",
    "go_home",
    "add_to_cart",
    "app_search",
    "calculate",
    "app_page",
    "site_search",
    "open_thread",
    "add_world_clock",
    "shop_cart",
    "stop_stopwatch",
    "camera_lens",
    "latest_thread",
    "open_mail",
    "calendar_day",
    "reply_latest",
    "youtube_channel",
    "take_screenshot",
    "favorite_contact",
    "cancel_timer",
    "call_back",
    "delete_photo",
    "set_option",
    "call_speaker",
    "call_place",
    "connect_wifi",
    "clear_history",
    "mail_action",
    "play_music",
    "open_result",
    "show_recents",
    "close_recent",
    "open_file",
    "delete_file",
    "delete_contact",
    "update_contact",
    "send_photo",
    "app_action",
    "connect_bluetooth",
    "lock_screen",
    "create_note",
    "music_control",
    "shop_sort",
    "shop_checkout",
)
#: The simulated phone's date (a Tuesday): relative dates in instructions ("on Friday") resolve against it.
TODAY = date(2024, 6, 4)
#: English month names, January first: the calendar app, date phrases and the launcher's date widget.
MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
#: The shops (search, product pages, a cart). The first six are AitW Web Shopping's and the shipped
#: webshop set's; amazon.com joined them for everyday requests (issue 42) and is in no shipped set.
SHOP_SITES = ("costco.com", "bestbuy.com", "target.com", "walmart.com", "newegg.com", "ebay.com", "amazon.com")
#: Built-in task sets and the families they pose.
TASKSET_FAMILIES: dict[str, tuple[str, ...]] = {
    "general": GENERAL_FAMILIES,
    "webshop": WEBSHOP_FAMILIES,
    "phone": PHONE_FAMILIES,
}
#: Episode horizons per task set: DigiRL's 10 (General) and 20 (Web Shopping); 15 for the phone set,
#: whose longest expert episodes (an email, a bookmark, an event at a date and time) take 8 steps at
#: perturbation 2 (measured on both splits, seeds 0-2), leaving an agent room to explore and recover.
HORIZONS: dict[str, int] = {"general": 10, "webshop": 20, "phone": 15}
#: The ``compound`` task set's default horizon (each task gets at least its plan's: the sum of its
#: sub-tasks' task-set horizons, :func:`digirl.sim.families.compound.plan_horizon`).
HORIZONS["compound"] = 30
_TASKSET_OF = {f: ts for ts, fams in TASKSET_FAMILIES.items() for f in fams}
_TASKSET_OF.update({f: "phone" for f in EXTRA_FAMILIES})
#: Families added at run time (user specs): name → the task set whose env runs them.
_USER_FAMILIES: dict[str, str] = {}


def declare_family(name: str, taskset: str = "general") -> None:
    """Make ``name`` a valid intent family (user-defined families; see :mod:`digirl.sim.families`)."""
    if not name.isidentifier() or not name.islower():
        raise ValueError(f"family names are lower-case identifiers (like 'turn_on_data_saver'), got {name!r}")
    if name in _TASKSET_OF:
        raise ValueError(f"{name!r} is a built-in family")
    if taskset not in TASKSET_FAMILIES:
        raise ValueError(f"unknown task set {taskset!r}; known: {', '.join(TASKSET_FAMILIES)}")
    _USER_FAMILIES[name] = taskset


def forget_family(name: str) -> None:
    """Undo :func:`declare_family` (see :func:`digirl.sim.families.unregister_family`)."""
    _USER_FAMILIES.pop(name, None)


def known_families() -> tuple[str, ...]:
    """Built-in families (the shipped sets', then :data:`EXTRA_FAMILIES`), then user-declared ones."""
    return FAMILIES + EXTRA_FAMILIES + tuple(_USER_FAMILIES)


def family_taskset(family: str) -> str:
    """The task set (``general``, ``webshop``, ``phone``) whose env runs ``family``."""
    ts = _TASKSET_OF.get(family) or _USER_FAMILIES.get(family)
    if ts is None:
        raise ValueError(f"unknown intent family {family!r}; known: {', '.join(known_families())}")
    return ts


@dataclass(frozen=True)
class Intent:
    """A parsed instruction. ``slots`` maps slot names (see module doc) to strings."""

    family: str
    slots: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.family not in _TASKSET_OF and self.family not in _USER_FAMILIES:
            raise ValueError(f"unknown intent family {self.family!r}; known: {', '.join(known_families())}")

    def get(self, key: str, default: str = "") -> str:
        return self.slots.get(key, default)

    def to_dict(self) -> dict[str, Any]:
        return {"family": self.family, "slots": dict(self.slots)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Intent:
        return cls(str(d["family"]), {str(k): str(v) for k, v in dict(d.get("slots") or {}).items()})

    @property
    def taskset(self) -> str:
        return family_taskset(self.family)


def parse_time(text: str) -> tuple[int, int]:
    """``"07:30"`` / ``"7:30 pm"`` / ``"19:05"`` → (hour 0-23, minute)."""
    m = re.match(r"^\s*(\d{1,2})(?::(\d{2}))?\s*([ap]\.?m\.?)?\s*$", text.lower())
    if not m:
        raise ValueError(f"not a time: {text!r} (expected HH:MM)")
    h, mi = int(m.group(1)), int(m.group(2) or 0)
    if m.group(3):
        h = h % 12 + (12 if m.group(3).startswith("p") else 0)
    if not (0 <= h <= 23 and 0 <= mi <= 59):
        raise ValueError(f"not a time: {text!r}")
    return h, mi
