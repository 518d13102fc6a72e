"""Reading what arrived: ``call_back`` (Phone: the latest missed call is returned from Recents, "call
back whoever just called"), ``latest_thread`` (Messages: the newest conversation is open, "read my
latest text"), ``reply_latest`` (``body``: a reply sent in it, "reply ok to my last text") and
``open_mail`` (Gmail: the newest inbox mail is open, or with ``query`` the first result of that
search, "search my email for invoices and open the first one") and ``mail_action`` (``action``: reply,
forward, star or delete the newest mail, or one from ``sender`` / ``about`` something; ``body`` of a
reply, ``to`` of a forward: "reply to the last email from Priyanka saying thanks")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from digirl.core.actions import Action
from digirl.sim.apps.insearch import mail_matches
from digirl.sim.content import terms_in, title_case
from digirl.sim.family_registry import builtin_family
from digirl.sim.goals import TaskContext, query_terms
from digirl.sim.intents import Intent
from digirl.sim.plans import ExpertStep, in_app

if TYPE_CHECKING:
    import numpy as np

    from digirl.sim.phone import Phone


def _app(phone: Phone, key: str) -> Any:
    return phone.apps[key]


# ---- Phone: return the latest missed call ------------------------------------------------------
def _missed_calls(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    """Two or three calls were missed this morning, the newest last; the task returns the newest."""
    from digirl.sim.apps.dialer import Call

    people = [c for c in phone.contacts if c.number]
    picks = rng.choice(len(people), size=int(rng.integers(2, 4)), replace=False)
    times = sorted(f"{int(rng.integers(7, 10))}:{int(rng.integers(10, 60)):02d} AM" for _ in picks)
    calls = _app(phone, "phone").calls
    for i, t in zip(picks, times, strict=True):
        calls.append(Call(people[int(i)].name, people[int(i)].number, missed=t))
    ctx.initial["caller"] = calls[-1].number


def _called_back(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    d = _app(phone, "phone")
    return d.in_call is not None and d.in_call.number == ctx.initial.get("caller")


@builtin_family("call_back", "phone", predicate=_called_back, setup=_missed_calls, doc="the latest missed call is returned")
@in_app("phone")
def _call_back_plan(e: ExpertStep) -> Action:
    d = _app(e.phone, "phone")
    if d.in_call is not None or d.screen() == "search":
        return Action.back()
    if d.tab != "Recents":
        return e.goto("phone.tab.recents") or Action.back()
    return e.goto("phone.recent.0") or Action.back()


# ---- Messages: the newest conversation ---------------------------------------------------------
def _note_latest(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    ctx.initial["latest"] = _app(phone, "messages").order[0]


def _latest_open(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    m = _app(phone, "messages")
    return phone.fg == "messages" and m.page == "thread" and m.current == ctx.initial.get("latest")


@builtin_family(
    "latest_thread", "phone", predicate=_latest_open, setup=_note_latest, doc="the newest conversation is open in Messages"
)
@in_app("messages")
def _latest_plan(e: ExpertStep) -> Action:
    m = _app(e.phone, "messages")
    if m.page != "list":
        return Action.back()
    return e.goto("messages.thread.0") or Action.back()


def _replied(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    from digirl.sim.families.comms import message_terms

    msgs = _app(phone, "messages").threads.get(ctx.initial.get("latest"), [])
    terms = message_terms(intent.get("body"))
    return any(m.new and m.outgoing and terms_in(terms, m.text) for m in msgs)


@builtin_family("reply_latest", "phone", predicate=_replied, setup=_note_latest, doc="a reply sent in the newest conversation")
@in_app("messages")
def _reply_plan(e: ExpertStep) -> Action:
    m = _app(e.phone, "messages")
    if m.page == "thread" and m.current == e.ctx.initial.get("latest"):
        return e.type_into(m, "compose", "messages.compose", e.intent.get("body") or "OK")
    return _latest_plan(e)


# ---- Gmail: the newest mail, or the first result of a search ---------------------------------------
def _mail_target(g: Any, intent: Intent) -> int | None:
    """The index (in the inbox list) of the mail the task is about; None when the search finds none."""
    q = intent.get("query")
    if not q:
        return 0
    hits = mail_matches(g, q)
    return hits[0] if hits else None


def _mail_open(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    g = _app(phone, "gmail")
    if phone.fg != "gmail" or g.folder != "Inbox" or g.open_mail is None:
        return False
    if intent.get("query") and (g.search is None or not terms_in(query_terms(intent), g.search[1])):
        return False  # the first result is the one the search shows first
    return bool(g.open_mail == _mail_target(g, intent))


def _mail_arrived(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    """With a query no mail matches, one about it arrived this morning (so the search finds it)."""
    g, q = _app(phone, "gmail"), intent.get("query")
    if q and not mail_matches(g, q):
        sender = ("Alex Kim", "Priya Nair", "Support Team", "Jordan Lee", "Maria Garcia")[int(rng.integers(5))]
        g.received.insert(0, (sender, title_case(q), "Hi! Here are the details you asked about.", "9:12 AM"))


@builtin_family(
    "open_mail", "phone", predicate=_mail_open, setup=_mail_arrived, doc="the newest mail or the search's first is open"
)
@in_app("gmail")
def _mail_plan(e: ExpertStep) -> Action:
    g = _app(e.phone, "gmail")
    q = e.intent.get("query")
    if g.compose or g.drawer or g.open_mail is not None or g.folder != "Inbox":
        return Action.back()
    if not q:
        return Action.back() if g.search is not None else e.goto("gmail.mail.0") or Action.back()
    if _mail_target(g, e.intent) is None or not e.phone.surfaces:  # no hit; or the pinned screens' search bar
        return Action.impossible()
    screen = g.screen()
    if screen == "results" and terms_in(query_terms(e.intent), g.search[1]):
        return e.goto("gmail.result.0") or Action.back()
    if screen == "search":
        return e.type_into(g, "q", "gmail.search.query", q)
    if screen == "results":
        return e.goto("gmail.results.query") or Action.back()
    return e.goto("gmail.search") or Action.back()


# ---- Gmail: reply to, forward, star or delete a mail ------------------------------------------------
_MAIL_ACTIONS = ("reply", "forward", "star", "delete")


def _note_mail(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    """The mail the task is about: the newest, or (``sender`` / ``about``) one that just arrived from
    that sender / about that; noted as it shows in the inbox."""
    g, sender, about = _app(phone, "gmail"), intent.get("sender"), intent.get("about")
    if intent.get("action") not in _MAIL_ACTIONS:
        raise ValueError(f"mail action must be one of {_MAIL_ACTIONS}, got {intent.get('action')!r}")
    if sender or about:
        who, subject = title_case(sender) if sender else "Support Team", title_case(about) if about else "Quick question"
        g.received.insert(0, (who, subject, "Hi! Here are the details you asked about.", "9:12 AM"))
    ctx.initial["mail"] = g.emails("Inbox")[0]


def _mail_done(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    from digirl.sim.families.comms import message_terms

    g, mail, action = _app(phone, "gmail"), tuple(ctx.initial.get("mail", ())), intent.get("action")
    if action == "delete":
        return [tuple(m) for m in g.trashed] == [mail]
    if action == "star":
        return mail in [tuple(m) for m in g.starred]
    want_to = mail[0] if action == "reply" else intent.get("to")
    prefix = "Re: " if action == "reply" else "Fwd: "
    terms = message_terms(intent.get("body")) if intent.get("body") else []
    return any(m.to.lower() == want_to.lower() and m.subject == prefix + mail[1] and terms_in(terms, m.body) for m in g.sent)


@builtin_family(
    "mail_action", "phone", predicate=_mail_done, setup=_note_mail, doc="the mail is replied to / forwarded / starred / deleted"
)
@in_app("gmail")
def _mail_action_plan(e: ExpertStep) -> Action:
    g, action, mail = _app(e.phone, "gmail"), e.intent.get("action"), tuple(e.ctx.initial["mail"])
    if g.compose:
        if action == "forward" and g.fields.get("to", "").strip().lower() != e.intent.get("to").lower():
            return e.type_into(g, "to", "gmail.compose.to", e.intent.get("to"))
        if action == "reply" and e.intent.get("body") and not g.fields.get("body"):
            return e.type_into(g, "body", "gmail.compose.body", e.intent.get("body"), submit=False)
        return e.goto("gmail.send") or Action.back()
    if g.drawer or g.folder != "Inbox" or g.search is not None:
        return Action.back()
    inbox = g.emails()
    if g.open_mail is not None:
        if inbox[g.open_mail] != mail:
            return Action.back()
        return e.goto(f"gmail.read.{action}") or Action.back()
    return e.goto(f"gmail.mail.{inbox.index(mail)}") or Action.back()
