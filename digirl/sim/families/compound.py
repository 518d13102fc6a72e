"""Compound tasks: an ordered plan of sub-tasks of any family ("open YouTube and search for lofi",
"go to bestbuy.com, search for a laptop and open the first result", "turn on wifi, then open Gmail").

A compound intent keeps its plan in one slot, ``plan``: a JSON list of sub-intents
(``[{"family": ..., "slots": {...}}, ...]``, :func:`compound_intent` / :func:`plan_parts`), so it
travels through task files, task specs and worker processes like any intent.

Success: the sub-goals are reached **in order** (the env's :meth:`TaskFamily.observe` hook moves a
pointer past each sub-goal whose predicate holds, after every step), and at the end every *lasting*
sub-goal (a state the phone keeps: a setting, an alarm, a sent text, an installed app, an item in
a cart, ...) still holds unless a later sub-goal of the same family is about the same thing ("turn
the flashlight on and then off"). Screen goals (an app or page in front) only need to have been
shown in their turn, so "open the first result" must come after the search it belongs to.

The expert plans through the sub-goals: it runs the plan of the first sub-goal not yet reached
(each sub-goal's own closed-loop plan, with its own context). The horizon is the sum of the
sub-goals' task-set horizons, capped at :data:`MAX_HORIZON`.

Other families also added by issue 42 live here: ``go_home`` and ``add_to_cart``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from digirl.core.actions import Action
from digirl.sim.families.insearch import IN_APP_SEARCH, in_app_search_plan, in_app_searched
from digirl.sim.family_registry import builtin_family, get_family
from digirl.sim.goals import TaskContext, check, query_terms, site_domain
from digirl.sim.intents import HORIZONS, Intent
from digirl.sim.plans import ExpertStep, sort_step, to_shop_results

if TYPE_CHECKING:
    import numpy as np

    from digirl.sim.phone import Phone

__all__ = ["LASTING", "MAX_HORIZON", "MAX_PARTS", "SEARCHABLE_APPS", "compound_intent", "plan_horizon", "plan_parts"]

#: The most sub-goals one compound task may have, and the longest horizon it gets.
MAX_PARTS = 6
MAX_HORIZON = 60
#: Families whose success is a state the phone keeps (checked again at the end of a compound task).
LASTING = frozenset(
    {
        "toggle_setting",
        "set_option",
        "connect_wifi",
        "connect_bluetooth",
        "set_brightness",
        "set_volume",
        "set_alarm",
        "delete_alarm",
        "disable_alarm",
        "start_timer",
        "cancel_timer",
        "start_stopwatch",
        "stop_stopwatch",
        "install_app",
        "uninstall_app",
        "update_app",
        "make_call",
        "call_back",
        "call_speaker",
        "call_place",
        "send_message",
        "reply_latest",
        "send_email",
        "mail_action",
        "add_contact",
        "create_event",
        "take_photo",
        "delete_photo",
        "send_photo",
        "youtube_subscribe",
        "add_world_clock",
        "bookmark_site",
        "close_tabs",
        "clear_history",
        "close_recent",
        "app_action",
        "lock_screen",
        "delete_file",
        "delete_contact",
        "update_contact",
        "clear_notifications",
        "add_to_cart",
    }
)
#: Slots that say *how* a state should be (not *what* it is about): a later sub-goal that differs
#: only in these supersedes an earlier one ("turn the flashlight on, then off").
_HOW_SLOTS = frozenset({"state", "level", "body", "subject"})
#: Families that undo each other: a later one about the same thing supersedes the earlier one too
#: ("uninstall Snapchat, then install it again").
_UNDOES = {
    "install_app": "uninstall_app",
    "uninstall_app": "install_app",
    "set_alarm": "delete_alarm",
    "start_stopwatch": "stop_stopwatch",
    "stop_stopwatch": "start_stopwatch",
}


def compound_intent(parts: Sequence[Intent]) -> Intent:
    """The compound intent of ``parts`` (at least two, none compound, at most :data:`MAX_PARTS`)."""
    if len(parts) < 2:
        raise ValueError(f"a compound task needs at least two sub-tasks, got {len(parts)}")
    if len(parts) > MAX_PARTS:
        raise ValueError(f"a compound task has at most {MAX_PARTS} sub-tasks, got {len(parts)}")
    if any(p.family == "compound" for p in parts):
        raise ValueError("a compound task's sub-tasks cannot be compound themselves (flatten them)")
    return Intent("compound", {"plan": json.dumps([p.to_dict() for p in parts], sort_keys=True)})


@functools.lru_cache(maxsize=4096)  # predicates and the expert read the plan on every step
def _parts(plan: str) -> tuple[Intent, ...]:
    try:
        raw = json.loads(plan)
    except json.JSONDecodeError as e:
        raise ValueError(f"a compound task's plan is not JSON: {e}") from None
    if not isinstance(raw, list) or len(raw) < 2:
        raise ValueError("a compound task's plan must be a list of at least two sub-intents")
    parts = tuple(Intent.from_dict(x) for x in raw)
    if any(p.family == "compound" for p in parts):
        raise ValueError("a compound task's sub-tasks cannot be compound themselves")
    return parts


def plan_parts(intent: Intent) -> tuple[Intent, ...]:
    """The sub-intents of a compound intent, in order."""
    return _parts(intent.get("plan"))


def plan_horizon(intent: Intent) -> int:
    """Steps a compound task gets: its sub-tasks' horizons (a family's own, else its task set's)
    added up, at most :data:`MAX_HORIZON`."""
    total = 0
    for p in plan_parts(intent):
        own = get_family(p.family).horizon
        total += own(p) if own is not None else HORIZONS[p.taskset]
    return min(MAX_HORIZON, total)


# ---------------------------------------------------------------- state of a compound episode
def _contexts(ctx: TaskContext) -> list[TaskContext]:
    subs: list[TaskContext] = ctx.initial.setdefault("parts", [])
    if not subs:
        subs.extend(TaskContext(p) for p in plan_parts(ctx.intent))
    return subs


def _superseded(parts: Sequence[Intent], i: int) -> bool:
    me = parts[i]
    if me.family == "delete_alarm" and me.get("time") == "all" and any(p.family == "set_alarm" for p in parts[i + 1 :]):
        return True  # "delete all my alarms and set a new one for 5:45": the new alarm does not undo the clean-up
    what = {k: v for k, v in me.slots.items() if k not in _HOW_SLOTS}
    families = (me.family, _UNDOES.get(me.family))
    return any(p.family in families and {k: v for k, v in p.slots.items() if k not in _HOW_SLOTS} == what for p in parts[i + 1 :])


def _reached(phone: Phone, ctx: TaskContext) -> int:
    """How many sub-goals are reached in order, counting those that hold now after the recorded ones."""
    subs = _contexts(ctx)
    i = int(ctx.initial.get("reached", 0))
    while i < len(subs) and check(phone, subs[i]):
        i += 1
    return i


def _unkept(phone: Phone, ctx: TaskContext) -> int | None:
    """The first lasting sub-goal that no longer holds (None when all do)."""
    subs = _contexts(ctx)
    parts = [c.intent for c in subs]
    for i, c in enumerate(subs):
        if c.intent.family in LASTING and not _superseded(parts, i) and not check(phone, c):
            return i
    return None


def _observe(phone: Phone, intent: Intent, ctx: TaskContext) -> None:
    ctx.initial["reached"] = _reached(phone, ctx)


def _done(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    return _reached(phone, ctx) == len(_contexts(ctx)) and _unkept(phone, ctx) is None


def _prepare(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    # Later sub-goals first, so that where two set up the same thing the earlier one's state wins
    # ("install Duolingo and open it" starts without Duolingo).
    for sub in reversed(_contexts(ctx)):
        fam = get_family(sub.intent.family)
        if fam.prepare is not None:
            fam.prepare(phone, sub.intent, sub, rng)


def _setup(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    for sub in reversed(_contexts(ctx)):
        fam = get_family(sub.intent.family)
        if fam.setup is not None:
            fam.setup(phone, sub.intent, sub, rng)
    ctx.initial["reached"] = 0


@builtin_family(
    "compound",
    "phone",
    predicate=_done,
    prepare=_prepare,
    setup=_setup,
    observe=_observe,
    horizon=plan_horizon,
    doc="every sub-goal reached in order; lasting ones still hold at the end",
)
def _compound_plan(e: ExpertStep) -> Action:
    subs = _contexts(e.ctx)
    i = _reached(e.phone, e.ctx)
    if i >= len(subs):
        i = _unkept(e.phone, e.ctx) or 0
    sub = ExpertStep(e.phone, subs[i], e.jitter, e.salt)
    return sub.obstacle() or get_family(subs[i].intent.family).plan(sub)


# ---------------------------------------------------------------- go_home
def _home(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    return phone.fg == "launcher" and phone.apps["launcher"].screen() == "home"


@builtin_family("go_home", "phone", predicate=_home, doc="the home screen is in front")
def _home_plan(e: ExpertStep) -> Action:
    return Action.home()


# ---------------------------------------------------------------- add_to_cart
def _wanted(phone: Phone, intent: Intent, query: str) -> str:
    """The product id the task wants in the cart: the first result of ``query`` in the order asked."""
    from digirl.sim.apps.web import shop_results

    chrome: Any = phone.apps["chrome"]
    shown = shop_results(chrome, site_domain(intent.get("site")), query, intent.get("sort"))
    return shown[0].pid if shown else ""


def _carted(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    from digirl.sim.content import terms_in

    cart: list[tuple[str, str, str, int]] = getattr(phone.apps["chrome"], "cart", [])
    site, terms = site_domain(intent.get("site")), query_terms(intent)
    return any(s == site and terms_in(terms, q) and pid == _wanted(phone, intent, q) for s, pid, q, _ in cart)


@builtin_family(
    "add_to_cart",
    "phone",
    predicate=_carted,
    doc="the first result of that search (in the order ``sort`` asks, if given) is in the site's cart",
)
def _cart_plan(e: ExpertStep) -> Action:
    b: Any = e.phone.apps["chrome"]
    page = b.page if e.phone.fg == "chrome" and b.mode == "page" else None
    if page is not None and page.kind == "product" and page.domain == site_domain(e.intent.get("site")):
        from digirl.sim.content import terms_in

        wanted = _wanted(e.phone, e.intent, page.query)
        if terms_in(query_terms(e.intent), page.query) and b.focused is None and page.pid == wanted:
            return e.goto("product.add_to_cart") or Action.back()
    step = to_shop_results(e) or sort_step(e, e.intent.get("sort"))
    if step is not None:
        return step
    return e.goto("product.0") or Action.back()


# ---------------------------------------------------------------- app_search
#: Apps whose own search ``app_search`` covers (YouTube, Maps and Chrome have their families).
SEARCHABLE_APPS = ("playstore", "contacts", "gmail", "settings")


def _app_results(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    from digirl.sim.content import terms_in

    app = intent.get("app")
    if app not in SEARCHABLE_APPS or phone.fg != app:
        return False
    if app in IN_APP_SEARCH:
        return in_app_searched(phone, intent)
    a: Any = phone.apps[app]
    if app == "contacts":  # the list filters as one types: the search box holds the query
        return bool(a.page == "list" and terms_in(query_terms(intent), a.fields.get("q", "")))
    screen, arg = a.top
    return bool(screen == "results" and terms_in(query_terms(intent), str(arg)))


def _app_search_setup(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    """Searching contacts for a name: someone of that name is in them."""
    if intent.get("app") == "contacts":
        from digirl.sim.families.comms import ensure_contact

        ensure_contact(phone, intent.get("query"), rng)


@builtin_family(
    "app_search", "phone", predicate=_app_results, setup=_app_search_setup, doc="the app shows its search results for the query"
)
def _app_search_plan(e: ExpertStep) -> Action:
    app = e.intent.get("app")
    if app not in SEARCHABLE_APPS:
        return Action.impossible()
    if app in IN_APP_SEARCH:
        return in_app_search_plan(e)
    step = e.open_app(app)
    if step is not None:
        return step
    s: Any = e.phone.apps[app]
    if app == "contacts":
        if s.page != "list":
            return Action.back()
        return e.type_into(s, "q", "contacts.search", e.intent.get("query"), submit=False)
    if s.top[0] == "search":
        return e.type_into(s, "q", "store.query", e.intent.get("query"))
    return e.goto("store.search") or Action.back()
