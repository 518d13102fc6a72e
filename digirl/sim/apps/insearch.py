"""Search inside Gmail and inside Settings (issue 42), shown when ``phone.surfaces`` is on.

Gmail: tapping "Search in mail" opens a search screen (query field and suggestions, as YouTube's
and the Play Store's); a submitted query shows the folder's mails whose sender or subject has one
of its words, each opening the mail. Settings: tapping "Search settings" opens Android's search
page, which filters as one types: every Settings page and switch whose title or keywords hold a
typed word, each row opening its page. The apps keep their state here as a few attributes
(``Gmail.search``, a ``("search", "")`` entry on Settings' stack); both searches leave the
screens of the shipped task sets as they were (the bars take no tap while the flag is off).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from digirl.sim import ui
from digirl.sim.apps.base import letter_tile
from digirl.sim.apps.search import app_search_screen
from digirl.sim.content import key_terms, stable_rng

if TYPE_CHECKING:
    from digirl.sim.apps.gmail import Gmail
    from digirl.sim.apps.settings import Settings

__all__ = [
    "SETTINGS_INDEX",
    "mail_matches",
    "mail_views",
    "run_mail_query",
    "settings_matches",
    "settings_search_views",
    "start_mail_search",
    "start_settings_search",
]


# ---------------------------------------------------------------- Gmail
def start_mail_search(g: Gmail) -> None:
    """The inbox's search bar: the search screen, keyboard up (the last query kept, as Gmail does)."""
    last = g.search[1] if g.search is not None else ""
    g.search = ("search", "")
    g.fields["q"] = last
    g.focus("q")


def run_mail_query(g: Gmail, q: str) -> None:
    q = q.strip()
    if not q:
        return
    g.search = ("results", q)
    g.fields["q"] = q
    g.blur()
    g.phone.scroll.pop("gmail.results", None)


def mail_matches(g: Gmail, q: str) -> list[int]:
    """Indices (in the folder's list) of the mails whose sender or subject has a word of ``q``."""
    words = key_terms(q) or q.lower().split()
    out = []
    for i, (sender, subject, _snippet, _when) in enumerate(g.emails()):
        hay = f"{sender} {subject}".lower()
        if any(w in hay for w in words):
            out.append(i)
    return out


def mail_back(g: Gmail) -> None:
    """Back from the search screen or the results: the folder's list."""
    g.search = None
    g.blur()


def mail_views(g: Gmail) -> list[ui.View]:
    assert g.search is not None
    mode, q = g.search
    if mode == "search":
        return app_search_screen(g, ref="gmail.search", back_ref="gmail.search.back", placeholder="Search in mail")
    emails = g.emails()
    hits = mail_matches(g, q)
    rows: list[ui.View] = [
        ui.label((16, 0, 344, 32), f"{len(hits)} result{'s' if len(hits) != 1 else ''}" if hits else "", size=12, fg=ui.SUBTLE)
    ]
    for n, i in enumerate(hits):
        sender, subject, snippet, when = emails[i]
        y = 32 + 84 * n
        row = ui.box((0, y, 360, y + 84), g.bg, ref=f"gmail.result.{n}", on_tap=partial(_open_mail, g, i), kind="list_item")
        col = stable_rng("avatar", sender).choice(((66, 133, 244), (52, 168, 83), (251, 140, 0), (142, 36, 170)))
        row.children.append(letter_tile((12, y + 14, 52, y + 54), sender[:1], col, radius=20, size=18))
        row.children.append(ui.label((64, y + 8, 270, y + 30), sender, size=15))
        row.children.append(ui.label((272, y + 8, 348, y + 30), when, size=11, fg=ui.SUBTLE, align="right"))
        row.children.append(ui.label((64, y + 30, 348, y + 52), subject, size=13))
        row.children.append(ui.label((64, y + 52, 348, y + 74), snippet, size=13, fg=ui.SUBTLE))
        rows.append(row)
    if not hits:
        rows.append(
            ui.label(
                (16, 40, 344, 100),
                f"No results for “{q}” in {g.folder}",
                size=15,
                fg=ui.SUBTLE,
                lines=2,
                ref="gmail.results.empty",
            )
        )
    head = ui.box((0, ui.TOP, 360, ui.TOP + 68), g.bg, blocker=True)
    head.children.append(g.back_button((4, ui.TOP + 14, 44, ui.TOP + 54), ref="gmail.results.back"))
    head.children.append(
        ui.input_field(
            (48, ui.TOP + 10, 348, ui.TOP + 58),
            q,
            placeholder="Search in mail",
            focused=False,
            on_tap=partial(start_mail_search, g),
            ref="gmail.results.query",
            fill=(234, 238, 246),
            radius=24,
            border=None,
            icon="",
        )
    )
    return [ui.scroll_list("gmail.results", (0, ui.TOP + 68, 360, ui.BOTTOM), rows, g.phone.scroll, fill=g.bg), head]


def _open_mail(g: Gmail, i: int) -> None:
    g.open_mail = i


# ---------------------------------------------------------------- Settings
#: What Settings' search finds: (title, where it is, the page it opens, extra words it answers to).
SETTINGS_INDEX: tuple[tuple[str, str, str, str], ...] = (
    ("Network & internet", "Settings", "network", "internet data usage"),
    ("Wi‑Fi", "Network & internet", "network", "wifi wi-fi wireless wlan network"),
    ("Mobile data", "Network & internet", "network", "cellular data 4g 5g"),
    ("Airplane mode", "Network & internet", "network", "flight mode aeroplane"),
    ("Hotspot & tethering", "Network & internet", "network", "hotspot tethering share"),
    ("Data Saver", "Network & internet", "network", "data saver"),
    ("Connected devices", "Settings", "connected", "devices pairing"),
    ("Bluetooth", "Connected devices", "connected", "bluetooth pair headphones"),
    ("Apps", "Settings", "apps", "applications default apps cache"),
    ("Notifications", "Settings", "notifications", "notification history conversations alerts"),
    ("Battery", "Settings", "battery", "battery usage power"),
    ("Battery Saver", "Battery", "battery", "battery saver power saving"),
    ("Storage", "Settings", "storage", "storage space memory free up"),
    ("Display", "Settings", "display", "display screen"),
    ("Brightness level", "Display", "display", "brightness"),
    ("Dark theme", "Display", "display", "dark mode night theme"),
    ("Auto-rotate screen", "Display", "display", "rotate rotation"),
    ("Screen timeout", "Display", "display", "timeout sleep screen off"),
    ("Font size", "Display", "display", "font text size"),
    ("Wallpaper & style", "Display", "display", "wallpaper background style"),
    ("Sound & vibration", "Settings", "sound", "sound vibration haptics"),
    ("Media volume", "Sound & vibration", "sound", "volume media"),
    ("Phone ringtone", "Sound & vibration", "sound", "ringtone ring tone"),
    ("Do Not Disturb", "Sound & vibration", "sound", "dnd do not disturb silence"),
    ("Security & privacy", "Settings", "security", "security privacy lock password pin"),
    ("Location", "Settings", "location", "location gps"),
    ("About phone", "Settings", "about", "about phone model"),
    ("Android version", "About phone", "about", "android version update"),
)


def start_settings_search(s: Settings) -> None:
    s.push("search", "")
    s.fields["q"] = ""
    s.focus("q")


def settings_matches(q: str) -> list[int]:
    """Indices of :data:`SETTINGS_INDEX` whose title or keywords hold every word typed (a prefix of
    the last one counts, as the list filters while typing)."""
    words = q.lower().replace("-", " ").split()
    if not words:
        return []
    out = []
    for i, (title, _where, _page, extra) in enumerate(SETTINGS_INDEX):
        hay = f"{title} {extra}".lower().replace("‑", " ").replace("-", " ").split()
        if all(any(h.startswith(w) for h in hay) for w in words):
            out.append(i)
    return out


def settings_search_views(s: Settings) -> list[ui.View]:
    q = s.fields.get("q", "")
    rows: list[ui.View] = []
    for n, i in enumerate(settings_matches(q)):
        title, where, page, _extra = SETTINGS_INDEX[i]
        rows.append(
            ui.list_row(
                72 * n,
                72,
                title,
                sub=where,
                ref=f"settings.result.{n}",
                icon="search",
                icon_color=ui.BLUE,
                on_tap=partial(_open_page, s, page),
            )
        )
    if q.strip() and not rows:
        rows.append(ui.label((16, 16, 344, 48), "No results", size=15, fg=ui.SUBTLE, ref="settings.results.empty"))
    bar = ui.box((0, ui.TOP, 360, ui.TOP + 64), ui.WHITE, blocker=True)
    bar.children.append(s.back_button((4, ui.TOP + 12, 44, ui.TOP + 52), ref="settings.search.back"))
    bar.children.append(
        ui.input_field(
            (48, ui.TOP + 8, 352, ui.TOP + 56),
            q,
            placeholder="Search settings",
            focused=s.focused == "q",
            on_tap=s.tap_field("q"),
            ref="settings.search.query",
            on_clear=s.clear_field("q"),
            fill=(241, 243, 248),
            border=None,
            icon="",
        )
    )
    return [
        ui.box((0, ui.TOP, 360, ui.BOTTOM), ui.WHITE),
        ui.scroll_list("settings.results", (0, ui.TOP + 64, 360, ui.BOTTOM), rows, s.phone.scroll, fill=ui.WHITE),
        bar,
    ]


def _open_page(s: Settings, page: str) -> None:
    s.blur()
    s.push(page, "")
