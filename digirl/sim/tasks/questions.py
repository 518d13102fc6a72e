"""The last resort of the parser: an information request no family places becomes a web search
(success as AitW General counts it: a results page for a query with the request's key words);
anything else gets a reason why it cannot be a task.
"""

from __future__ import annotations

import re

from digirl.sim.content import words
from digirl.sim.intents import Intent
from digirl.sim.tasks.asked import about_the_phone
from digirl.sim.tasks.normalize import QUALIFIERS, query_terms

__all__ = ["question_search", "unplaceable_reason"]

_QUESTION = re.compile(
    r"^(?:who|whom|whose|what|what's|whats|when|when's|where|where's|why|which|how|how's|is|are|was|were|do|does|did"
    r"|can|could|should|would|will|has|have|am|any|anything|isn't|aren't|don't|doesn't)\b",
    re.I,
)
# Leading words of a request for information; they are not part of what a person would search for.
_ASK = re.compile(
    r"^(?:(?:can|could|would)\s+you\s+)?(?:please\s+)?(?:(?:tell|show|teach|give)\s+me(?:\s+(?:about|how|the|a|some))?"
    r"|find\s+out(?:\s+(?:about|if|whether))?|find(?:\s+me)?|look\s+(?:up|for)|search(?:\s+the\s+web|\s+online|\s+google)?(?:\s+for)?"
    r"|google|i\s+(?:want|need|would\s+like)\s+to\s+know(?:\s+about)?|i\s+wonder(?:\s+if)?|i'm\s+(?:looking\s+for|curious\s+about)"
    r"|explain|describe|summari[sz]e|recommend|suggest|list"
    # "check the weather in Tokyo": a look-up, where "check" alone is an order ("check my email")
    r"|check(?:\s+(?:out|on))?(?:\s+the)?(?=\s+(?:weather|forecast|news|score|scores|stock|traffic|temperature|time\s+in)\b))\s+",
    re.I,
)
_INFO_START = re.compile(
    r"^(?:define|definition|meaning|translate|translation|calculate|compute|convert|spell|recipes?|pictures?|photos?\s+of"
    r"|images?\s+of|news|weather|forecast|score|scores|lyrics|synonyms?|antonyms?|facts?|history\s+of|population|price"
    r"|cost|best|top|cheap|cheapest|nearest|closest|capital|flights?|hotels?|movies?|movie|showtimes|tickets?|trailer"
    r"|reviews?|directions\s+to|distance|temperature|time\s+in|stock|exchange|currency|square\s+root|how-to)\b",
    re.I,
)
# Things people tell a phone (or a person) to do that no family here does.
_ACTIONS = frozenset(
    """make take order book buy pay transfer send water feed clean wash cook bake drive walk run lock unlock turn set
    call text message open close start stop play pause skip record delete remove add create move copy paste print share
    post upload download install uninstall update save edit change switch enable disable toggle connect disconnect
    pair charge restart reboot reset shut shutdown backup back sync scan unsubscribe subscribe follow like reply
    forward archive mark block unblock report mute unmute invite join leave cancel schedule remind reserve rent return
    refund track deliver ship pick get put bring fetch throw wake sleep kill end launch go visit navigate ride fly hire
    ring tell type
    tip donate vote sign log login logout register apply fill submit upgrade downgrade enroll dim brighten increase
    decrease raise lower adjust check show clear force dial redial reload refresh""".split()
)
# A bare phrase whose second word is one of these is an order ("mow the lawn"), not a search phrase.
_OBJECT_WORDS = frozenset("the a an my your his her our their some this that these those it me him them us all every".split())
# Words that carry no search content.
_FILLER = frozenset(
    """who whom whose what what's whats when where where's why which how is are was were do does did can could
    should would will has have am any anything tell me show give find out look up search google please about
    define definition meaning mean means translate translation into calculate compute convert say said says
    make made get got go goes come comes coming came happen happens happening happened won win wins directed
    invented wrote written sings sang sing play plays played playing start starts started end ends take takes
    need know wonder want like there it this that they them you your i my a an the of in on at for to from by with
    and or but if whether is be been being much many long old far big tall some out right now today tonight
    i'm im let's lets""".split()
)


def _gibberish(text: str) -> bool:
    """Key-mash ("asdfghjkl"): every word of 5+ letters has almost no vowels."""
    words = [w for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 5]
    if not words or len(words) != len(re.findall(r"[a-z]+", text.lower())):
        return False
    return all(sum(c in "aeiouy" for c in w) / len(w) < 0.2 for w in words)


def _two_requests(text: str) -> bool:
    """Two sentences glued together ("What is X?Search for Y"): which one is the task?"""
    return re.search(r"[?!]\s*\w", text) is not None


def _looks_like_request(text: str) -> bool:
    """An information request: a question, an "explain/define/look up …" or a bare search phrase."""
    if _QUESTION.match(text) or _ASK.match(text) or _INFO_START.match(text):
        return True
    words_ = query_terms(text)
    if not words_ or words_[0] in _ACTIONS:
        return False
    return len(words_) == 1 or words_[1] not in _OBJECT_WORDS


def question_search(text: str) -> Intent | None:
    """A ``web_search`` for an information request (``text`` already cleaned and normalized), else ``None``."""
    t = text.strip()
    if not t or _gibberish(t) or _two_requests(t) or not _looks_like_request(t) or about_the_phone(t):
        return None
    query = t
    for _ in range(2):
        query = _ASK.sub("", query).strip()
    query = re.sub(r"^(?:(?:the\s+)?answer\s+to|about)\s+", "", query, flags=re.I).strip(" ,:") or t
    # Tokens as the search engine reads a query ("15%", "$50" stay whole), so the terms can match it.
    # A qualifier ("good", "best") is not required unless it is part of a name or a quoted phrase
    # ("Great Wall", "good morning").
    kept = {w.lower() for w in re.findall(r"\b[A-Z][a-z]+", query)}
    kept |= {w for q in re.findall(r"[\"']([^\"']+)[\"']", query) for w in words(q)}
    terms: list[str] = []
    for w in words(query):
        if w in _FILLER or (w in QUALIFIERS and w not in kept) or w in terms or (len(w) == 1 and not w.isdigit()):
            continue
        terms.append(w)
    if not terms:
        return None
    return Intent("web_search", {"query": query, "key_terms": " ".join(terms[:6]), "answer": "generic"})


def unplaceable_reason(text: str) -> str:
    """Why ``text`` (cleaned, normalized) is no task: unreadable, or a request for something no family does."""
    t = text.strip()
    if not t:
        return "empty instruction"
    if _gibberish(t):
        return "unreadable: no words a person would use"
    if _two_requests(t):
        return "two requests in one line: give one instruction per line"
    if about_the_phone(t) and _looks_like_request(t) and not re.search(r",|\b(?:and|then)\b", t):
        return f"asks about something on the phone that no rule here reads ({t!r}); a web search would not answer it"
    words = t.split()
    head = " ".join(words[:3]) + (" …" if len(words) > 3 else "")
    return f"no task family does {head!r} on the simulated phone, and it is not a question to search for"
