"""The AitW phrasing families (General and Web Shopping), as the shipped task sets and DigiRL's
AitW task files phrase them. These rules define what the shipped lines mean: do not change what
they return (``tests/sim/test_sim_tasksets.py`` and the AitW check in docs/tasks.md guard it).

Most General questions are answered by a web search; they become ``web_search`` intents whose
``query`` is what a person would type and whose ``key_terms`` are the distinctive words a correct
query must contain.
"""

from __future__ import annotations

import re

from digirl.sim.intents import Intent
from digirl.sim.tasks.entities import APP_ALIASES as _APP_ALIASES
from digirl.sim.tasks.normalize import alarm_time, canonical_app, canonical_shop_site, canonical_site, query_terms
from digirl.sim.tasks.normalize import clean_slot as _clean_slot
from digirl.sim.tasks.normalize import distinct_terms as _terms
from digirl.sim.tasks.normalize import strip_article as _strip_article
from digirl.sim.tasks.normalize import subject as _subject
from digirl.sim.tasks.rules import MACROS, Reject, RuleTable

__all__ = ["AITW", "AVOIDABLE", "ROUTE_OPTION", "app_intent", "destination", "open_intent", "web_search"]

AITW = RuleTable("aitw")
_WHEN = MACROS["WHEN"]


def web_search(query: str, key_terms: str, answer: str = "generic") -> Intent | None:
    """A ``web_search`` intent (``None`` without a query or key terms)."""
    query = re.sub(r"\s+", " ", query).strip()
    if not key_terms or not query:
        return None
    return Intent("web_search", {"query": query, "key_terms": key_terms, "answer": answer})


# ---- Web Shopping ---------------------------------------------------------------------
_FIRST = (
    "(?:(?:, |~)(?:and~)?(?:then~)?(?P<sel>select|click on|click|open|tap on|tap|choose)~the first"
    "~(?:entry|result|item|product|listing|one|link))?"
)


@AITW.rule(
    "(?:go to|open|visit|navigate to)~(?P<site>[^,\\s]+(?:\\s(?!and\\b|search\\b)[^,\\s]+)?)"
    "(?:(?:, |~)(?:and~)?(?:then~)?search~(?:for~)?(?P<q>[^?!]+?))?" + _FIRST,
    "search~(?:for~)?(?P<q>[^?!]+?)~on~(?P<site>\\S+\\.com)" + _FIRST,
)
def _shop(g: dict[str, str]) -> Intent | None:
    site = canonical_shop_site(g["site"])
    if site is None:
        return None
    if not g.get("q"):
        return None if g.get("sel") else Intent("shop_goto", {"site": site})
    q = g["q"].strip()
    if len(q) >= 2 and q[0] in "\"'" and q[-1] == q[0]:
        q = q[1:-1]
    q = q.strip(" \"'")
    if not q:
        return None
    return Intent("shop_select" if g.get("sel") else "shop_search", {"site": site, "query": q})


# ---- device actions --------------------------------------------------------------------
@AITW.rule(
    "(?:set|create|add|make|schedule)~(?:(?:an?|my)~)?(?:new~)?alarm (?:for|at|to)~{t}",
    "wake me up (?:at|by)~{t}",
)
def _alarm(g: dict[str, str]) -> Intent | None:
    t = re.sub(r"\s+(?:today|tomorrow|tonight|every\s*day|daily)$", "", g["t"].strip(), flags=re.I)
    hhmm = alarm_time(t)
    return Intent("set_alarm", {"time": hhmm}) if hhmm else None


@AITW.rule(
    "open~(?:an?~)?(?:new~)?(?:google~)?(?:chrome~)?(?:(?P<priv>incognito|private)~)?(?P<kind>tab|window)"
    "(?:~in~(?:the~)?(?:google~)?(?:chrome|browser)(?:~(?:app|browser))?)?",
)
def _tab(g: dict[str, str]) -> Intent | None:
    mode = g["kind"].lower()
    if g.get("priv"):
        mode = "incognito_" + mode
    return Intent("browser_tab", {"mode": mode})


@AITW.rule(
    "(?:check|open|show me|read|go to)~(?:my~)?(?:(?:new|latest|unread)~)?(?:e-?mails?|gmail|g-mail|mail|inbox)(?:~inbox)?",
    "do i have~(?:any~)?new~(?:e-?mails?|mail)",
)
def _email(g: dict[str, str]) -> Intent | None:
    return Intent("check_email", {})


@AITW.rule(
    "(?P<verb>turn on|turn off|switch on|switch off|enable|disable|toggle|mute|unmute)~"
    "(?:(?:the|all)~)?(?:push~)?notifications~(?:for|from|of|on)~{app}",
)
def _notif(g: dict[str, str]) -> Intent | None:
    verb = re.sub(r"\s+", " ", g["verb"].lower())
    state = {"turn on": "on", "switch on": "on", "enable": "on", "unmute": "on", "toggle": "toggle"}.get(verb, "off")
    return app_intent("app_notifications", g["app"], state=state)


@AITW.rule(
    "(?:check|open|show me|go to|view|see) (?:the~)?(?:app~)?settings~(?:for|of)~{app}",
    "(?:check|open|show me|view)~(?:the~)?{app}~app settings",
)
def _settings(g: dict[str, str]) -> Intent | None:
    return app_intent("app_settings", g["app"])


@AITW.rule("install~{app}", "(?:download|get)~{app}~app(?:~from~(?:the~)?(?:google~)?play store)?")
def _install(g: dict[str, str]) -> Intent | None:
    app = re.sub(r"\s+from\s+(?:the\s+)?(?:google\s+)?play\s*store$", "", g["app"], flags=re.I)
    return app_intent("install_app", app)


#: A clause inside an app's name means the slot swallowed a second thought ("open Telegram when it's done").
_CLAUSE_IN_NAME = re.compile(r"\b(?:when|once|after|before|then|unless|until|while|because|it's|i'm|i'll|we're)\b", re.I)


def app_intent(family: str, name: str, **extra: str) -> Intent | None:
    """An intent of an app family with the app's launcher label (``None`` for an implausible name)."""
    app = canonical_app(name)
    if not app or len(app.split()) > 5 or re.search(r"[,;\"]", app) or _CLAUSE_IN_NAME.search(app):
        return None
    return Intent(family, {"app": app, **extra})


#: A name that is a page of a known app, not an app: "YouTube's trending page", "the stopwatch in the
#: clock app", "the Camera album". Opening it as a placeholder app would be a wrong parse.
_APP_PAGE_NAMES = (
    re.compile(r"^(?P<a>.+?)'s\s+(?P<p>.+)$", re.I),
    re.compile(r"^(?P<p>.+?)\s+(?:in|on|of|from|inside)\s+(?:the\s+|my\s+)?(?P<a>.+?)(?:\s+app)?$", re.I),
    re.compile(r"^(?P<a>.+?)\s+(?P<p>(?:\S+\s+)*(?:page|tab|view|section|album|screen|folder|menu|feed))$", re.I),
)


def open_intent(name: str) -> Intent | Reject | None:
    """``open_app`` for an app's name; a rejection when the name is a page of a known app the
    simulated phone has no task for (a page it has is parsed by an earlier rule)."""
    from digirl.sim.phone import resolve_app

    app = canonical_app(name)
    if resolve_app(app).startswith("x."):
        for rx in _APP_PAGE_NAMES:
            m = rx.fullmatch(app)
            owner = canonical_app(m.group("a")) if m is not None else ""
            if m is not None and not resolve_app(owner).startswith("x."):
                return _page_of(owner, m.group("p")) or Reject(
                    f"{m.group('p')!r} is not a page of {owner} that the simulated phone has"
                )
        if re.search(r"\b(?:tab|page|section|folder|album|screen|menu|feed)$", app, re.I):
            return Reject(f"{app!r} is not an app, and no app of the simulated phone has that page")  # "go to the Shorts tab"
    return app_intent("open_app", name)


def _page_of(owner: str, page: str) -> Intent | None:
    """The page of ``owner`` that ``page`` names, said the ways its own phrasings know ("the world
    clock", "the alarm tab", "this month in the calendar"), or ``None``."""
    from digirl.sim.phone import resolve_app
    from digirl.sim.tasks.rules import reparse

    q = re.sub(r"^(?:the|my)\s+|\s+(?:view|page|screen)$", "", page.strip(), flags=re.I)
    for text in (f"open the {q}", f"open the {q} tab", f"show this {q} in the {owner}"):
        got = reparse(text)
        if got is not None and got.family == "app_page" and got.get("app") == resolve_app(owner):
            return got
    return None


# ---- YouTube ---------------------------------------------------------------------------
_KIND = "(?P<kind>new|newest|latest|most recent)"


@AITW.rule(
    f"(?:play|watch|show me)~(?:the~)?{_KIND}~{{ch}}~(?:music~)?video(?:~on~youtube)?",
    f"(?:play|watch|show me)~(?:the~)?{_KIND}~(?:youtube~)?video~(?:from|by|of)~{{ch}}(?:~on~youtube)?",
    f"WHATS~the~{_KIND}~(?:youtube~)?video~(?:from|by|of)~{{ch}}(?:~on~youtube)?",
    f"(?:play|watch)~{{ch}}'s~{_KIND}~video(?:~on~youtube)?",
)
def _youtube(g: dict[str, str]) -> Intent | None:
    ch = _strip_article(_clean_slot(g["ch"]))
    if not ch or len(ch.split()) > 6:
        return None
    kind = "new" if g["kind"].lower() == "new" else "latest"
    return Intent("youtube_play", {"channel": ch, "kind": kind})


# ---- Maps ------------------------------------------------------------------------------
_NEAREST = "(?:the~)?(?:nearest|closest)"
#: A route option after the destination ("... and avoid tolls"): not a place; the simulated Maps has no such options.
AVOIDABLE = "tolls?|toll roads|highways|motorways|freeways|ferries|traffic"
ROUTE_OPTION = re.compile(
    r"(?:,?\s+(?:and|but))?,?\s+(?:avoid|avoiding|without|with\s+no)\s+(?:" + AVOIDABLE.replace(" ", r"\s+") + r")\b", re.I
)


def destination(said: str) -> str | None:
    """A place to get directions to as said ("the airport" → "airport"); None when empty, too long to be a
    place, or holding a route option ("O'Hare and avoid tolls": the simulated Maps has none)."""
    d = _strip_article(_clean_slot(said))
    return d if d and len(d.split()) <= 6 and not ROUTE_OPTION.search(d) else None


@AITW.rule(
    f"(?:how do i|how can i|how to) get to~{_NEAREST}~{{d}}",
    f"(?:get|give me|show me|find) directions to~{_NEAREST}~{{d}}",
    f"(?:navigate|take me|drive me|walk me|directions) to~{_NEAREST}~{{d}}",
    "(?:how do i|how can i|how to) get to~{d}",
    "(?:get|give me|show me) directions to~{d}",
    "(?:navigate|take me) to~{d}",
)
def _directions(g: dict[str, str]) -> Intent | None:
    d = destination(g["d"])
    return Intent("maps_directions", {"destination": d}) if d else None


@AITW.rule(
    f"(?:find|show me|search for|look for|locate|where is)~{_NEAREST}~{{x}}",
    "(?:find|search for|search|show me|look for|look up|locate)~{x}~(?:on|in|using|with)~(?:the~)?(?:google~)?maps(?:~app)?",
    "(?:find|show me)~{x}~near me",
)
def _maps_search(g: dict[str, str]) -> Intent | None:
    x = _clean_slot(g["x"])
    m = re.fullmatch(
        r"(.+?)\s+(?:(?:that's|thats|that\s+is|which\s+is)\s+)?open(?:\s+(now|today|tomorrow|tonight|late))?",
        x,
        re.I,
    )
    place = m.group(1) if m else x
    query = _strip_article(x) if not m else f"{_strip_article(place)} open {m.group(2) or 'now'}"
    key = _terms(_subject(place))
    if not key:
        return None
    return Intent("maps_search", {"query": query, "key_terms": key})


# ---- sites -----------------------------------------------------------------------------
@AITW.rule(
    "WHATS~(?:on|new on|trending on|happening on|hot on|popular on)~{site}(?:~WHEN)?",
    "WHATS~the~(?:top|best|most popular|hottest)~(?:post|story|thread)~on~{site}(?:~WHEN)?",
    "(?:go to|open|visit|browse|navigate to)~{site}",
)
def _site(g: dict[str, str]) -> Intent | None:
    site = canonical_site(g["site"])
    if site is None:
        return None
    return Intent("open_site", {"site": site})


# ---- apps ------------------------------------------------------------------------------
@AITW.rule(
    "WHATS~on~my~calendar(?:~(?:for|today|tomorrow|this|next|in)\\b[^?!]*)?",
    "(?:open~(?:the~)?calendar(?:~app)?~and~)?show me~(?:my~)?"
    "(?:this~week's|this~weeks|today's|todays|upcoming|my)~(?:calendar~)?(?:events|appointments|schedule)",
)
def _calendar(g: dict[str, str]) -> Intent | None:
    return Intent("open_app", {"app": "Calendar"})


@AITW.rule("(?:open|launch|start|go to)~(?:(?:the|my)~)?{app}(?P<suffix>~app(?:lication)?)?")
def _open_app(g: dict[str, str]) -> Intent | Reject | None:
    raw = g["app"].strip()
    if re.match(r"(?:an?|new|some)\s", raw, re.I):
        return None
    # Without "app", accept a known app or a proper name ("Open Spotify"), not "open the door".
    if not g.get("suffix") and raw.lower() not in _APP_ALIASES and not raw[:1].isupper():
        return None
    return open_intent(raw)


# ---- web questions ---------------------------------------------------------------------
@AITW.rule(
    "how much (?:does|do|would|will)~an?~{n} -? (?:bedroom|bed|br)(?:~(?:apartment|apt|flat|house|condo))?"
    "~(?:rent for|rent|cost)~(?:in|at)~{city}",
)
def _rent(g: dict[str, str]) -> Intent | None:
    n, city = g["n"].strip(), _clean_slot(g["city"])
    if not re.fullmatch(r"\d|one|two|three|four|five", n, re.I):
        return None
    return web_search(f"{n} bedroom apartment rent {city}", _terms(n, "bedroom", city), "rent")


@AITW.rule(
    "(?:search for|find|look for|show me|book|look up)~(?:(?:cheap|the cheapest)~)?"
    "(?:flights|an? flight|plane tickets)~from~{a}~to~{b}",
    "flights~from~{a}~to~{b}",
)
def _flights(g: dict[str, str]) -> Intent | None:
    a, b = _clean_slot(g["a"]), _clean_slot(g["b"])
    return web_search(f"flights from {a} to {b}", _terms("flights", a, b), "flights")


@AITW.rule("(?:search for|find|look for|show me|book|look up)~(?:(?:cheap|good|a)~)?hotels?~(?:in|near|at)~{city}")
def _hotels(g: dict[str, str]) -> Intent | None:
    city = _clean_slot(g["city"])
    return web_search(f"hotels in {city}", _terms("hotels", city), "hotels")


@AITW.rule(
    "WHATS~(?:(?:an?|the)~)?(?:good|nice|great|best) restaurants?~(?:in|near|around)~{city}",
    "(?:find|recommend|suggest)~(?:me~)?(?:an?~)?(?:good|nice|great) restaurants?~(?:in|near|around)~{city}",
)
def _restaurant(g: dict[str, str]) -> Intent | None:
    city = _clean_slot(g["city"])
    if city.lower() in ("me", "here"):
        return web_search("good restaurant near me", "restaurant", "restaurants")
    return web_search(f"good restaurant in {city}", _terms("restaurant", city), "restaurants")


@AITW.rule(
    "WHATS~(?:the~)?weather~(?:like~)?(?:going to be like~)?(?:in|for|at)~{city}",
    "how's~the weather~(?:in|for)~{city}",
    "WHATS~the~(?:weather~)?forecast~(?:for|in)~{city}",
    "(?:is it|will it)~(?:going to~)?(?:rain|raining|snow|snowing)~(?:in|at)~{city}",
)
def _weather(g: dict[str, str]) -> Intent | None:
    city = re.sub(r"\s+(?:today|tomorrow|this\s+week(?:end)?|right\s+now|now)$", "", _clean_slot(g["city"]), flags=re.I)
    return web_search(f"weather in {city}", _terms("weather", city), "weather")


@AITW.rule("WHATS~the weather(?:~like)?(?:~(?:WHEN|outside))?", "how's~the weather(?:~WHEN)?")
def _weather_here(g: dict[str, str]) -> Intent | None:
    return web_search("weather", "weather", "weather")


@AITW.rule("what time is it~(?:in|at)~{city}", "WHATS~the~(?:(?:current|local)~)?time~(?:in|at)~{city}")
def _time_in(g: dict[str, str]) -> Intent | None:
    city = _clean_slot(g["city"])
    return web_search(f"time in {city}", _terms("time", city), "time")


@AITW.rule("what time is it(?:~now|~right now)?", "WHATS~the~(?:current~)?time(?:~now|~right now)?")
def _time_here(g: dict[str, str]) -> Intent | None:
    return web_search("what time is it", "time", "time")


@AITW.rule(
    "WHATS~(?:the~)?{base}~exchange rate (?:against|to|for|with|vs\\.?|versus|in)~(?:the~)?{cur}",
    "WHATS~the~exchange rate~(?:between|from|of)~(?:the~)?{base}~(?:and|to|against|vs\\.?)~(?:the~)?{cur}",
    "(?:convert|how much is)~(?:(?:an?|one|1)~)?{base}~(?:to|in)~(?:the~)?{cur}",
)
def _exchange(g: dict[str, str]) -> Intent | None:
    base, cur = _strip_article(_clean_slot(g["base"])), _strip_article(_clean_slot(g["cur"]))
    if re.search(r"\bnews\b", base, re.I) or len(base.split()) > 3 or len(cur.split()) > 3:
        return None
    # "US dollar": the country prefix is optional in a sensible query ("dollar to euro").
    base_key = query_terms(base)[-1:]
    return web_search(f"{base} to {cur}", _terms(*base_key, cur), "exchange")


@AITW.rule(
    "(?:google|search for|search|look up|find)~(?:the~)?capital (?:city~)?of~{x}",
    "WHATS~the~capital (?:city~)?of~{x}",
)
def _capital(g: dict[str, str]) -> Intent | None:
    x = _clean_slot(g["x"])
    return web_search(f"capital of {x}", _terms("capital", x), "capital")


@AITW.rule(
    "WHATS~the~(?:(?:latest|recent|top)~)?(?:news|headlines)~(?:in|from|about|on|for|regarding)~{x}",
    "WHATS~the~latest~{x}~(?:news|headlines)",
    "WHATS~new~in~{x}",
    "(?:show me|search for|find)~(?:the~)?(?:latest~)?news~(?:in|from|about|on)~{x}",
)
def _news_about(g: dict[str, str]) -> Intent | None:
    x = _strip_article(_clean_slot(g["x"]))
    if re.fullmatch(_WHEN.replace("~", " ").replace(" ", r"\s*"), x, re.I):
        return None  # "What's the news this morning" is the plain news rule
    return web_search(f"{x} news", _terms(x, "news"), "news")


@AITW.rule(
    "WHATS~(?:the~)?(?:(?:latest|top)~)?(?:news|headlines)(?:~(?P<when>WHEN|yesterday|this~afternoon))?",
    "(?:show me|search for)~(?:the~)?(?:latest~)?news(?:~(?P<when2>WHEN))?",
)
def _news(g: dict[str, str]) -> Intent | None:
    when = re.sub(r"\s+", " ", g.get("when") or g.get("when2") or "").lower()
    return web_search(f"news {when}".strip(), "news", "news")


@AITW.rule(
    "WHATS~(?:the~)?(?:(?:average|top|maximum|max|typical)~)?speed~of~{x}",
    "how (?P<fast>fast)~(?:is|are|does|do|can)~{x}(?:~(?:go|run|fly|travel|swim))?",
)
def _speed(g: dict[str, str]) -> Intent | None:
    x = _clean_slot(g["x"])
    # "How fast is X?" does not say "speed": a search for X answers it (as "how big is X" needs X only)
    return web_search(f"speed of {x}", _terms(x) if g.get("fast") else _terms("speed", x), "speed")


_SIZE_ADJ = {"big", "large", "tall", "heavy", "long", "small", "wide", "high", "deep"}


@AITW.rule("how~(?P<adj>big|large|tall|heavy|long|small|wide|high|deep|far|old|hot|cold)~(?:is|are|was|were)~{x}")
def _how_adj(g: dict[str, str]) -> Intent | None:
    adj, x = g["adj"].lower(), _clean_slot(g["x"])
    x = re.sub(r"\s+away$", "", x, flags=re.I)
    return web_search(f"how {adj} is {x}", _terms(_subject(x)), "size" if adj in _SIZE_ADJ else "generic")


@AITW.rule("who~(?:is|was|'s)~(?:the~)?(?:current~)?{role}~(?:of|for)~{x}")
def _person(g: dict[str, str]) -> Intent | None:
    role, x = _clean_slot(g["role"]), _clean_slot(g["x"])
    if len(role.split()) > 4:
        return None
    return web_search(f"{role} of {x}", _terms(role, x), "person")


@AITW.rule(
    "WHATS~on~the menu~(?:at|for|of|in)~{x}",
    "(?:show me|find|get)~(?:the~)?menu~(?:at|for|of)~{x}",
    "WHATS~the menu~(?:at|for|of)~{x}",
)
def _menu(g: dict[str, str]) -> Intent | None:
    x = _strip_article(_clean_slot(g["x"]))
    return web_search(f"{x} menu", _terms(x, "menu"), "menu")


@AITW.rule(
    "how much (?:does|do|would|will)~{x}~cost(?:~(?:on|at|from|in)~{where})?",
    "WHATS~the~(?:current~)?(?:price|cost)~(?:of|for)~{x}(?:~(?:on|at|from|in)~{where})?",
    "how much is~{x}~(?:on|at)~{where}",
)
def _price(g: dict[str, str]) -> Intent | None:
    x, where = _clean_slot(g["x"]), _clean_slot(g.get("where") or "")
    subj = _subject(x)
    if not subj:
        return None
    return web_search(f"{_strip_article(x)} price {where}", _terms(subj, where), "price")


@AITW.rule(
    "what are~the~(?:best selling|best-selling|top selling|most popular|top rated|best)~{x}(?:~(?:at|on|in|from)~{where})?",
)
def _best_selling(g: dict[str, str]) -> Intent | None:
    x, where = _clean_slot(g["x"]), _clean_slot(g.get("where") or "")
    return web_search(f"best selling {x} {where}", _terms(_subject(x), where), "generic")


@AITW.rule("what are~the~(?:new|newest|latest)~products~(?:by|from|of)~{brand}(?:~on~{where})?")
def _new_products(g: dict[str, str]) -> Intent | None:
    brand, where = _clean_slot(g["brand"]), _clean_slot(g.get("where") or "")
    return web_search(f"new {brand} products {where}", _terms(brand, "products", where), "generic")


@AITW.rule("what (?:does|do)~{x}~look like(?:~on~{where})?", "show me~(?:an?~)?(?:pictures|photos|images)~of~{x}")
def _look_like(g: dict[str, str]) -> Intent | None:
    x, where = _strip_article(_clean_slot(g["x"])), _clean_slot(g.get("where") or "")
    return web_search(f"{x} {where}", _terms(_subject(x), where), "generic")


@AITW.rule("where can i~(?:buy|get|find|purchase)~{x}")
def _buy(g: dict[str, str]) -> Intent | None:
    x = _clean_slot(g["x"])
    return web_search(f"buy {_subject(x)}", _terms(_subject(x)), "price")


@AITW.rule("show me~(?:some~)?(?:(?:nice|good|cool|beautiful|new)~)?{x}~for~(?:(?:my|a)~)?{y}")
def _show_for(g: dict[str, str]) -> Intent | None:
    x, y = _clean_slot(g["x"]), _clean_slot(g["y"])
    if len(x.split()) > 4 or len(y.split()) > 3:
        return None
    return web_search(f"{y} {x}", _terms(x, y), "generic")


@AITW.rule(
    "(?:google|search for|search|look up)~{x}(?:~on~(?P<where>(?!youtube)[^?!]+?))?",
    "find~{x}~on~(?P<where>(?!youtube|maps|google\\s+maps)[^?!]+?)",
)
def _generic(g: dict[str, str]) -> Intent | None:
    x, where = _clean_slot(g["x"]), _clean_slot(g.get("where") or "")
    subj = _subject(x)
    if not subj or re.search(r"\bon\s+youtube$", x, re.I):
        return None  # a YouTube search is not a web search
    answer = "restaurants" if re.search(r"\brestaurants?\b", subj, re.I) else "generic"
    return web_search(f"{_strip_article(x)} {where}", _terms(subj, where), answer)


@AITW.rule("WHATS~the~(?!news|time|weather|price|speed|capital){attr}~of~{x}")
def _attribute(g: dict[str, str]) -> Intent | None:
    attr, x = _clean_slot(g["attr"]), _clean_slot(g["x"])
    if len(attr.split()) > 3:
        return None
    return web_search(f"{attr} of {x}", _terms(attr, x), "generic")
