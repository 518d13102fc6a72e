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
from digirl.sim.tasks.rules import reparse

__all__: list[str] = []


@APPS_EARLY.rule(
    "(?:go|get|head|return)(?:~back)?(?:~to)?(?:~the)?~home(?:~screen|~page)?",
    "navigate(?:~back)?~to~the~home~(?:screen|page)",  # "navigate home" is a drive home, not the home screen
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
    "add~(?:the~)?(?:first|top)~{q}~(?:on|from|at)~{site}~to~(?:the~|my~)?(?:shopping~)?(?:cart|basket)",
    # "add airpods to my cart on amazon", "put batteries in the cart at target.com", "add the AirPods Pro to my amazon cart"
    "(?:add|put)~(?:an?~|some~)?{q}~(?:to|in|into)~(?:the~|my~)?(?:shopping~)?(?:cart|basket)~(?:on|at|from)~{site}",
    "(?:add|put)~(?:the~|an?~|some~)?{q}~(?:to|in|into)~(?:the~|my~)?{site}~(?:shopping~)?(?:cart|basket)",
)
def _cart(g: dict[str, str]) -> Intent | None:
    site, q = canonical_shop_site(g["site"]), unquote(g["q"])
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


_CAMERA_MODE = "(?P<mode>photo|video|portrait|night|panorama|pano|slow~motion|slo-?mo)"
#: A camera mode as said → the mode row's name (the last three are the newer camera's).
_MODE_NAMES = {"pano": "Panorama", "slo-mo": "Slow motion", "slomo": "Slow motion", "slow motion": "Slow motion"}


@APPS_EARLY.rule(
    f"(?:switch|set|change|put)~(?:the~)?camera~(?:to|in(?:to)?)~{_CAMERA_MODE}(?:~mode)?",
    f"(?:open|start|launch)~(?:the~)?camera~in~{_CAMERA_MODE}~mode",
    f"(?:switch|change|go)~(?:over~)?to~{_CAMERA_MODE}~mode(?:~(?:in|on)~the~camera)?",
)
def _camera_mode(g: dict[str, str]) -> Intent:
    said = " ".join(g["mode"].lower().split())
    return Intent("app_page", {"app": "camera", "page": _MODE_NAMES.get(said, said.capitalize())})


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
    for said in (f"text {g['contact']} {body}", f"text {g['contact']} saying {body}"):  # "Are we …": not a name
        got = reparse(said)
        if got is not None and got.family == "send_message" and got.get("body") == body:
            return got
    return None


@APPS_EARLY.rule(
    "(?:open|show|view|go~to|pull~up|read|check)(?:~me)?~(?:my~|the~)?(?:conversation|chat|text~thread|message~thread|thread"
    "|messages|texts)~(?:with|from)~{c}(?:~(?:in|on)~(?:the~)?messages(?:~app)?)?",
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
