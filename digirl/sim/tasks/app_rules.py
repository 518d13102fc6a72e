"""Phrasings of the app families: calls, messages, contacts, calendar, camera and photos (YouTube,
Play Store, Chrome, mail and everyday phrasings of the General families are in :mod:`.web_rules`).

:data:`APPS_EARLY` is tried before the AitW rules (its phrasings would otherwise be misread by
them: "Search YouTube for …" is not a web search), :data:`APPS_LATE` after them (so the AitW
phrasings keep their meaning: "Play the new Dua Lipa video on YouTube" stays ``youtube_play``).
"""

from __future__ import annotations

import re

from digirl.sim.intents import Intent
from digirl.sim.tasks.normalize import (
    clean_slot,
    strip_article,
    subject,
)
from digirl.sim.tasks.rules import Reject, RuleTable
from digirl.sim.tasks.when import split_when

__all__ = ["APPS_EARLY", "APPS_LATE", "contact_name", "unquote"]

APPS_EARLY = RuleTable("apps-early")
APPS_LATE = RuleTable("apps-late")

_NOT_A_NAME = re.compile(
    r"^(?:of|for|to|in|on|at|it|me|them|us|the|a|an|up|back|off|this|that|now"
    # a pronoun has no contact behind it: "text her the address" names nobody
    r"|her|him|his|she|he|they|their|someone|somebody|anyone|everyone|whoever|you)\b",
    re.I,
)
#: Words that join clauses or phrases; inside a name they mean a slot swallowed more than the name
#: ("call Mehmet on speakerphone", "text Sam when I land"). Name particles (de, van, bin) are not here.
_NOT_IN_A_NAME = frozenset("on in at to with and or when the via from for about after before then please now if is are".split())


_RELATION = (
    r"(?:sister|brother|sis|bro|mom|mum|mother|dad|father|wife|husband|son|daughter|friend|buddy|boss|manager|cousin|aunt"
    r"|uncle|grandma|grandpa|grandmother|grandfather|coworker|co-worker|colleague|roommate|neighbou?r|partner|girlfriend"
    r"|boyfriend|fianc[eé]e?|niece|nephew|teacher|doctor|landlord)"
)


def unquote(x: str) -> str:
    """``x`` cleaned, without the quotes around it."""
    x = clean_slot(x)
    if len(x) >= 2 and x[0] in "\"'" and x[-1] == x[0]:
        x = x[1:-1]
    return x.strip(" \"'")


def contact_name(text: str) -> str | None:
    """A contact as a task names it: "my mom" → "Mom", "john smith" → "John Smith", "(555) 123-4567"
    → "5551234567"; ``None`` for what cannot be a contact ("of Duty", a sentence)."""
    t = unquote(text)
    if re.match(r"(?:my|our)\s", t, re.I):  # "my sister Ana" is Ana ("my mom" stays Mom: no name follows)
        t = re.sub(rf"^(?:my|our)\s+(?:(?:best|older|younger|little|big|old)\s+)?{_RELATION}\s+(?=\S)", "", t, flags=re.I)
    t = re.sub(r"^(?:my|our)\s+", "", t, flags=re.I)
    t = re.sub(r"'s\s+(?:last\s+|latest\s+|new\s+|newest\s+)?(?:text|message|sms|msg)$", "", t, flags=re.I)  # "Chen's text"
    t = re.sub(
        r"\s+(?:on|via|using)\s+(?:the\s+|his\s+|her\s+|their\s+)?(?:phone|cell(?:\s+phone)?|mobile(?:\s+phone)?|whatsapp|messages)$",
        "",
        t,
        flags=re.I,
    )
    digits = re.sub(r"\D", "", t)
    if len(digits) >= 3 and re.fullmatch(r"[\d\s().+\-]+", t):
        return digits
    if not t or _NOT_A_NAME.match(t) or len(t.split()) > 3 or re.search(r"[\d@,;:!?]", t):
        return None
    if any(w.lower() in _NOT_IN_A_NAME for w in t.split()[1:]):
        return None
    return " ".join(w[:1].upper() + w[1:] for w in t.split())


# ---- calls --------------------------------------------------------------------------------
@APPS_EARLY.rule(
    "(?:call|phone|ring|dial|facetime|video~call)~{c}(?:~(?:back|now|right~now))?",
    "(?:give|place)~{c}~a~(?:call|ring)",
    "(?:make|place|start)~(?:a~)?(?:phone~)?call~(?:to|with)~{c}",
    "(?:call|dial)~(?:the~)?(?:number|phone~number)~{c}",
)
def _call(g: dict[str, str]) -> Intent | None:
    c = contact_name(g["c"])
    return Intent("make_call", {"contact": c}) if c else None


@APPS_EARLY.rule("(?P<verb>call|dial|phone|text|message|sms)")
def _nobody(g: dict[str, str]) -> Reject:
    return Reject(f"{g['verb'].lower()} whom? the instruction names no contact or number")


# ---- messages -----------------------------------------------------------------------------
_SAY = (
    r"(?:,?\s+(?:saying|that\s+says|to\s+say|and\s+say|and\s+tell\s+(?:him|her|them)(?:\s+that)?|telling\s+(?:him|her|them)"
    r"(?:\s+that)?|asking\s+(?:him|her|them)?|with\s+(?:the\s+)?(?:message|text|words)?|that)\s+|\s*:\s*)"
)


def _message(contact_text: str, body: str) -> Intent | None:
    c = contact_name(contact_text)
    if c is None:
        return None
    return Intent("send_message", {"contact": c, "body": unquote(body)})


def _split_contact_body(rest: str) -> tuple[str, str]:
    """ "Dave \"running late\"" / "Mom that I'm on my way" / "lisa ok" → (contact, body)."""
    # double quotes first: a quoted message may hold an apostrophe ("hi it's Ben")
    q = re.search(r"\"(?P<b>[^\"]+)\"\s*$", rest) or re.search(r"'(?P<b>[^']+)'\s*$", rest)
    if q and q.start() > 0:
        contact = re.sub(
            r"(?:\s+(?:saying|with|that\s+says|that|to\s+say|and\s+say)|\s+(?:the|my|our)\s+(?:address|link|number|code|details"
            r"|location|directions|info|name|time)|\s*:)\s*$",
            "",
            rest[: q.start()],
            flags=re.I,
        )
        return contact, q.group("b")
    m = re.search(_SAY, rest, re.I)
    if m and m.start() > 0:
        return rest[: m.start()], rest[m.end() :]
    words = rest.split()
    if len(words) == 1:
        return rest, ""
    if words[0].lower() in ("my", "our") and len(words) > 2:  # "text my wife im leaving work now"
        return " ".join(words[:2]), " ".join(words[2:])
    # No separator: the contact is the first word (two when both are capitalized, "John Smith hi").
    # "I" / "I'm" / "I'll" start the message, not a surname ("Text Mom I'll be late").
    second_is_name = len(words) > 2 and words[1][:1].isupper() and not re.fullmatch(r"(?i)i|i'\w+|we|we'\w+", words[1])
    n = 2 if words[0][:1].isupper() and second_is_name else 1
    return " ".join(words[:n]), " ".join(words[n:])


@APPS_EARLY.rule("(?:text|message|msg|sms|whatsapp)~{rest}")
def _text(g: dict[str, str]) -> Intent | None:
    contact, body = _split_contact_body(g["rest"])
    return _message(contact, body)


@APPS_EARLY.rule(
    "send~(?:an?~)?(?:quick~)?(?:text|message|sms|text~message|msg)~to~{rest}",
    "send~(?P<c1>[^?!]+?)~(?:an?~)?(?:quick~)?(?:text|message|sms|text~message|msg)(?:~(?P<b1>(?:saying|that~says|with)~[^?!]+)"
    "| ?: ?(?P<b2>[^?!]+))?",
    "(?:reply|respond|write~back|answer)~to~{rest}",
)
def _send_text(g: dict[str, str]) -> Intent | None:
    if g.get("c1"):
        body = re.sub(r"^(?:saying|that\s+says|with)\s+", "", g.get("b1") or g.get("b2") or "", flags=re.I)
        return _message(g["c1"], body)
    contact, body = _split_contact_body(g["rest"])
    if re.fullmatch(r"(?:my\s+|the\s+)?(?:latest|last|newest|most\s+recent)\s+(?:text|message|sms)", contact or "", re.I):
        return None  # "reply to my last text saying …" names no person: reply_latest (everyday_rules)
    return _message(contact, body)


@APPS_EARLY.rule("(?:tell|let)~{c}~(?:know~)?(?:that~)?{body}~(?:by|via|over|in~a)~(?:text|message|sms)")
def _tell_by_text(g: dict[str, str]) -> Intent | None:
    return _message(g["c"], g["body"])


# ---- contacts -----------------------------------------------------------------------------
def _person(name: str) -> str | None:
    n = contact_name(name)
    return n if n and not n.isdigit() else None


def _new_contact(name: str, number: str = "") -> Intent | Reject | None:
    n = _person(name)
    if n is None:
        return None
    digits = re.sub(r"\D", "", number)
    if number and len(digits) < 3:
        return Reject(f"{number!r} is not a phone number")
    return Intent("add_contact", {"name": n, "number": digits})


_NUM = r"(?P<num>\+?[\d\s().\-]{3,})"


@APPS_EARLY.rule(
    "(?:add|create|make|save)~(?:a~)?(?:new~)?contact~(?:for~|named~|called~|with~the~name~)?{name}"
    f"(?:~(?:with~(?:the~)?(?:number|phone~number|phone)|number|at|,)~{_NUM})?",
    "(?:add|save|put)~{name}~(?:to|in|into|as~a~new|as~a)~(?:my~)?contacts?(?:~list)?"
    f"(?:~(?:with~(?:the~)?(?:number|phone~number)|at)~{_NUM})?",
    f"(?:save|add|store)~(?:the~)?(?:number~|phone~number~)?{_NUM}~as~(?:a~)?(?:new~)?(?:contact~)?(?:named~|called~|for~)?"
    "{name}(?:~in~(?:my~)?contacts)?",
    "new~contact ?:? ?{name}",
)
def _add_contact(g: dict[str, str]) -> Intent | Reject | None:
    return _new_contact(g["name"], g.get("num", ""))


@APPS_EARLY.rule(
    "(?:show|show~me|open|find|look~up|search~for|pull~up|get|view|display|check)~(?:me~)?{name}'s~"
    "(?:contact(?:~(?:info|information|details|card|page))?|(?:phone~|cell~|mobile~)?number|details|email(?:~address)?|address)"
    "(?:~in~(?:my~)?contacts)?",
    "(?:find|look~up|search~for|search|show~me|open|look~for|pull~up)~{name}~in~(?:my~)?contacts(?:~app)?",
    "(?:open|show(?:~me)?|view|find)~(?:the~)?contact~(?:for|of|named|called)~{name}",
    "WHATS~{name}'s~(?:phone~|cell~|mobile~)?(?:number|email|address|contact~info|phone)",
)
def _view_contact(g: dict[str, str]) -> Intent | None:
    n = _person(g["name"])
    return Intent("view_contact", {"name": n}) if n else None


# ---- calendar -----------------------------------------------------------------------------
_NOT_AN_EVENT = (
    r"\b(?:alarm|timer|do\s+not\s+disturb|dnd|night\s+light|dark\s+mode|wi-?fi|bluetooth|airplane\s+mode|silent|vibrate"
    r"|battery\s+saver|hotspot)\b|^(?:the|my)?\s*phone\b"
)


#: A repeating event ("every weekday", "repeating every year"): the calendar's events happen once.
_REPEATS = re.compile(
    r"\b(?:every|each)\s+(?:day|weekday|week|month|year|morning|evening|night|other|mon|tue|wed|thu|fri|sat|sun)"
    r"|\b(?:repeating|recurring|weekly|monthly|yearly|annually|daily)\b",
    re.I,
)
#: "from 7 to 9 pm": the event starts at the first time (the calendar keeps no end).
_SPAN = re.compile(
    r"\bfrom\s+(?P<a>\d{1,2})(?::(?P<am>\d\d))?\s*(?P<ap>[ap]\.?m\.?)?\s*(?:to|until|till|-|–)\s*"
    r"(?P<b>\d{1,2})(?::\d\d)?\s*(?P<bp>[ap]\.?m\.?)?",
    re.I,
)


def _start_of_span(m: re.Match[str]) -> str:
    """ "from 7 to 9 pm" → "at 7 pm"; "from 11 to 1 pm" → "at 11 am" (an end past noon, a start before it)."""
    a, b = int(m["a"]), int(m["b"])
    meridiem = m["ap"] or ""
    if not meridiem and m["bp"]:
        pm = m["bp"].lower().startswith("p")
        meridiem = ("pm" if a <= b or a == 12 else "am") if pm else "am"
    minutes = f":{m['am']}" if m["am"] else ""
    return f"at {a}{minutes} {meridiem}".strip()


def _event(raw: str) -> Intent | Reject | None:
    raw = _SPAN.sub(_start_of_span, raw)
    rest, day, hhmm = split_when(unquote(raw))
    quoted = re.match(r'^\s*["“](?P<t>[^"”]+)["”]\s*(?P<rest>.*)$', raw)
    if quoted is not None:  # 'a meeting called "Q3 review" on March 3': the title ends at its quote
        after, qday, qhhmm = split_when(quoted["rest"])
        if re.fullmatch(r"(?:(?:to|on|in|into|for|at)\b\s*)?(?:(?:my|the)\s+)?(?:calendar)?[\s.,]*", after, re.I):
            rest, day, hhmm = quoted["t"], qday, qhhmm
    if _REPEATS.search(rest):
        return Reject("events on the simulated phone's calendar happen once; it cannot make one repeat")
    title = unquote(rest)
    title = re.sub(r"\s+(?:to|on|in|into)\s+(?:my|the)\s+calendar$", "", title, flags=re.I)
    title = re.sub(r"^(?:for|called|named|titled)\s+", "", title, flags=re.I)
    title = re.sub(r"^(?:an?|the|new)\s+", "", title, flags=re.I).strip(" :,")
    # a setting is not an event: "put the phone on do not disturb until 7am", "schedule night light …"
    if re.search(_NOT_AN_EVENT, title, re.I):
        return None
    if not title or len(title.split()) > 8:
        return Reject("the event has no title") if not title else None
    return Intent("create_event", {"title": title[:1].upper() + title[1:], "date": day, "time": hhmm})


@APPS_EARLY.rule(
    "(?:add|put|create|make|set~up|schedule|book)~(?:an?~)?(?:new~)?(?:calendar~)?(?:event|appointment|meeting|entry)"
    "~(?:called|named|titled|for|:)~{x}",
    "(?:add|create|new)~(?:an?~)?(?:new~)?(?:calendar~)?event ?:? ?{x}",
    "new~calendar~(?:event|entry)~{x}",
)
def _event_named(g: dict[str, str]) -> Intent | Reject | None:
    return _event(g["x"])


@APPS_EARLY.rule(
    "(?:add|put|create|make|schedule|set~up|book|enter)~{x}~(?:to|on|in|into)~(?:(?:my|the)~)?calendar(?P<w>~[^?!]+)?"
)
def _event_on_calendar(g: dict[str, str]) -> Intent | Reject | None:
    return _event(g["x"] + (g.get("w") or ""))


@APPS_EARLY.rule("schedule~{x}")
def _schedule(g: dict[str, str]) -> Intent | Reject | None:
    return _event(g["x"])


# ---- camera and photos ----------------------------------------------------------------------
@APPS_EARLY.rule(
    "(?:take|snap|capture|shoot|grab|click)~(?:me~)?(?:an?~|the~|some~)?(?:quick~|new~)?"
    "(?P<what>photo|picture|pic|snapshot|shot|selfie|photograph|video|selfie~video|pictures|photos)"
    "(?:~(?:of~(?:me|myself|this|us)|(?:with|using|on|from)~(?:the~)?(?P<cam>front|back|rear|selfie|main)(?:~facing)?~camera|now))?",
    "(?P<rec>record|film|shoot|capture|start~recording|begin~recording|start~filming)~(?:an?~|the~|some~)?(?:short~|new~)?"
    "(?P<what2>video|clip|selfie~video)",
    "(?:open~(?:the~)?camera~and~)?(?P<rec2>start~recording|record)(?:~(?:a~)?video)?",
)
def _photo(g: dict[str, str]) -> Intent:
    what = (g.get("what") or g.get("what2") or "").lower()
    if g.get("rec") or g.get("rec2") or "video" in what or what == "clip":
        mode = "video"
    elif "selfie" in what or (g.get("cam") or "").lower() in ("front", "selfie"):
        mode = "selfie"
    else:
        mode = "photo"
    return Intent("take_photo", {"mode": mode})


_PIC = "(?:photo|picture|pic|image|selfie|shot|snap|video)"


@APPS_EARLY.rule(
    f"(?:show|show~me|open|view|display|see|find|pull~up)~(?:me~)?(?:my~|the~)?(?:most~recent|latest|last|newest|recent)~{_PIC}"
    "(?:~(?:i~took|i've~taken|i~have~taken|taken|in~(?:the~|my~)?(?:gallery|photos(?:~app)?|camera~roll)))*",
    f"(?:show|show~me|open|view|display|see)~(?:me~)?(?:my~)?(?:last|latest)~{_PIC}~i~(?:took|made|shot)(?:~[^?!]+)?",
)
def _latest_photo(g: dict[str, str]) -> Intent:
    return Intent("view_photo", {"query": ""})


@APPS_EARLY.rule(
    "(?:show|show~me|find|open|view|search|look~for|pull~up)~(?:me~)?my~(?:photos|pictures|pics|images|selfies)~(?:from|of|at|with)~{q}",
    "(?:find|search~for|show~me|look~for|search)~(?:the~)?(?:photos|pictures|pics)~(?:of|from)~{q}~in~(?:my~)?(?:photos|gallery)(?:~app)?",
)
def _photos_of(g: dict[str, str]) -> Intent | None:
    q = strip_article(subject(clean_slot(g["q"])))
    return Intent("view_photo", {"query": q}) if q else None
