"""Compound steps that only mean something after the one before, added for everyday requests
(issue 42): appended to :data:`~digirl.sim.tasks.compound_rules.CONTEXT_RULES` on import, the
extension point that module documents. Each rule returns ``None`` to pass.

- after a YouTube search, "subscribe to the first channel" / "open his channel" is the searched channel;
- after a Gmail search, "open the first one" / "open it" is its first result (``open_mail``);
- after a call, "put it on speaker" is that call on speaker (``call_speaker``); after a Maps search,
  "call it" calls the place from its sheet (``call_place``); in the overview, "close chrome" closes its card;
- on a shop, "go to the cart" is its cart page (``shop_cart``);
- in the Clock, "add Tokyo", "set it for 5 minutes", "stop it";
- after the newest conversation, "reply ok"; after a conversation, "say …" sends it there; after a
  text, "then to Anjali" sends the same text to another person;
- after the shade, "clear everything"; after the front lens, "take a picture" takes a selfie; after a
  screenshot or a photo, "open it in photos" views it;
- in Gmail, "check the inbox"; in the Calendar, "show tomorrow"; in Chrome, "ask how tall …".
"""

from __future__ import annotations

import re

from digirl.sim.apps.player import MUSIC_SERVICES
from digirl.sim.intents import Intent
from digirl.sim.tasks.compound_rules import CONTEXT_RULES, FIRST_ITEM, Context
from digirl.sim.tasks.matching import match_single

__all__: list[str] = []

#: The step phrasings, by name (matched whole, case-insensitive).
_STEP = {
    name: re.compile(pattern, re.I)
    for name, pattern in {
        "subscribe_first": rf"(?:subscribe|sub)(?:\s+to\s+(?:{FIRST_ITEM}|it|them|him|her|the\s+channel|that\s+channel"
        r"|(?:the\s+)?(?:first|top|1st)\s+channel))?",
        # the results list newest first: "the newest one" is the first
        "open_mail": rf"(?:open|read|show|view|tap(?:\s+on)?|select)\s+(?:it|that\s+one|{FIRST_ITEM}"
        r"|(?:the\s+)?(?:first|top|1st|newest|latest|most\s+recent|last)\s+(?:one|result|e-?mail|mail|message))",
        "channel": r"(?:open|go\s+to|show(?:\s+me)?|visit|tap(?:\s+on)?)\s+(?:his|her|their|its|the|that)\s+"
        r"(?:youtube\s+)?channel(?:\s+page)?",
        "cart_page": r"(?:go\s+to|open|show(?:\s+me)?|check(?:\s+out)?|view|see|tap(?:\s+on)?)\s+(?:my\s+|the\s+)?"
        r"(?:shopping\s+)?(?:cart|basket)",
        "clear_all": r"(?:clear|dismiss|remove|delete|swipe\s+away)\s+(?:everything|all|them(?:\s+all)?|all\s+of\s+them|it\s+all"
        r"|all\s+notifications)",
        "reply": r"reply(?:\s+(?:to\s+(?:it|them|him|her)))?(?:\s+(?:with|saying))?\s+(?P<b>.+)",
        "say": r"(?:say|send|text|type|write|tell\s+(?:them|him|her))(?:\s+(?:them|him|her))?\s+(?P<b>.+)",
        "same_to": r"(?:and\s+)?(?:then\s+)?(?:also\s+)?to\s+(?P<c>[A-Za-z][\w'-]*(?:\s+[A-Z][\w'-]*)?)(?:\s+too)?",
        "back": r"(?:go|navigate)\s+back|(?:press|hit|tap)\s+(?:the\s+)?back(?:\s+button)?",
        "send_it": r"(?:and\s+)?(?:send|submit)(?:\s+(?:it|that|the\s+(?:e-?mail|message|text)))?",
        "clear_it": r"(?:clear|delete|erase|wipe)\s+(?:it|them|everything|it\s+all|all(?:\s+of\s+it)?|the\s+history)",
        "close_app": r"(?:close|swipe\s+away|kill|dismiss|remove)\s+(?P<app>.+?)(?:\s+app)?",
        "send_picture": r"(?:and\s+)?(?:send|share|text|message)\s+"
        r"(?:it|that|this|the\s+(?:photo|picture|pic|selfie|screenshot|video))?\s*(?:to|with)\s+(?P<c>[A-Za-z][\w'.-]*(?:\s+[A-Z][\w'.-]*)?)(?:\s+(?:on|in|via|through)\s+(?:messages|whatsapp|text))?",
        "app_action": r"(?:and\s+)?(?:(?P<stop>force\s+(?:stop|close)(?:\s+it)?)|clear\s+(?:the\s+|its\s+)?cache)",
        "join": r"(?:connect|join|switch)\s+(?:to\s+|on(?:to)?\s+)?(?P<n>\"[^\"]+\"|'[^']+'|[\w.-]+)",
        "open_link": r"(?:open|click(?:\s+on)?|tap(?:\s+on)?|visit|go\s+to|read)\s+(?:the\s+)?(?:first|top|1st)"
        r"(?:\s+(?:one|result|link|hit|article|website|site|page|search\s+result))?",
        "call_it": r"(?:call|ring|phone|dial)\s+(?:it|them|that\s+place|the\s+place|(?:the\s+)?(?:first|top|closest|nearest)"
        r"(?:\s+one)?)(?:\s+(?:up|now))?(?:\s+to\s+[^,]+)?",
        "speaker": r"(?:put|switch|turn|set)\s+(?:it|the\s+call|them|him|her)\s+(?:on|to)\s+(?:the\s+)?speaker(?:\s*phone)?"
        r"|(?:turn|switch|put)\s+on\s+(?:the\s+)?speaker(?:\s*phone)?|(?:use\s+(?:the\s+)?)?speaker(?:\s*phone)?(?:\s+on)?",
        "view_new": r"(?:open|view|show(?:\s+me)?|see)\s+(?:it|that|the\s+(?:screenshot|photo|picture|video))"
        r"(?:\s+in\s+(?:the\s+)?(?:photos|gallery)(?:\s+app)?)?"
        r"|(?:open|go\s+to|check)\s+(?:the\s+|my\s+)?(?:photos|gallery)(?:\s+app)?\s+to\s+(?:see|view|look\s+at|check)\s+(?:it|that)",
    }.items()
}


def _quoted(text: str) -> str:
    return text.strip().strip("\"'“”").strip()


def _pointing_steps(text: str, ctx: Context) -> Intent | None:
    """Steps that point at the screen the last step left: a search's first channel / mail, a cart."""
    last, t = ctx.last, text.strip()
    if last is None:
        return None
    if _STEP["subscribe_first"].fullmatch(t) and last.family == "youtube_video" and last.get("action", "search") == "search":
        return match_single(f"subscribe to {last.get('query')}")  # the results list opens with the query's channel
    if _STEP["channel"].fullmatch(t) and last.family == "youtube_video" and last.get("action", "search") == "search":
        got = match_single(f"subscribe to {last.get('query')}")  # "search youtube for X and open his channel"
        return Intent("youtube_channel", {"channel": got.get("channel")}) if got is not None else None
    if _STEP["open_mail"].fullmatch(t) and last.family == "app_search" and last.get("app") == "gmail":
        return Intent("open_mail", {"query": last.get("query")})
    if _STEP["cart_page"].fullmatch(t) and ctx.app == "chrome" and ctx.site:
        got = match_single(f"check my cart on {ctx.site}")
        return got if got is not None and got.family == "shop_cart" else None
    if last.family == "open_app" and _STEP["back"].fullmatch(t):
        return Intent("go_home")  # "open netflix then go back": back from an app opened from home is home
    if last.family in ("take_screenshot", "take_photo") and _STEP["view_new"].fullmatch(t):
        return Intent("view_photo", {"query": ""})  # the newest picture: the one just taken
    if last.family == "show_notifications" and _STEP["clear_all"].fullmatch(t):
        return Intent("clear_notifications")
    if last.family == "app_page" and last.get("app") == "camera" and last.get("page") in ("Night", "Portrait", "Panorama"):
        got = match_single(t)  # "open the camera in night mode and take a picture": a night photo
        if got is not None and got.family == "take_photo" and got.get("mode", "photo") == "photo" and not got.get("style"):
            return Intent("take_photo", {**got.slots, "style": last.get("page").lower()})
    if last.family == "camera_lens" and last.get("lens") == "front":
        got = match_single(t)
        if got is not None and got.family == "take_photo" and got.get("mode", "photo") == "photo":
            return Intent("take_photo", {"mode": "selfie"})
    return None


def _surface_steps(text: str, ctx: Context) -> Intent | None:
    """Steps after the one before on the newer surfaces: a call on speaker, clearing the history just
    shown, closing a card of the overview, a file of the folder just opened, sending the picture just
    taken, an app's info page's actions, a Wi-Fi network, a search's first result, a place to call."""
    last, t = ctx.last, text.strip()
    if last is None:
        return None
    if _STEP["speaker"].fullmatch(t) and last.family == "make_call":  # "call Ana and put it on speaker"
        return Intent("call_speaker", {"contact": last.get("contact")})
    if last.family == "browser_page" and last.get("page") == "history" and _STEP["clear_it"].fullmatch(t):
        # "open chrome history then clear it"
        return Intent("clear_history")
    m = _STEP["close_app"].fullmatch(t)
    if m is not None and last.family == "show_recents":  # "show recent apps and close chrome"
        got = match_single(f"close {m.group('app')} from recent apps")
        return got if got is not None and got.family == "close_recent" else None
    if last.family == "app_page" and last.get("app") == "files" and last.get("page") != "Recent":
        got = match_single(f"{t} in {last.get('page')}")  # "go to Downloads and open the latest PDF"
        if got is not None and got.family in ("open_file", "delete_file"):
            return got
    m = _STEP["send_picture"].fullmatch(t)
    if m is not None and last.family in ("take_photo", "take_screenshot", "view_photo"):  # "take a selfie and send it to Ana"
        query = "screenshot" if last.family == "take_screenshot" else last.get("query", "")
        if last.family == "take_photo" and last.get("mode") == "video":
            query = ""
        return Intent("send_photo", {"contact": m.group("c"), "query": query})
    if last.family == "app_settings":  # "go to settings, apps, youtube and clear the cache"
        act = _STEP["app_action"].fullmatch(t)
        if act is not None:
            return Intent("app_action", {"app": last.get("app"), "action": "force_stop" if act.group("stop") else "clear_cache"})
    m = _STEP["join"].fullmatch(t)
    if m is not None and last.family == "toggle_setting" and last.get("setting") == "wifi":  # "turn on wifi, connect to X"
        return Intent("connect_wifi", {"network": _quoted(m.group("n"))})
    if _STEP["open_link"].fullmatch(t) and last.family == "web_search":  # "google X and open the first link"
        return Intent("open_result", {"query": last.get("query"), "key_terms": last.get("key_terms")})
    if _STEP["call_it"].fullmatch(t) and last.family == "maps_search":  # "find the nearest pharmacy and call it"
        return Intent("call_place", {"query": last.get("query")})
    return None


def _messaging_steps(text: str, ctx: Context) -> Intent | None:
    """A reply in the newest conversation, a text said in the open one, the same text to another person."""
    last, t = ctx.last, text.strip()
    if last is None:
        return None
    if last.family == "latest_thread":
        m = _STEP["reply"].fullmatch(t) or _STEP["say"].fullmatch(t)
        return Intent("reply_latest", {"body": _quoted(m.group("b"))}) if m else None
    if last.family in ("send_email", "send_message") and _STEP["send_it"].fullmatch(t):
        return last  # "compose an email to … and send it": the sending is the step before's
    if last.family == "open_thread":  # "start a new conversation with Ines and say 'lunch tomorrow?'"
        m = _STEP["say"].fullmatch(t) or _STEP["reply"].fullmatch(t)
        if m is not None and _quoted(m.group("b")):
            return Intent("send_message", {"contact": last.get("contact"), "body": _quoted(m.group("b"))})
    if last.family == "send_message":  # "send 'happy new year!' to Wei and then to Anjali"
        m = _STEP["same_to"].fullmatch(t)
        if m is not None:
            got = match_single(f"text {m.group('c')} saying {last.get('body')}")
            return got if got is not None and got.family == "send_message" and got.get("contact") != last.get("contact") else None
    return None


def _clock_step(text: str, ctx: Context) -> Intent | None:
    """In the Clock: "add Tokyo" (the world clock), "set it for 5 minutes" (a timer; on the Alarm tab, an
    alarm), "stop it" after starting the stopwatch."""
    if ctx.app != "clock":
        return None
    t = text.strip()
    m = re.fullmatch(r"(?:add|put)\s+(?:a\s+(?:world\s+)?clock\s+for\s+)?(?P<city>.+?)(?:\s+(?:to\s+it|there|too))?", t, re.I)
    if m is not None:
        got = match_single(f"add {m.group('city')} to the world clock")
        return got if got is not None and got.family == "add_world_clock" else None
    if re.fullmatch(r"(?:stop|pause|halt)\s+(?:it|the\s+stopwatch)", t, re.I):
        return Intent("stop_stopwatch")
    m = re.fullmatch(r"(?:and\s+)?(?:another(?:\s+one)?|one\s+more|a\s+second(?:\s+one)?)\s+(?:for|at)\s+(?P<v>.+)", t, re.I)
    if m is not None and ctx.last is not None and ctx.last.family == "set_alarm":  # (the Clock runs one timer)
        got = match_single(f"set an alarm for {m.group('v')}")  # "an alarm for 5:30 and another for 5:45"
        return got if got is not None and got.family == "set_alarm" else None
    m = re.fullmatch(
        r"(?:set|start)(?:\s+(?:it|one|the\s+timer|a\s+timer|the\s+alarm|an\s+alarm))?\s+(?:for|to|at)\s+(?P<v>.+)", t, re.I
    )
    if m is None:
        return None
    page = ctx.last.get("page") if ctx.last is not None and ctx.last.family == "app_page" else ""
    for kind in ("alarm", "timer") if page == "Alarm" else ("timer", "alarm"):
        got = match_single(f"set {'an alarm' if kind == 'alarm' else 'a timer'} for {m.group('v')}")
        if got is not None and got.family in ("set_alarm", "start_timer"):
            return got
    return None


def _app_steps(text: str, ctx: Context) -> Intent | None:
    """Gmail's "check the inbox", the Calendar's "show tomorrow", Chrome's "ask how tall …"."""
    t = text.strip()
    if ctx.app == "gmail" and re.fullmatch(r"(?:check|open|show|go\s+to|view)\s+(?:the\s+|my\s+)?inbox", t, re.I):
        return Intent("check_email")
    if ctx.app == "calendar":
        m = re.fullmatch(r"(?:show(?:\s+me)?|go\s+to|open|check|view|see)\s+(?P<d>.+)", t, re.I)
        if m is not None:
            from digirl.sim.tasks.when import parse_date

            day = parse_date(m.group("d"))
            return Intent("calendar_day", {"date": day.isoformat()}) if day else None
    if ctx.app == "music" or ctx.app in MUSIC_SERVICES:  # "open spotify and play Bohemian Rhapsody"
        m = re.fullmatch(r"(?P<v>play|put\s+on|listen\s+to|shuffle)\s+(?P<q>.+)", t, re.I)
        if m is not None:
            from digirl.sim.tasks.music_rules import WHAT_PLAYS, music_request

            app = "Music" if ctx.app == "music" else ctx.app[2:]
            if WHAT_PLAYS.fullmatch(m.group("q").strip()):  # "… and shuffle it": what plays, not a song called "it"
                if m.group("v").lower() != "shuffle":
                    return None
                playing = ctx.last.get("app") if ctx.last is not None and ctx.last.family == "play_music" else ""
                return Intent("music_control", {"app": playing or app, "action": "shuffle"})
            return music_request(app, m.group("q"))
    last = ctx.last
    if last is not None and last.family == "app_page" and last.get("app") == "photos":  # "go to albums and open Camera"
        m = re.fullmatch(r"(?:open|tap(?:\s+on)?|show(?:\s+me)?|go\s+(?:in)?to)\s+(?:the\s+)?(?P<a>\w+)(?:\s+album)?", t, re.I)
        if m is not None:
            from digirl.sim.tasks.newer_rules import album_page

            return album_page(m.group("a"))
    if ctx.app in ("chrome", "google"):
        m = re.fullmatch(r"ask(?:\s+(?:google|it))?\s+(?P<q>.+)", t, re.I)
        if m is not None:
            from digirl.sim.tasks.questions import question_search

            return question_search(m.group("q"))
    return None


CONTEXT_RULES.extend([_pointing_steps, _surface_steps, _messaging_steps, _clock_step, _app_steps])
