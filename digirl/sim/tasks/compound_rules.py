"""Compound instructions: "A and B", "A, then B", "A, B and C" → an ordered plan of sub-intents.

The text is cut at its connectives (``and``, ``then``, ``and then``, ``after that``, commas,
semicolons) into pieces; every way of regrouping consecutive pieces is tried (a comma may belong
to a message body: "text Mom saying hi, how are you"), and a grouping is a plan when every group
parses as a sub-task. Groups are read in order with what the earlier ones established:

- **pronouns**: "install Duolingo and open *it*", "call Mom and text *her* …", "turn *it* off";
- **in-app steps**: "search for X" in YouTube / Maps / Chrome / a shopping site / Contacts, "open
  the first result" after a site search, "get directions to the first one" after a Maps search,
  "play the first video" after a YouTube search, "add it to the cart";
- **ellipsis**: "turn off bluetooth, then wifi" (the verb carries over, for settings and apps the
  phone knows), "open settings, then wifi" (a page of the app in front).

Of the groupings that work, the one with the most sub-tasks wins (ties: the first found). A
plan's sub-tasks come from every family, the user's included. :func:`parse_compound` returns the
sub-intents (the caller builds the compound intent); :func:`swallowed_connective` tells the parser
when a single-family match swallowed a second request into a slot ("open Spotify and Instagram").

To add a rule for an in-app step, append a function to :data:`CONTEXT_RULES` (docs/tasks.md).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from digirl.sim.intents import SHOP_SITES, Intent
from digirl.sim.tasks.matching import match_rules, match_single
from digirl.sim.tasks.rules import Reject

__all__ = [
    "CONTEXT_RULES",
    "FALLBACK_RULES",
    "FIRST_ITEM",
    "MAX_PIECES",
    "Context",
    "failed_step",
    "parse_compound",
    "second_request",
    "swallowed_connective",
]

#: Texts cut into more pieces than this are not tried as compounds (2^(n-1) groupings).
MAX_PIECES = 8
_SEP = re.compile(
    r"(\s*(?:;|,?\s+and\s+then\s+|,?\s+(?:and\s+)?after\s+that,?\s+|,?\s+(?:and\s+)?(?:next|finally|lastly|afterwards),?\s+"
    r"|,?\s+and\s+also\s+|,?\s+then\s+|,?\s+(?:once|when)\s+(?:that's\s+|it's\s+)?(?:done|finished),?\s+"
    r"|,?\s+&\s+|,\s*and\s+|\s+and\s+|,\s*|\.\s+))",
    re.I,
)
#: "First, open settings, then …": the opening word of a sequence is not part of its first step.
_FIRST_WORD = re.compile(r"^(?:first(?:ly)?|to\s+start|start\s+by)\s*,?\s+(?=\S)", re.I)
#: Object pronouns ("open it", "call him"); "that"/"this" only ending a request ("bookmark that"),
#: as elsewhere it starts a message ("text her that I'm late").
_PRONOUN = re.compile(
    r"\b(?:it|them|him|her)\b|\b(?:that|this)$|\b(?:the|this)\s+(?:page|site|website)$|\b(?:that|this|the\s+same)\s+number$", re.I
)
#: A group that explicitly looks something up may be a question turned into a web search (not any
#: group: "text Mom saying hi, how are you" must not become a text and a search).
_LOOKUP = re.compile(r"^(?:check|look\s+up|find\s+out|google|search\s+for|what(?:'s|\s+is))\b", re.I)
_PRONOUNS = frozenset({"it", "them", "him", "her", "that", "this", "this one", "that one"})
#: "the first one", "the top result", "1st": a phrase pointing at the first item a list shows.
FIRST_ITEM = r"(?:the\s+)?(?:first|top|1st)(?:\s+(?:one|result|item|product|entry|link|video|listing|hit|place|match))?"
_SEARCH = re.compile(r"^(?:search|look|find|browse)\s+(?:for\s+|up\s+)?(?P<q>.+?)$", re.I)
_OPEN_FIRST = re.compile(rf"^(?:open|select|tap|click|choose|pick|go\s+to|view)\s+(?:on\s+)?{FIRST_ITEM}$", re.I)
_WEB_FOR = re.compile(r"^(?:google|the\s+web|the\s+internet|online)\s+for\s", re.I)
_PLAY_FIRST = re.compile(rf"^(?:play|watch|open)\s+(?:{FIRST_ITEM}|it|that(?:\s+one)?|the\s+video)$", re.I)
#: The contact a Contacts search just found: "search for Ben, then open his contact".
_OPEN_CONTACT = re.compile(
    rf"^(?:open|view|show(?:\s+me)?|tap(?:\s+on)?)\s+(?:(?:his|her|their|the)\s+contact(?:\s+(?:card|page|details))?|it|him|her|{FIRST_ITEM})$",
    re.I,
)
_NEAREST = r"(?:the\s+)?(?:closest|nearest)(?:\s+one)?"
_DIRECTIONS_FIRST = re.compile(
    rf"^(?:get|show)\s+(?:me\s+)?directions(?:\s+(?:to|for)\s+(?:{FIRST_ITEM}|it|there|{_NEAREST}))?$"
    rf"|^(?:navigate|drive|go)\s+(?:to\s+)?(?:{FIRST_ITEM}|there|it|{_NEAREST})$",
    re.I,
)
#: Starting the route to the place just found, with its travel mode when one is said.
_NAVIGATE_THERE = re.compile(
    r"^(?:(?:start|begin)\s+(?:the\s+)?(?:navigation|navigating|route|directions)(?:\s+there)?"
    r"|(?:get|show|start)\s+(?:me\s+)?(?P<mode>walking|driving|transit|cycling|biking)\s+directions(?:\s+there)?"
    r"|(?:get|show)\s+(?:me\s+)?directions(?:\s+there)?\s+(?:by|on|via)\s+(?P<mode3>bike|bicycle|foot|car|transit|bus|train)"
    r"|(?P<mode2>walk|drive)\s+me\s+there)$",
    re.I,
)
_MODES = {"walking": "Walk", "walk": "Walk", "driving": "Drive", "drive": "Drive", "transit": "Transit", "cycling": "Bike",
          "biking": "Bike", "bike": "Bike", "bicycle": "Bike", "foot": "Walk", "car": "Drive", "bus": "Transit",
          "train": "Transit"}  # fmt: skip
_CART = re.compile(
    rf"^(?:add|put)(?:\s+(?:it|this|that|them|{FIRST_ITEM}))?\s+(?:to|in|into)\s+(?:the\s+|my\s+)?(?:shopping\s+)?(?:cart|basket|bag)$",
    re.I,
)
_VERB = re.compile(
    r"^(?P<verb>(?:turn|switch)\s+(?:on|off)|enable|disable|open|launch|start|close|install|uninstall|update|call|"
    r"text|go\s+to)\s+",
    re.I,
)


@dataclass
class Context:
    """What the sub-tasks parsed so far leave on the phone: the app in front, the site and the last
    search shown, the last thing named (for pronouns) and the verb of the last request (for ellipsis)."""

    app: str = ""
    site: str = ""
    query: str = ""
    entity: str = ""
    verb: str = ""
    said: str = ""
    last: Intent | None = None
    parts: list[Intent] = field(default_factory=list)


ContextRule = Callable[[str, Context], "Intent | None"]
#: Sub-tasks that only bring an app or site to the front (a search after them searches there).
_NAVIGATION = frozenset({"open_app", "open_site", "shop_goto", "settings_page", "browser_tab"})
#: A context rule's "this grouping cannot work" (stops the phrasings from taking the group).
_BLOCKED = Intent("go_home", {"blocked": "1"})
#: Slot values that point at something on screen rather than name it ("subscribe to the first channel").
_VAGUE = re.compile(r"^(?:the\s+)?(?:first|top|1st|second|last|next|closest|nearest\s+one$)\b|^(?:one|it|there)$", re.I)
_ONE = re.compile(r"\b(?:another|a\s+new|a\s+second|a|one\s+more)\s+one\b", re.I)
_ONE_NOUN = {
    "set_alarm": "an alarm",
    "delete_alarm": "an alarm",
    "disable_alarm": "an alarm",
    "start_timer": "a timer",
    "create_event": "an event",
    "browser_tab": "a tab",
    "take_photo": "a photo",
    "add_contact": "a contact",
}


def _shop_site(ctx: Context) -> str:
    return ctx.site if ctx.site in SHOP_SITES else ""


def _in_app_search(text: str, ctx: Context) -> Intent | None:
    if ctx.app == "youtube":
        play = re.match(r"^(?:play|watch|put\s+on)\s+(?P<v>.+)$", text, re.I)
        if play is not None and not _PLAY_FIRST.match(text):  # "open YouTube and play Blinding Lights"
            v = play.group("v")
            if ctx.entity:  # "search for Taylor Swift and play her latest video"
                v = re.sub(r"\b(?:his|her|their|its)\b", f"{ctx.entity}'s", v, count=1, flags=re.I)
            got = match_single(f"play {v} on YouTube")
            return got if _usable(got) else None
    m = _SEARCH.match(text)
    if m is None or not ctx.app:
        return None
    q = re.sub(r"^(?:a|an|the|some)\s+", "", m.group("q").strip(" .\"'"), flags=re.I)
    if not q or q.lower() in _PRONOUNS or _WEB_FOR.match(q):  # "search google for X" is a web search anywhere
        return None
    if ctx.app == "youtube":
        return match_single(f"search YouTube for {q}")
    if ctx.app == "maps":
        return Intent("maps_search", {"query": q})
    if ctx.app == "chrome" and _shop_site(ctx):
        return Intent("shop_search", {"site": _shop_site(ctx), "query": q})
    if ctx.app in ("chrome", "google") and ctx.site in ("", "google.com"):
        return match_single(f"search for {q}")
    if ctx.app == "contacts" or (ctx.app == "phone" and ctx.last is not None and ctx.last.get("page") == "Contacts"):
        return Intent("app_search", {"app": "contacts", "query": q})  # the Phone app's Contacts tab is the contact list
    if ctx.app == "playstore":
        return Intent("app_search", {"app": "playstore", "query": q})
    from digirl.sim.tasks.surface_rules import plain_query

    if ctx.app in ("gmail", "settings") and ctx.last is not None and ctx.last.family in ("open_app", "app_page"):
        # Only right after opening the app: "check my inbox and search for hotels" stays a web search.
        return Intent("app_search", {"app": ctx.app, "query": q}) if plain_query(q) else None
    if ctx.app == "chrome" and ctx.site and plain_query(q):  # another site's own search ("go to reddit.com and search for memes")
        return Intent("site_search", {"site": ctx.site, "query": q})
    if ctx.last is not None and ctx.last.family in _NAVIGATION:
        # "open Gmail and search for invoices": a search inside an app the phone cannot search
        # there; it is not a web search, so this grouping fails.
        return _BLOCKED
    return None


def _first_result(text: str, ctx: Context) -> Intent | None:
    last = ctx.last
    if last is None:
        return None
    if _OPEN_FIRST.match(text) or _PLAY_FIRST.match(text):
        if last.family in ("shop_search", "add_to_cart"):
            return Intent("shop_select", {"site": last.get("site"), "query": last.get("query")})
        if last.family == "youtube_video":
            return Intent("youtube_video", {**last.slots, "action": "play"})
    if _OPEN_CONTACT.match(text) and last.family == "app_search" and last.get("app") == "contacts":
        return Intent("view_contact", {"name": last.get("query")})
        if last.family == "maps_search" and _OPEN_FIRST.match(text):
            return None  # a place page is not a task of its own; directions are
    if _DIRECTIONS_FIRST.match(text) and last.family == "maps_search":
        return Intent("maps_directions", {"destination": last.get("query")})
    m = _NAVIGATE_THERE.match(text)
    if m is not None and last.family == "maps_search":  # "… and start navigation", "… and walk me there"
        mode = _MODES.get((m.group("mode") or m.group("mode2") or m.group("mode3") or "").lower())
        return Intent("maps_directions", {"destination": last.get("query"), **({"mode": mode} if mode else {})})
    if _CART.match(text) and last.family in ("shop_search", "shop_select"):
        return Intent("add_to_cart", {"site": last.get("site"), "query": last.get("query")})
    return None


def _settings_page(text: str, ctx: Context) -> Intent | None:
    """In Settings, a bare page name or "go to X" is that page ("open settings, then wifi")."""
    if ctx.app != "settings":
        return None
    name = re.sub(r"^(?:go\s+to|open|tap(?:\s+on)?|select|then)\s+", "", text, flags=re.I).strip()
    name = re.sub(r"^(?:the\s+)?", "", name, flags=re.I)
    name = re.sub(r"\s+(?:settings?|page|menu|section)$", "", name, flags=re.I)
    if not name or len(name.split()) > 3:
        return None
    got = match_single(f"open {name} settings")
    if got is not None and got.family in ("settings_page", "app_settings"):
        return got
    if ctx.last is not None and ctx.last.family == "settings_page" and ctx.last.get("page") == "apps":
        got = match_single(f"open the app info for {name}")
        return got if got is not None and got.family == "app_settings" else None
    return None


def _ellipsis(text: str, ctx: Context) -> Intent | None:
    """A bare name after a request carries its verb: "turn off bluetooth, then wifi"."""
    if not ctx.verb or _VERB.match(text) or len(text.split()) > 3:
        return None
    got = match_single(f"{ctx.verb} {text}")
    if got is None:
        return None
    if got.family == "open_app" and not _known_app(got.get("app")):
        return None
    return (
        got
        if got.family in ("toggle_setting", "open_app", "settings_page", "make_call", "install_app", "uninstall_app")
        else None
    )


#: A value said alone after a request: a state, or a time / number / duration ("6:15am", "10 minutes").
_BARE_VALUE = re.compile(r"^(?:on|off|\S*\d\S*(?:\s+[a-z.]+)?)$", re.I)


def _shared_verb(text: str, ctx: Context) -> Intent | None:
    """A short group that is only a new value takes the request before it with its last words
    replaced ("turn airplane mode on then off", "set an alarm for 6am and 6:15am"), or one that starts
    with an article takes its verb ("set an alarm for 7am and a timer for 20 minutes")."""
    words = ctx.said.split()
    if ctx.last is None or not words:
        return None
    if re.match(r"^(?:an?|the|another)\s", text, re.I):  # "set an alarm for 7am and a timer for 20 minutes"
        got = match_single(f"{words[0]} {text}")
        return got if got is not None and _usable(got) and not _free_text(got) else None
    if not _BARE_VALUE.match(text):  # a name may hold "and"/"&" itself ("Barnes & Noble")
        return None
    if ctx.last.family == "add_contact":  # "add Luis Ortega, 312-555-0144, then …": his number, not a second contact
        return None
    for k in range(1, min(3, len(words) - 1) + 1):
        got = match_single(" ".join([*words[:-k], text]))
        if got is not None and got.family == ctx.last.family and got != ctx.last and _usable(got) and not _free_text(got):
            return got
    return None


def _free_text(intent: Intent) -> bool:
    """Whether ``intent`` carries words of the user's (a message, a query): "text Mom saying hi, how
    are you" is one message, not a second one saying "how are you"."""
    return any(intent.get(k) for k in ("body", "query", "subject"))


def _in_app_page(text: str, ctx: Context) -> Intent | None:
    """Inside the Calculator an arithmetic request is entered there; inside Clock / Phone / Camera /
    Calendar / Files a tab, mode, month or folder name ("go to timer", "switch to video", "go to next
    month", "show downloads") is that page."""
    if ctx.app == "calculator":
        from digirl.sim.families.surface import calc_intent

        return calc_intent(text)
    if ctx.app not in ("clock", "phone", "camera", "calendar", "files", "gmail", "youtube", "playstore", "contacts"):
        return None
    from digirl.sim.families.surface import APP_PAGES, _month_page

    if ctx.app == "calendar":
        m = re.fullmatch(r"(?:go\s+to|show(?:\s+me)?|open|switch\s+to)\s+(?:the\s+)?(?P<m>.+)", text.strip(), re.I)
        page = _month_page(m.group("m")) if m else None
        return Intent("app_page", {"app": "calendar", "page": page}) if page else None
    name = re.sub(
        r"^(?:go\s+to|open|tap(?:\s+on)?|select|switch\s+to|show(?:\s+me)?)\s+(?:the\s+)?", "", text.strip(), flags=re.I
    )
    name = re.sub(r"\s+(?:tab|mode)$", "", name, flags=re.I).lower()
    name = re.sub(r"^(?:my|the)\s+|\s+folder$", "", name)
    name = {
        "alarms": "alarm",
        "world clock": "clock",
        "dial pad": "keypad",
        "dialpad": "keypad",
        "recent calls": "recents",
        "pictures": "images",
        "downloaded files": "downloads",
        "recent files": "recent",
        "apps": "manage",  # the Play Store's "my apps"
        "apps & games": "manage",
        "apps and games": "manage",
        "manage apps": "manage",
        "manage apps & device": "manage",
        "updates": "manage",
        "app updates": "manage",
        "favorites": "favourites",
        "trending": "explore",
        "trending videos": "explore",
        "starred": "favourites",
    }.get(name, name)
    for page in APP_PAGES[ctx.app]:
        if name == page.lower():
            return Intent("app_page", {"app": ctx.app, "page": page})
    return None


def _app_info_step(text: str, ctx: Context) -> Intent | None:
    """On an app's Settings page, "turn off notifications"; in Contacts, "add Nora with number …"; in
    Calendar, "add Team dinner on Friday at 8pm"."""
    last = ctx.last
    if last is not None and last.family in ("app_settings", "app_notifications"):
        m = re.fullmatch(
            r"(?:(?:turn|switch)\s+(?P<s1>on|off)\s+(?:the\s+|its\s+|all\s+)?notifications|(?:turn|switch)\s+(?:the\s+|its\s+)?"
            r"notifications\s+(?P<s2>on|off)|(?P<v>disable|enable|mute|block|allow|unmute)\s+(?:the\s+|its\s+|all\s+)?notifications)",
            text.strip(),
            re.I,
        )
        if m is not None:
            state = m.group("s1") or m.group("s2") or ("on" if m.group("v").lower() in ("enable", "allow", "unmute") else "off")
            return Intent("app_notifications", {"app": last.get("app"), "state": state.lower()})
    if ctx.app == "calendar":  # "open the calendar and add Team dinner on Friday at 8pm"
        got = _reworded(
            text,
            r"(?:add|create|schedule|put|make)\s+(?:an?\s+(?:new\s+)?event\s+(?:called\s+|named\s+)?)?(?P<rest>.+)",
            "create an event called {rest}",
            "create_event",
        )
        return got if got is not None and got.get("date") else None
    if ctx.app == "contacts":
        return _reworded(
            text,
            r"(?:add|create|save)\s+(?P<rest>(?!a\b|an\b|new\b|the\b).+\s+(?:with\s+(?:the\s+)?(?:number|phone)|at)\s+.+)",
            "add a new contact named {rest}",
            "add_contact",
        )
    return None


def _reworded(text: str, pattern: str, phrase: str, family: str) -> Intent | None:
    """``text`` (matched by ``pattern``) said again as ``phrase`` with its ``rest``, if that parses as ``family``."""
    m = re.fullmatch(pattern, text.strip(), re.I)
    if m is None:
        return None
    got = match_single(phrase.format(rest=m.group("rest")))
    return got if got is not None and got.family == family else None


#: In-context rules for steps that only mean something after the one before: tried in order on each
#: group before the phrasings (a rule returns None to pass).
CONTEXT_RULES: list[ContextRule] = [_first_result, _in_app_search, _in_app_page, _app_info_step]
#: Rules tried after the phrasings failed on a group (bare names: "…, then wifi").
FALLBACK_RULES: list[ContextRule] = [_ellipsis, _settings_page, _shared_verb]


def _known_app(name: str) -> bool:
    from digirl.sim.apps import EXTRA_APPS
    from digirl.sim.content import norm_name
    from digirl.sim.phone import resolve_app

    return not resolve_app(name).startswith("x.") or norm_name(name) in {norm_name(a) for a in EXTRA_APPS}


def _has_pronoun_slot(intent: Intent) -> bool:
    return any(v.strip().lower() in _PRONOUNS for v in intent.slots.values())


def _quoted_words(got: Intent, text: str) -> bool:
    """Whether ``got``'s message or subject is a quoted part of ``text`` and its other slots are usable."""
    quoted = {q.strip().lower() for q in re.findall(r"\"([^\"]+)\"", text)}
    words = [k for k in ("body", "subject") if got.get(k).strip().lower() in quoted]
    return bool(words) and _usable(Intent(got.family, {k: v for k, v in got.slots.items() if k not in words}))


def _usable(got: Intent | None) -> bool:
    return (
        got is not None
        and not _has_pronoun_slot(got)
        and not swallowed_connective(got)
        and not any(_VAGUE.match(v) for k, v in got.slots.items() if k not in ("key_terms", "query", "body", "subject"))
    )


def _resolve(text: str, ctx: Context) -> Intent | None:
    got = _resolve_any(text, ctx)
    return None if got is _BLOCKED else got


def _resolve_any(text: str, ctx: Context) -> Intent | None:
    got = _resolve_group(text, ctx)
    if (
        got is not None
        and got.family == "open_app"
        and ctx.last is not None
        and ctx.last.family == "settings_page"
        and ctx.last.get("page") == "apps"
    ):
        return Intent("app_settings", {"app": got.get("app")})  # "settings, apps, then Instagram"
    return _in_app_before(got, ctx.last) if got is not None else None


def _notes_apps() -> frozenset[str]:
    from digirl.sim.apps.notes import NOTES_APPS

    return NOTES_APPS


def _music_apps() -> frozenset[str]:
    from digirl.sim.apps.player import MUSIC_SERVICES

    return MUSIC_SERVICES | {"music"}


#: Families whose ``app`` slot, when the step names none, is the app of the step before — if that step
#: is of one of these families and its app can do it ("open keep, make a list …", "play X on spotify,
#: then skip"): family → (families that lend their app, the app keys that can do it).
_APP_FROM_BEFORE: dict[str, tuple[tuple[str, ...], Callable[[], frozenset[str]]]] = {
    "create_note": (("open_app",), _notes_apps),
    "music_control": (("play_music", "music_control"), _music_apps),
}


def _in_app_before(got: Intent, last: Intent | None) -> Intent:
    """``got`` done in the app the step before used, where :data:`_APP_FROM_BEFORE` says so."""
    from digirl.sim.phone import resolve_app

    if got.family not in _APP_FROM_BEFORE or got.get("app") or last is None:
        return got
    lenders, apps = _APP_FROM_BEFORE[got.family]
    app = last.get("app") if last.family in lenders else ""
    if not app or resolve_app(app) not in apps():
        return got
    return Intent(got.family, {**got.slots, "app": app})


def _resolve_group(text: str, ctx: Context) -> Intent | None:
    # "turn it off again": "again" says nothing the step does not
    text = re.sub(r"\s+(?:again|as\s+well|too|instead)$", "", text.strip(" ,.;"), flags=re.I)
    # "… then call him afterwards", "open it once it's done": when the step happens is its place in the plan
    text = re.sub(
        r",?\s+(?:afterwards?|after\s+that|right\s+after(?:wards)?|(?:once|when|after)\s+(?:it's|it\s+is|it\s+has|that's)"
        r"\s+(?:done|installed|finished|ready|downloaded|been\s+installed))$",
        "",
        text,
        flags=re.I,
    )
    if not text:
        return None
    for rule in CONTEXT_RULES:
        got = rule(text, ctx)
        if got is not None and not second_request(got):  # "search for IKEA and start navigation" is two steps
            return got
    if ctx.last is not None and ctx.last.family in _ONE_NOUN and _ONE.search(text):
        text = _ONE.sub(_ONE_NOUN[ctx.last.family], text, count=1)  # "set another one for 6:15am"
    got = match_single(text)
    if got is not None and not _usable(got) and _quoted_words(got, text):
        return got  # a quoted message may hold commas and "and" ("text Dad "on my way, see you"")
    if not _usable(got) and ctx.entity and _PRONOUN.search(text):
        named = _PRONOUN.sub(ctx.entity, text, count=1)
        got = match_single(named)  # "text her that …"
        if got is not None and not _usable(got) and _quoted_words(got, named):
            return got  # "… send her a text saying "Feliz cumpleaños, tía!""
        if not _usable(got):  # "play her latest video"
            got = match_single(re.sub(r"\b(?:his|her|their|its)\b", f"{ctx.entity}'s", text, count=1, flags=re.I))
    if not _usable(got) and _LOOKUP.match(text):
        from digirl.sim.tasks.questions import question_search

        got = question_search(text)  # "check the weather and then call Mom": an explicit look-up only
    if _usable(got):
        assert got is not None
        if ctx.app == "settings" and got.family in ("open_site", "open_app") and not _known_app(got.get("app", "x")):
            return _settings_page(text, ctx) or got
        return got
    for rule in FALLBACK_RULES:
        got = rule(text, ctx)
        if got is not None:
            return got
    return None


_APP_OF = {
    "web_search": "google",
    "maps_search": "maps",
    "maps_directions": "maps",
    "youtube_play": "youtube",
    "youtube_video": "youtube",
    "youtube_subscribe": "youtube",
    "youtube_channel": "youtube",
    "install_app": "playstore",
    "update_app": "playstore",
    "uninstall_app": "playstore",
    "settings_page": "settings",
    "app_settings": "settings",
    "app_notifications": "settings",
    "toggle_setting": "settings",
    "set_option": "settings",
    "connect_wifi": "settings",
    "connect_bluetooth": "settings",
    "lock_screen": "launcher",
    "clear_history": "chrome",
    "open_result": "chrome",
    "show_recents": "launcher",
    "close_recent": "launcher",
    "open_file": "files",
    "delete_file": "files",
    "delete_contact": "contacts",
    "app_action": "settings",
    "update_contact": "contacts",
    "set_alarm": "clock",
    "start_timer": "clock",
    "cancel_timer": "clock",
    "start_stopwatch": "clock",
    "stop_stopwatch": "clock",
    "delete_alarm": "clock",
    "disable_alarm": "clock",
    "make_call": "phone",
    "call_back": "phone",
    "call_speaker": "phone",
    "call_place": "phone",
    "send_message": "messages",
    "open_thread": "messages",
    "latest_thread": "messages",
    "reply_latest": "messages",
    "open_mail": "gmail",
    "mail_action": "gmail",
    "play_music": "music",
    "add_world_clock": "clock",
    "add_contact": "contacts",
    "favorite_contact": "contacts",
    "view_contact": "contacts",
    "create_event": "calendar",
    "take_photo": "camera",
    "camera_lens": "camera",
    "view_photo": "photos",
    "delete_photo": "photos",
    "send_photo": "photos",
    "check_email": "gmail",
    "send_email": "gmail",
    "go_home": "launcher",
}
_ENTITY_SLOTS = ("app", "contact", "name", "site", "channel", "setting")


def _advance(ctx: Context, intent: Intent, text: str) -> None:
    from digirl.sim.phone import resolve_app

    fam = intent.family
    if fam == "open_app":
        ctx.app = resolve_app(intent.get("app"))
        ctx.site = ""
    elif fam in (
        "open_site",
        "shop_goto",
        "shop_search",
        "shop_select",
        "add_to_cart",
        "bookmark_site",
        "site_search",
        "shop_cart",
    ):
        ctx.app, ctx.site = "chrome", intent.get("site") or ctx.site
    elif fam in ("browser_tab", "close_tabs", "browser_page"):
        ctx.app, ctx.site = "chrome", ""
    elif fam in _APP_OF:
        ctx.app, ctx.site = _APP_OF[fam], ""
    elif fam in ("app_search", "app_page"):
        ctx.app, ctx.site = intent.get("app"), ""
    elif fam == "calculate":
        ctx.app, ctx.site = "calculator", ""
    if fam in ("shop_search", "web_search", "maps_search", "youtube_video", "app_search", "site_search"):
        ctx.query = intent.get("query")
    for slot in _ENTITY_SLOTS:
        v = intent.get(slot)
        if v and v.lower() != "all":
            ctx.entity = v.replace("_", " ") if slot == "setting" else v
            break
    if fam == "show_notifications":  # "check my notifications and then clear them"
        ctx.entity = "notifications"
    if fam in ("app_search", "youtube_video") and intent.get("action", "search") == "search":
        ctx.entity = intent.get("query")  # "search for TikTok and install it"
    if fam == "settings_page":  # "open settings, then wifi, then turn it off": "it" is what was named
        name = re.sub(r"^(?:go\s+to|open|tap(?:\s+on)?|select|show)\s+(?:the\s+)?", "", text.strip(), flags=re.I)
        ctx.entity = re.sub(r"\s+(?:settings?|page|menu)$", "", name, flags=re.I) or ctx.entity
    m = _VERB.match(text.strip())
    if m is not None:
        ctx.verb = m.group("verb")
    elif fam == "toggle_setting" and intent.get("state") in ("on", "off"):
        ctx.verb = f"turn {intent.get('state')}"
    said = text.strip(" ,.;")
    # a bare value keeps the request it filled in, for the next one ("6am, 6:30am and 7am")
    ctx.last, ctx.said = intent, ctx.said if ctx.said and _BARE_VALUE.match(said) else said
    ctx.parts.append(intent)


#: A piece that asks for nothing ("turn on airplane mode, wait, turn it off"): dropped with its separator.
_FILLER = re.compile(r"(?:wait|hold\s+on|pause)(?:\s+(?:a\s+)?(?:sec(?:ond)?|moment|bit|minute))?", re.I)


def _pieces(text: str) -> tuple[list[str], list[str]]:
    # A quoted message is one piece: its commas and "and"s are the message's ("text Dad "calling mom
    # now, will update you"""), so they are masked while cutting and put back after.
    quoted: list[str] = []

    def mask(m: re.Match[str]) -> str:
        quoted.append(m.group(0))
        return f"\x00{len(quoted) - 1}\x00"

    masked = re.sub(r"\"[^\"]*\"", mask, _FIRST_WORD.sub("", text.strip()))
    bits = [re.sub(r"\x00(\d+)\x00", lambda m: quoted[int(m.group(1))], b) for b in _SEP.split(masked)]
    pieces, seps = bits[0::2], bits[1::2]
    for i in range(len(pieces) - 1, 0, -1):
        if _FILLER.fullmatch(pieces[i].strip(" ,.;")):
            del pieces[i], seps[i - 1]
    return pieces, seps


def parse_compound(text: str) -> list[Intent] | None:
    """The sub-intents of a compound instruction (two or more; one when a step only finished the one
    before, "… and send it"), or ``None`` when it is not one."""
    from digirl.sim.families.compound import MAX_PARTS

    pieces, seps = _pieces(text)
    if len(pieces) < 2 or len(pieces) > MAX_PIECES:
        return None
    best: list[Intent] | None = None
    # Each cut between pieces is kept (a new sub-task) or joined back; most sub-tasks first.
    cuts = list(itertools.product((True, False), repeat=len(seps)))
    cuts.sort(key=lambda c: -sum(c))
    cache: dict[tuple[str, tuple[str, ...], str, str, str, str], Intent | None] = {}
    for cut in cuts:
        if sum(cut) == 0 or sum(cut) + 1 > MAX_PARTS:
            continue
        if best is not None and sum(cut) + 1 < len(best):
            break
        groups, cur = [], pieces[0]
        for keep, sep, piece in zip(cut, seps, pieces[1:]):
            if keep:
                groups.append(cur)
                cur = piece
            else:
                cur = cur + sep + piece
        groups.append(cur)
        ctx = Context()
        ok = True
        for g in groups:
            key = (g, tuple(repr(p) for p in ctx.parts), ctx.app, ctx.site, ctx.verb, ctx.said)
            if key not in cache:
                cache[key] = _resolve(g, ctx)
            got = cache[key]
            if got is None or got.family == "compound":
                ok = False
                break
            if got is ctx.last:  # a step that only finishes the one before ("… and send it")
                continue
            _advance(ctx, got, g)
        if ok:
            best = ctx.parts
            break
    return best


def failed_step(text: str) -> str:
    """Why a request of several steps that is no plan fails, when one step is a phrasing the phone
    cannot do ("open the camera, switch to selfie mode and …": no front camera), else ""."""
    pieces, _ = _pieces(text)
    if len(pieces) < 2:
        return ""
    for piece in pieces:
        out = match_rules(piece.strip(" ,.;"))
        if isinstance(out, Reject):
            return f"a compound request whose step {piece.strip(' ,.;')!r} cannot be done: {out.reason}"
    return ""


_CONNECTIVE = re.compile(r"(?:,|;|\band\b|\bthen\b|\bafter that\b|\s&)\s*\S", re.I)


#: The verbs that start a request (a second one inside a slot means the slot ran on).
_REQUEST_VERB = (
    r"(?:open|launch|search|go|turn|switch|set|call|text|send|play|"
    r"install|add|take|show|check|find|look|start|get|navigate|subscribe|select|tap|click|watch|delete|update|uninstall|"
    r"clear|close|turn|enable|disable|record|email|message|book|buy|order|save|share|put|make|walk|filter|pick|reply|"
    r"forward|remove|move|download|bookmark|star|archive|pay|checkout|check\s+out|sort|pin|follow|join|read|listen|remind|tell|"
    r"shuffle|pause|skip|mute|dim|lock|unlock|restart|reboot|pull\s+up|bring\s+up|if\s+(?:it|it's|i|there|the|you|so)\b)\b"
)
_SECOND_REQUEST = re.compile(r"(?:,|;|\band\b|\bthen\b|\bafter that\b)\s*(?:then\s+)?" + _REQUEST_VERB, re.I)
#: In an unquoted message only "then" + a request ends it ("text mike im late then pull up directions home");
#: "and" joins a message's own clauses too often ("tell her I'm here and call me back").
_THEN_REQUEST = re.compile(r"(?:,\s*|\s)then\s+" + _REQUEST_VERB, re.I)


def second_request(intent: Intent) -> str:
    """The start of a second request a slot of ``intent`` swallowed ("… and search for invoices"), or ""."""
    for k, v in intent.slots.items():
        if k in ("key_terms", "plan"):
            continue
        if k in ("body", "subject") and intent.family != "create_note":
            if '"' not in v:  # a message may say "and" itself; "then" + a request ends it
                m = _THEN_REQUEST.search(v)
                if m is not None:
                    return re.sub(r"^,?\s*then\s+", "", v[m.start() :], flags=re.I)
                continue
            v = v.split('"', 1)[1]  # past a closing quote the slot ran on: 'sorry.", then text Tom "…'
        m = _SECOND_REQUEST.search(v)
        if m is not None:
            rest = v[m.start() :].lstrip(",; ")
            return re.sub(r"^(?:and\s+then|and|then|after\s+that),?\s+", "", rest, flags=re.I)
    return ""


def swallowed_connective(intent: Intent) -> bool:
    """Whether a slot of ``intent`` holds a connective followed by more words ("Spotify and Instagram")."""
    if intent.family == "create_note":  # a note's text is often a list ("eggs, milk and rice"): only a request ends it
        return bool(second_request(intent)) or bool(_CONNECTIVE.search(intent.get("title")))
    return any(_CONNECTIVE.search(v) for k, v in intent.slots.items() if k not in ("key_terms", "plan"))
