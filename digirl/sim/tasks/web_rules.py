"""Phrasings of the YouTube, Play Store, Chrome and mail families, and everyday phrasings of the
General and Web Shopping families ("Fire up Netflix", "Download Spotify from the Play Store", "take
me to reddit", "search costco.com for paper towels"). Rules join the tables of :mod:`.app_rules`
(:data:`~.app_rules.APPS_EARLY` before the AitW rules, :data:`~.app_rules.APPS_LATE` after them).
"""

from __future__ import annotations

import re

from digirl.sim.intents import Intent
from digirl.sim.tasks.aitw_rules import app_intent, destination, open_intent, web_search
from digirl.sim.tasks.app_rules import APPS_EARLY, APPS_LATE, contact_name, unquote
from digirl.sim.tasks.entities import KNOWN_APPS, SYSTEM_APP_LABELS
from digirl.sim.tasks.normalize import (
    canonical_app,
    canonical_shop_site,
    canonical_site,
    clean_slot,
    distinct_terms,
    parse_time_phrase,
    strip_article,
    subject,
)
from digirl.sim.tasks.rules import Reject

__all__: list[str] = []


# ---- YouTube ------------------------------------------------------------------------------
def _video(q: str, action: str = "play") -> Intent | None:
    q = re.sub(r"^(?:some|a|an|the)\s+", "", unquote(q), flags=re.I)
    q = re.sub(r"^(?:(?:youtube\s+)?videos?\s+(?:about|of|on)|(?:the\s+)?song)\s+", "", q, flags=re.I)
    q = re.sub(r"\s+(?:videos?|clips?)$", "", q, flags=re.I) or q
    terms = distinct_terms(subject(q))
    if not terms or len(q.split()) > 10:
        return None
    return Intent("youtube_video", {"query": q, "key_terms": terms, "action": action})


_AND_PLAY = "(?:~and~(?:play|watch|start)~(?:it|one|the~first(?:~one|~result|~video)?|a~video))"


@APPS_EARLY.rule(
    "(?:search|search~on)~youtube~for~{q}(?P<play>" + _AND_PLAY + ")?",
    "(?:search~for|look~up|look~for|search|look|find)~(?:an?~)?{q}~(?:video~)?on~youtube(?P<play>" + _AND_PLAY + ")",
)
def _youtube_search_play(g: dict[str, str]) -> Intent | None:
    return _video(g["q"], "play" if g.get("play") else "search")


@APPS_EARLY.rule("youtube ?: ?(?:play|watch|put~on)~{q}", "on~youtube ,? (?:play|watch|put~on)~{q}")
def _youtube_colon(g: dict[str, str]) -> Intent | None:
    return _video(g["q"])


@APPS_LATE.rule(
    "(?:play|put~on|watch|listen~to|start|queue~up|stream)~{q}~(?:on|in|from)~(?:the~)?youtube(?:~app)?",
    "(?:play|watch)~(?:an?~)?(?:youtube~)?video~(?:about|of|on|for)~{q}(?:~on~youtube)?",
    "(?:find|look~for|search~for)~(?:an?~)?{q}~video~on~youtube~and~(?:play|watch)~it",
)
def _youtube_play_query(g: dict[str, str]) -> Intent | None:
    return _video(g["q"])


@APPS_LATE.rule("(?:search~for|look~up|look~for|search|find)~{q}~on~youtube")
def _youtube_search(g: dict[str, str]) -> Intent | None:
    return _video(g["q"], "search")


@APPS_EARLY.rule(
    "(?:subscribe|sub)~(?:me~)?to~{ch}",
    "(?:follow)~{ch}~(?:on~youtube|channel|on~the~youtube~app)",
    "(?:hit|press|click|tap)~subscribe~(?:on|for)~{ch}",
)
def _subscribe(g: dict[str, str]) -> Intent | Reject | None:
    ch = unquote(g["ch"])
    ch = re.sub(r"\s+(?:on\s+youtube|on\s+the\s+youtube\s+app)$", "", ch, flags=re.I)
    ch = re.sub(r"(?:'s)?(?:\s+youtube)?\s+channel$|'s$", "", ch, flags=re.I)
    if re.fullmatch(_ON_SCREEN_CHANNEL, ch.strip(), re.I):
        # "subscribe to the first channel" points at a screen; alone it names no channel (after a
        # search, compound_rules takes it as the channel searched for)
        return Reject(f"{unquote(g['ch'])!r} points at a channel on screen without naming one")
    ch = strip_article(ch).strip()
    if not ch or len(ch.split()) > 5 or re.fullmatch(r"(?:the\s+)?(?:newsletter|mailing\s+list|plan|premium)", ch, re.I):
        return None
    if ch.islower():
        ch = " ".join(w[:1].upper() + w[1:] for w in ch.split())
    return Intent("youtube_subscribe", {"channel": ch})


@APPS_LATE.rule(
    "(?:show~me|play|watch|open)~(?:the~)?(?P<kind>most~recent|latest|newest|new|last)~(?:upload|video|clip)~(?:from|by|of)~{ch}"
    "(?:~on~youtube)?",
)
def _latest_upload(g: dict[str, str]) -> Intent | None:
    ch = strip_article(clean_slot(g["ch"]))
    if not ch or len(ch.split()) > 6:
        return None
    return Intent("youtube_play", {"channel": ch, "kind": "new" if g["kind"].lower() == "new" else "latest"})


#: A channel pointed at on screen rather than named ("the first channel", "this channel").
_ON_SCREEN_CHANNEL = (
    r"(?:the\s+)?(?:first|top|1st|second|2nd|last|next)(?:\s+(?:one|channel|result|video))?"
    r"|(?:this|that|his|her|their)(?:\s+(?:one|channel|guy|creator))?"
)


# ---- Play Store: uninstall, update, install -------------------------------------------
def _store_app(family: str, name: str) -> Intent | Reject | None:
    name = re.sub(
        r"\s+(?:from|off|on)\s+(?:my\s+|the\s+)?(?:phone|device|google\s+play(?:\s+store)?|play\s*store)$", "", name, flags=re.I
    )
    if re.fullmatch(r"(?:all|every)(?:\s+(?:of\s+)?(?:my|the))?\s+apps?|(?:my|the)\s+apps|everything|all", name.strip(), re.I):
        return Intent(family, {"app": "all"}) if family == "update_app" else Reject("uninstall which app?")
    intent = app_intent(family, name)
    if intent is None:
        return None
    if family == "uninstall_app" and intent.get("app") in SYSTEM_APP_LABELS:
        return Reject(f"{intent.get('app')} is a system app: it cannot be uninstalled")
    return intent


@APPS_EARLY.rule(
    "uninstall~{app}",
    "(?:remove|delete|get~rid~of|erase|trash)~(?:the~)?{app}~app(?:~(?:from|off)~(?:my~)?(?:phone|device))?",
    "(?:remove|delete|get~rid~of|erase)~{app}~(?:from|off)~(?:my~)?(?:phone|device)",
)
def _uninstall(g: dict[str, str]) -> Intent | Reject | None:
    return _store_app("uninstall_app", g["app"])


@APPS_EARLY.rule(
    "update~(?:the~|my~)?{app}(?:~app)?(?:~(?:to~the~(?:latest|newest)~version|from~the~play~store|in~the~play~store))?",
    "(?:check~for|install|get|download)~(?:the~)?(?:latest~)?(?:app~)?updates?~(?:for|to|of|on)~(?:the~|my~)?{app}"
    "(?:~(?:in|on|from)~(?:the~)?(?:google~)?play~?store)?",
)
def _update(g: dict[str, str]) -> Intent | Reject | None:
    app = g["app"]
    if re.match(r"(?:me|us|you)\b", app, re.I):
        return None
    return _store_app("update_app", app)


@APPS_EARLY.rule(
    "(?:check~for|install|get)~(?:all~)?(?:app~)?updates(?:~(?:in|on|from)~(?:the~)?(?:google~)?play~?store)?",
    "update~(?:all~)?(?:of~)?(?:my~|the~)?apps(?:~(?:in|on|from)~(?:the~)?(?:google~)?play~?store)?",
)
def _update_all(g: dict[str, str]) -> Intent:
    return Intent("update_app", {"app": "all"})


@APPS_LATE.rule(
    "(?:download|get|install|grab)~(?:the~)?{app}(?:~app)?~(?:from|on|in|off|via)~(?:the~)?(?:google~)?play~?store",
    "i~(?:need|want)~(?:the~)?{app}~app",
    "(?:download|install|get)~(?:the~)?{app}~app~(?:on|to)~(?:my~)?(?:phone|device)",
)
def _install(g: dict[str, str]) -> Intent | Reject | None:
    return app_intent("install_app", g["app"])


@APPS_LATE.rule("download~{app}")
def _download_named(g: dict[str, str]) -> Intent | None:
    raw = clean_slot(g["app"])
    if raw.lower() in KNOWN_APPS or raw[:1].isupper():
        return app_intent("install_app", KNOWN_APPS.get(raw.lower(), raw))
    return None


# ---- Chrome: tabs, bookmarks, pages ---------------------------------------------------
_IN_CHROME = "(?:~(?:in|on|from)~(?:the~)?(?:google~)?(?:chrome|browser)(?:~(?:app|browser))?)?"


@APPS_EARLY.rule(
    "close~(?:all~)?(?:of~)?(?:my~|the~)?(?:open~)?(?:chrome~|browser~)?tabs" + _IN_CHROME,
    "close~every~(?:open~)?tab" + _IN_CHROME,
)
def _close_all(g: dict[str, str]) -> Intent:
    return Intent("close_tabs", {"scope": "all"})


@APPS_EARLY.rule("close~(?:this|the~current|the|my~current|current|the~open|that)~(?:chrome~|browser~)?tab" + _IN_CHROME)
def _close_current(g: dict[str, str]) -> Intent:
    return Intent("close_tabs", {"scope": "current"})


def _bookmark(site: str) -> Intent | None:
    s = strip_article(clean_slot(site))
    s = re.sub(r"\s+(?:website|site|web\s*site|homepage|page)$", "", s, flags=re.I)
    dom = canonical_site(s)
    return Intent("bookmark_site", {"site": dom}) if dom else None


@APPS_EARLY.rule(
    "bookmark~{site}" + _IN_CHROME,
    "(?:add|save)~{site}~(?:to|as|in)~(?:my~|a~|the~)?bookmarks?" + _IN_CHROME,
)
def _bookmark_site(g: dict[str, str]) -> Intent | None:
    if re.fullmatch(r"(?:this|the\s+current|current)(?:\s+(?:page|site|tab|website|web\s*page))?", g["site"].strip(), re.I):
        return Intent("bookmark_site", {"site": ""})
    return _bookmark(g["site"])


@APPS_EARLY.rule(
    "(?:show|show~me|open|view|see|check|display|go~to|bring~up)~(?:my~|the~)?(?:chrome~|browser~)?"
    "(?P<page>bookmarks|browsing~history|(?:web~)?history|search~history)" + _IN_CHROME,
    "(?:show|show~me|open|view|see|check|display|go~to)~(?:my~|the~)?(?:chrome~|browser~)?(?P<page2>downloads|downloaded~files)"
    "~(?:in|on|from)~(?:the~)?(?:google~)?(?:chrome|browser)(?:~app)?",
    "(?:show|show~me|open|view|see|check)~(?:my~|the~)?(?:chrome|browser)~(?P<page3>downloads)",
)
def _browser_page(g: dict[str, str]) -> Intent:
    page = (g.get("page") or g.get("page2") or g.get("page3") or "").lower()
    return Intent(
        "browser_page", {"page": "bookmarks" if "bookmark" in page else "downloads" if "download" in page else "history"}
    )


@APPS_LATE.rule(
    "(?:new|open(?:~an?)?(?:~new)?)~(?:chrome~|browser~)?(?:(?P<priv>incognito|private)~)?(?:browsing~)?(?P<kind>tab|window)"
    + _IN_CHROME,
)
def _tab(g: dict[str, str]) -> Intent:
    mode = g["kind"].lower()
    return Intent("browser_tab", {"mode": ("incognito_" + mode) if g.get("priv") else mode})


# ---- sites, shops, maps (everyday phrasings of the General / Web Shopping families) -----
def _site_intent(site: str) -> Intent | None:
    s = strip_article(clean_slot(site))
    s = re.sub(r"\s+(?:website|site|web\s*site|homepage|home\s*page)$", "", s, flags=re.I)
    shop = canonical_shop_site(s)
    if shop is not None and "." in s:
        return Intent("shop_goto", {"site": shop})
    dom = canonical_site(s)
    return Intent("open_site", {"site": dom}) if dom else None


@APPS_EARLY.rule(
    "(?:take~me~to|bring~up|pull~up|load|browse~to|navigate~to|head~to|surf~to)~{site}",
    "(?:go~to|open|visit|browse~to|navigate~to|load|pull~up)~{site}~(?:in|on|using|with)~(?:the~)?(?:google~)?(?:chrome|browser)"
    "(?:~(?:app|browser))?",
    "(?:go~to|open|visit|browse)~(?:the~)?{site}~(?:website|site|web~site|homepage|home~page)",
)
def _site(g: dict[str, str]) -> Intent | None:
    return _site_intent(g["site"])


_FIRST = (
    "(?P<sel>(?:,? ~)(?:and~)?(?:then~)?(?:select|click~on|click|open|tap~on|tap|choose|pick|go~to)~(?:the~)?first"
    "~(?:entry|result|item|product|listing|one|link|match|hit))?"
)


def _shop(site: str, q: str, sel: str) -> Intent | None:
    dom = canonical_shop_site(site)
    q = strip_article(unquote(q))
    if dom is None or not q:
        return None
    return Intent("shop_select" if sel else "shop_search", {"site": dom, "query": q})


@APPS_EARLY.rule(
    "search~(?P<site>\\S+\\.com)~for~{q}" + _FIRST,
    "(?:look~up|find|search~for|search|look~for)~{q}~(?:on|at)~(?P<site>\\S+\\.com)" + _FIRST,
    "on~(?P<site>\\S+\\.com) ,? (?:search~for|search|look~up|find|look~for)~{q}" + _FIRST,
)
def _shop_search(g: dict[str, str]) -> Intent | None:
    return _shop(g["site"], g["q"], g.get("sel", ""))


@APPS_EARLY.rule("(?:search|search~on)~(?:google~)?maps~for~{x}", "(?:search|look)~(?:on|in)~(?:google~)?maps~for~{x}")
def _maps_for(g: dict[str, str]) -> Intent | None:
    x = strip_article(clean_slot(g["x"]))
    key = distinct_terms(subject(x))
    return Intent("maps_search", {"query": x, "key_terms": key}) if key else None


@APPS_EARLY.rule(
    "(?:search|search~the~web|search~online|search~the~internet|google|look~online)~(?:for~)?{x}~(?:on|using)~google",
    "search~(?:the~web|online|the~internet|google)~for~{x}",
)
def _web(g: dict[str, str]) -> Intent | None:
    x = clean_slot(g["x"])
    return web_search(strip_article(x), distinct_terms(subject(x)))


@APPS_LATE.rule(
    "(?:show|show~me|find|search~for|look~for|locate)~(?:some~|any~)?{x}~(?:near~me|nearby|around~me|around~here|close~by|in~my~area)"
    "(?:~on~(?:the~)?(?:google~)?maps?(?:~app)?)?",
    "(?:find|show~me|show|search~for|look~for)~{x}~on~(?:the~)?map",
    "where's~(?:the~)?(?:nearest|closest)~{x}",
    "where~is~(?:the~)?closest~{x}",
)
def _maps_near(g: dict[str, str]) -> Intent | None:
    return _places_search(clean_slot(g["x"]))


def _places_search(said: str) -> Intent | None:
    x = strip_article(said)
    key = distinct_terms(subject(x))
    return Intent("maps_search", {"query": x, "key_terms": key}) if key else None


#: First words of a verbless "X nearby" that is not a kind of place ("anything fun nearby?").
_NOT_A_PLACE = re.compile(
    r"^(?:what|what's|whats|where|where's|who|how|is|are|any|anything|something|things|stuff|i|my|me|it|this|that|"
    r"show|find|get|take|go|fun|events?|news|weather|people|friends?)\b",
    re.I,
)


@APPS_LATE.rule("(?:any~|some~)?(?P<x>[a-z][a-z' &-]*?)~(?:near~me|nearby|around~me|around~here|close~by)")
def _places_near(g: dict[str, str]) -> Intent | None:
    """A kind of place said alone: "gas stations nearby?", "coffee near me"."""
    x = clean_slot(g["x"])
    if _NOT_A_PLACE.match(x) or len(x.split()) > 3:
        return None
    return _places_search(x)


@APPS_LATE.rule("(?:show~me|tell~me)~how~to~get~to~(?:the~)?(?:nearest~|closest~)?{d}")
def _how_to_get(g: dict[str, str]) -> Intent | None:
    d = destination(g["d"])
    return Intent("maps_directions", {"destination": d}) if d else None


# ---- mail ---------------------------------------------------------------------------------
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


#: What may follow a quoted subject: nothing, or the body ("saying …", ", body "…"", "and write …").
_BODY_START = re.compile(
    r"(?:(?:,\s*|\s*)(?:and\s+)?(?:say|saying|that\s+says|with\s+(?:the\s+)?(?:body|message|text)|(?:the\s+)?body|message|write)"
    r"\s*:?\s+(?P<b>.+))?",
    re.I,
)


def _email(to: str, rest: str) -> Intent | None:
    to = unquote(to)
    addr = _EMAIL.fullmatch(to)
    if addr is None:
        name = contact_name(to)
        if name is None or name.isdigit():
            return None
        to = name
    subject_, body = "", ""
    m = re.match(
        r"\s*(?:,\s*)?(?:with\s+(?:the\s+)?subject(?:\s+line)?|subject|titled|about|regarding|re)\s*:?\s+(?P<s>.+)", rest, re.I
    )
    if m:
        subject_ = m.group("s")
        quoted = re.fullmatch(r"\"(?P<s>[^\"]+)\"\s*(?P<tail>.*)", subject_)
        tail = _BODY_START.fullmatch(quoted.group("tail")) if quoted else None
        if quoted and tail:  # 'with subject "Sick day" saying I won't be in today'
            subject_, body = quoted.group("s"), tail.group("b") or ""
        else:
            b = re.search(r"(?:\s+and|\s*,)\s+(?:say|saying|the\s+body|body|message)\s*:?\s+(?P<b>.+)$", subject_, re.I)
            if b:
                subject_, body = subject_[: b.start()], b.group("b")
    elif rest.strip():
        body = re.sub(
            r"^\s*(?:,|:)?\s*(?:saying|that\s+says|to\s+say|telling\s+(?:him|her|them)(?:\s+that)?|that|asking)?\s*:?\s*",
            "",
            rest,
            flags=re.I,
        )
    return Intent("send_email", {"to": to.lower() if addr else to, "subject": unquote(subject_), "body": unquote(body)})


_MAIL = "(?:e-?mail|mail|gmail|email~message)"


def _split_recipient(tail: str) -> tuple[str, str]:
    """ "tom@work.com: hi" / "my boss about X" / "Sarah Lee saying hi" → (recipient, rest)."""
    tail = tail.strip()
    m = _EMAIL.match(tail)
    if m:
        return m.group(0), tail[m.end() :]
    words = tail.split()
    if words and words[0].lower() in ("my", "our") and len(words) > 1:
        return " ".join(words[:2]), " ".join(words[2:])
    n = 2 if len(words) > 1 and words[0][:1].isupper() and words[1][:1].isupper() else 1
    return " ".join(words[:n]).rstrip(",:"), " ".join(words[n:])


@APPS_EARLY.rule(
    f"(?:send|write|compose|draft|shoot)~(?:an?~)?(?:new~|quick~)?{_MAIL}~to~{{tail}}",
    "e-?mail~{tail}",
)
def _mail(g: dict[str, str]) -> Intent | None:
    to, rest = _split_recipient(g["tail"])
    return _email(to, rest)


@APPS_EARLY.rule(f"(?:send|write)~{{to}}~an?~{_MAIL}(?P<rest>~[^?!]+)?")
def _mail_to(g: dict[str, str]) -> Intent | None:
    return _email(g["to"], g.get("rest", ""))


# ---- everyday phrasings of the General app families -------------------------------------
def _known_or_named(raw: str) -> str | None:
    raw = clean_slot(raw)
    raw = re.sub(r"^(?:the|my)\s+", "", raw, flags=re.I)
    low = re.sub(r"\s+app(?:lication)?$", "", raw, flags=re.I).lower()
    if low in KNOWN_APPS:
        return KNOWN_APPS[low]
    nick = canonical_app(low)  # "insta", "fb": a nickname the parser knows
    if nick.lower() in KNOWN_APPS or nick in SYSTEM_APP_LABELS:
        return nick
    return raw if raw[:1].isupper() else None


@APPS_EARLY.rule("open~(?:the~|my~)?g-?mail(?:~app)?")
def _open_gmail(g: dict[str, str]) -> Intent:
    return Intent("open_app", {"app": "Gmail"})


@APPS_LATE.rule(
    "(?:fire~up|bring~up|pull~up|open~up|load~up|boot~up|get~into|go~into|launch|open|start|run)~(?:the~|my~)?{app}"
    "(?:~app(?:lication)?)?(?:~on~my~phone)?",
)
def _open_app(g: dict[str, str]) -> Intent | Reject | None:
    if re.match(r"(?:an?|new|some)\s", g["app"].strip(), re.I):
        return None
    name = _known_or_named(g["app"])
    return open_intent(name) if name else None


@APPS_EARLY.rule(
    "(?:show|show~me|open|view|check|see)~(?:the~)?app~(?:info|information|details|settings)~(?:for|of)~{app}",
    "(?:go~to|open|show~me|check|view)~{app}'s~(?:app~)?(?:settings|app~info|info)",
)
def _app_settings(g: dict[str, str]) -> Intent | None:
    return app_intent("app_settings", g["app"])


@APPS_LATE.rule(
    "(?P<verb>turn~on|turn~off|enable|disable|mute|unmute|block|allow|silence|stop|pause)~(?:all~)?(?:the~)?{app}~(?:push~)?notifications",
    "(?P<verb2>allow|block|stop|pause|silence)~(?:all~)?(?:push~)?notifications~(?:for|from|of)~(?:the~)?{app}",
    "i~(?:don't|do~not|dont)~want~(?:any~)?(?:more~)?notifications~from~{app}(?:~(?:anymore|any~more))?",
    "stop~{app}~from~sending~(?:me~)?notifications",
    "stop~(?:getting|receiving)~notifications~from~{app}",
)
def _notifications(g: dict[str, str]) -> Intent | None:
    verb = re.sub(r"\s+", " ", (g.get("verb") or g.get("verb2") or "stop").lower())
    state = "on" if verb in ("turn on", "enable", "unmute", "allow") else "off"
    app = re.sub(r"\s+app$", "", clean_slot(g["app"]), flags=re.I)
    return app_intent("app_notifications", app, state=state)


@APPS_LATE.rule(
    "(?:set|create|add|make|schedule)~(?:an?~|my~)?(?:new~)?alarm~(?:for~|at~|to~)?{t}",
    "(?:alarm|wake~(?:me~)?(?:up~)?)~(?:for|at|by)~{t}",
)
def _alarm(g: dict[str, str]) -> Intent | None:
    hhmm = parse_time_phrase(clean_slot(g["t"]))
    return Intent("set_alarm", {"time": hhmm}) if hhmm else None
