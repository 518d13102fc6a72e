"""Phrasings of the families issue 42 added outside the shipped task sets: ``go_home``,
``app_search`` (a search inside the Play Store or Contacts), ``add_to_cart`` ("add the first X on
bestbuy.com to the cart"), ``calculate`` ("use the calculator to work out 64 divided by 8") and
``app_page`` ("open the timer tab in the clock", "open the dial pad"), ``add_world_clock`` ("add
Tokyo to the world clock"). Arithmetic is ``calculate`` however it is asked ("calculate 23 times 17",
"what is 17 times 23"). They join :data:`~digirl.sim.tasks.app_rules.APPS_EARLY` (before the
AitW rules, which would read "search the Play Store for X" as a web search); the shipped task sets
parse exactly as before (tests/sim/test_sim_compound.py checks every shipped line)."""

from __future__ import annotations

import re

from digirl.sim.intents import Intent
from digirl.sim.tasks.app_rules import APPS_EARLY, unquote
from digirl.sim.tasks.normalize import canonical_shop_site
from digirl.sim.tasks.rules import Reject, reparse

__all__: list[str] = []


@APPS_EARLY.rule(
    "(?:go|get|head|return|navigate)(?:~back)?(?:~to)?(?:~the)?~home(?:~screen|~page)?",
    "(?:go|get|head|return)~back~home",
    "(?:press|tap|hit)~(?:the~)?home(?:~button|~key)?",
    "(?:show|open)~(?:me~)?(?:the~)?home~screen",
    "(?:close|exit|leave)~(?:the~|this~)?app(?:~and~go~home)?",
)
def _home(g: dict[str, str]) -> Intent:
    return Intent("go_home")


@APPS_EARLY.rule(
    "(?:search|look|check)~(?:in~|on~)?(?:the~)?(?:google~)?play~store~for~{q}",
    "(?:search|look)~(?:up~|for~)?{q}~(?:in|on)~(?:the~)?(?:google~)?play~store",
    "find~{q}~(?:in|on)~(?:the~)?(?:google~)?play~store",
)
def _store_search(g: dict[str, str]) -> Intent | None:
    q = unquote(g["q"])
    return Intent("app_search", {"app": "playstore", "query": q}) if q else None


@APPS_EARLY.rule(
    "(?:go~to|open|show(?:~me)?|check|view|see)~(?:my~|the~)?(?:shopping~)?(?:cart|basket)~(?:on|at|in)~{site}",
    "(?:go~to|open|show(?:~me)?|check|view|see)~(?:my~)?{site}~(?:shopping~)?(?:cart|basket)",
)
def _cart_page(g: dict[str, str]) -> Intent | None:
    site = canonical_shop_site(g["site"])
    return Intent("shop_cart", {"site": site}) if site else None


@APPS_EARLY.rule(
    "add~(?:the~)?(?:first|top)~{q}~(?:on|from|at)~{site}~to~(?:the~|my~)?(?:shopping~)?(?:cart|basket)",
)
def _cart(g: dict[str, str]) -> Intent | None:
    site = canonical_shop_site(g["site"])
    q = unquote(g["q"])
    return Intent("add_to_cart", {"site": site, "query": q}) if site and q else None


@APPS_EARLY.rule(
    "search~(?:in~|through~)?(?:my~|the~)?contacts(?:~app)?~for~{q}",
    "(?:search|look)~(?:for~)?{q}~in~(?:my~|the~)?contacts(?:~app)?",
)
def _contacts_search(g: dict[str, str]) -> Intent | None:
    q = unquote(g["q"])
    return Intent("app_search", {"app": "contacts", "query": q}) if q and len(q.split()) <= 3 else None


@APPS_EARLY.rule(
    "(?:use|open)~(?:the~)?calculator(?:~app)?~(?:to|and)~{x}",
    "(?:calculate|compute|work~out|figure~out|add|multiply|divide|subtract)~{x}~(?:on|with|using|in)~(?:the~)?calculator(?:~app)?",
    "on~(?:the~)?calculator,?~{x}",
)
def _calculate(g: dict[str, str]) -> Intent | None:
    from digirl.sim.families.surface import calc_intent

    return calc_intent(g["x"])


@APPS_EARLY.rule("(?:what~is|what's|how~much~is|calculate|compute|work~out|figure~out|solve)~{x}", "(?P<x>\\d[^?!]*)")
def _arithmetic(g: dict[str, str]) -> Intent | None:
    """A request that is only arithmetic ("what is 17 times 23", "calculate 250 + 175", "144 over 12")
    is worked out on the calculator, however it is asked; a percentage stays a web search."""
    from digirl.sim.families.surface import calc_intent

    return calc_intent(g["x"])


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


_CLOCK_TAB = {
    "alarm": "Alarm",
    "alarms": "Alarm",
    "clock": "Clock",
    "world clock": "Clock",
    "timer": "Timer",
    "stopwatch": "Stopwatch",
}


@APPS_EARLY.rule(
    "(?:open|go~to|show(?:~me)?|switch~to|select|tap)~(?:the~|my~)?(?P<tab>alarms?|world~clock|clock|timer|stopwatch)~tab"
    "(?:~(?:in|of|on)~(?:the~)?clock(?:~app)?)?",
    "(?:show|open)(?:~me)?~(?:the~)?world~clock",
    # a tab named without "tab" ("open the stopwatch", "show my alarms"): never an app named so
    "(?:open|go~to|show(?:~me)?|switch~to|view|check|see|bring~up)~(?:the~|my~|all~(?:my~)?)?(?P<tab>alarms|stopwatch|timer)"
    "(?:~(?:in|of|on|from)~(?:the~)?clock(?:~app)?)?",
)
def _clock_tab(g: dict[str, str]) -> Intent:
    tab = _CLOCK_TAB[" ".join(g.get("tab", "world clock").lower().split())]
    return Intent("app_page", {"app": "clock", "page": tab})


@APPS_EARLY.rule(
    "(?:open|show|bring~up|go~to|switch~to)(?:~me)?~(?:the~|my~)?(?:dial\\s*pad|dialpad|key\\s*pad|number~pad|dialer~keypad)"
    "(?:~(?:in|of|on)~(?:the~)?phone(?:~app)?)?",
)
def _keypad(g: dict[str, str]) -> Intent:
    return Intent("app_page", {"app": "phone", "page": "Keypad"})


@APPS_EARLY.rule("(?:show|open|check)(?:~me)?~(?:my~|the~)?(?:recent~calls|call~history|call~log|recents~tab)")
def _recents(g: dict[str, str]) -> Intent:
    return Intent("app_page", {"app": "phone", "page": "Recents"})


@APPS_EARLY.rule(
    "(?:switch|set|change|put)~(?:the~)?camera~(?:to|in(?:to)?)~(?P<mode>photo|video|portrait)(?:~mode)?",
    "(?:open|start|launch)~(?:the~)?camera~in~(?P<mode>photo|video|portrait)~mode",
    "(?:switch|change|go)~(?:over~)?to~(?P<mode>photo|video|portrait)~mode(?:~(?:in|on)~the~camera)?",
)
def _camera_mode(g: dict[str, str]) -> Intent:
    return Intent("app_page", {"app": "camera", "page": g["mode"].capitalize()})


@APPS_EARLY.rule(
    "(?:show|open|go~to|display)(?:~me)?~{month}~(?:in|on)~(?:my~|the~)?calendar(?:~app)?",
    "(?:show|open)(?:~me)?~(?:my~|the~)?calendar(?:~app)?~(?:for|to|at)~{month}",
)
@APPS_EARLY.rule(
    # the calendar's month grid is its only view: its month view is this month's page
    "(?:open|show|view|switch~to|go~to)(?:~me)?~(?:the~|my~)?(?:calendar(?:'s)?~)?month(?:ly)?~view"
    "(?:~(?:in|of|on)~(?:the~|my~)?calendar(?:~app)?)?",
)
def _calendar_month(g: dict[str, str]) -> Intent | None:
    from digirl.sim.families.surface import _month_page

    page = _month_page(re.sub(r"^(?:the\s+month\s+of\s+)", "", g.get("month", "this month").strip(), flags=re.I))
    return Intent("app_page", {"app": "calendar", "page": page}) if page else None


# ---- everyday wordings of the shipped families (only what no earlier phrasing takes) ------------
@APPS_EARLY.rule("(?:turn|switch|put)~{x}~back~(?P<state>on|off)")
def _back_on(g: dict[str, str]) -> Intent | None:
    got = reparse(f"turn {g['state']} {g['x']}")
    return got if got is not None and got.family == "toggle_setting" else None


@APPS_EARLY.rule("(?:set|create|add|make)~(?:two~|2~|some~|the~)?alarms~(?:for|at)~{t}")
def _alarms_for(g: dict[str, str]) -> Intent | None:
    # "set alarms for 6am and 6:15am": each time is an alarm (the compound parser carries the verb)
    got = reparse(f"set an alarm for {g['t']}")
    return got if got is not None and got.family == "set_alarm" else None


@APPS_EARLY.rule(
    "(?:lower|reduce|decrease|dim|drop|raise|increase|bump~up|boost|turn~down|turn~up|bring~down|bring~up)~(?:the~)?"
    "(?:screen~|media~|phone~)?(?P<what>brightness|volume)(?:~level)?~to~(?P<n>\\d{1,3})(?:\\s*%|~percent)?",
)
def _level_to(g: dict[str, str]) -> Intent | None:
    got = reparse(f"set the {g['what']} to {g['n']}%")
    return got if got is not None and got.family in ("set_brightness", "set_volume") else None


#: What "send X to Y" sends when X is a thing, not words: never a text whose body is "the photo".
_NOT_A_BODY = re.compile(
    r"^(?:an?|the|my|your|this|that|these|those|it|them|some|money|\$|\d+\s*(?:dollars|bucks))\b|"
    r"\b(?:e-?mail|photo|picture|pic|file|location|link|video|invite|invitation|contact|song)s?$",
    re.I,
)


@APPS_EARLY.rule("send~(?:a~(?:text|message)~(?:saying~)?)?{body}~to~{contact}")
def _send_words_to(g: dict[str, str]) -> Intent | None:
    """Words texted to a contact ("send \"on my way\" to John", "send hi to Ryan"): quoted, or a few
    that do not name a thing."""
    raw = g["body"].strip()
    quoted = len(raw) >= 2 and raw[0] in "\"'“" and raw[-1] in "\"'”"
    body = unquote(raw)
    if not body or (not quoted and (len(body.split()) > 4 or _NOT_A_BODY.search(body))):
        return None
    got = reparse(f"text {g['contact']} {body}")
    return got if got is not None and got.family == "send_message" and got.get("body") == body else None


@APPS_EARLY.rule(
    "(?:open|show|view|go~to|pull~up|read|check)(?:~me)?~(?:my~|the~)?(?:conversation|chat|text~thread|message~thread|thread"
    "|messages|texts)~(?:with|from)~{c}",
    "(?:start|begin|open)~(?:a~)?(?:new~)?(?:conversation|chat|thread|text~thread)~with~{c}",
    "(?:start|begin|write|compose|create)~(?:a~)?(?:new~)?(?:message|text|sms)~(?:to|for)~{c}",
)
def _open_thread(g: dict[str, str]) -> Intent | None:
    # the contact as the texting phrasings read it ("text Emma" names the thread's person)
    got = reparse(f"text {g['c']}")
    if got is None or got.family != "send_message" or got.get("body"):
        return None
    return Intent("open_thread", {"contact": got.get("contact")})


@APPS_EARLY.rule("open~(?:the~|my~)?(?:web~|internet~)?browser")
def _browser(g: dict[str, str]) -> Intent:
    return Intent("open_app", {"app": "Chrome"})


@APPS_EARLY.rule("(?:show|open|view|go~to|take~me~to)(?:~me)?~(?:my~|the~)?(?:e-?mail~|gmail~|mail~)?inbox")
def _inbox(g: dict[str, str]) -> Intent:
    return Intent("check_email")


@APPS_EARLY.rule(
    "(?:check|show|see|view)(?:~me)?~(?:my~|the~)?(?P<what>texts|text~messages|sms(?:~messages)?|messages|calendar|schedule)"
)
def _check_app(g: dict[str, str]) -> Intent:
    # the app's first screen is where these are checked (as "check my email" is the inbox)
    app = "Calendar" if g["what"].lower() in ("calendar", "schedule") else "Messages"
    return Intent("open_app", {"app": app})


@APPS_EARLY.rule("(?:open|show|go~to)(?:~me)?~(?:the~)?notification~settings~(?:for|of)~(?:the~)?{app}")
def _notification_settings(g: dict[str, str]) -> Intent | None:
    got = reparse(f"open the app info for {g['app']}")
    return got if got is not None and got.family == "app_settings" else None


@APPS_EARLY.rule("(?:check|see|view|read)~(?:my~|the~|all~(?:my~)?)?notifications")
def _check_notifications(g: dict[str, str]) -> Intent:
    return Intent("show_notifications")


_FOLDERS = {
    "downloads": "Downloads",
    "downloaded": "Downloads",
    "download": "Downloads",
    "images": "Images",
    "videos": "Videos",
    "audio": "Audio",
    "documents": "Documents",
    "docs": "Documents",
    "recent": "Recent",
}


@APPS_EARLY.rule(
    "(?:open|show|view|go~to|check)(?:~me)?~(?:my~|the~)?(?P<f>downloaded~files|download~folder)(?:~in~(?:the~)?files(?:~app)?)?",
    "(?:open|show|go~to)~(?:the~|my~)?(?P<f>downloads|images|videos|audio|documents|docs|recent)~folder(?:~in~(?:the~)?files(?:~app)?)?",
    "(?:open|show|go~to)~(?:the~|my~)?(?P<f>downloads|images|videos|audio|documents|docs|recent~files)~in~(?:the~)?files(?:~app)?",
    # "show my downloads", "open my recent files": the Files app's folder ("Open the downloads", a
    # shipped line, stays the Files app)
    "(?:open|show|view|go~to|check|see)(?:~me)?~(?:my~|all~(?:my~)?)(?P<f>downloads|recent~files|recently~downloaded~files)",
    "(?:show|view|check|see)(?:~me)?~(?:the~)?(?P<f>downloads|recent~files)",
    "(?:open|go~to)~(?:the~)?(?P<f>recent~files)",
)
def _files_folder(g: dict[str, str]) -> Intent:
    key = g["f"].lower().split()[0]
    return Intent("app_page", {"app": "files", "page": _FOLDERS.get(key, "Downloads")})


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


@APPS_EARLY.rule(
    "(?:remind~me|set~(?:a|up~a)~reminder)~(?:to~)?(?P<x>.+?)~(?P<w>(?:at|on|tomorrow|today|tonight|this|next)~.+)",
)
def _reminder(g: dict[str, str]) -> Intent | None:
    """ "remind me to buy milk at 5pm": an event in the calendar (the simulated phone's reminders)."""
    got = reparse(f"add {g['x']} to my calendar {g['w']}")
    return got if got is not None and got.family == "create_event" and got.get("time") else None


@APPS_EARLY.rule(
    "(?:what's|whats|what~is|anything)~on~(?:my~|the~)?(?:calendar|schedule|agenda)~(?:for~)?(?P<d>.+)",
    "what~(?:do~i~have|have~i~got|is~happening|am~i~doing)~(?:on~my~(?:calendar|schedule|agenda)~)?(?P<d>.+)",
    "(?:show(?:~me)?|open|check|see|view)~(?:my~|the~)?(?:calendar|schedule|agenda)~(?:for|on|to)~(?P<d>.+)",
)
def _calendar_day(g: dict[str, str]) -> Intent | None:
    """ "what do I have on Friday", "show my calendar for tomorrow": that day in the calendar."""
    from digirl.sim.tasks.when import parse_date

    day = parse_date(g["d"])
    return Intent("calendar_day", {"date": day.isoformat()}) if day else None


@APPS_EARLY.rule(
    "reply~(?:to~)?(?:my~|the~)?(?:latest|last|newest|most~recent)~(?:text|message|sms)~(?:with|saying|and~say)~(?P<b>.+)",
    "reply~(?P<b>.+?)~to~(?:my~|the~)?(?:latest|last|newest|most~recent)~(?:text|message|sms)",
)
def _reply_latest(g: dict[str, str]) -> Intent | None:
    body = unquote(g["b"])
    return Intent("reply_latest", {"body": body}) if body else None


@APPS_EARLY.rule("(?:i~need|i~want|i'd~like|give~me|get~me|find~me)~(?:the~)?directions~to~(?P<x>.+)")
def _need_directions(g: dict[str, str]) -> Intent | None:
    got = reparse(f"get directions to {g['x']}")
    return got if got is not None and got.family == "maps_directions" else None


@APPS_EARLY.rule("directions~to~(?P<x>.+)", "(?:how~do~i~get|how~to~get)~to~(?P<x>.+)")
def _bare_directions(g: dict[str, str]) -> Intent | None:
    """ "directions to the airport": Maps' directions, as "get directions to …" is."""
    got = reparse(f"get directions to {g['x']}")
    return got if got is not None and got.family == "maps_directions" else None


@APPS_EARLY.rule("(?P<site>[a-z]+\\.com)~(?P<q>[^?!]+)")
def _site_then_query(g: dict[str, str]) -> Intent | None:
    """ "costco.com paper towels": that shop's search."""
    site = canonical_shop_site(g["site"])
    q = unquote(g["q"])
    return Intent("shop_search", {"site": site, "query": q}) if site and q else None


@APPS_EARLY.rule(
    "(?:what's|whats|what~is)~my~(?:android|software|os)~version",
    "(?:which|what)~android~(?:am~i~on|is~this|is~on~my~phone)",
)
def _android_version(g: dict[str, str]) -> Intent:
    return Intent("settings_page", {"page": "about"})


@APPS_EARLY.rule(
    "who~(?:called|rang|phoned)~(?:me~)?(?:last|recently|today)?",
    "(?:show|check|see|view)(?:~me)?~(?:my~|the~)?(?:missed|recent|latest|last)~calls?",
)
def _who_called(g: dict[str, str]) -> Intent:
    return Intent("app_page", {"app": "phone", "page": "Recents"})


@APPS_EARLY.rule(
    "(?:did|has)~(?P<c>[A-Za-z][\\w'-]*(?:~[A-Z][\\w'-]*)?)~(?:text(?:ed)?|message(?:d)?)~me(?:~(?:back|yet|today))?"
)
def _did_they_text(g: dict[str, str]) -> Intent | None:
    return reparse(f"open my conversation with {g['c']}")


@APPS_EARLY.rule("(?:any|do~i~have~(?:any~)?)~(?:new~|unread~)?(?:e-?mails?|mail)~from~(?P<q>[^?!]+)")
def _mail_from(g: dict[str, str]) -> Intent | None:
    q = unquote(g["q"])
    return Intent("app_search", {"app": "gmail", "query": q}) if q else None


@APPS_EARLY.rule("am~i~(?:free|busy|available)~(?:on~)?(?P<d>[^?!]+?)(?:~(?:morning|afternoon|evening|night))?")
def _am_i_free(g: dict[str, str]) -> Intent | None:
    from digirl.sim.tasks.when import parse_date

    day = parse_date(g["d"])
    return Intent("calendar_day", {"date": day.isoformat()}) if day else None


@APPS_EARLY.rule("(?:show(?:~me)?|open|check)~(?:my~)?(?:youtube~)?watch~later(?:~list|~playlist)?(?:~on~youtube)?")
def _watch_later(g: dict[str, str]) -> Intent:
    return Intent("app_page", {"app": "youtube", "page": "Library"})


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


@APPS_EARLY.rule(
    "(?:add|create|save)~(?:a~)?(?:new~)?contact~(?:named~|called~)?(?P<n>[A-Za-z][A-Za-z' .-]*?)"
    "\\s*,\\s*(?P<num>\\+?[\\d][\\d ()-]{5,})"
)
def _contact_comma_number(g: dict[str, str]) -> Intent | None:
    """ "add a new contact named Diego Ramirez, 555 201 8890"."""
    return reparse(f"add a new contact named {g['n'].strip()} with number {g['num'].strip()}")


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
    return (
        Intent("youtube_channel", {"channel": got.get("channel")})
        if got is not None and got.family == "youtube_subscribe"
        else None
    )


@APPS_EARLY.rule(
    "(?:put|set|switch|turn)~(?:my~|the~)?(?:phone|ringer|device)?~?(?:on|to|in(?:to)?)~silent(?:~mode)?",
    "(?:turn~on|enable|activate)~(?:the~)?silent~mode",
    "silence~my~phone",
)
def _silent(g: dict[str, str]) -> Intent:
    """Silent: the simulated phone has one volume, so silent is that volume at 0 ("mute my phone")."""
    return Intent("set_volume", {"level": "0"})


@APPS_EARLY.rule(
    "(?:take|grab|capture|make|save)~(?:a~)?screen\\s*-?\\s*(?:shot|capture|grab)(?:~of~(?:this|the~screen|my~screen))?",
    "screen\\s*shot~(?:this|the~screen)",
)
def _screenshot(g: dict[str, str]) -> Intent:
    return Intent("take_screenshot")


@APPS_EARLY.rule(
    "(?:show|open|view|see|go~to|check)(?:~me)?~(?:my~|the~)?(?:favou?rite|starred)~(?:contacts|people)",
    "(?:show|open|view|go~to)(?:~me)?~(?:my~|the~)?favou?rites~(?:in|on)~(?:the~|my~)?contacts(?:~app)?",
)
def _favourite_contacts(g: dict[str, str]) -> Intent:
    return Intent("app_page", {"app": "contacts", "page": "Favourites"})


@APPS_EARLY.rule(
    "(?:add|put)~(?P<c>.+?)~to~(?:my~|the~)?favou?rites(?:~(?:in|on)~(?:my~)?contacts)?",
    "(?:star|favou?rite)~(?P<c>.+?)(?:~in~(?:my~)?contacts)?",
    "(?:mark|make|set)~(?P<c>.+?)~as~(?:a~)?favou?rite(?:~contact)?",
)
def _favourite_contact(g: dict[str, str]) -> Intent | None:
    from digirl.sim.tasks.app_rules import contact_name

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


_LATEST = "(?:latest|last|newest|most~recent|new|recent)"


@APPS_EARLY.rule(
    f"(?:read|open|show(?:~me)?|check|see|view)~(?:my~|the~)?{_LATEST}~(?:text(?:~message)?|message|sms|conversation|chat)"
    "(?:~(?:in|on)~(?:the~)?messages(?:~app)?)?",
)
def _latest_thread(g: dict[str, str]) -> Intent:
    return Intent("latest_thread")


@APPS_EARLY.rule(
    f"(?:read|open|show(?:~me)?|check|see|view)~(?:my~|the~)?{_LATEST}~(?:e-?mail|mail|message~in~(?:my~)?inbox)"
    "(?:~(?:in|on)~(?:the~)?gmail(?:~app)?)?",
)
def _latest_mail(g: dict[str, str]) -> Intent:
    return Intent("open_mail")


@APPS_EARLY.rule("(?:stop|pause|halt)~(?:the~|my~)?stop ?watch")
def _stop_stopwatch(g: dict[str, str]) -> Intent:
    return Intent("stop_stopwatch")


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


@APPS_EARLY.rule(
    "(?:create|add|save|make)~(?:a~)?(?:new~)?contact~(?:for~|named~|called~)?(?P<n>[A-Za-z][A-Za-z' .-]*?)~"
    "(?:with~(?:the~)?(?:number~|phone~)?|at~)?(?P<num>\\+?[\\d][\\d ()-]{5,})"
)
def _contact_with_number(g: dict[str, str]) -> Intent | None:
    """ "create contact Nia 555 8888": the add-contact phrasing with the number right after the name."""
    return reparse(f"add a new contact named {g['n'].strip()} with number {g['num'].strip()}")


@APPS_EARLY.rule(
    "(?:show|open|view|see)(?:~me)?~(?:my~|all~(?:my~)?)(?:recent~|latest~|new~)?(?:photos|pictures|pics|gallery|camera~roll)"
)
def _my_photos(g: dict[str, str]) -> Intent:
    return Intent("open_app", {"app": "Photos"})


@APPS_EARLY.rule(
    "(?:open|show|go~to|view|check|see)(?:~me)?~(?:the~|my~)?(?:my~apps(?:~(?:&|and)~games)?|manage~apps(?:~(?:&|and)~device)?|"
    "installed~apps|app~updates|updates)~(?:in|on|from)~(?:the~)?(?:google~)?play~store",
    "(?:open|show|go~to)(?:~me)?~(?:the~)?(?:google~)?play~store(?:'s)?~(?:my~apps|manage~apps)(?:~page|~tab|~screen)?",
)
def _store_manage(g: dict[str, str]) -> Intent:
    return Intent("app_page", {"app": "playstore", "page": "Manage"})
