"""Dates and times inside requests ("… on Friday at 3pm", "tomorrow at noon", "for June 12"),
resolved against the simulated phone's date :data:`digirl.sim.intents.TODAY`."""

from __future__ import annotations

import re
from datetime import date, timedelta

from digirl.sim.intents import MONTH_NAMES, TODAY
from digirl.sim.tasks.normalize import parse_time_phrase

__all__ = ["parse_date", "split_when"]

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = tuple(m.lower() for m in MONTH_NAMES)
_MONTH_RX = "|".join(m[:3] + f"(?:{m[3:]})?" for m in _MONTHS) + "|sept"


def _month(word: str) -> int | None:
    w = word.lower()[:3]
    for i, m in enumerate(_MONTHS):
        if m.startswith(w):
            return i + 1
    return None


def _on(month: int, day: int, today: date) -> date | None:
    try:
        d = date(today.year, month, day)
    except ValueError:
        return None
    return d if d >= today else date(today.year + 1, month, day)


def parse_date(text: str, today: date = TODAY) -> date | None:
    """ "today", "tomorrow", "(this|next) friday", "June 12", "12th of June", "6/12"; else ``None``."""
    t = re.sub(r"\s+", " ", text.strip().lower()).strip(" ,.")
    t = re.sub(r"^(?:on|for|this coming|this)\s+", "", t)
    if t == "today":
        return today
    if t == "tomorrow":
        return today + timedelta(days=1)
    if t in ("the day after tomorrow", "day after tomorrow"):
        return today + timedelta(days=2)
    m = re.fullmatch(r"(next\s+)?(?:week\s+on\s+)?(" + "|".join(_WEEKDAYS) + r"|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)", t)
    if m:
        wd = next(i for i, d in enumerate(_WEEKDAYS) if d.startswith(m.group(2)[:3]))
        ahead = (wd - today.weekday()) % 7 or 7
        return today + timedelta(days=ahead + (7 if m.group(1) and ahead < 7 else 0))
    m = re.fullmatch(rf"({_MONTH_RX})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?", t)
    if m:
        mo = _month(m.group(1))
        return _on(mo, int(m.group(2)), today) if mo else None
    m = re.fullmatch(rf"(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?\s+({_MONTH_RX})", t)
    if m:
        mo = _month(m.group(2))
        return _on(mo, int(m.group(1)), today) if mo else None
    m = re.fullmatch(r"(\d{1,2})/(\d{1,2})", t)
    if m:
        return _on(int(m.group(1)), int(m.group(2)), today)
    m = re.fullmatch(r"the\s+(\d{1,2})(?:st|nd|rd|th)", t)
    if m:
        return _on(today.month, int(m.group(1)), today)
    return None


_TIME_TAIL = re.compile(
    r"(?:,?\s+(?:at|@|from|starting at)\s+|\s+)(?P<t>(?:noon|midnight|\d{1,2}(?:[:.]\d{2})?\s*(?:[ap]\.?\s*m\.?)?)"
    r"(?:\s+(?:in\s+the\s+)?(?:morning|afternoon|evening|night))?)$",
    re.I,
)
_DATE_TAIL = re.compile(
    r"(?:,?\s+(?:on|for|this|next|this coming)?\s*)(?P<d>(?:next\s+)?(?:today|tomorrow|the day after tomorrow|"
    r"(?:" + "|".join(_WEEKDAYS) + r")|(?:" + _MONTH_RX + r")\.?\s+\d{1,2}(?:st|nd|rd|th)?|"
    r"(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?(?:\s+of)?\s+(?:" + _MONTH_RX + r")|\d{1,2}/\d{1,2}"
    r"|the\s+\d{1,2}(?:st|nd|rd|th)))$",
    re.I,
)


#: "tonight at 9" / "at 9 tonight": a bare evening hour, today.
_TONIGHT = re.compile(r"\s+(?:tonight\s+at\s+|at\s+(?=\S+\s+tonight$))(?P<h>(?:[1-9]|1[01])(?:[:.]\d\d)?)(?:\s+tonight)?$", re.I)


def split_when(text: str, today: date = TODAY) -> tuple[str, str, str]:
    """``(rest, date, time)``: trailing date and time phrases cut off ``text`` in either order.

    ``date`` is ISO ``YYYY-MM-DD`` and ``time`` 24-hour ``HH:MM`` ("" when absent):
    "Dentist on Friday at 3pm" → ("Dentist", "2024-06-07", "15:00").
    """
    rest, d, t = _TONIGHT.sub(r" today at \g<h>pm", text.strip()), "", ""  # "tonight at 9" is 21:00 today
    rest = re.sub(r"\s+tonight(?=(?:\s+at\s+\S+(?:\s*[ap]\.?m\.?)?)?$)", " today", rest, flags=re.I)  # "party tonight at 11pm"
    for _ in range(2):
        if not t:
            m = _TIME_TAIL.search(rest)
            if m:
                hhmm = parse_time_phrase(m.group("t"))
                if hhmm and m.start() > 0:
                    t, rest = hhmm, rest[: m.start()].rstrip(" ,")
        if not d:
            m = _DATE_TAIL.search(rest)
            if m and m.start() > 0:
                when = parse_date(m.group(0).strip(" ,"), today)
                if when:
                    d, rest = when.isoformat(), rest[: m.start()].rstrip(" ,")
    return rest, d, t
