"""AitW-style instruction text → :class:`~digirl.sim.intents.Intent`.

The parser recognises *phrasing families* ("What's the weather like in X?", "Go to S, search for
"Q", and select the first entry", ...), not individual lines: any entity in a known phrasing
parses. It tolerates the typos found in real AitW instructions (words glued together such as
"inToronto", "alarmfor", "goodrestaurant"; odd case; missing or stray punctuation and quotes).
Text in no known phrasing, or with an unusable slot (an alarm at "25pm", two sentences glued
together), gives ``None``.

Most General questions are answered by a web search; they become ``web_search`` intents whose
``query`` is what a person would type and whose ``key_terms`` are the distinctive words a correct
query must contain (see :func:`query_terms` and :func:`key_terms_match`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from digirl.sim.intents import SHOP_SITES, Intent
from digirl.sim.tasks.entities import APP_ALIASES as _APP_ALIASES
from digirl.sim.tasks.entities import SITE_NAMES as _SITE_NAMES

__all__ = [
    "canonical_app",
    "canonical_shop_site",
    "canonical_site",
    "key_terms_match",
    "parse_instruction",
    "parse_time",
    "query_terms",
]

# Words that never make a query distinctive.
_STOP = frozenset(
    "a an the of and or in on at for to from by with my me i is are was what what's whats how "
    "does do some this that it its".split()
)
# Leading qualifiers of a subject ("a good burger place", "the new iPad"): typed, not required.
_QUALIFIERS = frozenset(
    "good best top rated top-rated nice new newest latest great cheap popular most selling "
    "best-selling 5 star 5-star some".split()
)
_TOKEN = re.compile(r"[a-z0-9]+(?:\.[a-z0-9]+)*")

_SHOP_KEYS = {s.split(".")[0]: s for s in SHOP_SITES}
_DOMAIN = re.compile(r"(?:https?://)?(?:www\.)?([a-z0-9][a-z0-9\-]*(?:\.[a-z0-9\-]+)*\.[a-z]{2,})/?", re.I)


# --------------------------------------------------------------------------- term helpers
def query_terms(text: str) -> list[str]:
    """Lower-case word tokens of ``text``: alphanumeric runs, inner dots kept ("st", "booking.com", "2.5").

    Apostrophes, hyphens and ``&`` split words ("lowe's" → "lowe", "s"), as the simulator's search
    engine tokenizes submitted queries, so key terms built from these tokens match its words.
    """
    return _TOKEN.findall(text.lower())


def _stem(t: str) -> str:
    return t[:-1] if len(t) > 3 and t.endswith("s") and not t.endswith("ss") else t


def key_terms_match(query: str, key_terms: str) -> bool:
    """Whether every key term occurs in ``query`` as a word, ignoring case and a plural ``s``
    (so "Lowes 12 ft ladders" matches ``"12 ladder lowe"``)."""
    have = {_stem(t) for t in query_terms(query)}
    return all(_stem(k) in have for k in query_terms(key_terms))


def _terms(*parts: str) -> str:
    out: list[str] = []
    for p in parts:
        for t in query_terms(p):
            # Single letters ("s" of "lowe's", "t" of "AT&T") are not distinctive; digits are ("2 bedroom").
            if t not in _STOP and t not in out and (len(t) > 1 or t.isdigit()):
                out.append(t)
    return " ".join(out)


def _strip_article(x: str) -> str:
    return re.sub(r"^(?:the|an?)\s+", "", x.strip(), flags=re.I).strip()


def _subject(x: str) -> str:
    """``x`` without leading articles and (lower-case) qualifiers: "a nice beach bag" → "beach bag"."""
    words = x.split()
    while words and (words[0].lower() in ("a", "an", "the", "some") or words[0] in _QUALIFIERS):
        words.pop(0)
    return " ".join(words)


def _clean_slot(x: str) -> str:
    x = re.sub(r"[()\[\]]", " ", x)
    return re.sub(r"\s+", " ", x).strip(" ,;:")


# --------------------------------------------------------------------------- entity canon
def canonical_app(name: str) -> str:
    """The launcher label for an app name as typed ("the chrome app" → "Chrome")."""
    n = _clean_slot(name)
    n = re.sub(r"^(?:the|my)\s+", "", n, flags=re.I)
    n = re.sub(r"\s+app(?:lication)?$", "", n, flags=re.I).strip()
    alias = _APP_ALIASES.get(n.lower())
    if alias:
        return alias
    return n.title() if n.islower() else n


def canonical_shop_site(name: str) -> str | None:
    """``"bestbuy.com"`` for "Best Buy", "www.bestbuy.com", "https://bestbuy.com/"; else ``None``."""
    n = name.strip().lower()
    n = re.sub(r"^(?:https?://)?(?:www\.)?", "", n).rstrip("/")
    n = re.sub(r"\.com$", "", n)
    key = re.sub(r"[^a-z]", "", n)
    return _SHOP_KEYS.get(key)


def canonical_site(name: str) -> str | None:
    """A site's domain ("Reddit" → "reddit.com", "www.cnn.com/" → "cnn.com"); ``None`` if not a site."""
    n = _strip_article(name)
    m = _DOMAIN.fullmatch(n)
    if m:
        return m.group(1).lower()
    return _SITE_NAMES.get(n.lower())


def parse_time(text: str) -> str | None:
    """24-hour "HH:MM" for "6pm" (18:00), "6:30 a.m." (06:30), "18:45"; ``None`` if ambiguous ("7")."""
    t = text.strip().lower()
    if t == "noon":
        return "12:00"
    if t == "midnight":
        return "00:00"
    m = re.fullmatch(r"(\d{1,2})(?:[:.](\d{2}))?\s*(?:(a|p)\.?\s*m\.?)?(?:\s*o'?clock)?", t)
    if not m:
        return None
    hour, minute = int(m.group(1)), int(m.group(2) or 0)
    half = m.group(3)
    if minute > 59:
        return None
    if half:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if half == "p" else 0)
    elif m.group(2) is None and hour < 13:
        return None  # "7" could be 07:00 or 19:00
    if hour > 23:
        return None
    return f"{hour:02d}:{minute:02d}"


# --------------------------------------------------------------------------- text cleaning
_QUOTES = {ord("’"): "'", ord("‘"): "'", ord("“"): '"', ord("”"): '"', ord("\t"): " "}
_GLUE_FUNC = re.compile(r"\b(in|the|for|of|to|at|on|from|a)(?=[A-Z][a-z])")
_GLUE_NUM = re.compile(r"\b(a)(?=\d+\s)")
_GLUE_CAPS = re.compile(r"([a-z]{2})([A-Z]{2,})\b")


def _clean(text: str) -> str:
    t = text.translate(_QUOTES)
    t = re.sub(r"\s+", " ", t).strip()
    for _ in range(3):  # stray wrapping quotes and trailing punctuation, in any order
        before = t
        t = re.sub(r"[\s.?!]+$", "", t)
        for q in "\"'":
            if t.startswith(q) and (t.endswith(q) or t.count(q) % 2 == 1):
                t = t[1:]
                if t.endswith(q) and t.count(q) % 2 == 1:
                    t = t[:-1]
            elif t.endswith(q) and t.count(q) % 2 == 1:
                t = t[:-1]
        t = t.strip()
        if t == before:
            break
    # Glued words seen in AitW: "inToronto", "theFalkland", "a3 bedroom", "HisenseTV".
    t = _GLUE_FUNC.sub(r"\1 ", t)
    t = _GLUE_NUM.sub(r"\1 ", t)
    return _GLUE_CAPS.sub(r"\1 \2", t)


# --------------------------------------------------------------------------- pattern table
# Template syntax (see _rx): a space between literal words may be missing in the text
# ("alarmfor"), ``~`` needs whitespace (used next to slots and after articles, so "the"
# never eats the start of "Theodore"), ``{x}`` is a lazy slot that cannot span a "?"/"!".
Handler = Callable[[dict[str, str]], "Intent | None"]
_RULES: list[tuple[re.Pattern[str], Handler]] = []
_WHATS = "(?:what's|whats|what is|what are|what're)"
_WHEN = "(?:today|tonight|tomorrow|now|right now|this~week|this~weekend|this~month|this~morning|this~evening)"


def _rx(template: str) -> re.Pattern[str]:
    pat = template.replace("WHATS", _WHATS).replace("WHEN", _WHEN)
    pat = re.sub(r"\{(\w+)\}", r"(?P<\1>[^?!]+?)", pat)
    pat = pat.replace(" ", r"\s*").replace("~", r"\s+")
    return re.compile(pat, re.I)


def _rule(*templates: str) -> Callable[[Handler], Handler]:
    def deco(fn: Handler) -> Handler:
        for t in templates:
            _RULES.append((_rx(t), fn))
        return fn

    return deco


def _search(query: str, key_terms: str, answer: str = "generic") -> Intent | None:
    query = re.sub(r"\s+", " ", query).strip()
    if not key_terms or not query:
        return None
    return Intent("web_search", {"query": query, "key_terms": key_terms, "answer": answer})


# ---- Web Shopping ---------------------------------------------------------------------
_FIRST = (
    "(?:(?:, |~)(?:and~)?(?:then~)?(?P<sel>select|click on|click|open|tap on|tap|choose)~the first"
    "~(?:entry|result|item|product|listing|one|link))?"
)


@_rule(
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
@_rule(
    "(?:set|create|add|make|schedule)~(?:(?:an?|my)~)?(?:new~)?alarm (?:for|at|to)~{t}",
    "wake me up (?:at|by)~{t}",
)
def _alarm(g: dict[str, str]) -> Intent | None:
    t = re.sub(r"\s+(?:today|tomorrow|tonight|every\s*day|daily)$", "", g["t"].strip(), flags=re.I)
    hhmm = parse_time(t)
    return Intent("set_alarm", {"time": hhmm}) if hhmm else None


@_rule(
    "open~(?:an?~)?(?:new~)?(?:google~)?(?:chrome~)?(?:(?P<priv>incognito|private)~)?(?P<kind>tab|window)"
    "(?:~in~(?:the~)?(?:google~)?(?:chrome|browser)(?:~(?:app|browser))?)?",
)
def _tab(g: dict[str, str]) -> Intent | None:
    mode = g["kind"].lower()
    if g.get("priv"):
        mode = "incognito_" + mode
    return Intent("browser_tab", {"mode": mode})


@_rule(
    "(?:check|open|show me|read|go to)~(?:my~)?(?:(?:new|latest|unread)~)?"
    "(?:e-?mails?|gmail|g-mail|mail|inbox)(?:~inbox)?",
    "do i have~(?:any~)?new~(?:e-?mails?|mail)",
)
def _email(g: dict[str, str]) -> Intent | None:
    return Intent("check_email", {})


@_rule(
    "(?P<verb>turn on|turn off|switch on|switch off|enable|disable|toggle|mute|unmute)~"
    "(?:(?:the|all)~)?(?:push~)?notifications~(?:for|from|of|on)~{app}",
)
def _notif(g: dict[str, str]) -> Intent | None:
    verb = re.sub(r"\s+", " ", g["verb"].lower())
    state = {"turn on": "on", "switch on": "on", "enable": "on", "unmute": "on", "toggle": "toggle"}.get(
        verb, "off"
    )
    return _app_intent("app_notifications", g["app"], state=state)


@_rule(
    "(?:check|open|show me|go to|view|see) (?:the~)?(?:app~)?settings~(?:for|of)~{app}",
    "(?:check|open|show me|view)~(?:the~)?{app}~app settings",
)
def _settings(g: dict[str, str]) -> Intent | None:
    return _app_intent("app_settings", g["app"])


@_rule("install~{app}", "(?:download|get)~{app}~app(?:~from~(?:the~)?(?:google~)?play store)?")
def _install(g: dict[str, str]) -> Intent | None:
    app = re.sub(r"\s+from\s+(?:the\s+)?(?:google\s+)?play\s*store$", "", g["app"], flags=re.I)
    return _app_intent("install_app", app)


def _app_intent(family: str, name: str, **extra: str) -> Intent | None:
    app = canonical_app(name)
    if not app or len(app.split()) > 5 or re.search(r"[,;\"]", app):
        return None
    return Intent(family, {"app": app, **extra})


# ---- YouTube ---------------------------------------------------------------------------
_KIND = "(?P<kind>new|newest|latest|most recent)"


@_rule(
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


@_rule(
    f"(?:how do i|how can i|how to) get to~{_NEAREST}~{{d}}",
    f"(?:get|give me|show me|find) directions to~{_NEAREST}~{{d}}",
    f"(?:navigate|take me|drive me|walk me|directions) to~{_NEAREST}~{{d}}",
    "(?:how do i|how can i|how to) get to~{d}",
    "(?:get|give me|show me) directions to~{d}",
    "(?:navigate|take me) to~{d}",
)
def _directions(g: dict[str, str]) -> Intent | None:
    d = _strip_article(_clean_slot(g["d"]))
    if not d or len(d.split()) > 6:
        return None
    return Intent("maps_directions", {"destination": d})


@_rule(
    f"(?:find|show me|search for|look for|locate|where is)~{_NEAREST}~{{x}}",
    "(?:find|search for|search|show me|look for|look up|locate)~{x}~(?:on|in|using|with)~"
    "(?:the~)?(?:google~)?maps(?:~app)?",
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
@_rule(
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
@_rule(
    "WHATS~on~my~calendar(?:~(?:for|today|tomorrow|this|next|in)\\b[^?!]*)?",
    "(?:open~(?:the~)?calendar(?:~app)?~and~)?show me~(?:my~)?"
    "(?:this~week's|this~weeks|today's|todays|upcoming|my)~(?:calendar~)?(?:events|appointments|schedule)",
)
def _calendar(g: dict[str, str]) -> Intent | None:
    return Intent("open_app", {"app": "Calendar"})


@_rule("(?:open|launch|start|go to)~(?:(?:the|my)~)?{app}(?P<suffix>~app(?:lication)?)?")
def _open_app(g: dict[str, str]) -> Intent | None:
    raw = g["app"].strip()
    if re.match(r"(?:an?|new|some)\s", raw, re.I):
        return None
    # Without "app", accept a known app or a proper name ("Open Spotify"), not "open the door".
    if not g.get("suffix") and raw.lower() not in _APP_ALIASES and not raw[:1].isupper():
        return None
    return _app_intent("open_app", raw)


# ---- web questions ---------------------------------------------------------------------
@_rule(
    "how much (?:does|do|would|will)~an?~{n} -? (?:bedroom|bed|br)(?:~(?:apartment|apt|flat|house|condo))?"
    "~(?:rent for|rent|cost)~(?:in|at)~{city}",
)
def _rent(g: dict[str, str]) -> Intent | None:
    n, city = g["n"].strip(), _clean_slot(g["city"])
    if not re.fullmatch(r"\d|one|two|three|four|five", n, re.I):
        return None
    return _search(f"{n} bedroom apartment rent {city}", _terms(n, "bedroom", city), "rent")


@_rule(
    "(?:search for|find|look for|show me|book|look up)~(?:(?:cheap|the cheapest)~)?"
    "(?:flights|an? flight|plane tickets)~from~{a}~to~{b}",
    "flights~from~{a}~to~{b}",
)
def _flights(g: dict[str, str]) -> Intent | None:
    a, b = _clean_slot(g["a"]), _clean_slot(g["b"])
    return _search(f"flights from {a} to {b}", _terms("flights", a, b), "flights")


@_rule(
    "(?:search for|find|look for|show me|book|look up)~(?:(?:cheap|good|a)~)?hotels?~(?:in|near|at)~{city}"
)
def _hotels(g: dict[str, str]) -> Intent | None:
    city = _clean_slot(g["city"])
    return _search(f"hotels in {city}", _terms("hotels", city), "hotels")


@_rule(
    "WHATS~(?:(?:an?|the)~)?(?:good|nice|great|best) restaurants?~(?:in|near|around)~{city}",
    "(?:find|recommend|suggest)~(?:me~)?(?:an?~)?(?:good|nice|great) restaurants?~(?:in|near|around)~{city}",
)
def _restaurant(g: dict[str, str]) -> Intent | None:
    city = _clean_slot(g["city"])
    if city.lower() in ("me", "here"):
        return _search("good restaurant near me", "restaurant", "restaurants")
    return _search(f"good restaurant in {city}", _terms("restaurant", city), "restaurants")


@_rule(
    "WHATS~(?:the~)?weather~(?:like~)?(?:going to be like~)?(?:in|for|at)~{city}",
    "how's~the weather~(?:in|for)~{city}",
    "WHATS~the~(?:weather~)?forecast~(?:for|in)~{city}",
    "(?:is it|will it)~(?:going to~)?(?:rain|raining|snow|snowing)~(?:in|at)~{city}",
)
def _weather(g: dict[str, str]) -> Intent | None:
    city = re.sub(
        r"\s+(?:today|tomorrow|this\s+week(?:end)?|right\s+now|now)$", "", _clean_slot(g["city"]), flags=re.I
    )
    return _search(f"weather in {city}", _terms("weather", city), "weather")


@_rule("WHATS~the weather(?:~like)?(?:~(?:WHEN|outside))?", "how's~the weather(?:~WHEN)?")
def _weather_here(g: dict[str, str]) -> Intent | None:
    return _search("weather", "weather", "weather")


@_rule("what time is it~(?:in|at)~{city}", "WHATS~the~(?:(?:current|local)~)?time~(?:in|at)~{city}")
def _time_in(g: dict[str, str]) -> Intent | None:
    city = _clean_slot(g["city"])
    return _search(f"time in {city}", _terms("time", city), "time")


@_rule("what time is it(?:~now|~right now)?", "WHATS~the~(?:current~)?time(?:~now|~right now)?")
def _time_here(g: dict[str, str]) -> Intent | None:
    return _search("what time is it", "time", "time")


@_rule(
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
    return _search(f"{base} to {cur}", _terms(*base_key, cur), "exchange")


@_rule(
    "(?:google|search for|search|look up|find)~(?:the~)?capital (?:city~)?of~{x}",
    "WHATS~the~capital (?:city~)?of~{x}",
)
def _capital(g: dict[str, str]) -> Intent | None:
    x = _clean_slot(g["x"])
    return _search(f"capital of {x}", _terms("capital", x), "capital")


@_rule(
    "WHATS~the~(?:(?:latest|recent|top)~)?(?:news|headlines)~(?:in|from|about|on|for|regarding)~{x}",
    "WHATS~the~latest~{x}~(?:news|headlines)",
    "WHATS~new~in~{x}",
    "(?:show me|search for|find)~(?:the~)?(?:latest~)?news~(?:in|from|about|on)~{x}",
)
def _news_about(g: dict[str, str]) -> Intent | None:
    x = _strip_article(_clean_slot(g["x"]))
    if re.fullmatch(_WHEN.replace("~", " ").replace(" ", r"\s*"), x, re.I):
        return None  # "What's the news this morning" is the plain news rule
    return _search(f"{x} news", _terms(x, "news"), "news")


@_rule(
    "WHATS~(?:the~)?(?:(?:latest|top)~)?(?:news|headlines)(?:~(?P<when>WHEN|yesterday|this~afternoon))?",
    "(?:show me|search for)~(?:the~)?(?:latest~)?news(?:~(?P<when2>WHEN))?",
)
def _news(g: dict[str, str]) -> Intent | None:
    when = re.sub(r"\s+", " ", g.get("when") or g.get("when2") or "").lower()
    return _search(f"news {when}".strip(), "news", "news")


@_rule(
    "WHATS~(?:the~)?(?:(?:average|top|maximum|max|typical)~)?speed~of~{x}",
    "how fast~(?:is|are|does|do|can)~{x}(?:~(?:go|run|fly|travel|swim))?",
)
def _speed(g: dict[str, str]) -> Intent | None:
    x = _clean_slot(g["x"])
    return _search(f"speed of {x}", _terms("speed", x), "speed")


_SIZE_ADJ = {"big", "large", "tall", "heavy", "long", "small", "wide", "high", "deep"}


@_rule("how~(?P<adj>big|large|tall|heavy|long|small|wide|high|deep|far|old|hot|cold)~(?:is|are|was|were)~{x}")
def _how_adj(g: dict[str, str]) -> Intent | None:
    adj, x = g["adj"].lower(), _clean_slot(g["x"])
    x = re.sub(r"\s+away$", "", x, flags=re.I)
    return _search(f"how {adj} is {x}", _terms(_subject(x)), "size" if adj in _SIZE_ADJ else "generic")


@_rule("who~(?:is|was|'s)~(?:the~)?(?:current~)?{role}~(?:of|for)~{x}")
def _person(g: dict[str, str]) -> Intent | None:
    role, x = _clean_slot(g["role"]), _clean_slot(g["x"])
    if len(role.split()) > 4:
        return None
    return _search(f"{role} of {x}", _terms(role, x), "person")


@_rule(
    "WHATS~on~the menu~(?:at|for|of|in)~{x}",
    "(?:show me|find|get)~(?:the~)?menu~(?:at|for|of)~{x}",
    "WHATS~the menu~(?:at|for|of)~{x}",
)
def _menu(g: dict[str, str]) -> Intent | None:
    x = _strip_article(_clean_slot(g["x"]))
    return _search(f"{x} menu", _terms(x, "menu"), "menu")


@_rule(
    "how much (?:does|do|would|will)~{x}~cost(?:~(?:on|at|from|in)~{where})?",
    "WHATS~the~(?:current~)?(?:price|cost)~(?:of|for)~{x}(?:~(?:on|at|from|in)~{where})?",
    "how much is~{x}~(?:on|at)~{where}",
)
def _price(g: dict[str, str]) -> Intent | None:
    x, where = _clean_slot(g["x"]), _clean_slot(g.get("where") or "")
    subj = _subject(x)
    if not subj:
        return None
    return _search(f"{_strip_article(x)} price {where}", _terms(subj, where), "price")


@_rule(
    "what are~the~(?:best selling|best-selling|top selling|most popular|top rated|best)~{x}"
    "(?:~(?:at|on|in|from)~{where})?",
)
def _best_selling(g: dict[str, str]) -> Intent | None:
    x, where = _clean_slot(g["x"]), _clean_slot(g.get("where") or "")
    return _search(f"best selling {x} {where}", _terms(_subject(x), where), "generic")


@_rule("what are~the~(?:new|newest|latest)~products~(?:by|from|of)~{brand}(?:~on~{where})?")
def _new_products(g: dict[str, str]) -> Intent | None:
    brand, where = _clean_slot(g["brand"]), _clean_slot(g.get("where") or "")
    return _search(f"new {brand} products {where}", _terms(brand, "products", where), "generic")


@_rule("what (?:does|do)~{x}~look like(?:~on~{where})?", "show me~(?:an?~)?(?:pictures|photos|images)~of~{x}")
def _look_like(g: dict[str, str]) -> Intent | None:
    x, where = _strip_article(_clean_slot(g["x"])), _clean_slot(g.get("where") or "")
    return _search(f"{x} {where}", _terms(_subject(x), where), "generic")


@_rule("where can i~(?:buy|get|find|purchase)~{x}")
def _buy(g: dict[str, str]) -> Intent | None:
    x = _clean_slot(g["x"])
    return _search(f"buy {_subject(x)}", _terms(_subject(x)), "price")


@_rule("show me~(?:some~)?(?:(?:nice|good|cool|beautiful|new)~)?{x}~for~(?:(?:my|a)~)?{y}")
def _show_for(g: dict[str, str]) -> Intent | None:
    x, y = _clean_slot(g["x"]), _clean_slot(g["y"])
    if len(x.split()) > 4 or len(y.split()) > 3:
        return None
    return _search(f"{y} {x}", _terms(x, y), "generic")


@_rule(
    "(?:google|search for|search|look up)~{x}(?:~on~(?P<where>(?!youtube)[^?!]+?))?",
    "find~{x}~on~(?P<where>(?!youtube|maps|google\\s+maps)[^?!]+?)",
)
def _generic(g: dict[str, str]) -> Intent | None:
    x, where = _clean_slot(g["x"]), _clean_slot(g.get("where") or "")
    subj = _subject(x)
    if not subj or re.search(r"\bon\s+youtube$", x, re.I):
        return None  # a YouTube search is not a web search
    answer = "restaurants" if re.search(r"\brestaurants?\b", subj, re.I) else "generic"
    return _search(f"{_strip_article(x)} {where}", _terms(subj, where), answer)


@_rule("WHATS~the~(?!news|time|weather|price|speed|capital){attr}~of~{x}")
def _attribute(g: dict[str, str]) -> Intent | None:
    attr, x = _clean_slot(g["attr"]), _clean_slot(g["x"])
    if len(attr.split()) > 3:
        return None
    return _search(f"{attr} of {x}", _terms(attr, x), "generic")


# --------------------------------------------------------------------------- entry point
def parse_instruction(text: str) -> Intent | None:
    """The :class:`Intent` of an AitW-style instruction, or ``None`` when no supported family fits."""
    if not isinstance(text, str):
        return None
    t = _clean(text)
    if not t or len(t) > 300:
        return None
    for rx, handler in _RULES:
        m = rx.fullmatch(t)
        if m is None:
            continue
        groups = {k: v for k, v in m.groupdict().items() if v is not None}
        intent = handler(groups)
        if intent is not None:
            return intent
    return None
