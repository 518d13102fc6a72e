"""Phrasings of the on-device families: settings toggles and levels, settings pages, the clock
(timer, stopwatch, alarms off/deleted) and notifications. Tried before the AitW rules."""

from __future__ import annotations

import re

from digirl.sim.intents import Intent
from digirl.sim.tasks.normalize import alarm_time, clean_slot, parse_duration, parse_level
from digirl.sim.tasks.rules import MACROS, Handler, Reject, RuleTable

__all__ = ["DEVICE", "DEVICE_REJECTS", "SETTINGS", "setting_name"]

DEVICE = RuleTable("device")
#: Last-resort rules: recognized verbs with an object the phone does not have (reasons, no intents).
DEVICE_REJECTS = RuleTable("device-rejects")

#: Toggleable settings: canonical name → what people call it (regex, whole words).
SETTINGS: dict[str, str] = {
    "airplane_mode": r"(?:airplane|aeroplane|flight|plane)(?:\s*mode)?",
    "do_not_disturb": r"(?:do\s*not\s*disturb|dnd|quiet\s*mode|focus\s*mode)(?:\s*mode)?",
    "battery_saver": r"(?:battery|power|energy)\s*sav(?:er|ing)(?:\s*mode)?|low\s*power(?:\s*mode)?",
    "dark_mode": r"dark\s*(?:mode|theme)|night\s*theme",
    "wifi": r"(?:wi\s*-?\s*fi|wify|wireless(?:\s*internet)?|wlan)(?:\s*connection)?",
    "bluetooth": r"blue\s*-?\s*tooth",
    "location": r"location(?:\s*(?:services|access|tracking|sharing))?|gps",
    "flashlight": r"flash\s*light|torch|flash",
    "auto_rotate": r"auto\s*-?\s*rotat(?:e|ion)(?:\s*screen)?|screen\s*(?:auto\s*-?\s*)?rotation|rotation"
    r"|screen\s*auto\s*-?\s*rotate",
    "mobile_data": r"(?:mobile|cellular|cell)\s*data|(?:my\s+)?data(?!\s*(?:saver|roaming|usage))",
    "hotspot": r"(?:(?:mobile|personal|portable|wi\s*-?\s*fi)\s*)?hot\s*spot|tethering",
    # the newer switches (digirl.sim.device.NEWER_SETTINGS)
    "vibrate": r"vibrat(?:e|ion)(?:\s*(?:mode|for\s*calls))?",
    "night_light": r"night\s*light|blue\s*light(?:\s*filter)?|eye\s*comfort(?:\s*shield)?|night\s*shift|reading\s*mode",
}
_SETTING_RX = {k: re.compile(v, re.I) for k, v in SETTINGS.items()}

MACROS.update(
    {
        "@ON": "(?:turn~on|switch~on|turn~it~on|enable|activate|start|put~on|connect~to|reconnect~to)",
        "@OFF": "(?:turn~off|switch~off|shut~off|disable|deactivate|stop|kill|disconnect~from|disconnect)",
        "@SETTING": "(?P<setting>" + "|".join(SETTINGS.values()) + ")",
        "@WHERE": "(?:~(?:on~(?:my|the)~(?:phone|device)|for~now|now|please))?",
        "@LEVEL": "(?P<level>(?:the~)?(?:\\d{1,3} (?:%|percent|per~cent)?|max(?:imum)?|min(?:imum)?|full|highest|lowest"
        "|half(?:way)?|zero|middle))",
    }
)


def setting_name(text: str) -> str | None:
    """The canonical setting for what was written ("Wi-Fi" → ``wifi``, "flight mode" → ``airplane_mode``)."""
    t = re.sub(r"\s+", " ", text.strip())
    for name, rx in _SETTING_RX.items():
        if rx.fullmatch(t):
            return name
    return None


def _toggle(g: dict[str, str], state: str) -> Intent | None:
    name = setting_name(g["setting"])
    return Intent("toggle_setting", {"setting": name, "state": state}) if name else None


_ART = "(?:(?:the|my|a|your)~)?"


def _toggle_to(state: str) -> Handler:
    """The handler of a phrasing that names the state itself (``turn on``, ``disable``, ``toggle``)."""
    return lambda g: _toggle(g, state)


DEVICE.rule(f"@ON~{_ART}@SETTING(?:~(?:mode|setting|feature))?@WHERE")(_toggle_to("on"))
DEVICE.rule(f"@OFF~{_ART}@SETTING(?:~(?:mode|setting|feature))?@WHERE")(_toggle_to("off"))


@DEVICE.rule(
    f"(?:turn|switch|flip|set|put|shut)~{_ART}@SETTING~(?P<st>on|off)@WHERE",
    "@SETTING~(?:to~)?(?P<st>on|off)",
)
def _set_state(g: dict[str, str]) -> Intent | None:
    return _toggle(g, g["st"].lower())


DEVICE.rule(f"(?:toggle|flip)~{_ART}@SETTING(?:~(?:mode|setting))?@WHERE")(_toggle_to("toggle"))
DEVICE.rule(f"(?:put|set|switch)~(?:(?:my|the)~)?(?:phone~|device~)?(?:in|into|on|to)~{_ART}@SETTING")(_toggle_to("on"))


@DEVICE.rule("(?:switch|change|go|set~(?:the~)?(?:theme|display))~to~(?P<shade>dark|light)(?:~(?:mode|theme))?")
def _theme(g: dict[str, str]) -> Intent:
    return Intent("toggle_setting", {"setting": "dark_mode", "state": "on" if g["shade"].lower() == "dark" else "off"})


@DEVICE.rule("(?P<verb>lock|unlock)~(?:the~|my~)?(?:screen~)?(?:rotation|orientation)")
def _rotation_lock(g: dict[str, str]) -> Intent:
    return Intent("toggle_setting", {"setting": "auto_rotate", "state": "off" if g["verb"].lower() == "lock" else "on"})


# ---- brightness and volume -------------------------------------------------------------
_BRIGHT = "(?:(?:screen|display|phone)~)?brightness(?:~level)?"
_VOL = "(?:(?:media|ringer|ring|call|phone|sound|music|notification)~)?volume|(?:the~)?sound"


_DOWN = ("down", "decrease", "lower", "reduce", "dim", "drop", "quiet", "soft")


def _level(family: str, g: dict[str, str]) -> Intent | Reject:
    if g.get("dir"):
        d = g["dir"].lower()
        return Intent(family, {"level": "down" if any(w in d for w in _DOWN) else "up"})
    level = parse_level(g.get("level", ""))
    if level is None:
        return Reject(f"{g.get('level', '')!r} is not a level from 0 to 100%")
    return Intent(family, {"level": level})


def _level_rules(family: str, noun: str, up_words: str, down_words: str) -> None:
    DEVICE.rule(
        f"(?:turn|put|set|bring|crank)~(?:the~|my~)?(?:{noun})~all~the~way~(?P<end>up|down)",
        f"(?:turn|crank)~(?:the~|my~)?(?:{noun})~(?P<end>up|down)~all~the~way",
    )(lambda g: Intent(family, {"level": "100" if g["end"].lower() == "up" else "0"}))
    DEVICE.rule(
        f"(?:set|change|adjust|put|turn|make|bring|move)~(?:the~|my~)?(?:{noun})~(?:(?:up|down)~)?(?:to|at)~@LEVEL",
        f"(?:{noun})~(?:to~|at~)?@LEVEL",
        f"@LEVEL~(?:{noun})",
    )(lambda g: _level(family, g))
    DEVICE.rule(
        f"(?:turn|crank|bring)~(?P<dir>up|down)~(?:the~|my~)?(?:{noun})",
        f"(?:turn|put)~(?:the~|my~)?(?:{noun})~(?P<dir>up|down)",
        f"(?P<dir>{up_words}|{down_words})~(?:the~|my~)?(?:{noun})",
        f"(?:{noun})~(?P<dir>up|down)",
    )(lambda g: _level(family, g))


_level_rules("set_brightness", _BRIGHT, "increase|raise|boost|bump~up", "decrease|lower|reduce|dim|drop")
_level_rules("set_volume", _VOL, "increase|raise|boost|bump~up", "decrease|lower|reduce|drop")


@DEVICE.rule(
    "make~(?:the~|my~)?(?:screen|display|phone)~(?P<adj>brighter|dimmer|darker|less~bright)",
    "(?P<adj>brighten|dim|darken)~(?:the~|my~)?(?:screen|display|phone)",
)
def _screen_adj(g: dict[str, str]) -> Intent:
    up = g["adj"].lower() in ("brighter", "brighten")
    return Intent("set_brightness", {"level": "up" if up else "down"})


@DEVICE.rule(
    "make~(?:it|the~(?:phone|sound|music|volume)|my~phone)~(?P<adj>louder|quieter|softer)",
    "(?P<mute>mute|silence)~(?:the~|my~)?(?:volume|sound|phone|media|music|ringer)",
    "(?P<mute2>mute)",
)
def _sound_adj(g: dict[str, str]) -> Intent:
    if g.get("mute") or g.get("mute2"):
        return Intent("set_volume", {"level": "0"})
    return Intent("set_volume", {"level": "up" if g["adj"].lower() == "louder" else "down"})


# ---- settings pages --------------------------------------------------------------------
_PAGES = {
    "battery": r"battery(?:\s*(?:usage|health))?|power",
    "storage": r"storage|memory|disk|space",
    "display": r"display|screen|brightness",
    "sound": r"sounds?|audio|volume|sound\s*(?:and|&)\s*vibration",
    "network": r"network(?:\s*(?:and|&)\s*internet)?|internet|wi\s*-?\s*fi|wifi|wireless|mobile\s*network",
    "bluetooth": r"bluetooth|connected\s*devices|pairing",
    "about": r"about(?:\s*phone)?|device\s*info(?:rmation)?|phone\s*info(?:rmation)?",
    "apps": r"apps?|applications?",
    "notifications": r"notifications?",
    "location": r"location|gps",
    "security": r"security|privacy|security\s*(?:and|&)\s*privacy",
}
MACROS["@PAGE"] = "(?P<page>" + "|".join(_PAGES.values()) + ")"


def _page(g: dict[str, str]) -> Intent | None:
    t = re.sub(r"\s+", " ", g["page"].strip().lower())
    for name, rx in _PAGES.items():
        if re.fullmatch(rx, t):
            return Intent("settings_page", {"page": name})
    return None


_SHOW = "(?:open|show(?:~me)?|go~to|take~me~to|check|view|display|bring~up|pull~up|launch|get~to|see)"
DEVICE.rule(
    f"{_SHOW}~(?:the~|my~)?@PAGE~settings?(?:~(?:page|menu|screen|section))?",
    f"{_SHOW}~(?:the~|my~)?settings? ?(?:~for~|>|›|->|/|~and~(?:go~to|open|tap)~) ?(?:the~)?@PAGE(?:~(?:page|section))?",
    f"{_SHOW}~(?:the~)?@PAGE~(?:page|section)~in~settings",
    "@PAGE~settings",
)(_page)


def _fixed_page(page: str) -> Handler:
    """A handler for questions that only one Settings page answers (battery left, Android version)."""
    return lambda g: Intent("settings_page", {"page": page})


# Questions about the phone itself, each answered by one Settings page (rules kept in this order).
for _shown, _questions in (
    (
        "battery",
        (
            "(?:check|see|show~me|what's|whats|what~is)~(?:my~|the~)?(?:phone's~)?battery(?:~(?:level|percentage|status|life|charge|at))?",
            "how~much~(?:battery|charge|battery~life)~(?:do~i~have|is|have~i~got|does~my~phone~have)?~?(?:left|remaining)?(?:~on~(?:my|the)~phone)?",
            "battery~(?:level|percentage|status)",
            "how~much~(?:battery|charge)~(?:is~)?left",
            "(?:check|see|show~me|find~out|tell~me)~how~much~(?:battery|charge|battery~life)~(?:is~left|i~have(?:~left)?|remains|is~remaining"
            "|my~phone~has(?:~left)?|there~is(?:~left)?)",
        ),
    ),
    (
        "storage",
        (
            "how~much~(?:storage|space|memory|disk~space|free~space)~(?:is~|do~i~have~|have~i~got~|does~my~phone~have~)?"
            "(?:left|free|available|remaining|used|do~i~have)(?:~on~(?:my|the)~(?:phone|device))?",
            "how~much~(?:storage|space|memory)~do~i~have(?:~(?:left|free))?",
            "(?:check|see|show~me)~(?:my~|the~)?(?:storage|free~space|available~storage|storage~space)",
            "(?:check|see|show~me|find~out|tell~me)~how~much~(?:storage|space|memory|free~space)~(?:i~have|is~left|is~free|i~have~left"
            "|is~available|is~used|i've~used|i~have~free)",
        ),
    ),
    (
        "network",
        (
            "(?:check|see|show~me)~(?:my~|the~)?(?:mobile~|cellular~)?data~(?:usage|used)",
            "(?:check|see|show~me)~how~much~(?:mobile~|cellular~)?data~(?:i~(?:have~)?used|i've~used|is~left|i~have~left)",
            "how~much~(?:mobile~|cellular~)?data~(?:have~i|did~i|i've|i~have|i)~used",
        ),
    ),
    (
        "about",
        (
            "(?:what|which)~(?:android~version|version~of~android)~(?:am~i~(?:running|on|using)|do~i~have|is~(?:this|my~phone|installed)"
            "(?:~running)?|does~(?:my|this)~phone~(?:have|run))",
            "(?:check|show(?:~me)?|find|see)~(?:the~|my~)?(?:android~version|version~of~android|software~version)",
            "(?:check|find(?:~out)?|see|tell~me)~(?:which|what)~(?:android~version|version~of~android)"
            "(?:~(?:i~have|i'm~(?:on|running|using)|i~am~(?:on|running|using)|is~on~my~phone|my~phone~(?:has|runs)))?",
            "(?:show(?:~me)?|open|go~to)~(?:the~)?about~(?:this~)?phone(?:~(?:page|screen|section))?",
        ),
    ),
):
    DEVICE.rule(*_questions)(_fixed_page(_shown))


# ---- clock: timer, stopwatch, alarms --------------------------------------------------
def _timer(g: dict[str, str]) -> Intent | Reject:
    seconds = parse_duration(g["d"])
    if seconds is None:
        return Reject(f"{clean_slot(g['d'])!r} is not a duration (like '5 minutes' or '1 hour 30 minutes')")
    return Intent("start_timer", {"seconds": str(seconds)})


DEVICE.rule(
    "(?:set|start|create|make|put~on|run|begin)~(?:me~)?(?:an?~|the~|my~)?(?:new~)?(?:timer|countdown)~(?:for~|of~|to~|on~)?{d}",
    "(?:set|start|create|make|begin|put~on)~(?:me~)?(?:an?~|the~)?{d} -? (?:timer|countdown)",
    "(?:timer|countdown)~(?:for~|of~)?{d}",
    "{d} -? timer",
    "count~down~(?:from~)?{d}",
)(_timer)


@DEVICE.rule(
    "(?:start|begin|run|set~off|turn~on)~(?:the~|a~|my~)?stop ?watch(?:~(?:now|for~[^?!]+))?",
    "(?:open|launch|use)~(?:the~|a~)?stop ?watch~and~start~it",
    "(?:start|begin)~timing(?:~(?:me|this|my~[^?!]+))?",
    "time~(?:me|my~(?:run|workout|lap|laps|race))",
)
def _stopwatch(g: dict[str, str]) -> Intent:
    return Intent("start_stopwatch", {})


def _alarm_time(family: str, g: dict[str, str]) -> Intent | Reject:
    raw = clean_slot(g.get("t", ""))
    if g.get("all") or not raw:
        return Intent(family, {"time": "all"})
    hhmm = alarm_time(raw)
    if hhmm is None:
        return Reject(f"{raw!r} is not a time of day (like '7am' or '18:30')")
    return Intent(family, {"time": hhmm})


_DEL = "(?:delete|remove|cancel|clear|erase|get~rid~of|trash)"
_DIS = "(?:turn~off|switch~off|shut~off|disable|deactivate|silence|stop)"
_MY = "(?:(?:my|the|that)~)?"


@DEVICE.rule(f"{_DEL}~{_MY}alarm")
def _which_alarm(g: dict[str, str]) -> Reject:
    return Reject("say which alarm (its time, like '7am') or 'all alarms'")


DEVICE.rule(
    f"{_DEL}~(?P<all>all)~(?:of~)?{_MY}alarms",
    f"{_DEL}~(?P<all>every)~(?:single~)?alarm(?:~(?:i~(?:have|set|got)|on~(?:my~|the~)?phone))?",
    f"{_DEL}~{_MY}alarm(?:~(?:set~)?(?:for|at))?~{{t}}",
    f"{_DEL}~{_MY}{{t}}~alarm",
    f"{_DEL}~{_MY}alarms",
)(lambda g: _alarm_time("delete_alarm", {**g, "all": g.get("all", "") or ("" if "t" in g else "all")}))
DEVICE.rule(
    f"{_DIS}~(?P<all>all)~(?:of~)?{_MY}alarms",
    f"{_DIS}~(?P<all>every)~(?:single~)?alarm(?:~(?:i~(?:have|set|got)|on~(?:my~|the~)?phone))?",
    f"{_DIS}~{_MY}alarm(?:~(?:set~)?(?:for|at))?~{{t}}",
    f"{_DIS}~{_MY}{{t}}~alarm",
    f"(?:turn|switch)~{_MY}{{t}}~alarm~off",
    f"(?:turn|switch)~{_MY}alarm~(?:for|at)~{{t}}~off",
    f"{_DIS}~{_MY}alarms?",
    f"(?:turn|switch)~{_MY}alarms?~off",
)(lambda g: _alarm_time("disable_alarm", g))


# ---- notification shade ------------------------------------------------------------------
@DEVICE.rule(
    "(?:show|show~me|open|pull~down|check|view|see|display|read|expand|bring~up|look~at)~(?:me~)?(?:my~|the~|all~(?:my~)?)?"
    "(?:recent~|new~|latest~|unread~)?notifications?(?:~(?:panel|shade|bar|center|centre|drawer|tray|list))?",
    "(?:pull|swipe|drag|scroll)~down~(?:the~)?(?:notification~|notifications~|status~)?(?:shade|bar|panel|tray)",
    "(?:what|which)~notifications~(?:do~i~have|have~i~got|are~there)",
    "do~i~have~(?:any~)?(?:new~|unread~)?notifications",
    "(?:open|show(?:~me)?|pull~down)~(?:the~)?quick~settings(?:~(?:panel|menu|tiles))?",
)
def _shade(g: dict[str, str]) -> Intent:
    return Intent("show_notifications", {})


@DEVICE.rule(
    "(?:clear|dismiss|delete|remove|swipe~away|get~rid~of|close)~(?:all~)?(?:of~)?(?:my~|the~)?(?:notifications|notification~(?:shade|panel|list))"
    "(?:~(?:on~my~phone|from~the~shade))?",
)
def _clear_notifications(g: dict[str, str]) -> Intent:
    return Intent("clear_notifications", {})


# ---- recognized verbs, unknown objects (reasons) ----------------------------------------
@DEVICE_REJECTS.rule("(?:turn|switch)~(?:on|off)~{x}", "(?:enable|disable|activate|deactivate|toggle)~{x}")
def _unknown_setting(g: dict[str, str]) -> Reject:
    return Reject(f"{clean_slot(g['x'])!r} is not a setting of the simulated phone (known: {', '.join(SETTINGS)})")


@DEVICE_REJECTS.rule("(?:set|create|add|make)~(?:an?~|my~)?(?:new~)?alarm~(?:for~|at~)?{t}", "wake~me~(?:up~)?(?:at~)?{t}")
def _bad_alarm(g: dict[str, str]) -> Reject:
    return Reject(f"{clean_slot(g['t'])!r} is not a time of day (like '7am' or '18:30')")


#: Requests for a part of the phone the simulator has no screen for: recognized, and rejected with
#: what is missing (a faked task would be a wrong one).
_NO_SCREEN = (
    ("(?:go|navigate)~back|(?:press|tap|hit)~(?:the~)?back(?:~button|~key)?", "going back has no goal state of its own"),
    ("(?:share|send)~(?:my~)?(?:current~|live~)?location~(?:with|to)~{x}", "the simulated phone has no location sharing"),
    ("(?:switch|change|go)~to~(?:the~)?satellite(?:~(?:view|map|mode|layer))?", "the simulated Maps has no satellite view"),
)


def _no_screen(reason: str) -> Handler:
    return lambda g: Reject(reason)


for _template, _reason in _NO_SCREEN:
    DEVICE_REJECTS.rule(_template)(_no_screen(_reason))
