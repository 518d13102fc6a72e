"""More of the phone (issue 42): the calculator (an expression entered and its result shown), pages
and tabs inside apps (clock tabs, the phone's keypad, recents and contacts), and search inside
Contacts. Not in the shipped task sets (:data:`~digirl.sim.intents.EXTRA_FAMILIES`).

- ``calculate``: ``expr`` (as the calculator shows it: digits, ``.``, ``+ - × ÷``), ``value``
  (its value, as the calculator prints it). Success: the Calculator is in front, its expression
  is ``expr`` and its result line shows ``value`` (the expression is checked, not only the number).
- ``app_page``: ``app`` (clock | phone), ``page`` (a tab of that app). Success: that tab is shown.
- ``app_search`` (Contacts; the Play Store's is in :mod:`.compound`): ``query``. Success: Contacts'
  list is filtered by a search containing the query's terms.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from digirl.core.actions import Action
from digirl.sim.apps.clock import TABS as CLOCK_TABS
from digirl.sim.apps.simple import Calculator
from digirl.sim.expert import ExpertStep
from digirl.sim.families import builtin_family
from digirl.sim.intents import Intent
from digirl.sim.predicates import TaskContext

if TYPE_CHECKING:
    import numpy as np

    from digirl.sim.phone import Phone

__all__ = ["APP_PAGES", "CALC_KEYS", "calc_expression", "calc_intent", "calc_value"]

#: The calculator's keypad, in the order its keys are laid out (ref ``calc.key.<index>``).
CALC_KEYS = ("AC", "⌫", "%", "÷", "7", "8", "9", "×", "4", "5", "6", "-", "1", "2", "3", "+", "0", ".", "=")
#: Pages (tabs) of apps that ``app_page`` can ask for: app key → tab names as the app shows them.
APP_PAGES: dict[str, tuple[str, ...]] = {"clock": CLOCK_TABS, "phone": ("Recents", "Contacts", "Keypad")}

_NUM = r"(\d+(?:\.\d+)?)"
_OPS = (
    (r"plus|\+|and", "+"),
    (r"minus|-|less", "-"),
    (r"times|x|\*|×|multiplied\s+by", "×"),
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
    tokens = re.split(r"\s*(plus|\+|minus|-|less|times|x|\*|×|multiplied\s+by|divided\s+by|over|/|÷)\s*", t)
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


def calc_intent(text: str) -> Intent | None:
    """The ``calculate`` intent of an arithmetic request ("64 divided by 8"), or ``None``."""
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


@builtin_family("calculate", "phone", predicate=_calculated, doc="the calculator shows the expression and its result")
def _calc_plan(e: ExpertStep) -> Action:
    step = e.open_app("calculator")
    if step is not None:
        return step
    c, want = _calc(e.phone), e.intent.get("expr")
    if c.expr == want:
        return e.goto(f"calc.key.{CALC_KEYS.index('=')}") or Action.back()
    if not want.startswith(c.expr) or c.result:
        return e.goto(f"calc.key.{CALC_KEYS.index('AC')}") or Action.back()
    nxt = want[len(c.expr)]
    return e.goto(f"calc.key.{CALC_KEYS.index(nxt)}") or Action.back()


# ---- app_page ----------------------------------------------------------------------------------
def _page_shown(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    app, page = intent.get("app"), intent.get("page")
    if phone.fg != app or app not in APP_PAGES:
        return False
    a: Any = phone.apps[app]
    if app == "clock" and a.picker is not None:
        return False
    if app == "phone" and (a.in_call is not None or a.focused == "q"):
        return False
    return bool(a.tab == page)


def _page_setup(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    """The app starts on another tab (as the last time it was used), so the task is not done already."""
    app, page = intent.get("app"), intent.get("page")
    if app not in APP_PAGES or page not in APP_PAGES[app]:
        raise ValueError(f"{app!r} has no page {page!r}; known: {APP_PAGES}")
    others = [t for t in APP_PAGES[app] if t != page]
    a: Any = phone.apps[app]
    a.tab = others[int(rng.integers(len(others)))]


@builtin_family("app_page", "phone", predicate=_page_shown, setup=_page_setup, doc="that tab of the app is shown")
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
    if a.focused is not None:
        return Action.back()
    return e.goto(f"{app}.tab.{page.lower()}") or Action.back()
