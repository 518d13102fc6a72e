"""Device-wide state that several apps share: settings toggles and levels, contacts, the photo
gallery and the notifications in the shade. It lives on the :class:`~digirl.sim.phone.Phone` for
one episode; Settings, the notification shade, the Phone, Messages, Contacts, Camera and Photos
apps read and change it, and the success predicates check it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from digirl.sim.phone import Phone

__all__ = [
    "DEFAULT_CONTACTS",
    "LEVEL_STEP",
    "NEWER_SETTINGS",
    "OPTIONS",
    "SETTING_NAMES",
    "Contact",
    "DeviceSettings",
    "Notice",
    "Photo",
    "default_gallery",
    "default_notices",
    "find_contacts",
    "get_setting",
    "same_person",
    "set_setting",
]

#: Toggleable settings, as intents name them (``toggle_setting``'s ``setting`` slot).
SETTING_NAMES = (
    "wifi",
    "bluetooth",
    "airplane_mode",
    "dark_mode",
    "battery_saver",
    "do_not_disturb",
    "location",
    "flashlight",
    "auto_rotate",
    "mobile_data",
    "hotspot",
)
#: Settings with a choice of values (Display's rows, a page of choices with the newer surfaces):
#: name → (its title, the values in order).
OPTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "screen_timeout": (
        "Screen timeout",
        ("15 seconds", "30 seconds", "1 minute", "2 minutes", "5 minutes", "10 minutes", "30 minutes"),
    ),
    "font_size": ("Font size", ("Small", "Default", "Large", "Largest")),
    # Sound's "Phone ringtone" row (a page of choices with the newer surfaces; a fixed label before)
    "ringtone": (
        "Phone ringtone",
        ("The Big Adventure", "Chimes", "Ocean", "Copycat", "Flutterby", "Classic Bell", "Crystal", "Beep-Beep"),
    ),
    # the newer System page (languages, date & time)
    "language": (
        "Languages",
        ("English", "Spanish", "French", "German", "Italian", "Portuguese", "Dutch", "Polish"),
    ),
    "time_zone": (
        "Time zone",
        (
            "Pacific Time",
            "Mountain Time",
            "Central Time",
            "Eastern Time",
            "Greenwich Mean Time",
            "Central European Time",
            "India Standard Time",
            "Japan Standard Time",
        ),
    ),
}
#: The Settings page that shows each option's row.
OPTION_PAGE = {
    "screen_timeout": "display",
    "font_size": "display",
    "ringtone": "sound",
    "language": "system",
    "time_zone": "system",
}
#: Switches added after the shipped sets were pinned (``toggle_setting`` takes them too; a task about
#: one gets the newer surfaces, where Settings shows it).
NEWER_SETTINGS = ("vibrate", "night_light")
#: Sliders move in steps of this many percent.
LEVEL_STEP = 5


@dataclass
class DeviceSettings:
    """Settings other than the three the status bar shows (those stay on the phone)."""

    dark_mode: bool = False
    battery_saver: bool = False
    do_not_disturb: bool = False
    location: bool = True
    flashlight: bool = False
    auto_rotate: bool = True
    mobile_data: bool = True
    hotspot: bool = False
    data_saver: bool = False
    vibrate: bool = False  # ring on vibrate (NEWER_SETTINGS: Sound's newer switch)
    night_light: bool = False  # amber tint at night (Display's newer switch)
    screen_timeout: str = "30 seconds"  # one of OPTIONS["screen_timeout"] (the ``set_option`` family)
    font_size: str = "Default"  # one of OPTIONS["font_size"]
    ringtone: str = "The Big Adventure"  # one of OPTIONS["ringtone"]
    language: str = "English"  # one of OPTIONS["language"] (the newer System page)
    time_zone: str = "Pacific Time"  # one of OPTIONS["time_zone"]
    wifi_network: str = "HomeNetwork-5G"  # the network Wi-Fi joins when on
    #: Networks in range (the newer Wi-Fi page lists them; ``connect_wifi`` adds its own).
    networks: list[str] = field(default_factory=lambda: ["HomeNetwork-5G", "CoffeeShop_Free", "NETGEAR42", "xfinitywifi"])
    #: Bluetooth devices paired before (the newer Connected devices page lists them) and the one connected.
    paired: list[str] = field(default_factory=lambda: ["Pixel Buds Pro", "Car Audio", "Galaxy Watch"])
    bt_device: str = ""
    brightness: int = 60
    volume: int = 40


_ON_PHONE = {"wifi": "wifi", "bluetooth": "bluetooth", "airplane_mode": "airplane"}


def get_setting(phone: Phone, name: str) -> bool:
    """The state of toggle ``name`` (one of :data:`SETTING_NAMES` or :data:`NEWER_SETTINGS`, or ``data_saver``)."""
    if name in _ON_PHONE:
        return bool(getattr(phone, _ON_PHONE[name]))
    if name not in (*SETTING_NAMES, *NEWER_SETTINGS, "data_saver"):
        raise KeyError(f"unknown setting {name!r}; known: {', '.join(SETTING_NAMES + NEWER_SETTINGS)}")
    return bool(getattr(phone.settings, name))


def set_setting(phone: Phone, name: str, on: bool) -> None:
    """Set toggle ``name``; airplane mode turns the radios off as Android does."""
    if name in _ON_PHONE:
        setattr(phone, _ON_PHONE[name], on)
        if name == "airplane_mode" and on:
            phone.wifi = phone.bluetooth = False
            phone.settings.mobile_data = phone.settings.hotspot = False
    else:
        get_setting(phone, name)  # validates the name
        setattr(phone.settings, name, on)
    phone.invalidate()


@dataclass(frozen=True)
class Contact:
    name: str
    number: str  # digits only
    email: str = ""

    @property
    def first(self) -> str:
        return self.name.split()[0]


def same_person(who: str, wanted: str) -> bool:
    """Whether ``who`` (a contact name, a number or an address) is the one a task names (``wanted``):
    the same digits, the same name ignoring case, or the same first name ("John" for "John Smith")."""
    w, x = wanted.strip().lower(), who.strip().lower()
    if not w or not x:
        return False
    wd, xd = re.sub(r"\D", "", w), re.sub(r"\D", "", x)
    if len(wd) >= 3 and wd == w.replace("-", "").replace(" ", "").lstrip("+"):
        return len(xd) >= 3 and (xd.endswith(wd) or wd.endswith(xd))
    return x == w or x.split()[0] == w


def find_contacts(contacts: list[Contact], query: str) -> list[Contact]:
    """Contacts whose name (or a word of it) starts with ``query``, or whose number contains its digits."""
    q = query.strip().lower()
    ordered = sorted(contacts, key=lambda c: c.name.lower())
    if not q:
        return ordered
    digits = re.sub(r"\D", "", q)
    out = []
    for c in ordered:
        name = c.name.lower()
        if name.startswith(q) or any(w.startswith(q) for w in name.split()) or (len(digits) >= 3 and digits in c.number):
            out.append(c)
    return out


DEFAULT_CONTACTS: tuple[Contact, ...] = (
    Contact("Alex Kim", "4155550132", "alex.kim@example.com"),
    Contact("Ben Carter", "6465550187", "ben.carter@example.com"),
    Contact("Chloe Martin", "2125550143", "chloe@example.com"),
    Contact("David Chen", "3105550199", "david.chen@example.com"),
    Contact("Emma Wilson", "7185550121", "emma.w@example.com"),
    Contact("Farah Said", "5035550164", "farah.said@example.com"),
    Contact("George Brown", "2065550110", "george@example.com"),
    Contact("Hana Sato", "4085550176", "hana.sato@example.com"),
    Contact("Isaac Green", "6175550135", "isaac.green@example.com"),
    Contact("Julia Rossi", "3125550158", "julia.rossi@example.com"),
    Contact("Kevin Park", "7735550192", "kevin.park@example.com"),
    Contact("Lena Fischer", "2025550147", "lena.fischer@example.com"),
)


@dataclass(frozen=True)
class Photo:
    """A picture or video in the gallery (newest first); ``tags`` say what is on it."""

    pid: str
    kind: str = "photo"  # photo | video
    tags: tuple[str, ...] = ()
    front: bool = False
    when: str = "Today"
    color: tuple[int, int, int] = (140, 150, 160)


_GALLERY = (
    ("beach", "sea", "sand"),
    ("dog", "pet", "park"),
    ("birthday", "cake", "party"),
    ("sunset", "sky"),
    ("food", "dinner", "pasta"),
    ("city", "street", "night"),
    ("mountain", "hike", "snow"),
    ("cat", "pet"),
    ("flowers", "garden"),
    ("friends", "selfie"),
    ("car", "road trip"),
    ("concert", "music"),
)
_DAYS = ("Yesterday", "Yesterday", "Sat, Jun 1", "Sat, Jun 1", "May 28", "May 28", "May 20", "May 20", "May 12")
_COLORS = ((84, 160, 206), (168, 132, 92), (226, 120, 140), (236, 150, 70), (200, 90, 60), (70, 80, 120))


def default_gallery() -> list[Photo]:
    """The photos already on the phone, newest first."""
    return list(_DEFAULT_PHOTOS)  # photos are frozen: every phone's list can hold the same ones


_DEFAULT_PHOTOS = tuple(
    Photo(f"p{i}", "photo", tags, "selfie" in tags, _DAYS[min(i, len(_DAYS) - 1)], _COLORS[i % len(_COLORS)])
    for i, tags in enumerate(_GALLERY)
)


@dataclass(frozen=True)
class Notice:
    """One notification in the shade."""

    app: str  # app key
    title: str
    text: str
    when: str = "now"


def default_notices() -> list[Notice]:
    return [
        Notice("messages", "Alex Kim", "Are we still on for lunch?", "2m"),
        Notice("gmail", "GitHub", "[digirl] New pull request opened", "15m"),
        Notice("calendar", "Team sync", "Today at 11:00 AM · Room 4", "20m"),
        Notice("playstore", "Updates available", "3 apps can be updated", "1h"),
    ]
