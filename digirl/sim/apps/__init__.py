"""The simulator's apps. To add one: write an :class:`~digirl.sim.apps.base.App` subclass in a module
here, add it to :data:`BUILTIN` (and its names to :data:`ALIASES`); the phone, the drawer, Settings
› Apps and ``open_app`` tasks pick it up."""

from __future__ import annotations

import functools

from digirl.sim.apps.base import App
from digirl.sim.apps.browser import Browser
from digirl.sim.apps.calendar import Calendar
from digirl.sim.apps.camera import Camera, Photos
from digirl.sim.apps.clock import Clock
from digirl.sim.apps.contacts import Contacts
from digirl.sim.apps.dialer import PhoneApp
from digirl.sim.apps.gmail import Gmail
from digirl.sim.apps.launcher import Launcher
from digirl.sim.apps.lockscreen import LockScreen
from digirl.sim.apps.maps import Maps
from digirl.sim.apps.messages import Messages
from digirl.sim.apps.overview import Overview
from digirl.sim.apps.search import GoogleApp
from digirl.sim.apps.settings import Settings
from digirl.sim.apps.shade import Shade
from digirl.sim.apps.simple import Calculator, Files, GenericApp, Music
from digirl.sim.apps.store import PlayStore
from digirl.sim.apps.youtube import YouTube
from digirl.sim.content import norm_name

__all__ = ["ALIASES", "BUILTIN", "EXTRA_APPS", "SYSTEM_UI", "App", "GenericApp", "resolve_app"]

#: key → class, in home-screen-independent order. "launcher" is the home screen.
BUILTIN: dict[str, type[App]] = {
    "launcher": Launcher,
    "chrome": Browser,
    "google": GoogleApp,
    "youtube": YouTube,
    "maps": Maps,
    "playstore": PlayStore,
    "settings": Settings,
    "clock": Clock,
    "gmail": Gmail,
    "calculator": Calculator,
    "camera": Camera,
    "contacts": Contacts,
    "calendar": Calendar,
    "files": Files,
    "messages": Messages,
    "music": Music,
    "photos": Photos,
    "phone": PhoneApp,
}

#: System UI shown like an app but not launchable from the drawer (the notification shade).
SYSTEM_UI: dict[str, type[App]] = {"shade": Shade, "overview": Overview, "lock": LockScreen}

#: Third-party apps installed on every episode's phone (tasks may add or remove others).
EXTRA_APPS: tuple[str, ...] = ("Facebook", "Instagram", "WhatsApp", "Spotify", "Netflix", "Amazon Shopping")

_NAMES: dict[str, tuple[str, ...]] = {
    "chrome": ("chrome", "googlechrome", "browser", "chromebrowser", "internet", "web", "webbrowser"),
    "google": ("google", "googlesearch", "googleapp", "search"),
    "youtube": ("youtube", "yt"),
    "maps": ("maps", "googlemaps", "map", "gmaps"),
    "playstore": ("playstore", "googleplay", "googleplaystore", "play", "store", "appstore", "googleplayapps"),
    "settings": ("settings", "setting", "systemsettings", "androidsettings"),
    "clock": ("clock", "alarm", "alarms", "alarmclock", "googleclock", "timer", "stopwatch"),
    "gmail": ("gmail", "mail", "email", "googlemail", "inbox", "emailapp"),
    "calculator": ("calculator", "calc", "googlecalculator"),
    "camera": ("camera", "googlecamera"),
    "contacts": ("contacts", "contact", "people", "googlecontacts"),
    "calendar": ("calendar", "googlecalendar"),
    "files": ("files", "file", "filemanager", "myfiles", "filesbygoogle", "googlefiles"),
    "messages": ("messages", "messaging", "message", "sms", "text", "texts", "googlemessages"),
    "music": ("music", "youtubemusic", "playmusic", "googlemusic", "ytmusic"),
    "photos": ("photos", "photo", "googlephotos", "gallery"),
    "phone": ("phone", "dialer", "phoneapp", "calls"),
}
#: normalized name (lower-case alphanumerics) → builtin app key.
ALIASES: dict[str, str] = {alias: key for key, names in _NAMES.items() for alias in names}


@functools.lru_cache(maxsize=4096)
def resolve_app(name: str) -> str:
    """The app key for a user-facing name (``"Google Maps"`` → ``maps``; unknown → ``x.<name>``)."""
    # Cached: every reset installs the same extra apps, and predicates resolve the same names.
    n = norm_name(name)
    if n.endswith("app") and n[:-3] in ALIASES:
        n = n[:-3]
    if n in ALIASES:
        return ALIASES[n]
    if n.endswith("app") and len(n) > 3:
        n = n[:-3]
    return "x." + n
