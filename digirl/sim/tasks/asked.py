"""Requests about the phone itself, said as questions or without a verb, said as the request they are.

"what alarms do I have?", "any new messages?", "flashlight", "pasta timer, 11 min" are things a
person asks the phone, not the web: :func:`ask_plainly` rewrites them into a phrasing the rules read
(the second pass of :func:`~digirl.sim.tasks.normalize.normalize_request`), and
:func:`about_the_phone` tells the question fallback (:mod:`.questions`) that a request it cannot read
still names something on the phone, so it is refused with a reason instead of becoming a web search
that the simulator would then count as solved.
"""

from __future__ import annotations

import re

__all__ = ["about_the_phone", "ask_plainly"]

_NAME = r"[A-Za-z\u00c0-\u024f][\w\u00c0-\u024f'-]*(?:\s+[A-Z\u00c0-\u024f][\w\u00c0-\u024f'-]*)?"
_DURATION = r"\d+\s*(?:seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h)"

#: (pattern, replacement), tried in order on the whole request; each pattern matches all of it.
_ASKED: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.I), r)
    for p, r in (
        (r"(?:the\s+)?(?:flashlight|flash\s+light|torch)(?:\s+(?:please|pls|now))?", "turn on the flashlight"),
        (
            r"(?:i\s+(?:want|need)|give\s+me|get\s+me)\s+(?:an?\s+)?(?:new\s+)?(?:incognito|private)\s+tab",
            "open an incognito tab",
        ),
        (r"(?:an?\s+)?alarm\s+(?:for|at)\s+(.+)", r"set an alarm for \1"),
        (rf"(?:a\s+)?(?:[a-z]+\s+)?timer[,:]?\s+(?:for\s+)?({_DURATION})", r"set a timer for \1"),
        (rf"({_DURATION})\s+timer", r"set a timer for \1"),
        (
            r"(?:what|which)\s+alarms?\s+(?:do\s+i\s+have|have\s+i\s+got|are|is)(?:\s+(?:set|on|set\s+up|active))?"
            r"(?:\s+(?:right\s+now|now|at\s+the\s+moment))?",
            "show my alarms",
        ),
        (r"what\s+(?:did|have)\s+i\s+(?:download|downloaded)(?:\s+(?:recently|lately|today|this\s+week))?", "open my downloads"),
        (
            r"(?:find|where(?:'s|s|\s+is|\s+are)|show\s+me|open)\s+(?:the|that|my)\s+(?:pdf|file|document|doc|apk|zip|picture|image)s?"
            r"\s+(?:i|that\s+i)\s+(?:just\s+)?(?:download|downloaded)(?:\s+(?:recently|lately|today|yesterday|earlier|this\s+week))?",
            "open my downloads",
        ),
        (
            rf"(?:anything|any\s+(?:new\s+)?(?:e-?mails?|mail))\s+(?:new\s+)?from\s+({_NAME})\s+in\s+my\s+(?:inbox|gmail|e-?mail)",
            r"search my inbox for \1",
        ),
        (
            r"(?:is|are)\s+(?:my\s+|the\s+)?(?:battery\s+saver|power\s+sav(?:er|ing)(?:\s+mode)?)\s+(?:on|off|enabled|active|turned\s+on)",
            "show the battery settings",
        ),
        (
            r"who\s+(?:did\s+i\s+miss\s+(?:a\s+)?calls?\s+from|(?:tried\s+to\s+)?(?:call|ring)(?:ed)?\s+me)"
            r"(?:\s+(?:this\s+morning|today|yesterday|earlier|last\s+night|just\s+now))?",
            "show my missed calls",
        ),
        (
            r"(?:any|do\s+i\s+have\s+any|did\s+i\s+get\s+any|are\s+there\s+any)\s+(?:new\s+|unread\s+)?(?:messages|texts|sms)",
            "open messages",
        ),
        (rf"what\s+did\s+({_NAME})\s+(?:text|message|send)\s+me(?:\s+\w+)?", r"open my conversation with \1"),
        (
            r"what(?:'s|s|\s+is)\s+in\s+my\s+(?:shopping\s+)?(?:cart|basket)\s+(?:on|at)\s+(.+)",
            r"show my cart on \1",
        ),
        (r"what(?:'s|s|\s+is)\s+in\s+my\s+([\w.]+)\s+(?:shopping\s+)?(?:cart|basket)", r"show my cart on \1"),
        (
            rf"what(?:'s|s|\s+is)\s+({_NAME})'s\s+(?:e-?mail(?:\s+address)?|(?:phone\s+|mobile\s+|cell\s+)?number|birthday|address)",
            r"show \1's contact",
        ),
        (
            r"(?:do|have)\s+i\s+(?:have|got)\s+(?:anything|any\s+(?:plans|events?|meetings?|appointments?))"
            r"(?:\s+(?:planned|scheduled|on\s+my\s+calendar))?\s+(on\s+.+|tomorrow|today|tonight|this\s+\w+|next\s+\w+)",
            r"what do i have \1",
        ),
        (r"(?:the\s+)?screen\s+time-?out\s+(?:to\s+)?(\d.*)", r"set the screen timeout to \1"),
        (r"(walking|biking|cycling|driving|transit)\s+(directions|route)\s+to\s+(.+)", r"get \1 \2 to \3"),
        (r"(?:show\s+me|tell\s+me|check)\s+(how\s+much\s+(?:storage|space|memory)\s+.+)", r"\1"),
        (r"(?:which|what)\s+android\s+version\s+is\s+(?:this|my|the)\s+phone\s+(?:on|running)", "what's my android version"),
        (r"(?:show\s+me\s+)?what(?:'s|s|\s+is)\s+in\s+(?:my\s+)?(spam|trash|sent|drafts)(?:\s+folder)?", r"show me my \1 folder"),
        (r"(?:the\s+)?home\s+screen", "go to the home screen"),
        (r"(?:the\s+|my\s+)?(downloads|documents|pictures|music|videos)\s+folder", r"open the \1 folder"),
        (r"is\s+there\s+(?:an?\s+)?(?:new\s+)?update\s+(?:for|to)\s+(.+)", r"update \1"),
        (
            r"(?:find|look\s+for|search\s+for)\s+(?:the|my)\s+(?:file|document|pdf|doc)\s+(?:called|named)\s+(\S+\.\w{2,4})",
            r"open the file \1",
        ),
        (r"(?:find|show\s+me|open)\s+(?:the\s+)?contact\s+(?:for\s+|named\s+|called\s+)?(.+)", r"show \1's contact"),
        (r"find\s+(?:me\s+)?an?\s+(?:youtube\s+)?video\s+(?:on|about)\s+(.+?)(?:\s+on\s+youtube)?", r"search youtube for \1"),
        (r"find\s+(?:me\s+)?an?\s+youtube\s+video\s+(?:on|about)\s+(.+)", r"search youtube for \1"),
        (r"find\s+(?:me\s+)?an?\s+(?:good\s+|nice\s+|free\s+)?(.+?\s+app)", r"search the play store for \1"),
    )
)

#: Things on the phone that a question about them names ("is my battery saver on?", "what alarms …").
_ON_THE_PHONE = re.compile(
    r"\b(?:my|i|me)\b.*\b(?:alarms?|timers?|stopwatch|battery\s+saver|messages|mesages|texts?|inbox|contacts?|photos|pictures"
    r"|videos|pdfs|files|documents|storage"
    r"|calendar|downloads?|downloaded|screenshots?|gallery|camera\s+roll|cart|basket|notifications?|missed\s+calls?"
    r"|voicemails?|ringtone|wallpaper|hotspot|playlists?|subscriptions|bookmarks|browsing\s+history|(?:photo\s+)?albums?)\b"
    r"|\b(?:text(?:ed)?|messaged|called|rang)\s+me\b"
    r"|^(?:flashlight|torch|alarm|timer|stopwatch|screen\s+time-?out|battery\s+saver|do\s+not\s+disturb|dnd|hotspot"
    r"|airplane\s+mode|wi-?fi|bluetooth|brightness|volume|ringtone|wallpaper|dark\s+mode|night\s+light)\b"
    # a request put as a question: "can you make it dimmer?", "I want that you call my brother"
    r"|^(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+|pls\s+)?(?:make|turn|set|put|switch|call|text|open|send|play|do"
    r"|start|stop|take|add|delete|remove|change|mute|unmute|dim|lower|raise|show\s+(?:my|the)|check\s+my)\b"
    r"|\b(?:want|need|would\s+like)\s+(?:that\s+)?(?:you|u)\s+(?:to\s+)?(?:make|turn|set|put|switch|call|text|open|send|play)\b"
    r"|\b[A-Z][\w'-]*'s\s+(?:e-?mail(?:\s+address)?|(?:phone\s+|mobile\s+|cell\s+)?number|birthday)\b"
    # the phone itself, the page on screen, the owner's own day: no web search answers these
    r"|^(?:power\s+(?:off|down)|shut\s+down|switch\s+off|restart|reboot)\s+(?:the\s+|my\s+|this\s+)?(?:phone|device)\b"
    r"|^translate\s+(?:this|the)\s+(?:page|site|text|screen)\b|^max(?:\s+out)?\s+(?:the\s+|my\s+)?(?:media\s+|ring\s+)?volume\b"
    r"|^what\s+did\s+i\s+(?:have|eat|do|buy|say|watch)\b",
    re.I,
)
#: How-to questions are for the web even when they name the phone ("how do I turn off my alarm").
_HOW_TO = re.compile(r"^(?:how\s+(?:do|can|should|would)\s+(?:i|you|we)|how\s+to|why\s+(?:does|is|do|won't|can't))\b", re.I)


def ask_plainly(text: str) -> str:
    """``text`` said as the request it is when it is a question or verbless request about the phone
    (:data:`_ASKED`), else ``text`` unchanged."""
    t = text.strip().rstrip("?!. ")
    for rx, repl in _ASKED:
        m = rx.fullmatch(t)
        if m:
            return m.expand(repl)
    return text


def about_the_phone(text: str) -> bool:
    """Whether a request names something on the phone (its alarms, messages, cart, a setting), so that
    a web search would not answer it; how-to questions are not."""
    t = text.strip()
    return not _HOW_TO.match(t) and _ON_THE_PHONE.search(t) is not None
