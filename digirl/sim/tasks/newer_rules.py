"""Phrasings of the surfaces added after the compound-instruction work (issue 42, round 3's session 23):
the screen timeout and font size, Wi-Fi networks by name, an alarm's label and repeat days, the
camera's styles and self-timer, replying to / forwarding / starring / deleting a mail, deleting a
photo; since session 25 also ringtones, languages and time zones. Music lives in :mod:`.music_rules`,
imported where its section stood. :mod:`.everyday_rules` imports this module where these rules
stand in :data:`~digirl.sim.tasks.app_rules.APPS_EARLY`'s order; the shipped task sets and the real
AitW lines parse as before (tests/sim pins both)."""

from __future__ import annotations

import re

from digirl.sim.content import title_case
from digirl.sim.intents import Intent
from digirl.sim.tasks.aitw_rules import AVOIDABLE
from digirl.sim.tasks.app_rules import APPS_EARLY, unquote
from digirl.sim.tasks.rules import Reject, reparse

__all__: list[str] = []

_LATEST = "(?:latest|last|newest|most~recent|new|recent)"


def _as_said(raw: str) -> str:
    """A name as the request says it, unquoted and without a leading "my"; capitalised when it was
    written all in lower case ("tomás" → "Tomás", "JBL Flip 5" stays)."""
    name = re.sub(r"^my\s+", "", unquote(raw).strip(), flags=re.I)
    return title_case(name) if name.islower() else name


def _phone_app(raw: str) -> str | None:
    """An app the phone knows, as said ("the instagram app" → "Instagram"); None for another name."""
    from digirl.sim.phone import resolve_app
    from digirl.sim.tasks.entities import KNOWN_APPS

    app = _as_said(re.sub(r"^the\s+|\s+app$", "", raw.strip(), flags=re.I))
    return None if resolve_app(app).startswith("x.") and app.lower() not in KNOWN_APPS else app


_TIMEOUT = "screen~(?:timeout|time-?out|time~out|sleep(?:~time)?)|(?:display~)?sleep~(?:timer|setting)|auto-?lock"


@APPS_EARLY.rule(
    f"(?:change|set|make|put|switch|adjust|update)~(?:the~|my~)?(?:{_TIMEOUT})~(?:to~|at~|for~)?{{d}}",
    "(?:make|have|let|set)~(?:the~|my~)?(?:screen|display|phone)~(?:to~)?(?:turn~off|go~(?:to~sleep|dark|off)|sleep|time~out|lock)"
    "~(?:after|in)~{d}",
    f"(?:set~)?(?:an?~)?{{d}}~(?:{_TIMEOUT})",
)
def _screen_timeout(g: dict[str, str]) -> Intent | Reject:
    from digirl.sim.device import OPTIONS
    from digirl.sim.tasks.normalize import parse_duration

    seconds = parse_duration(g["d"])
    value = next((v for v in OPTIONS["screen_timeout"][1] if seconds is not None and parse_duration(v) == seconds), None)
    if value is None:
        return Reject(f"the screen timeout can be {', '.join(OPTIONS['screen_timeout'][1])}, not {g['d']!r}")
    return Intent("set_option", {"option": "screen_timeout", "value": value})


_WIFI = "(?:the~|my~)?(?:wi-?fi|wifi|wireless|wlan)(?:~network)?|(?:the~|my~)?network"


@APPS_EARLY.rule(
    f"(?:connect|hook~up|join|switch|get)~(?:me~)?(?:to~|on(?:to)?~)?(?:{_WIFI})~(?:called~|named~)?(?P<n>\"[^\"]+\"|'[^']+'|[\\w.-]+)",
    "(?:connect|join|switch)~(?:me~)?(?:to~|on(?:to)?~)?(?:the~)?(?P<n>\"[^\"]+\"|'[^']+'|[\\w.-]*[_\\d-][\\w.-]*)(?:~(?:wi-?fi|wifi|network))+",
)
def _connect_wifi(g: dict[str, str]) -> Intent | None:
    """ "connect to the wifi called "Kowalski_Home_5G"", "join the CafeNero_Guest network"."""
    name = unquote(g["n"]).strip()
    if not name or name.lower() in ("wifi", "wi-fi", "network", "internet", "it", "my", "the"):
        return None
    return Intent("connect_wifi", {"network": name})


_GADGET = "(?:headphones|headset|earbuds|earphones|buds|airpods|speaker|soundbar|car|watch|smartwatch|keyboard|mouse)"
_MAKER = "(?:jbl|bose|sony|beats|airpods|galaxy~(?:buds|watch)|pixel~(?:buds|watch)|fitbit|apple~watch|sennheiser|jabra|anker)"


@APPS_EARLY.rule(
    "(?:connect|pair|hook~up)~(?:to~|with~)?(?:my~|the~)?(?P<d>[\\w' .-]+?)~(?:via|over|with|using|on|through)~bluetooth",
    "(?:connect|pair|hook~up)~(?:my~phone~|the~phone~)?(?:bluetooth|bt)~(?:to|with)~(?:my~|the~)?(?P<d>[\\w' .-]+?)",
    # templates are case-blind: a gadget word or a maker's name says it is a device, not a person or place
    f"(?:connect|pair)~(?:to~|with~)?(?:my~|the~)?(?P<d>(?:[\\w'.-]+~){{0,3}}{_GADGET}|{_MAKER}(?:~[\\w'.-]+){{0,3}})",
)
def _connect_bluetooth(g: dict[str, str]) -> Intent | None:
    """ "connect to my JBL Flip 5", "pair my headphones", "connect my car over bluetooth"."""
    name = _as_said(g["d"])
    if not name or re.search(r"\b(?:wi-?fi|network|internet|hotspot)\b", name, re.I):
        return None
    return Intent("connect_bluetooth", {"device": name})


_TRAVEL = {"walking": "Walk", "walk": "Walk", "biking": "Bike", "cycling": "Bike", "bike": "Bike", "transit": "Transit",
           "bus": "Transit", "train": "Transit", "public~transport": "Transit", "driving": "Drive", "drive": "Drive"}  # fmt: skip


_AVOIDED = f"(?P<what>{AVOIDABLE.replace(' ', '~')})"


@APPS_EARLY.rule(
    f"(?:get|show|give)(?:~me)?~(?:the~)?(?:\\w+~)?(?:directions|route)~to~{{x}}~(?:and~|but~)?(?:avoid|avoiding|without|with~no)~{_AVOIDED}",
    f"(?:navigate|take~me|drive~me|directions)~to~{{x}}~(?:and~|but~)?(?:avoid|avoiding|without|with~no)~{_AVOIDED}",
)
def _route_options(g: dict[str, str]) -> Reject:
    """ "get driving directions to O'Hare and avoid tolls": the simulated Maps has no route options; reading the
    line without them would drop what the user asked for (or put "and avoid tolls" in the destination)."""
    return Reject(f"route options (avoid {g['what'].replace('~', ' ').lower()}) are not in the simulated Maps app")


@APPS_EARLY.rule(
    f"(?:get|show|give)(?:~me)?~(?:the~)?(?P<mode>{'|'.join(_TRAVEL)})~(?:directions|route)~(?:to~)?{{x}}",
    f"(?:directions|navigate|navigation|route)~to~{{x}}~(?:by|on|via)~(?:(?:a|the)~)?(?P<mode>{'|'.join(_TRAVEL)})",
    "(?:how~do~i|how~to|how~can~i)~(?P<mode>walk|bike|drive)~to~{x}",
    f"(?:how~do~i|how~to|how~can~i)~get~to~{{x}}~(?:by|on|via)~(?:(?:a|the)~)?(?P<mode>{'|'.join(_TRAVEL)})",
)
def _directions_by(g: dict[str, str]) -> Intent | None:
    """ "get walking directions to Central Park", "navigate to the airport by train"."""
    got = reparse(f"get directions to {g['x']}")
    if got is None or got.family != "maps_directions":
        return None
    return Intent("maps_directions", {**got.slots, "mode": _TRAVEL[re.sub(r"\s+", "~", g["mode"].lower())]})


@APPS_EARLY.rule(
    "(?:call|ring|phone|dial)~{c}~(?:on|with|using|via)~(?:the~)?speaker(?:phone|~phone)?(?:~on)?",
    "speaker(?:phone|~phone)?~call~(?:to~|with~)?{c}",
)
def _call_on_speaker(g: dict[str, str]) -> Intent | None:
    """ "call Mehmet on speakerphone", "speaker call Mom"."""
    from digirl.sim.tasks.app_rules import contact_name

    c = contact_name(g["c"])
    return Intent("call_speaker", {"contact": c}) if c else None


_FONT_WORDS = {
    "small": "Small", "smaller": "Small", "smallest": "Small", "tiny": "Small",
    "default": "Default", "normal": "Default", "medium": "Default", "regular": "Default", "standard": "Default",
    "large": "Large", "big": "Large", "larger": "Large", "bigger": "Large",
    "largest": "Largest", "biggest": "Largest", "huge": "Largest", "max": "Largest", "maximum": "Largest",
}  # fmt: skip
_FONT = "(?:the~)?(?:font|text|letters?)(?:~size)?(?:~on~(?:my~|the~)?(?:phone|screen))?"


@APPS_EARLY.rule(
    f"(?P<dir>increase|enlarge|raise|bump~up|turn~up|decrease|reduce|shrink|lower|turn~down)~{_FONT}",
    f"(?:make|set|change|turn|switch)~{_FONT}~(?:to~)?(?:the~)?(?P<v>{'|'.join(_FONT_WORDS)})(?:~(?:size|one|setting))?",
    "(?:make~)?(?:the~)?(?:font|text)~(?P<v>bigger|larger|smaller)",
)
def _font_size(g: dict[str, str]) -> Intent:
    if g.get("dir"):
        up = g["dir"].split()[0].lower() in ("increase", "enlarge", "raise", "bump", "turn") and "down" not in g["dir"].lower()
        return Intent("set_option", {"option": "font_size", "value": "up" if up else "down"})
    v = g["v"].lower()
    if v in ("bigger", "larger", "smaller"):  # a move, from wherever it is
        return Intent("set_option", {"option": "font_size", "value": "down" if v == "smaller" else "up"})
    return Intent("set_option", {"option": "font_size", "value": _FONT_WORDS[v]})


_RINGTONE = "(?:(?:my~|the~)?(?:phone~)?(?:ringtone|ring~tone|ringer(?:~sound)?))"


@APPS_EARLY.rule(
    f"(?:set|change|switch|make|update)~{_RINGTONE}~(?:to~|as~)?(?:the~)?(?P<v>[^?!]+?)(?:~(?:ringtone|one|sound|tone))?",
    f"(?:make|use|set)~(?:the~)?(?P<v>[^?!]+?)~(?:as~)?{_RINGTONE}",
)
def _ringtone(g: dict[str, str]) -> Intent | Reject | None:
    """ "Set my ringtone to Chimes", "make Ocean my ringtone": Sound's ringtone (newer surfaces)."""
    from digirl.sim.device import OPTIONS

    said = unquote(g["v"]).strip(" .")
    if re.search(r"\b(?:volume|loud|louder|max|full|silent|vibrate)\b", said, re.I):  # "set the ringer to full volume"
        return None
    value = next((v for v in OPTIONS["ringtone"][1] if v.lower() == said.lower()), None)
    if value is None:
        return Reject(f"the phone's ringtones are {', '.join(OPTIONS['ringtone'][1])}, not {said!r}")
    return Intent("set_option", {"option": "ringtone", "value": value})


#: A language as people name it → the System page's name for it.
_LANGUAGES = {
    "english": "English", "spanish": "Spanish", "español": "Spanish", "espanol": "Spanish", "french": "French",
    "français": "French", "francais": "French", "german": "German", "deutsch": "German", "italian": "Italian",
    "italiano": "Italian", "portuguese": "Portuguese", "português": "Portuguese", "dutch": "Dutch",
    "nederlands": "Dutch", "polish": "Polish", "polski": "Polish",
}  # fmt: skip
_ZONES = {
    "pacific": "Pacific Time", "pst": "Pacific Time", "pt": "Pacific Time", "mountain": "Mountain Time",
    "mst": "Mountain Time", "central": "Central Time", "cst": "Central Time", "eastern": "Eastern Time",
    "est": "Eastern Time", "et": "Eastern Time", "gmt": "Greenwich Mean Time", "greenwich mean": "Greenwich Mean Time",
    "uk": "Greenwich Mean Time", "london": "Greenwich Mean Time", "utc": "Greenwich Mean Time",
    "central european": "Central European Time", "cet": "Central European Time", "india": "India Standard Time",
    "ist": "India Standard Time", "india standard": "India Standard Time", "japan": "Japan Standard Time",
    "jst": "Japan Standard Time", "japan standard": "Japan Standard Time", "tokyo": "Japan Standard Time",
}  # fmt: skip


@APPS_EARLY.rule(
    "(?:switch|change|set|make|put)~(?:the~|my~)?(?:system~|phone~|phone's~|device~|display~)?language~(?:to|as|into)~"
    "(?P<v>[^\\s?!,.]+)",
    "(?:switch|change|set|put)~(?:the~|my~)?(?:phone|system|device)~(?:to|into)~(?P<v2>[^\\s?!,.]+)(?:~language)?",
)
def _language(g: dict[str, str]) -> Intent | Reject | None:
    """ "Switch the system language to Spanish": System's language (newer surfaces)."""
    said = (g.get("v") or g["v2"]).lower()
    value = _LANGUAGES.get(said)
    if value is None:  # "set my phone to silent" is no language; "change the language to Klingon" is refused
        return (
            None
            if g.get("v2")
            else Reject(f"the phone's languages are {', '.join(dict.fromkeys(_LANGUAGES.values()))}, not {said!r}")
        )
    return Intent("set_option", {"option": "language", "value": value})


@APPS_EARLY.rule(
    "(?:switch|change|set|update|put)~(?:the~|my~)?(?:phone's~)?time\\s?zone~(?:to|as)~(?:the~)?(?P<v>[^?!]+?)"
    "(?:~(?:standard~)?time(?:~zone)?)?"
)
def _time_zone(g: dict[str, str]) -> Intent | Reject:
    """ "Change the time zone to Eastern time": System's time zone (newer surfaces)."""
    said = re.sub(r"\s+(?:standard\s+)?time$", "", g["v"].strip().lower())
    value = _ZONES.get(said)
    if value is None:
        return Reject(f"the phone's time zones are {', '.join(dict.fromkeys(_ZONES.values()))}, not {g['v']!r}")
    return Intent("set_option", {"option": "time_zone", "value": value})


_DAY_WORDS = (
    ("mon", "monday", "mondays"),
    ("tue", "tues", "tuesday", "tuesdays"),
    ("wed", "wednesday", "wednesdays"),
    ("thu", "thur", "thurs", "thursday", "thursdays"),
    ("fri", "friday", "fridays"),
    ("sat", "saturday", "saturdays"),
    ("sun", "sunday", "sundays"),
)
_DAY = "(?:" + "|".join(w for names in _DAY_WORDS for w in sorted(names, key=len, reverse=True)) + ")"
_DAYS_RX = re.compile(
    r"(?:,\s*|\s+)(?:(?:on|every|for)\s+)?(?:the\s+)?(?P<d>week\s*days|weekends?|every\s*day|daily|each\s+day"
    rf"|{_DAY}(?:\s*(?:,|and|&|,\s*and)\s*{_DAY})*)(?:\s+only)?(?=$|,|\s+(?:and\s+)?(?:label|call|name|titl|with|at\b|for\b))",
    re.I,
)
_LABEL_RX = re.compile(
    r"(?:,\s*|\s+)(?:and\s+)?(?:label(?:l?ed)?|call(?:ed)?|named?|titled?|with\s+(?:the\s+)?(?:label|name|title))"
    r"(?:\s+it)?(?:\s+as)?\s+(?P<l>\"[^\"]+\"|'[^']+'|[\w' -]+?)\s*$",
    re.I,
)


def _repeat_days(said: str) -> str:
    """ "weekdays" → "01234", "Saturday and Sunday" → "56" (a digit a day, 0 = Monday)."""
    s = said.lower()
    if re.fullmatch(r"week\s*days", s):
        return "01234"
    if s.startswith("weekend"):
        return "56"
    if re.fullmatch(r"every\s*day|daily|each\s+day", s):
        return "0123456"
    words = re.findall(r"[a-z]+", s)
    return "".join(str(i) for i, names in enumerate(_DAY_WORDS) if any(w in names for w in words))


@APPS_EARLY.rule(
    "(?:set|create|add|make|schedule|put~in)~(?:me~)?(?:an?~|my~|another~)?(?:new~)?(?:(?P<rep>weekday|weekend|daily|everyday)~)?alarm~{x}",
    "wake~me~(?:up~)?{x}",
)
def _alarm_label_days(g: dict[str, str]) -> Intent | None:
    """An alarm with a label or repeat days ("… at 5:40 on weekdays labelled 'gym'", "a weekday alarm for 6",
    "… for 5am, label it flight"): the time as the plain phrasing reads it, plus ``label`` / ``days``."""
    rest, slots = " " + g["x"].strip(" ,."), {}
    label = _LABEL_RX.search(rest)
    if label is not None:
        slots["label"] = unquote(label.group("l")).strip()
        rest = rest[: label.start()]
    days = _DAYS_RX.search(rest)
    if days is not None:
        slots["days"] = _repeat_days(days.group("d"))
        rest = rest[: days.start()] + rest[days.end() :]
    if g.get("rep"):
        slots["days"] = _repeat_days({"weekday": "weekdays", "weekend": "weekend"}.get(g["rep"].lower(), "daily"))
    if not slots or not slots.get("label", "x") or not slots.get("days", "x"):
        return None
    got = reparse(f"set an alarm {rest.strip()}")
    if got is None or got.family != "set_alarm":
        return None
    return Intent("set_alarm", {**got.slots, **slots})


_SHOT = "(?:photo|picture|pic|shot|snap|snapshot|photograph|image)"
_STYLE_WORDS = {"portrait": "portrait", "night": "night", "panorama": "panorama", "pano": "panorama", "panoramic": "panorama"}


@APPS_EARLY.rule(
    # "take a panorama (of this view)", "take a portrait photo", "take a photo in night mode"
    f"(?:take|snap|shoot|capture|grab|make)~(?:me~)?(?:an?~)?(?P<s>panorama|pano|panoramic)(?:~{_SHOT})?(?:~of~[^?!]+)?",
    f"(?:take|snap|shoot|capture|grab)~(?:me~)?(?:an?~)?(?P<s>portrait|night|panoramic)(?:~mode)?~{_SHOT}(?:~of~[^?!]+)?",
    f"(?:take|snap|shoot|capture|grab)~(?:me~)?(?:an?~)?{_SHOT}~(?:in|with|using)~(?:the~)?(?P<s>portrait|night|panorama)~mode",
    # "take a photo with a 10 second delay", "snap a photo with a 3 second timer", "selfie with a 3s timer"
    f"(?:take|snap|shoot|capture|grab)~(?:me~)?(?:an?~)?(?P<w>{_SHOT}|selfie)~(?:with|using|on)~(?:an?~|the~)?"
    "(?P<t>\\d+|three|ten)(?:~|-)?(?:s|sec|secs|second|seconds)~(?:delay|timer|self-?timer|countdown)",
)
def _camera_style(g: dict[str, str]) -> Intent | None:
    slots = {"mode": "selfie" if (g.get("w") or "").lower() == "selfie" else "photo"}
    if g.get("s"):
        slots["style"] = _STYLE_WORDS[g["s"].lower()]
    if g.get("t"):
        seconds = {"three": "3", "ten": "10"}.get(g["t"].lower(), g["t"])
        if seconds not in ("3", "10"):
            return None  # the self-timer has 3 and 10 seconds
        slots["timer"] = seconds
    return Intent("take_photo", slots)


@APPS_EARLY.rule(
    "(?:record|film|shoot|capture|take)~(?:an?~|some~)?(?:video~)?(?:in~)?slow(?:~|-)?(?:motion|mo)(?:~(?:video|clip|mode))?(?:~of~[^?!]+)?",
    "(?:record|film|shoot|capture|take)~(?:an?~|some~)?(?:video|clip)~in~slow(?:~|-)?(?:motion|mo)",
)
def _slow_motion(g: dict[str, str]) -> Intent:
    return Intent("take_photo", {"mode": "video", "style": "slow motion"})


_EMAIL = "(?:e-?mail|mail|message~in~(?:my~)?inbox)"
_WHICH_MAIL = (
    f"(?:the~|my~|that~)?(?:{_LATEST}~)?{_EMAIL}"
    '(?:~(?:from~(?P<sender>[^,"]+?)|about~(?P<about>[^,"]+?)|(?:i~)?(?:just~)?(?:got|received)))?'
)


@APPS_EARLY.rule(
    f"(?:reply|respond|answer)~(?:to~)?{_WHICH_MAIL}(?:~(?:saying|with|and~say|:)~?(?P<body>.+))?",
    f"(?P<fwd>forward|send~on|pass~on)~{_WHICH_MAIL}~to~(?P<to>\\S+@\\S+|[A-Za-z][\\w'.-]*(?:~[A-Z][\\w'.-]*)?)",
    f"(?P<act>star|flag|delete|trash|remove|bin|archive)~{_WHICH_MAIL}",
)
def _mail_action(g: dict[str, str]) -> Intent | None:
    """Reply to, forward, star or delete the newest mail (or the one from / about something)."""
    slots: dict[str, str] = {}
    for k in ("sender", "about"):
        if g.get(k):
            slots[k] = re.sub(r"^(?:the|a|an|my)\s+", "", unquote(g[k]).strip(), flags=re.I)
    if g.get("fwd"):
        slots.update(action="forward", to=g["to"])
    elif g.get("act"):
        act = g["act"].lower()
        if act == "archive":
            return None  # the simulated Gmail has no archive
        slots["action"] = "star" if act in ("star", "flag") else "delete"
    else:
        slots["action"] = "reply"
        if g.get("body"):
            slots["body"] = unquote(g["body"]).strip()
    return Intent("mail_action", slots)


# The music phrasings register here, between the mail and the recent-apps ones (rule order matters).
from digirl.sim.tasks import music_rules  # noqa: E402, F401

_RECENTS = "(?:recent~apps|recents(?:~screen)?|app~switcher|overview(?:~screen)?|multitasking(?:~view)?|open~apps)"


@APPS_EARLY.rule(
    f"(?:open|show|go~to|pull~up|bring~up|view|see)(?:~me)?~(?:the~|my~)?{_RECENTS}",
    "(?:what~apps~are~open|which~apps~are~(?:open|running))",
)
def _show_recents(g: dict[str, str]) -> Intent:
    return Intent("show_recents")


@APPS_EARLY.rule(
    f"(?:clear|close|kill|dismiss|swipe~away)~(?:all~)?(?:of~)?(?:my~|the~)?(?:{_RECENTS}|(?:open|running|background)~apps|apps~(?:running~)?in~the~background)",
    "close~(?:all~|every~)(?:my~|the~)?(?:open~|running~)?apps",
)
def _close_all(g: dict[str, str]) -> Intent:
    return Intent("close_recent", {"app": "all"})


@APPS_EARLY.rule(
    f"(?:close|swipe~away|kill|remove|dismiss)~(?P<app>[\\w' .&+-]+?)~(?:from|in|on)~(?:the~)?{_RECENTS}",
    "(?:force~)?(?:close|kill|quit)~(?P<app>[\\w' .&+-]+?)~(?:app~)?(?:running~)?in~the~background",
)
def _close_recent(g: dict[str, str]) -> Intent | None:
    app = _phone_app(g["app"])
    return Intent("close_recent", {"app": app}) if app else None


_FOLDER = "(?P<folder>downloads|documents|images|pictures|photos|videos|audio|recent)"
_FILE_WHAT = "(?P<what>pdf|file|document|doc|docx|image|picture|photo|screenshot|video|recording|download|one)s?"
_FILE_NAME = "(?P<n>\"[^\"]+\"|'[^']+'|[\\w()-]+(?:~[\\w()-]+)*\\.(?:pdf|docx?|jpe?g|png|mp4|mov|mp3|txt|xlsx|pptx|apk))"
_WHAT_KIND = {"pdf": "pdf", "doc": "docx", "docx": "docx", "image": "jpg", "picture": "jpg", "photo": "jpg", "screenshot": "jpg",
              "video": "mp4", "recording": "mp3"}  # fmt: skip


def _file_intent(family: str, g: dict[str, str]) -> Intent | None:
    slots: dict[str, str] = {}
    folder = (g.get("folder") or "").lower()
    if folder:
        slots["folder"] = {"pictures": "Images", "photos": "Images"}.get(folder, folder.title())
    if g.get("n"):
        slots["name"] = unquote(g["n"]).strip()
        return Intent(family, slots)
    what = (g.get("what") or "").lower()
    if what in ("image", "picture", "photo", "screenshot") and not folder:
        return None  # a picture without a folder is the gallery's (view_photo, delete_photo)
    if what == "download" and not folder:
        slots["folder"] = "Downloads"
    if what == "document" and not folder:
        slots["folder"] = "Documents"
    if _WHAT_KIND.get(what):
        slots["kind"] = _WHAT_KIND[what]
    if not slots.get("folder") and not slots.get("kind"):
        return None  # "open the latest one": which list? (a compound step reads it from the folder before)
    slots["which"] = "oldest" if (g.get("which") or "").lower() == "oldest" else "latest"
    return Intent(family, slots)


_WHICH_FILE = (
    f"(?:the~|my~)?(?P<which>{_LATEST[3:-1]}|oldest)~{_FILE_WHAT}"
    f"(?:~(?:in|from)~(?:the~|my~)?{_FOLDER}(?:~folder)?)?(?:~in~(?:the~)?files(?:~app)?)?"
)


@APPS_EARLY.rule(
    f"(?:open|show(?:~me)?|view|pull~up|read)~{_WHICH_FILE}",
    f"(?:open|show(?:~me)?|view|pull~up|read)~(?:the~)?(?:file~|document~)?(?:called~|named~)?{_FILE_NAME}(?:~(?:in|from)~(?:the~|my~)?{_FOLDER})?(?:~in~files)?",
)
def _open_file(g: dict[str, str]) -> Intent | None:
    """ "open the latest PDF in downloads", "open the file called resume.docx"."""
    return _file_intent("open_file", g)


@APPS_EARLY.rule(
    f"(?:delete|remove|trash|erase)~{_WHICH_FILE}",
    f"(?:delete|remove|trash|erase)~(?:the~)?(?:file~|document~)?(?:called~|named~)?{_FILE_NAME}(?:~(?:in|from)~(?:the~|my~)?{_FOLDER})?(?:~in~files)?",
)
def _delete_file(g: dict[str, str]) -> Intent | None:
    """ "delete the oldest file in downloads", "delete "old_resume.docx""."""
    return _file_intent("delete_file", g)


_PERSON = '(?P<c>"[^"]+"|[A-Z][\\w\'.-]*(?:~[A-Z][\\w\'.-]*)*|(?:my~)?(?:mom|mum|dad|boss|landlord|plumber|dentist))'


@APPS_EARLY.rule(
    f"(?:delete|remove|erase)~(?:the~)?contact~(?:(?:named|called|for)~)?{_PERSON}(?:~from~(?:my~|the~)?(?:contacts|phone))?",
    f"(?:delete|remove|erase)~{_PERSON}~from~(?:my~|the~)?contacts(?:~(?:list|app))?",
)
def _delete_contact(g: dict[str, str]) -> Intent | None:
    """ "delete the contact named "Old Landlord"", "remove Bob from my contacts"."""
    name = _as_said(g["c"])
    return Intent("delete_contact", {"name": name}) if name else None


_NEW_NUMBER = "(?P<num>\\+?\\d[\\d ()-]{5,}\\d)"


@APPS_EARLY.rule(
    f"(?:update|change|edit|set)~{_PERSON}'s~(?:phone~|mobile~|cell~)?number~to~{_NEW_NUMBER}",
    f"(?:update|change|edit)~(?:the~)?(?:phone~|mobile~)?number~(?:of|for)~{_PERSON}~to~{_NEW_NUMBER}",
    f"{_PERSON}~(?:got|has)~a~new~number,?~(?:update|change)~it~to~{_NEW_NUMBER}",
    f"{_PERSON}'s~new~number~is~{_NEW_NUMBER}",
)
def _update_contact(g: dict[str, str]) -> Intent | None:
    """ "change Tomás's number to 612 555 0198", "Tomás got a new number, update it to …"."""
    name, digits = _as_said(g["c"]), re.sub(r"\D", "", g["num"])
    return Intent("update_contact", {"name": name, "number": digits}) if name and len(digits) >= 7 else None


@APPS_EARLY.rule(
    f"(?:send|share|text)~(?:the~|my~)?{_LATEST}~(?P<kind>photo|picture|pic|selfie|screenshot|image)~(?:i~took~)?(?:to|with)~{{c}}",
    f"(?:send|text)~{{c}}~(?:the~|my~)?{_LATEST}~(?P<kind2>photo|picture|pic|selfie|screenshot|image)(?:~i~took)?",
)
def _send_photo(g: dict[str, str]) -> Intent | None:
    """ "send my latest photo to Ana", "text Ravi the last screenshot"."""
    name = unquote(g["c"]).strip()
    if not name or len(name.split()) > 3:
        return None
    kind = (g.get("kind") or g.get("kind2") or "").lower()
    return Intent("send_photo", {"contact": name, "query": "screenshot" if kind == "screenshot" else ""})


_APP_NAME = "(?P<app>[A-Za-z][\\w'.&+-]*(?:~[A-Za-z][\\w'.&+-]*)?)"


@APPS_EARLY.rule(
    f"(?P<stop>force~(?:stop|close|quit|kill))~(?:the~)?{_APP_NAME}(?:~app)?",
    f"(?:clear|delete|wipe|empty)~(?:the~)?(?:app~)?cache~(?:for|of|on|in)~(?:the~)?{_APP_NAME}(?:~app)?",
    f"(?:clear|delete|wipe|empty)~{_APP_NAME}(?:'s|~app's)~(?:app~)?cache",
)
def _app_action(g: dict[str, str]) -> Intent | None:
    """ "force stop Instagram", "clear the cache for TikTok"."""
    app = _phone_app(g["app"])
    return Intent("app_action", {"app": app, "action": "force_stop" if g.get("stop") else "clear_cache"}) if app else None


_DELETE = "(?:delete|remove|erase|trash|bin|get~rid~of)"
_PICTURE = "(?:photo|picture|pic|image|selfie|shot|snap|video)"


@APPS_EARLY.rule(
    f"{_DELETE}~(?:the~|my~|that~|this~)?{_LATEST}~(?P<kind>{_PICTURE}|screen\\s*shot)"
    "(?:~(?:i~(?:just~)?(?:took|made|shot)|taken))?(?:~(?:from|in)~(?:my~|the~)?(?:gallery|photos(?:~app)?|camera~roll))?",
    f"{_DELETE}~(?:the~|that~|this~|my~)?(?P<kind>screen\\s*shot)(?:~i~(?:just~)?took)?",
    f"{_DELETE}~(?:the~|my~|that~)?{_PICTURE}s?~(?:of|from|with)~{{q}}(?:~(?:from|in)~(?:my~|the~)?(?:gallery|photos(?:~app)?))?",
)
def _delete_photo(g: dict[str, str]) -> Intent | None:
    """ "delete the most recent photo", "delete the screenshot", "delete the picture of the receipt"."""
    if g.get("q"):
        q = re.sub(r"^(?:the|my|a|an)\s+", "", unquote(g["q"]).strip(), flags=re.I)
        return Intent("delete_photo", {"query": q}) if q else None
    kind = re.sub(r"\s+", "", (g.get("kind") or "").lower())
    return Intent("delete_photo", {"query": "screenshot" if kind == "screenshot" else ""})


# ---- notes (a notes app with the newer surfaces) --------------------------------------------------
_NOTES_APP = "(?P<app>google~keep|keep~notes|keep|samsung~notes|notes~app|notes|notepad)"
_A_NOTE = "(?:an?~)?(?:new~|quick~)?(?:note|list|checklist)"


def _note(title: str, body: str, app: str = "") -> Intent | None:
    """``create_note`` with what the request said, unquoted; None when it says nothing to write."""
    title = unquote(title).strip(" .:,")
    body = unquote(re.sub(r"^(?:that~says|saying|with|:)\s*:?\s*".replace("~", r"\s+"), "", body.strip(), flags=re.I)).strip(" .")
    if not (title or body) or len(title.split()) > 8:
        return None
    return Intent("create_note", {"app": _notes_app(app), "title": title, "body": body})


def _notes_app(said: str) -> str:
    """A notes app's name as the phone labels it ("keep" → "Keep Notes", "the notes app" → "Notes")."""
    s = re.sub(r"\s+app$", "", said.strip().lower())
    names = {"keep": "Keep Notes", "google keep": "Keep Notes", "keep notes": "Keep Notes", "notes": "Notes"}
    return names.get(s, _as_said(s)) if s else ""


@APPS_EARLY.rule(
    rf"(?:make|take|create|write|add|start)~{_A_NOTE}~(?:called|titled|named)~(?P<t>\"[^\"]+\"|[^,:\"]+?)"
    rf"(?:~(?:with|saying|that~says)(?:~the~(?:text|items?))?\s*:?\s*(?P<b>.+))?(?:~(?:in|on|using)~(?:my~|the~)?{_NOTES_APP})?",
    rf"(?:make|take|create|write|add|jot)~(?:down~)?{_A_NOTE}(?:~in~(?:my~|the~)?{_NOTES_APP})?\s*(?::|~that~says|~saying)\s*(?P<b>.+)",
    rf"(?:in|on|using)~(?:my~|the~)?{_NOTES_APP},?~(?:make|take|create|write)~{_A_NOTE}(?:~(?:that~says|saying))?\s*:?\s*(?P<b>.+)",
    r"(?:(?:new|quick)~note|note|jot~down|write~down)(?:~this)?\s*:\s*(?P<b>.+)",
    r"(?:jot|write)~down~(?P<b>\"[^\"]+\")",
    r"(?:add|make|write|leave)~(?:a~|myself~a~)?note~to~(?:(?:myself|self)\s*:?~)?(?P<b>(?!my~|the~).+)",
)
def _create_note(g: dict[str, str]) -> Intent | None:
    """ "make a note: buy batteries", "create a new note called Packing List", "in keep, make a list: …"."""
    return _note(g.get("t") or "", g.get("b") or "", g.get("app") or "")


@APPS_EARLY.rule(f"(?:open|launch|show(?:~me)?|go~to|check)~(?:my~|the~)?{_NOTES_APP}(?:~app)?")
def _open_notes(g: dict[str, str]) -> Intent:
    """ "open my notes", "open keep": that notes app."""
    return Intent("open_app", {"app": _notes_app(g.get("app") or "notes")})


# ---- Photos' albums (newer surfaces) --------------------------------------------------------------
_ALBUM = "(?P<album>camera|screenshots?|favou?rites?|videos?)"
_IN_PHOTOS = "(?:~(?:in|on)~(?:my~|the~)?(?:google~)?(?:photos|gallery)(?:~app)?)?"


def album_page(said: str) -> Intent | None:
    """``app_page`` of Photos for an album's name as said ("screenshot" → Screenshots), or None."""
    from digirl.sim.apps.camera import ALBUMS

    word = said.strip().lower().rstrip("s").replace("favourite", "favorite")
    name = next((a for a in ALBUMS if a.lower().rstrip("s") == word), None)
    return Intent("app_page", {"app": "photos", "page": name}) if name else None


@APPS_EARLY.rule(
    f"(?:open|show(?:~me)?|go~to|view|see)~(?:the~|my~)?{_ALBUM}~album{_IN_PHOTOS}",
    f"(?:open|show(?:~me)?|go~to|view|see)~(?:the~|my~)?album~(?:called~|named~)?{_ALBUM}{_IN_PHOTOS}",
)
def _album(g: dict[str, str]) -> Intent | None:
    """ "open the Screenshots album", "show my favourites album in google photos"."""
    return album_page(g["album"])


@APPS_EARLY.rule(
    f'(?:open|show(?:~me)?|go~to|view|see|pull~up)~(?:the~|my~)?(?:photo~)?album~(?:called~|named~)?(?P<n>"[^"]+"){_IN_PHOTOS}',
    f'(?:open|show(?:~me)?|go~to|view|see|pull~up)~(?:the~|my~)?(?P<n>"[^"]+")~(?:photo~)?album{_IN_PHOTOS}',
)
def _named_album(g: dict[str, str]) -> Intent | Reject:
    """ "show me the album "Screenshots"" opens it; an album Photos does not have ("Lisbon 2023") is refused,
    not searched for on the web."""
    from digirl.sim.apps.camera import ALBUMS

    name = unquote(g["n"])
    return album_page(name) or Reject(f"the Photos app's albums are {', '.join(ALBUMS)}, not {name!r}")


@APPS_EARLY.rule(f"(?:open|show(?:~me)?|go~to|view|see)~(?:the~|my~)?(?:photo~)?albums{_IN_PHOTOS}")
def _albums(g: dict[str, str]) -> Intent:
    """ "open my albums", "go to albums in google photos"."""
    return Intent("app_page", {"app": "photos", "page": "Albums"})
