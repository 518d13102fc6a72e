"""Text helpers of the instruction parser: cleaning, key terms, entity canon, times, durations, levels.

Two levels of normalization exist. :func:`clean_text` is what every rule sees first (AitW typos:
glued words, stray quotes, trailing punctuation). :func:`normalize_request` is the second pass,
used only when nothing matched the cleaned text: it drops politeness ("Could you please …",
"… for me, thanks"), fixes misspelled command words ("bluetoth", "alarn", "Opne") and lower-cases
shouting, so "CAN YOU TURN OF WIFI?" reads "turn off wifi".
"""

from __future__ import annotations

import re

from digirl.sim.intents import SHOP_SITES
from digirl.sim.tasks.asked import ask_plainly
from digirl.sim.tasks.entities import APP_ALIASES, SITE_NAMES

__all__ = [
    "canonical_app",
    "canonical_shop_site",
    "canonical_site",
    "clean_slot",
    "clean_text",
    "distinct_terms",
    "fix_typos",
    "key_terms_match",
    "normalize_request",
    "parse_duration",
    "parse_level",
    "parse_time",
    "parse_time_phrase",
    "query_terms",
    "strip_article",
    "strip_politeness",
    "subject",
]

# Words that never make a query distinctive.
STOP = frozenset(
    "a an the of and or in on at for to from by with my me i is are was what what's whats how "
    "does do some this that it its".split()
)
# Leading qualifiers of a subject ("a good burger place", "the new iPad"): typed, not required.
QUALIFIERS = frozenset(
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


def distinct_terms(*parts: str) -> str:
    """The distinctive words of ``parts``, space-joined: no stop words, repeats or single letters."""
    out: list[str] = []
    for p in parts:
        for t in query_terms(p):
            # Single letters ("s" of "lowe's", "t" of "AT&T") are not distinctive; digits are ("2 bedroom").
            if t not in STOP and t not in out and (len(t) > 1 or t.isdigit()):
                out.append(t)
    return " ".join(out)


def strip_article(x: str) -> str:
    return re.sub(r"^(?:the|an?)\s+", "", x.strip(), flags=re.I).strip()


def subject(x: str) -> str:
    """``x`` without leading articles and (lower-case) qualifiers: "a nice beach bag" → "beach bag"."""
    words = x.split()
    while words and (words[0].lower() in ("a", "an", "the", "some") or words[0] in QUALIFIERS):
        words.pop(0)
    return " ".join(words)


def clean_slot(x: str) -> str:
    x = re.sub(r"[()\[\]]", " ", x)
    return re.sub(r"\s+", " ", x).strip(" ,;:")


# --------------------------------------------------------------------------- entity canon
def canonical_app(name: str) -> str:
    """The launcher label for an app name as typed ("the chrome app" → "Chrome")."""
    n = clean_slot(name)
    n = re.sub(r"^(?:the|my)\s+", "", n, flags=re.I)
    n = re.sub(r"\s+app(?:lication)?$", "", n, flags=re.I).strip()
    alias = APP_ALIASES.get(n.lower()) or _NICKNAMES.get(n.lower())
    if alias:
        return alias
    return n.title() if n.islower() else n


#: What people call apps in a hurry ("open insta"); not :data:`APP_ALIASES` (those are the phone's own apps).
_NICKNAMES = {
    "insta": "Instagram",
    "ig": "Instagram",
    "fb": "Facebook",
    "yt": "YouTube",
    "snap": "Snapchat",
    "wa": "WhatsApp",
    "cam": "Camera",
}


def canonical_shop_site(name: str) -> str | None:
    """``"bestbuy.com"`` for "Best Buy", "www.bestbuy.com", "https://bestbuy.com/"; else ``None``."""
    n = name.strip().lower()
    n = re.sub(r"^(?:https?://)?(?:www\.)?", "", n).rstrip("/")
    n = re.sub(r"\.com$", "", n)
    key = re.sub(r"[^a-z]", "", n)
    return _SHOP_KEYS.get(key)


def canonical_site(name: str) -> str | None:
    """A site's domain ("Reddit" → "reddit.com", "www.cnn.com/" → "cnn.com"); ``None`` if not a site."""
    n = strip_article(name)
    m = _DOMAIN.fullmatch(n)
    if m:
        return m.group(1).lower()
    return SITE_NAMES.get(n.lower())


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


def alarm_time(text: str) -> str | None:
    """An alarm's "HH:MM": :func:`parse_time_phrase`, and a bare hour of the waking hours 5–11 read as
    the morning ("set an alarm for 7", "delete my 9 o'clock alarm": 07:00, 09:00), as people mean an
    alarm for them. Other bare hours stay ambiguous ("an alarm for 3": a nap or the night)."""
    hhmm = parse_time_phrase(text)
    if hhmm is not None:
        return hhmm
    t = re.sub(r"\s+(?:today|tomorrow|every\s*day|daily|on\s+weekdays)$", "", re.sub(r"\s+", " ", text.strip().lower()))
    m = re.fullmatch(r"(?:at |for )?(\d{1,2})(?:[:.](\d\d))?(?: ?o'?clock)?", t)
    if m is None or not 5 <= int(m.group(1)) <= 11:
        return None
    return parse_time(f"{m.group(1)}:{m.group(2) or '00'} am")


_DAYPART = re.compile(
    r"^(?P<t>.+?)\s+(?:(?:tomorrow|today|tonight)\s+)?(?:in\s+the\s+|this\s+|tomorrow\s+|at\s+)?"
    r"(?P<part>morning|afternoon|evening|night)$"
)


def parse_time_phrase(text: str) -> str | None:
    """:func:`parse_time` plus what people add: "6:30 tomorrow morning", "5:30 in the morning",
    "9 at night", "7am every day"; "HH:MM" or ``None``."""
    t = re.sub(r"\s+", " ", text.strip().lower())
    t = re.sub(r"\s+(?:today|tomorrow|tonight|every\s*day|daily|on\s+weekdays)$", "", t)
    t = re.sub(r"^(?:at|for)\s+", "", t)
    hhmm = parse_time(t)
    if hhmm is not None:
        return hhmm
    m = _DAYPART.match(t)
    if m is None:
        return None
    base, part = m.group("t").strip(), m.group("part")
    if re.search(r"[ap]\.?\s*m\.?$", base):
        return parse_time(base)
    if part == "night" and re.fullmatch(r"12(?:[:.]\d{2})?", base):
        return parse_time(f"{base} am")  # "12 at night" is midnight
    return parse_time(f"{base} {'am' if part == 'morning' else 'pm'}")


_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "forty-five": 45,
    "fifty": 50,
    "sixty": 60,
    "ninety": 90,
}
_UNIT_SECONDS = {"h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600}
_UNIT_SECONDS.update({u: 60 for u in ("m", "min", "mins", "minute", "minutes")})
_UNIT_SECONDS.update({u: 1 for u in ("s", "sec", "secs", "second", "seconds")})
_DUR_PART = re.compile(r"(\d+(?:\.\d+)?|[a-z-]+)\s*-?\s*(hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b")


def parse_duration(text: str) -> int | None:
    """Seconds in "5 minutes", "a 10-minute", "1h30m", "an hour and a half", "half an hour", "90 secs"."""
    t = re.sub(r"\s+", " ", text.strip().lower())
    t = re.sub(r"^(?:for|of)\s+", "", t)
    if t in ("half an hour", "a half hour", "half hour"):
        return 1800
    half = re.search(r"\s+and\s+a\s+half$", t)
    if half:
        t = t[: half.start()]
    total, pos, last_unit = 0.0, 0, 0
    for m in _DUR_PART.finditer(t):
        gap = t[pos : m.start()].strip(" ,")
        if gap not in ("", "and"):
            return None
        num, unit = m.group(1), m.group(2)
        value = float(num) if num[0].isdigit() else _NUMBER_WORDS.get(num)
        if value is None:
            return None
        last_unit = _UNIT_SECONDS[unit]
        total += value * last_unit
        pos = m.end()
    if pos == 0 or t[pos:].strip(" ,") or total <= 0:
        return None
    if half:
        total += last_unit / 2
    return round(total) if total < 24 * 3600 else None


_LEVEL_WORDS = {
    "max": "100",
    "maximum": "100",
    "full": "100",
    "highest": "100",
    "all the way up": "100",
    "min": "0",
    "minimum": "0",
    "lowest": "0",
    "zero": "0",
    "all the way down": "0",
    "half": "50",
    "halfway": "50",
    "the middle": "50",
    "middle": "50",
}


def parse_level(text: str) -> str | None:
    """A 0–100 level as a string: "50%", "20 percent", "max" → "100", "half" → "50"; else ``None``."""
    t = re.sub(r"\s+", " ", text.strip().lower()).strip(" .")
    t = re.sub(r"^(?:the|a|to|at)\s+", "", t)
    t = re.sub(r"\s+(?:level|brightness|volume)$", "", t)
    if t in _LEVEL_WORDS:
        return _LEVEL_WORDS[t]
    m = re.fullmatch(r"(\d{1,3})\s*(?:%|percent|per\s*cent|pc)?", t)
    if m and 0 <= int(m.group(1)) <= 100:
        return str(int(m.group(1)))
    return None


# --------------------------------------------------------------------------- text cleaning
_QUOTES = {ord("’"): "'", ord("‘"): "'", ord("“"): '"', ord("”"): '"', ord("\t"): " "}
_GLUE_FUNC = re.compile(r"\b(in|the|for|of|to|at|on|from|a)(?=[A-Z][a-z])")
_GLUE_NUM = re.compile(r"\b(a)(?=\d+\s)")
_GLUE_CAPS = re.compile(r"([a-z]{2})([A-Z]{2,})\b")


def clean_text(text: str) -> str:
    """Whitespace, stray wrapping quotes, trailing punctuation and AitW's glued words fixed."""
    t = text.translate(_QUOTES)
    t = re.sub(r"\s+", " ", t).strip()
    # A quoted message's own end mark ("happy new year!") is not the instruction's punctuation.
    t = re.sub(r"(\w)[!?.]+(['\"])(?=\s|$)", r"\1\2", t)
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


_POLITE_HEAD = re.compile(
    r"^(?:(?:hey|ok|okay|hi)\s+(?:google|phone|assistant)\s*,?\s+|(?:hey|yo)\s*,?\s+(?=(?:can|could|would|will|please|pls)\b)"
    r"|hey\s*,\s*|ok(?:ay)?\s*,\s*"
    r"|(?:please|pls|plz|kindly)\s*,?\s+"
    r"|(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+|pls\s+|kindly\s+)?(?:help\s+me\s+)?"
    r"|(?:i\s+(?:want|need|would\s+like|'d\s+like|wanna)\s+(?:you\s+)?to\s+)"
    r"|(?:i'd\s+like\s+(?:you\s+)?to\s+)|(?:help\s+me\s+)|(?:let's\s+|lets\s+)|(?:go\s+ahead\s+and\s+)"
    r"|(?:quickly\s+|just\s+))+",
    re.I,
)
_POLITE_TAIL = re.compile(
    # Not the message itself: "text Sarah saying thanks", "reply: thank you".
    r"(?<!\bsaying)(?<!\bsays)(?<!\bsay)(?<!:)(?:\s*,?\s+(?:please|pls|plz|for\s+me|now|right\s+now|thanks|thank\s+you|thx|asap|quickly|real\s+quick))+$",
    re.I,
)


def strip_politeness(text: str) -> str:
    """Drop leading "can you (please) / please / I want to / hey google," and trailing "please / for me /
    thanks", repeatedly: "Could you please turn off wifi for me, thanks" → "turn off wifi"."""
    t = text.strip()
    for _ in range(3):
        before = t
        t = _POLITE_HEAD.sub("", t).strip(" ,")
        t = _POLITE_TAIL.sub("", t).strip(" ,")
        t = re.sub(r"[\s.?!]+$", "", t)
        if t == before:
            break
    return t


# Command words people misspell. Single-edit typos of words of 5+ letters (2 edits from 8 letters)
# are fixed; shorter words only through the explicit list, so "tall" never becomes "call".
_VOCAB = frozenset(
    """airplane aeroplane alarm alarms battery bluetooth bookmark bookmarks brightness calendar camera
    cellular chrome contact contacts delete directions disable display download enable flashlight history
    hotspot incognito install launch location message messages navigate nearest notification
    notifications picture pictures photos recipe remove restaurant rotation schedule search selfie
    settings storage stopwatch subscribe timer toggle translate uninstall update video volume weather
    youtube calculator bedroom brightness subscribe reminder email emails gmail instagram whatsapp facebook
    spotify netflix amazon walmart""".split()
)
#: Real English words a command word is one or two edits from: a typo fix must not turn a valid word
#: into another one ("17 times 23" is not "17 timer 23", "calculate" is not "calculator").
_ENGLISH = frozenset(
    """times timed tiles tiger timber tamer calculate calculated calculation calculating feather leather
    heather whether remote contract lunch paunch vacation vocation relocation notation photon
    located locate rotate""".split()
)
_SHORT_TYPOS = {
    "opne": "open",
    "oepn": "open",
    "ope": "open",
    "wify": "wifi",
    "wfi": "wifi",
    "wiif": "wifi",
    "blutooth": "bluetooth",
    "instal": "install",
    "insall": "install",
    "alram": "alarm",
    "alrm": "alarm",
    "timr": "timer",
    "pic": "picture",
    "pics": "pictures",
    "vid": "video",
    "msg": "message",
    "txt": "text",
    "plz": "please",
    "pls": "please",
    "n": "and",  # "open settings n turn off wifi"
    "cn": "can",
    "u": "you",
    "ur": "your",
    "whats": "what's",
}


def _edit_distance(a: str, b: str, limit: int) -> int:
    """Damerau–Levenshtein distance (adjacent swaps count 1), or ``limit + 1`` once it is exceeded."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]


def _fix_word(w: str) -> str:
    low = w.lower()
    if low in _SHORT_TYPOS:
        return _SHORT_TYPOS[low]
    if len(low) < 5 or low in _VOCAB or low in _ENGLISH or not low.isalpha():
        return w
    limit = 2 if len(low) >= 8 else 1
    best = [v for v in _VOCAB if _edit_distance(low, v, limit) <= limit]
    if len(best) > 1:  # prefer the closest; a tie is ambiguous and left alone
        scored = sorted((_edit_distance(low, v, limit), v) for v in best)
        best = [scored[0][1]] if scored[0][0] < scored[1][0] else []
    return best[0] if best else w


def fix_typos(text: str) -> str:
    """Misspelled command words fixed ("Turn on bluetoth" → "Turn on bluetooth", "Opne" → "open");
    "turn of X" → "turn off X". Other words are left as written."""
    t = re.sub(r"\b([A-Za-z']+)\b", lambda m: _fix_word(m.group(1)), text)
    return re.sub(r"\b(turn|switch|shut)\s+of\b", r"\1 off", t, flags=re.I)


#: A reason given after the request ("start my hotspot so my laptop can get online"): not a step.
_WHY = re.compile(r",?\s+(?:so\s+(?:that\s+)?|because\s+|since\s+)(?:i|i'm|my|we|it|it's|the|he|she|they)\b.*$", re.I)
#: Ways of saying "go to" at the start of a request ("head to settings", "jump to the wifi settings").
_GO_TO = re.compile(r"^(?:head(?:\s+over)?|jump|hop|skip)\s+to\s+", re.I)


_SETTINGS_WORDS = (
    r"(?:the\s+|my\s+)?(?:mobile\s+data|cellular\s+data|data|wi-?fi|bluetooth|hotspot|flashlight|torch|location|gps)\b"
)
_DURATION = r"(?:\d+|[a-z]+)(?:\s*-?\s*(?:and\s+a\s+half\s+)?(?:hours?|hrs?|minutes?|mins?|seconds?|secs?))"
#: Casual ways of saying a request, said plainly (second pass only: phrasings that match as written are
#: never rewritten). Each is (pattern, replacement), applied in order.
_CASUAL: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.I), r)
    for p, r in (
        (r"\b(?:tmrw|tmrow|tmr|tmw|2moro|2morrow|tomoz)\b", "tomorrow"),
        (r"\s*→\s*", ", then "),  # "youtube → search X → play the first one": steps in order
        (r"\byt\b", "YouTube"),
        (r"\b(?:faves|favs)\b", "favourites"),
        (r"\b(?:fave|fav)\b", "favourite"),
        (r"^(?:bump|crank|jack|pump)(?=\s)", "turn"),  # "bump the brightness all the way up"
        (r"^(?:kill|cut)\s+(?=" + _SETTINGS_WORDS + ")", "turn off "),
        (r"^(?:browse|pull\s+up|bring\s+up)\s+", "open "),
        (r"^put\s+on\s+(?=(?:the|a|an|some|my)\s.*\b(?:video|song|track|playlist|album)s?\b)", "play "),
        (r"^read\s+me\s+", "read "),
        (r"^(?:yo|hey|ok|okay)[,!]?\s+(?=\w)", ""),  # "yo throw on some lo-fi beats"
        (r"^(?:throw|stick|slap)\s+on\s+", "put on "),
        # the simulated phone has one volume: the ringer's is it ("set ringtone volume to max")
        # (not the verb: "ring Tomasz on his mobile")
        (r"\b(?:the\s+)?(?:ringer|ringtone)(?:\s+volume)?\b(?!\s+(?:to|on)\s+vibrat)|\bring\s+volume\b", "the volume"),
        (r"^unmute\s+(?:my\s+|the\s+)?(?:phone|sound|volume|ringer|device)\b", "turn the volume up"),
        (r"\s+until\s+\d{1,2}(?::\d\d)?\s*(?:[ap]\.?m\.?)?(?:\s+tomorrow)?$", ""),  # "turn on do not disturb until 7am"
        # "asking if she's free tonight": the question, to them
        (r"\basking\s+(?:if|whether)\s+(?:she|he|they)(?:'s|\s+is|'re|\s+are)\s+", "saying are you "),
        (r"\bfrom\s+(noon|\d{1,2}(?::\d\d)?\s*(?:[ap]m)?)\s+(?:to|until|till|-)\s+\S+(?:\s*[ap]m)?$", r"at \1"),
        (r"^((?:add|create|save|make)\s+(?:a\s+)?(?:new\s+)?contact)\s*[:-]\s*", r"\1 "),  # "Add a new contact: Aarav Shah, …"
        # "raise the volume to max", "turn the volume down to 20%": a level said as a move
        (
            r"^(?:(?:raise|increase|lower|decrease|reduce|drop|bring)\s+(?:the\s+|my\s+)?(volume|brightness)(?:\s+(?:up|down))?"
            r"|turn\s+(?:the\s+|my\s+)?(volume|brightness)\s+(?:up|down))\s+to\s+",
            r"set the \1\2 to ",
        ),
        (r"^(?:add\s+up|sum\s+up|sum)\s+(?=[\d$])", "what is "),  # "add up 349.99 + 82.50 + 12"
        (r"\bmy\s+(?:chat|convo|thread)\s+with\b", "my conversation with"),
        # what the timer is for is not a step: "a 40-minute timer for the roast", "3 minutes for the eggs"
        (
            r"\b(timer|countdown|" + _DURATION + r")\s+for\s+(?:the|my|our|his|her|a|an)\s+(?:(?!\s(?:and|then)\s)[a-z' -])+$",
            r"\1",
        ),
        # "reply to the last text "ok sounds good"": the quoted words are the reply
        (r"^(reply\s+to\s+[^\"]+?)\s*:?\s+(\"[^\"]+\")$", r"\1 saying \2"),
        # session 25 (s28 as a dev set): a hedge before a level, dimming, "get rid of", an app's info page,
        # a day's agenda, a shop to "check", the weather to "check", "back to home"
        (r"\bto\s+(?:around|about|roughly|approximately|approx\.?|like|maybe)\s+(?=\d)", "to "),
        (r"^mute\s+(?:the\s+|my\s+)?(?:media|music|sound)\s+volume$", "set the volume to 0%"),
        (r"^dim\s+(?:the\s+|my\s+)?(?:screen|display|phone)(?:\s+(?:a\s+bit|a\s+little|a\s+tad|some))?$", "lower the brightness"),
        (
            r"^(?:get\s+rid\s+of|ditch)\s+(?=(?:the\s+)?(?:dark\s+(?:mode|theme)|night\s+light|battery\s+saver|vibrate|"
            r"airplane\s+mode|do\s+not\s+disturb|dnd)\b|" + _SETTINGS_WORDS + ")",
            "turn off ",
        ),
        (
            r"^(?:open|show(?:\s+me)?|go\s+to)\s+(?:the\s+)?app\s+info(?:\s+page|\s+screen)?\s+(?:for|of)\s+",
            "open the app settings for ",
        ),
        (
            r"^(?:open|show(?:\s+me)?|check)\s+(today|tomorrow)'s\s+(?:agenda|schedule|events)(?:\s+in\s+(?:the\s+|my\s+)?calendar)?$",
            r"show my calendar for \1",
        ),
        (r"^check\s+(amazon|ebay|walmart|target|costco|newegg|best\s*buy)(?:\.com)?\s+for\s+", r"search \1 for "),
        (r"^check\s+(?:the\s+)?(today|tomorrow)'s\s+weather$", r"what's the weather \1"),
        (r"^(?:go\s+)?back\s+to\s+(?:the\s+)?home\s*screen$", "go to the home screen"),
    )
)
#: An aside after the request ("kill mobile data, I'm roaming", "force stop it, it's frozen").
_ASIDE = re.compile(r",\s+(?:i'm|im|i\s+am|it's|its|it\s+is|they're|we're)\s+[^,\"]*$", re.I)


def say_plainly(text: str) -> str:
    """Casual phrasings said plainly (:data:`_CASUAL`) and an aside after the request dropped."""
    t = _ASIDE.sub("", text)
    for rx, repl in _CASUAL:
        t = rx.sub(repl, t)
    return t


def normalize_request(text: str) -> str:
    """The second-pass form of a cleaned instruction: typos fixed, politeness dropped, shouting lowered,
    "head to" / "jump to" said as "go to", casual phrasings said plainly, questions about the phone
    said as requests (:func:`~digirl.sim.tasks.asked.ask_plainly`)."""
    t = text
    letters = [c for c in t if c.isalpha()]
    if letters and sum(c.isupper() for c in letters) / len(letters) > 0.8:
        t = t.lower()
    t = fix_typos(t)
    return ask_plainly(say_plainly(_WHY.sub("", _GO_TO.sub("go to ", strip_politeness(t)))))
