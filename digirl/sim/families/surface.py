"""More of the phone (issue 42): the calculator (an expression entered and its result shown), pages
and tabs inside apps (clock tabs, the phone's keypad, recents and contacts), and search inside
Contacts. Not in the shipped task sets (:data:`~digirl.sim.intents.EXTRA_FAMILIES`).

- ``calculate``: ``expr`` (as the calculator shows it: digits, ``.``, ``+ - × ÷``), ``value``
  (its value, as the calculator prints it). Success: the Calculator is in front, its expression
  is ``expr`` and its result line shows ``value`` (the expression is checked, not only the number).
- ``app_page``: ``app`` (clock | phone | camera | calendar | files), ``page`` (a tab: Alarm, Clock,
  Timer, Stopwatch / Recents, Contacts, Keypad; a camera mode: Photo, Video, Portrait; a calendar
  month: ``YYYY-MM``; a Files folder: Downloads, Images, Videos, Audio, Documents, Apps). Success:
  that page is shown (no picker, call, recording or editor over it).
- ``app_search`` (Contacts; the Play Store's is in :mod:`.compound`): ``query``. Success: Contacts'
  list is filtered by a search containing the query's terms.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from digirl.core.actions import Action
from digirl.sim.apps.camera import mode_ref
from digirl.sim.apps.clock import TABS as CLOCK_TABS
from digirl.sim.apps.simple import FILE_FOLDERS, Calculator
from digirl.sim.families.pages import SURFACE_PAGE_KINDS
from digirl.sim.family_registry import builtin_family
from digirl.sim.goals import TaskContext
from digirl.sim.intents import MONTH_NAMES, Intent
from digirl.sim.plans import ExpertStep, in_app

if TYPE_CHECKING:
    import numpy as np

    from digirl.sim.phone import Phone

__all__ = ["APP_PAGES", "APP_PAGE_KINDS", "CALC_KEYS", "calc_expression", "calc_intent", "calc_value"]

#: The calculator's keypad, in the order its keys are laid out (ref ``calc.key.<index>``).
CALC_KEYS = ("AC", "⌫", "%", "÷", "7", "8", "9", "×", "4", "5", "6", "-", "1", "2", "3", "+", "0", ".", "=")
_NUM = r"(\d+(?:\.\d+)?)"
_OPS = (
    (r"plus|\+|and", "+"),
    (r"minus|-|less", "-"),
    (r"times|x|\*|×|multiplied\s+by|into", "×"),
    (r"divided\s+by|over|/|÷", "÷"),
)


def calc_expression(text: str) -> str | None:
    """``"23 times 17"`` → ``"23×17"``; ``"add 250 and 175"`` → ``"250+175"``; ``None`` if not an
    arithmetic expression the calculator can enter (two or more numbers, + - × ÷)."""
    t = re.sub(r"\s+", " ", text.strip().lower().rstrip("?.!")).replace(",", "")
    t = re.sub(r"^(?:what(?:'s| is)|how much is|calculate|compute|work out|figure out|solve)\s+", "", t)
    verbs = (
        (rf"^add {_NUM} (?:and|to|plus) {_NUM}$", "{0}+{1}"),
        (rf"^subtract {_NUM} from {_NUM}$", "{1}-{0}"),
        (rf"^multiply {_NUM} (?:by|and|times) {_NUM}$", "{0}×{1}"),
        (rf"^divide {_NUM} by {_NUM}$", "{0}÷{1}"),
    )
    for pat, form in verbs:
        m = re.fullmatch(pat, t)
        if m is not None:
            return form.format(*m.groups())
    tokens = re.split(r"\s*(plus|\+|minus|-|less|times|x|\*|×|multiplied\s+by|into|divided\s+by|over|/|÷)\s*", t)
    if len(tokens) < 3 or len(tokens) % 2 == 0:
        return None
    out: list[str] = []
    for i, tok in enumerate(tokens):
        if i % 2 == 0:
            if not re.fullmatch(_NUM, tok):
                return None
            out.append(tok)
        else:
            sym = next((s for pat, s in _OPS if re.fullmatch(pat, tok)), None)
            if sym is None:
                return None
            out.append(sym)
    return "".join(out)


_PHONE_NUMBER = re.compile(r"(?:\+?1[\s.-])?\(?\d{3}\)?[\s.-]\d{3}[\s.-]\d{4}|\d{3}-\d{4}")


def calc_intent(text: str) -> Intent | None:
    """The ``calculate`` intent of an arithmetic request ("64 divided by 8"), or ``None``; a phone number
    ("312-555-0144", "1-800-275-8777") is not one."""
    if _PHONE_NUMBER.fullmatch(text.strip(" .,;")):
        return None
    expr = calc_expression(text)
    if expr is None:
        return None
    value = calc_value(expr)
    return Intent("calculate", {"expr": expr, "value": value}) if value and value not in ("Error", "nan") else None


def calc_value(expr: str) -> str:
    """The result the calculator shows for ``expr``."""
    return Calculator._eval(expr)


# ---- calculate ---------------------------------------------------------------------------------
def _calc(phone: Phone) -> Any:
    return phone.apps["calculator"]


def _calculated(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    if phone.fg != "calculator":
        return False
    c = _calc(phone)
    return bool(c.expr == intent.get("expr") and c.result == intent.get("value") and c.result)


def _calc_horizon(intent: Intent) -> int:
    """A key a character: the phone set's steps plus the keys past its first ten ("349.99+82.50+12")."""
    from digirl.sim.intents import HORIZONS

    return HORIZONS["phone"] + max(0, len(intent.get("expr")) - 10)


@builtin_family(
    "calculate",
    "phone",
    predicate=_calculated,
    horizon=_calc_horizon,
    doc="the calculator shows the expression and its result",
)
@in_app("calculator")
def _calc_plan(e: ExpertStep) -> Action:
    c, want = _calc(e.phone), e.intent.get("expr")
    if c.expr == want:
        return e.goto(f"calc.key.{CALC_KEYS.index('=')}") or Action.back()
    if not want.startswith(c.expr) or c.result:
        return e.goto(f"calc.key.{CALC_KEYS.index('AC')}") or Action.back()
    nxt = want[len(c.expr)]
    return e.goto(f"calc.key.{CALC_KEYS.index(nxt)}") or Action.back()


# ---- app_page ----------------------------------------------------------------------------------
def _month_page(text: str) -> str | None:
    """``"2024-07"`` for a calendar page named "July", "july 2025", "next month", "2024-07"."""
    from digirl.sim.intents import TODAY

    t = text.strip().lower()
    m = re.fullmatch(r"(\d{4})-(\d{2})", t)
    if m is not None:
        return t if 1 <= int(m.group(2)) <= 12 else None
    if t in ("next month", "last month", "previous month", "this month"):
        delta = {"next month": 1, "last month": -1, "previous month": -1, "this month": 0}[t]
        y, mo = TODAY.year, TODAY.month + delta
        y, mo = y + (mo - 1) // 12, (mo - 1) % 12 + 1
        return f"{y}-{mo:02d}"
    m = re.fullmatch(r"([a-z]+)(?:\s+(\d{4}))?", t)
    if m is None:
        return None
    names = [x.lower() for x in MONTH_NAMES]
    word = m.group(1)
    hits = [i for i, n in enumerate(names) if word in (n, n[:3])]
    if not hits:
        return None
    mo = hits[0] + 1
    y = int(m.group(2)) if m.group(2) else (TODAY.year if mo >= TODAY.month else TODAY.year + 1)
    return f"{y}-{mo:02d}"


def _files_ref(a: Any, page: str) -> str:
    names = [f[0] for f in FILE_FOLDERS]
    return f"files.{names.index(page)}"


def _calendar_ref(a: Any, page: str) -> str:
    y, m = a.month
    return "calendar.next" if page > f"{y}-{m:02d}" else "calendar.prev"


#: Pages an ``app_page`` task may ask for, per app: the page names (None: any the ``parse`` accepts),
#: how to read the page shown from the app, and which ref to tap next to get to the asked one.
APP_PAGE_KINDS: dict[str, dict[str, Any]] = {
    "clock": {"pages": CLOCK_TABS, "current": lambda a: a.tab, "ref": lambda a, p: f"clock.tab.{p.lower()}"},
    "phone": {
        "pages": ("Recents", "Contacts", "Keypad"),
        "current": lambda a: a.tab,
        "ref": lambda a, p: f"phone.tab.{p.lower()}",
    },
    "camera": {  # the last three only on the newer camera (app_page tasks get the newer surfaces)
        "pages": ("Photo", "Video", "Portrait", "Night", "Slow motion", "Panorama"),
        "current": lambda a: a.mode,
        "ref": lambda a, p: mode_ref(p),
    },
    "calendar": {
        "pages": None,
        "parse": _month_page,
        "current": lambda a: f"{a.month[0]}-{a.month[1]:02d}",
        "ref": _calendar_ref,
    },
    "files": {"pages": tuple(f[0] for f in FILE_FOLDERS), "current": lambda a: a.folder or "", "ref": _files_ref},
    **SURFACE_PAGE_KINDS,
}
#: Tab names of the apps with a fixed set (the phrasings and compound steps read them).
APP_PAGES: dict[str, tuple[str, ...]] = {k: v["pages"] for k, v in APP_PAGE_KINDS.items() if v["pages"]}


def _valid_page(app: str, page: str) -> bool:
    kind = APP_PAGE_KINDS.get(app)
    if kind is None:
        return False
    return page in kind["pages"] if kind["pages"] else kind["parse"](page) == page


def _blocked(app: str, a: Any) -> bool:
    """A dialog or mode of the app that hides its pages (a time picker, a call, a search, an editor)."""
    return bool(
        (app == "clock" and a.picker is not None)
        or (app == "phone" and (a.in_call is not None or a.focused == "q"))
        or (app == "camera" and a.recording)
        or (app == "calendar" and a.editing)
    )


def _page_shown(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    app, page = intent.get("app"), intent.get("page")
    if phone.fg != app or app not in APP_PAGE_KINDS:
        return False
    a: Any = phone.apps[app]
    return not _blocked(app, a) and APP_PAGE_KINDS[app]["current"](a) == page


def _page_setup(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    """The app starts on another page (as the last time it was used), so the task is not done already."""
    app, page = intent.get("app"), intent.get("page")
    if not _valid_page(app, page):
        raise ValueError(f"{app!r} has no page {page!r}; known: {APP_PAGES} and calendar months (YYYY-MM)")
    a: Any = phone.apps[app]
    if app == "files":  # the app opens on its browse list
        return
    custom = APP_PAGE_KINDS[app].get("setup")
    if custom is not None:
        custom(a, page, rng)
        return
    if app == "calendar":
        y, m = (int(x) for x in page.split("-"))
        if a.month == (y, m):
            a.shift_month(1 if rng.integers(2) else -1)
        return
    others = [t for t in APP_PAGE_KINDS[app]["pages"] if t != page]
    pick = others[int(rng.integers(len(others)))]
    if app == "camera":
        a.mode = pick
    else:
        a.tab = pick


def _page_horizon(intent: Intent) -> int:
    """A calendar month far away takes a tap per month: the phone set's 15 steps plus the distance."""
    from digirl.sim.intents import HORIZONS, TODAY

    page = intent.get("page")
    if intent.get("app") != "calendar" or not re.fullmatch(r"\d{4}-\d{2}", page):
        return HORIZONS["phone"]
    y, m = (int(x) for x in page.split("-"))
    return HORIZONS["phone"] + abs((y - TODAY.year) * 12 + m - TODAY.month)


@builtin_family(
    "app_page",
    "phone",
    predicate=_page_shown,
    setup=_page_setup,
    horizon=_page_horizon,
    doc="that page or tab of the app is shown",
)
def _page_plan(e: ExpertStep) -> Action:
    app, page = e.intent.get("app"), e.intent.get("page")
    step = e.open_app(app)
    if step is not None:
        return step
    a: Any = e.phone.apps[app]
    if app == "clock" and a.picker is not None:
        return e.goto("clock.picker.cancel") or Action.back()
    if app == "phone" and a.in_call is not None:
        return e.goto("phone.end") or Action.back()
    if app == "camera" and a.recording:
        return e.goto("camera.shutter") or Action.back()
    if a.focused is not None or (app == "calendar" and a.editing) or (app == "files" and a.folder not in (None, page)):
        return Action.back()
    return e.goto(APP_PAGE_KINDS[app]["ref"](a, page)) or Action.back()
