"""Everyday phrasings added with the compound-instruction work of round 3's last sessions (issue 42):
the world clock, a shop's cart, a day's agenda, the newest conversation and mail, favourites, a
screenshot, a YouTube channel, reminders, "directions to …", app nicknames in requests, and more.

Rules that always mean one intent are a table (:data:`_FIXED`), rules that say an existing phrasing
another way a table of templates (:data:`_REWORDED`), rules with one slot read from one group a third
(:data:`_SLOTTED`); the rest are functions. This module
imports :mod:`.extra_rules` first, so its rules join :data:`~digirl.sim.tasks.app_rules.APPS_EARLY`
after those (and before the AitW rules); the shipped task sets and the real AitW lines parse as
before (tests/sim pins both).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable

from digirl.sim.intents import Intent
from digirl.sim.tasks import extra_rules  # noqa: F401  (its rules first)
from digirl.sim.tasks.app_rules import APPS_EARLY, contact_name, unquote
from digirl.sim.tasks.normalize import canonical_shop_site
from digirl.sim.tasks.rules import Handler, Reject, reparse

__all__ = ["world_city"]

_LATEST = "(?:latest|last|newest|most~recent|new|recent)"
_NUMBER = "(?P<num>\\+?[\\d][\\d ()-]{5,})"

#: Phrasings that always mean one intent: (templates, intent).
_FIXED: tuple[tuple[tuple[str, ...], Intent], ...] = (
    (
        (
            "(?:what's|whats|what~is)~my~(?:android|software|os)~version",
            "(?:which|what)~android~(?:am~i~on|is~this|is~on~my~phone)",
        ),
        Intent("settings_page", {"page": "about"}),
    ),
    (
        (
            "who~(?:called|rang|phoned)~(?:me~)?(?:last|recently|today)?",
            "(?:show|check|see|view)(?:~me)?~(?:my~|the~)?(?:missed|recent|latest|last)~calls?",
        ),
        Intent("app_page", {"app": "phone", "page": "Recents"}),
    ),
    (
        ("(?:show(?:~me)?|open|check)~(?:my~)?(?:youtube~)?watch~later(?:~list|~playlist)?(?:~on~youtube)?",),
        Intent("app_page", {"app": "youtube", "page": "Library"}),
    ),
    (
        # the simulated phone has one volume: silent is that volume at 0 (as "mute my phone")
        (
            "(?:put|set|switch|turn)~(?:my~|the~)?(?:phone|ringer|device)?~?(?:on|to|in(?:to)?)~silent(?:~mode)?",
            "(?:turn~on|enable|activate)~(?:the~)?silent~mode",
            "silence~my~phone",
            "mute~(?:everything|all~(?:sounds|the~sound)|all~audio)",
        ),
        Intent("set_volume", {"level": "0"}),
    ),
    (
        (
            "(?:put|set|switch|turn|change)~(?:it|my~phone|the~phone|my~ringer|the~ringer|the~ring~mode|ringer|phone)?"
            "~?(?:on|to|in(?:to)?)~vibrat(?:e|ion)(?:~(?:only|mode))?",
            "(?:turn|switch)~on~(?:the~)?vibrat(?:e|ion)(?:~(?:mode|for~calls))?",
            "(?:enable|activate)~(?:the~)?vibrat(?:e|ion)(?:~(?:mode|for~calls))?",
            "vibrate~(?:mode|only)(?:~on)?",
        ),
        Intent("toggle_setting", {"setting": "vibrate", "state": "on"}),
    ),
    (
        (
            "(?:turn|switch|shut)~off~(?:the~)?vibrat(?:e|ion)(?:~(?:mode|for~calls))?",
            "(?:disable|deactivate)~(?:the~)?vibrat(?:e|ion)(?:~(?:mode|for~calls))?",
            "(?:stop~(?:the~phone~)?vibrating|no~more~vibrat(?:ing|ion))",
            "(?:take|get)~(?:it|my~phone|the~phone)~off~vibrate",
        ),
        Intent("toggle_setting", {"setting": "vibrate", "state": "off"}),
    ),
    (
        (
            "(?:cancel|stop|delete|remove|end|kill|turn~off|clear|reset)~(?:the~|my~|that~|this~)?(?:running~|current~|kitchen~)?"
            "(?:timer|countdown)(?:~(?:i~(?:just~)?(?:set|started)|that's~running|that~is~running|running))?",
            "(?:never~mind|forget)~(?:about~)?(?:the~|my~)?timer",
        ),
        Intent("cancel_timer"),
    ),
    (
        (
            "(?:clear|delete|erase|wipe|remove)~(?:all~)?(?:of~)?(?:my~|the~)?(?:chrome~|browser~|browsing~|web~|search~)*history"
            "(?:~(?:in|on|from)~(?:chrome|the~browser))?",
            "(?:clear|delete)~(?:my~|the~)?browsing~data",
        ),
        Intent("clear_history"),
    ),
    (
        ("lock~(?:the~|my~)?(?:screen|phone|device)(?:~now)?", "(?:put|turn)~(?:the~|my~)?(?:screen|phone)~(?:to~sleep|off)"),
        Intent("lock_screen"),
    ),
    (
        ("(?:read|open|check|see)~(?:my~|the~)?(?:new~|unread~)?(?:texts|text~messages|sms|messages)(?:~app)?",),
        Intent("open_app", {"app": "Messages"}),
    ),
    (
        (
            "call~back~(?:whoever|the~person~who|the~one~who|who(?:ever)?)~(?:just~)?(?:called|rang|phoned)(?:~me)?(?:~(?:last|just~now))?",
            f"call~back~(?:the~|my~)?{_LATEST}~(?:caller|missed~call|call|one|number)",
            f"(?:call|ring)~(?:the~)?{_LATEST}~(?:caller|missed~call|one)~back",
            f"(?:return|call~back)~(?:the~|my~|that~)?{_LATEST}~(?:missed~)?call",
            f"(?:call|ring)~(?:back~)?(?:the~)?{_LATEST}~(?:person|number)~(?:who|that)~(?:called|rang|phoned)(?:~me)?",
            "(?:call|ring)~(?:back~)?(?:whoever|who)~(?:just~)?(?:called|rang|phoned)(?:~me)?",
            "return~(?:my~|the~)?missed~call",
        ),
        Intent("call_back"),
    ),
    (
        (
            "(?:take|grab|capture|make|save)~(?:a~)?screen\\s*-?\\s*(?:shot|capture|grab)(?:~of~(?:this|the~screen|my~screen))?",
            "screen\\s*shot(?:~(?:this|that|it|the~screen|my~screen|now))?",
        ),
        Intent("take_screenshot"),
    ),
    (
        (
            "(?:show|open|view|see|go~to|check)(?:~me)?~(?:my~|the~)?(?:favou?rite|starred)~(?:contacts|people)",
            "(?:show|open|view|go~to)(?:~me)?~(?:my~|the~)?favou?rites~(?:in|on)~(?:the~|my~)?contacts(?:~app)?",
        ),
        Intent("app_page", {"app": "contacts", "page": "Favourites"}),
    ),
    (
        (
            f"(?:read|open|show(?:~me)?|check|see|view)~(?:my~|the~)?{_LATEST}~(?:texts?(?:~messages?)?|messages?|sms|conversation|chat)"
            "(?:~(?:in|on)~(?:the~)?messages(?:~app)?)?",
        ),
        Intent("latest_thread"),
    ),
    (
        (
            f"(?:read|open|show(?:~me)?|check|see|view)~(?:my~|the~)?{_LATEST}~(?:e-?mail|mail|message~in~(?:my~)?inbox)"
            "(?:~(?:in|on)~(?:the~)?gmail(?:~app)?)?",
        ),
        Intent("open_mail"),
    ),
    (("(?:stop|pause|halt)~(?:the~|my~)?stop ?watch",), Intent("stop_stopwatch")),
    (
        (
            "(?:open|show(?:~me)?|go~to|check|see|view)~(?:the~|what's~)?(?:trending|explore)(?:~(?:tab|page|videos|section))?~(?:on|in)~youtube",
            "(?:open|show(?:~me)?|go~to)~youtube(?:'s)?~(?:trending|explore)(?:~(?:tab|page|videos|section))?",
            "(?:open|go~to)~the~(?:trending|explore)~(?:tab|page)",
        ),
        Intent("app_page", {"app": "youtube", "page": "Explore"}),
    ),
    (
        (
            "(?:show|open|view|see)(?:~me)?~(?:my~|all~(?:my~)?)(?:recent~|latest~|new~)?(?:photos|pictures|pics|gallery|camera~roll)",
        ),
        Intent("open_app", {"app": "Photos"}),
    ),
    (
        (
            "(?:open|show|go~to|view|check|see)(?:~me)?~(?:the~|my~)?(?:my~apps(?:~(?:&|and)~games)?|manage~apps(?:~(?:&|and)~device)?|"
            "installed~apps|app~updates|updates)~(?:in|on|from)~(?:the~)?(?:google~)?play~store",
            "(?:open|show|go~to)(?:~me)?~(?:the~)?(?:google~)?play~store(?:'s)?~(?:my~apps|manage~apps)(?:~page|~tab|~screen)?",
        ),
        Intent("app_page", {"app": "playstore", "page": "Manage"}),
    ),
)

#: Phrasings said again as one the parser knows: (templates, the known phrasing, its family).
#: A contact's name as said in a rewording: letters of any script, spaces, apostrophes, dots, hyphens.
_NAME = "(?P<n>[^\\W\\d_](?:[^\\W\\d_]|[' .-])*?)"
_REWORDED: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (
        ("(?:set|create|make|add)~(?:an?~|my~)?(?P<t>\\d{1,2}(?::\\d\\d)?\\s*(?:am|pm|a\\.m\\.|p\\.m\\.)?)~alarm",),
        "set an alarm for {t}",
        "set_alarm",
    ),
    (("check~(?P<site>[a-z]+\\.com)~for~(?P<q>[^?!]+)",), "search {site} for {q}", "shop_search"),
    (
        (
            "(?:look~up|look~for|find|search~for)~(?:an?~|some~|the~)?(?:prices?~(?:of|for)~(?:an?~|the~)?)?(?P<q>[^?!]+?)~(?:on|at)~"
            "(?P<site>best~buy|bestbuy|amazon|ebay|walmart|target|costco|newegg)(?:\\.com)?",
        ),
        "search {site} for {q}",
        "shop_search",
    ),
    (
        ("(?P<m>bike|biking|cycling|bicycle|walking|driving|transit|bus|train)~(?:route|directions)~to~(?P<x>[^?!]+)",),
        "get {m} directions to {x}",
        "maps_directions",
    ),
    (
        ("(?:start|begin|open)~(?:a~)?(?:new~)?convo~with~(?P<c>.+)", "open~(?:my~)?convo~with~(?P<c>.+)"),
        "open my conversation with {c}",
        "open_thread",
    ),
    (
        ("(?:show(?:~me)?|open|check|see|view)~(?P<d>today|tomorrow)'s~(?:calendar|schedule|agenda)",),
        "show my calendar for {d}",
        "calendar_day",
    ),
    (
        ("(?:buy|order|purchase|shop~for)~(?:an?~|some~)?(?P<q>[^?!]+?)~(?:on|from|at)~(?P<site>[a-z]+(?:\\.com)?)",),
        "search {site} for {q}",
        "shop_search",
    ),
    (
        # "watch a cat video" (an article, not "play the latest Veritasium video": youtube_play's)
        ("(?:watch|play|show~me)~(?:an?|some)~(?P<q>[^?!]+?)~videos?(?:~on~youtube)?",),
        "play a video about {q} on youtube",
        "youtube_video",
    ),
    (
        (
            "(?:i~need|i~want|i'd~like|give~me|get~me|find~me)~(?:the~)?directions~to~(?P<x>.+)",
            "directions~to~(?P<x>.+)",
            # "… by train" is a travel mode (.newer_rules), not part of the place
            "(?:how~do~i~get|how~to~get)~to~(?P<x>(?:(?!\\s+by\\s+(?:train|bus|car|bike|transit|foot)$).)+)",
        ),
        "get directions to {x}",
        "maps_directions",
    ),
    (
        ("(?:did|has)~(?P<c>[A-Za-z][\\w'-]*(?:~[A-Z][\\w'-]*)?)~(?:text(?:ed)?|message(?:d)?)~me(?:~(?:back|yet|today))?",),
        "open my conversation with {c}",
        "open_thread",
    ),
    (
        (
            # "add a new contact named Diego Ramirez, 555 201 8890", "create contact Nia 555 8888"
            "(?:add|create|save)~(?:a~)?(?:new~)?contact~(?:for~|named~|called~)?" + _NAME + "\\s*,\\s*" + _NUMBER,
            "(?:create|add|save|make)~(?:a~)?(?:new~)?contact~(?:for~|named~|called~)?" + _NAME + "~"
            "(?:with~(?:the~)?(?:number~|phone~)?|at~)?" + _NUMBER,
        ),
        "add a new contact named {n} with number {num}",
        "add_contact",
    ),
)


def _date(text: str) -> str | None:
    from digirl.sim.tasks.when import parse_date

    day = parse_date(text)
    return day.isoformat() if day else None


#: The Settings page that shows whether a setting is on ("is wifi on?"), by the setting's name.
_STATE_PAGES = dict.fromkeys(("wifi", "mobiledata", "data", "hotspot", "airplanemode"), "network") | {
    "bluetooth": "bluetooth",
    "location": "location",
    "gps": "location",
    "darkmode": "display",
}


def _state_page(setting: str) -> str | None:
    return _STATE_PAGES.get(re.sub(r"[\s-]+", "", setting.lower()))


#: Phrasings whose one slot comes from one group: (templates, family, fixed slots, slot, group, reader).
_SLOTTED: tuple[tuple[tuple[str, ...], str, dict[str, str], str, str, Callable[[str], str | None]], ...] = (
    (
        (
            "(?:go~to|open|show(?:~me)?|check|view|see)~(?:my~|the~)?(?:shopping~)?(?:cart|basket)~(?:on|at|in)~{site}",
            "(?:go~to|open|show(?:~me)?|check|view|see)~(?:my~)?{site}~(?:shopping~)?(?:cart|basket)",
        ),
        "shop_cart",
        {},
        "site",
        "site",
        canonical_shop_site,
    ),
    (
        # "what do I have on Friday", "show my calendar for tomorrow", "am I free Thursday afternoon?"
        (
            "(?:what's|whats|what~is|anything)~on~(?:my~|the~)?(?:calendar|schedule|agenda)~(?:for~)?(?P<d>.+)",
            "what~(?:do~i~have|have~i~got|is~happening|am~i~doing)~(?:on~my~(?:calendar|schedule|agenda)~)?(?P<d>.+)",
            "(?:show(?:~me)?|open|check|see|view)~(?:my~|the~)?(?:calendar|schedule|agenda)~(?:for|on|to)~(?P<d>.+)",
            "am~i~(?:free|busy|available)~(?:on~)?(?P<d>[^?!]+?)(?:~(?:morning|afternoon|evening|night))?",
        ),
        "calendar_day",
        {},
        "date",
        "d",
        _date,
    ),
    (
        (
            "reply~(?:to~)?(?:my~|the~)?(?:latest|last|newest|most~recent)~(?:text|message|sms)~(?:with|saying|and~say)~(?P<b>.+)",
            "reply~(?P<b>.+?)~to~(?:my~|the~)?(?:latest|last|newest|most~recent)~(?:text|message|sms)",
        ),
        "reply_latest",
        {},
        "body",
        "b",
        unquote,
    ),
    (
        (
            "(?:is|are)~(?:my~|the~)?(?P<s>wi-?fi|mobile~data|data|hotspot|airplane~mode|bluetooth|location|gps|dark~mode)"
            "~(?:on|off|enabled|disabled|turned~on|turned~off|connected|working|active)",
        ),
        "settings_page",
        {},
        "page",
        "s",
        _state_page,
    ),
    (
        ("(?:any|do~i~have~(?:any~)?)~(?:new~|unread~)?(?:e-?mails?|mail)~from~(?P<q>[^?!]+)",),
        "app_search",
        {"app": "gmail"},
        "query",
        "q",
        unquote,
    ),
)


def _slotted(family: str, fixed: dict[str, str], slot: str, group: str, read: Callable[[str], str | None]) -> Handler:
    def handle(g: dict[str, str]) -> Intent | None:
        value = read(g[group])
        return Intent(family, {**fixed, slot: value}) if value else None

    return handle


def _fixed(intent: Intent) -> Handler:
    return lambda g: intent


#: The rewordings being parsed now: a rewording that comes back to itself is not read again (a
#: phrasing that matches its own rewording would otherwise recurse without end).
_REPARSING: set[str] = set()


def _reworded(phrase: str, family: str) -> Handler:
    def handle(g: dict[str, str]) -> Intent | None:
        text = phrase.format(**{k: v.strip() for k, v in g.items() if v is not None})
        if text in _REPARSING:
            return None
        _REPARSING.add(text)
        try:
            got = reparse(text)
        finally:
            _REPARSING.discard(text)
        return got if got is not None and got.family == family else None

    return handle


for _templates, _intent in _FIXED:
    APPS_EARLY.rule(*_templates)(_fixed(_intent))
for _templates, _phrase, _family in _REWORDED:
    APPS_EARLY.rule(*_templates)(_reworded(_phrase, _family))
for _templates, _family, _slots, _slot, _group, _read in _SLOTTED:
    APPS_EARLY.rule(*_templates)(_slotted(_family, _slots, _slot, _group, _read))


def world_city(name: str) -> str | None:
    """The world clock's name for a city the user wrote ("new york", "NYC", "São Paulo", "Delhi")."""
    import unicodedata

    from digirl.sim.apps.clock import WORLD_CITIES

    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    key = " ".join(re.sub(r"^(?:the\s+)?(?:city\s+of\s+)?", "", plain.strip(" .'\""), flags=re.I).lower().split())
    key = {"nyc": "new york", "new york city": "new york", "la": "los angeles", "delhi": "new delhi"}.get(key, key)
    return next((c for c in WORLD_CITIES if c.lower() == key), None)


@APPS_EARLY.rule(
    "(?:add|put|include)~{x}~(?:to|on|in(?:to)?)~(?:the~|my~)?world~clock(?:s)?(?:~(?:in|of|on)~(?:the~)?clock(?:~app)?)?",
    "(?:add|put)~{x}~(?:to|on|in)~(?:the~|my~)?clock(?:~app)?",
)
def _world_clock(g: dict[str, str]) -> Intent | Reject:
    names = [n for n in re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*", unquote(g["x"])) if n]
    cities = [world_city(n) for n in names]
    missing = [n for n, c in zip(names, cities) if c is None]
    if missing:
        return Reject(f"the simulated world clock has no city {missing[0]!r}")
    parts = [Intent("add_world_clock", {"city": c}) for c in dict.fromkeys(c for c in cities if c)]
    if len(parts) == 1:
        return parts[0]
    from digirl.sim.families.compound import compound_intent

    return compound_intent(parts)  # "add Paris and New York to the world clock"


@APPS_EARLY.rule("wake~(?:me~)?up~(?:at|by)~(?P<h>\\d{1,2})(?:~(?:tomorrow|tomorrow~morning))?")
def _wake_at_hour(g: dict[str, str]) -> Intent | None:
    """ "Wake me up at 7": a bare hour to wake at is in the morning (12 is ambiguous: not taken)."""
    h = int(g["h"])
    return Intent("set_alarm", {"time": f"{h:02d}:00"}) if 1 <= h <= 11 else None


@APPS_EARLY.rule(
    "(?:switch|change|flip|turn|go)~(?:over~)?to~(?:the~)?(?P<lens>selfie|front|front-facing|back|rear|main)"
    "(?:~camera|~cam|~mode|~lens)(?:~(?:in|on)~the~camera(?:~app)?)?",
    "(?:switch|change|flip|turn)~(?:the~)?camera~(?:to~)?(?:the~)?(?P<lens>selfie|front|front-facing|back|rear|main)(?:~camera|~mode|~lens)?",
    "(?:use|open)~(?:the~)?(?P<lens>front|front-facing|selfie)~camera",
)
def _camera_lens(g: dict[str, str]) -> Intent:
    lens = "front" if g["lens"].lower() in ("selfie", "front", "front-facing") else "back"
    return Intent("camera_lens", {"lens": lens})


# The newer surfaces' phrasings (screen timeout, font size, Wi-Fi networks, an alarm's label and days,
# camera styles, mail actions, music, deleting a photo) live in .newer_rules; imported here so their
# rules keep their place in APPS_EARLY (before the reminder and app phrasings below).
importlib.import_module("digirl.sim.tasks.newer_rules")


@APPS_EARLY.rule(
    "(?:remind~me|set~(?:a|up~a)~reminder)~(?:to~)?(?P<x>.+?)~(?P<w>(?:at|on|tomorrow|today|tonight|this|next)~.+)",
)
def _reminder(g: dict[str, str]) -> Intent | None:
    """ "remind me to buy milk at 5pm": an event in the calendar (the simulated phone's reminders)."""
    got = reparse(f"add {g['x']} to my calendar {g['w']}")
    return got if got is not None and got.family == "create_event" and got.get("time") else None


@APPS_EARLY.rule("(?P<site>[a-z]+\\.com)~(?P<q>[^?!]+)")
def _site_then_query(g: dict[str, str]) -> Intent | None:
    """ "costco.com paper towels": that shop's search."""
    site = canonical_shop_site(g["site"])
    q = unquote(g["q"])
    return Intent("shop_search", {"site": site, "query": q}) if site and q else None


@APPS_EARLY.rule("youtube~(?:search~(?:for~)?)?(?P<q>(?:how~to|search~for)~[^?!]+)", "youtube~search~(?:for~)?(?P<q>[^?!]+)")
def _youtube_query(g: dict[str, str]) -> Intent | None:
    """ "youtube how to change a tire", "youtube search for sourdough": a search on YouTube."""
    q = re.sub(r"^search\s+for\s+", "", unquote(g["q"]), flags=re.I)
    return reparse(f"search youtube for {q}") if q else None


@APPS_EARLY.rule("close~(?:the~|my~)?(?P<app>[\\w' ]+?)(?:~app)?")
def _close_app(g: dict[str, str]) -> Intent | None:
    """ "close youtube": leaving the app (the simulated phone has no app switcher to kill it in)."""
    from digirl.sim.tasks.normalize import canonical_app

    return Intent("go_home") if _known(canonical_app(g["app"])) else None


def _known(app: str) -> bool:
    from digirl.sim.tasks.entities import KNOWN_APPS, SYSTEM_APP_LABELS

    return app in SYSTEM_APP_LABELS or app.lower() in KNOWN_APPS


@APPS_EARLY.rule(
    "(?:compose|write|send)~(?:an?~)?(?:new~)?e-?mail~to~(?P<to>\\S+@\\S+)~with~(?:the~)?subject~(?P<s>.+?)~and~(?:the~)?"
    "(?:body|message|text)~(?P<b>.+)",
)
def _email_subject_body(g: dict[str, str]) -> Intent | None:
    return reparse(f"email {g['to']} with the subject {unquote(g['s'])} and say {unquote(g['b'])}")


@APPS_EARLY.rule("(?:add|schedule|put|book|create)~(?:an?~)?(?P<x>(?!alarm\\b|timer\\b|contact\\b)[^?!]+)")
def _add_dated(g: dict[str, str]) -> Intent | None:
    """ "add meeting with Lars tomorrow at 3pm", "add Mom's birthday on June 3": an event when the
    words end with a date or a time (else not this rule: "add milk to the cart")."""
    from digirl.sim.tasks.when import split_when

    if re.match(r"(?:new\s+)?(?:event|reminder)\b", g["x"], re.I):
        return None  # the event phrasings' own words (this rule rewords into them)
    title, day, hhmm = split_when(g["x"])
    if not (day or hhmm) or not title or re.search(r"\b(?:to|in|on)\s+(?:my|the)\s+(?:cart|basket|list)\b", title, re.I):
        return None
    got = reparse(f"add an event called {g['x']}")  # the event phrasing reads the date and time itself
    return got if got is not None and got.family == "create_event" else None


@APPS_EARLY.rule(
    "(?:go~to|open|show(?:~me)?|visit|check~out|pull~up)~(?:the~)?(?P<ch>.+?)(?:'s)?~(?:youtube~)?channel(?:~on~youtube)?",
    "(?:go~to|open|show(?:~me)?|visit)~(?:the~)?youtube~channel~(?:of~|for~)?(?P<ch>.+)",
)
def _youtube_channel(g: dict[str, str]) -> Intent | None:
    """ "go to the Veritasium channel on youtube": that channel's page (named as subscribing names it)."""
    if re.fullmatch(r"(?:my|his|her|their|its|the|this|that)", g["ch"].strip(), re.I):
        return None  # points at a channel on screen (compound steps read it)
    got = reparse(f"subscribe to {g['ch']}")
    if got is None or got.family != "youtube_subscribe":
        return None
    return Intent("youtube_channel", {"channel": got.get("channel")})


@APPS_EARLY.rule(
    "(?:add|put)~(?P<c>.+?)~to~(?:my~|the~)?favou?rites(?:~(?:in|on)~(?:my~)?contacts)?",
    "(?:star|favou?rite)~(?P<c>.+?)(?:~in~(?:my~)?contacts)?",
    "(?:mark|make|set)~(?P<c>.+?)~as~(?:a~)?favou?rite(?:~contact)?",
)
def _favourite_contact(g: dict[str, str]) -> Intent | None:
    raw = re.sub(r"^my\s+", "", g["c"].strip(), flags=re.I)
    if not (raw[:1].isupper() or raw.lower() in _KIN):  # a person's name, not "add milk to favourites"
        return None
    name = contact_name(raw)
    return Intent("favorite_contact", {"name": name}) if name and not name.isdigit() and len(name.split()) <= 3 else None


_KIN = frozenset("mom mum dad mother father grandma grandpa granny wife husband sister brother son daughter boss".split())


@APPS_EARLY.rule("(?:get|grab)~(?:me~)?(?:the~)?(?P<app>[\\w' .&+-]+?)(?:~app)?")
def _get_app(g: dict[str, str]) -> Intent | None:
    """ "get whatsapp": installing an app the phone knows by name (not "get directions", "get milk")."""
    from digirl.sim.tasks.entities import KNOWN_APPS

    app = KNOWN_APPS.get(" ".join(g["app"].lower().split()))
    return Intent("install_app", {"app": app}) if app else None


@APPS_EARLY.rule("(?:remove|delete)~(?P<app>[\\w' .&+-]+)")
def _remove_app(g: dict[str, str]) -> Intent | Reject | None:
    """ "remove tiktok", "remove candy crush": uninstalling an app by its name (not "remove the alarm",
    "delete my 7am alarm" or "remove Bob from contacts": an article, a possessive, a preposition, a
    thing's noun or a digit says it is something else); the phone's own apps cannot be uninstalled."""
    from digirl.sim.tasks.entities import KNOWN_APPS, SYSTEM_APP_LABELS

    name = " ".join(g["app"].split())
    app = KNOWN_APPS.get(name.lower())
    if app is None:
        words = name.lower().split()
        if len(words) > 3 or re.search(r"\d", name) or set(words) & _NOT_APP_WORDS:
            return None
        app = " ".join(w[:1].upper() + w[1:] for w in words)
    if app in SYSTEM_APP_LABELS:
        return Reject(f"{app} is a system app: it cannot be uninstalled")
    return Intent("uninstall_app", {"app": app})


_NOT_APP_WORDS = frozenset(
    """the a an my this that these those all every from to in on of for with it them alarm alarms timer contact
    contacts event events photo photos picture pictures message messages email emails file files tab tabs
    bookmark bookmarks notification notifications song songs video videos item items cart history cache""".split()
)
