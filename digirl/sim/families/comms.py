"""Calls, text messages, contacts, email and calendar events."""

from __future__ import annotations

import re
from datetime import date
from typing import TYPE_CHECKING, Any

from digirl.core.actions import Action
from digirl.sim.content import key_terms, stable_rng, terms_in
from digirl.sim.device import Contact, find_contacts, same_person
from digirl.sim.family_registry import builtin_family
from digirl.sim.goals import TaskContext
from digirl.sim.intents import TODAY, Intent
from digirl.sim.plans import ExpertStep, in_app

if TYPE_CHECKING:
    import numpy as np

    from digirl.sim.phone import Phone


_FRAGMENTS = frozenset("ll re ve nt".split())


def message_terms(text: str) -> list[str]:
    """The words a matching message or title must contain: :func:`~digirl.sim.content.key_terms`
    without single letters and contraction fragments ("I'll be late" → ["late"])."""
    return [w for w in key_terms(text) if (len(w) > 1 or w.isdigit()) and w not in _FRAGMENTS]


def _is_number(who: str) -> bool:
    return bool(re.fullmatch(r"\+?\d{3,}", who.strip()))


def ensure_contact(phone: Phone, who: str, rng: np.random.Generator | None = None) -> Contact | None:
    """The contact a task names, added to the phone if nobody matches (``None`` for a bare number)."""
    if not who or _is_number(who):
        return None
    for c in phone.contacts:
        if same_person(c.name, who):
            return c
    r = stable_rng("contact", who.lower())
    number = f"{r.choice((206, 312, 415, 512, 617, 718))}555{r.randint(100, 9999):04d}"
    c = Contact(who, number, f"{re.sub(r'[^a-z]', '.', who.lower()).strip('.')}@example.com")
    phone.contacts.append(c)
    return c


def _with_contact(slot: str) -> Any:
    def setup(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
        ensure_contact(phone, intent.get(slot), rng)

    return setup


def _app(phone: Phone, key: str) -> Any:
    return phone.apps[key]


# ---- calls ---------------------------------------------------------------------------------
def _called(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    want = intent.get("contact")
    return any(same_person(c.who, want) or same_person(c.number, want) for c in _app(phone, "phone").calls)


@builtin_family(
    "make_call", "phone", predicate=_called, setup=_with_contact("contact"), doc="a call to that contact or number was placed"
)
@in_app("phone")
def _call_plan(e: ExpertStep) -> Action:
    d, want = _app(e.phone, "phone"), e.intent.get("contact")
    if d.in_call is not None:
        return e.goto("phone.end") or Action.back()
    if _is_number(want):
        if d.screen() == "search":
            return Action.back()
        if d.tab != "Keypad":
            return e.goto("phone.tab.keypad") or Action.back()
        return e.type_into(d, "number", "phone.number", want)
    if d.focused != "q" and not d.fields.get("q"):
        return e.goto("phone.search") or Action.back()
    typed = d.fields.get("q", "")
    hits = find_contacts(e.phone.contacts, typed)
    for i, c in enumerate(hits):
        if typed and same_person(c.name, want):
            return e.goto(f"phone.result.{i}.call") or Action.back()
    return e.type_into(d, "q", "phone.search", want, submit=False)


def _on_speaker(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    c = _app(phone, "phone").in_call
    want = intent.get("contact")
    return c is not None and c.speaker and (same_person(c.who, want) or same_person(c.number, want))


@builtin_family(
    "call_speaker", "phone", predicate=_on_speaker, setup=_with_contact("contact"), doc="a call to that contact is on speaker"
)
@in_app("phone")
def _speaker_plan(e: ExpertStep) -> Action:
    d, want = _app(e.phone, "phone"), e.intent.get("contact")
    c = d.in_call
    if c is not None and (same_person(c.who, want) or same_person(c.number, want)):
        return e.goto("phone.incall.speaker") or Action.back()
    return _call_plan(e)


def _place_called(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    """A call to a place that Maps finds for the query (its name on the call, from the place's sheet)."""
    from digirl.sim.apps.maps import place_number, place_query
    from digirl.sim.content import places

    q = intent.get("query")
    found = {(p.name, place_number(p)) for p in places(place_query(q) or q, phone.dyn.world_version)}
    return any((c.who, c.number) in found for c in _app(phone, "phone").calls)


@builtin_family("call_place", "phone", predicate=_place_called, doc="a place Maps finds for the query was called")
def _call_place_plan(e: ExpertStep) -> Action:
    from digirl.sim.apps.maps import place_query
    from digirl.sim.goals import query_terms
    from digirl.sim.plans import maps_to_results

    if e.phone.fg == "phone":  # the call is placed (the predicate says whether it was the right one)
        return Action.back()
    q = e.intent.get("query")
    step = maps_to_results(e, place_query(q) or q, query_terms(e.intent))
    if step is not None:
        return step
    if e.phone.apps["maps"].screen() == "place":
        return e.goto("maps.place.call") or Action.back()
    return e.goto("maps.result.0") or Action.back()


# ---- messages ------------------------------------------------------------------------------
def _body(intent: Intent) -> str:
    return intent.get("body") or "Hi"


def _texted(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    want, terms = intent.get("contact"), message_terms(intent.get("body"))
    for name, msgs in _app(phone, "messages").threads.items():
        if same_person(name, want) or _number_of(phone, name, want):
            if any(m.new and m.outgoing and terms_in(terms, m.text) for m in msgs):
                return True
    return False


def _number_of(phone: Phone, thread: str, want: str) -> bool:
    """A thread opened with a number belongs to the contact that has it (and vice versa)."""
    for c in phone.contacts:
        if (same_person(c.name, want) and same_person(thread, c.number)) or (
            same_person(c.name, thread) and same_person(c.number, want)
        ):
            return True
    return False


def _to_thread(e: ExpertStep) -> Action | None:
    """The step towards the conversation with the intent's ``contact`` (an existing thread, or a new
    one through the To field); ``None`` once it is open."""
    m, want = _app(e.phone, "messages"), e.intent.get("contact")
    if m.page == "thread":
        return None if same_person(m.current, want) or _number_of(e.phone, m.current, want) else Action.back()
    if m.page == "list":
        for i, name in enumerate(m.order):
            if same_person(name, want):
                return e.goto(f"messages.thread.{i}") or Action.back()
        return e.goto("messages.new") or Action.back()
    typed = m.fields.get("to", "")
    if typed.strip().lower() == want.lower():
        for i, (name, _) in enumerate(m.recipients()):
            if same_person(name, want) or _number_of(e.phone, name, want):
                return e.goto(f"messages.to.sugg.{i}") or Action.back()
    return e.type_into(m, "to", "messages.to", want, submit=False)


@builtin_family(
    "send_message", "phone", predicate=_texted, setup=_with_contact("contact"), doc="a text with the words was sent to them"
)
@in_app("messages")
def _text_plan(e: ExpertStep) -> Action:
    step = _to_thread(e)
    return step if step is not None else e.type_into(_app(e.phone, "messages"), "compose", "messages.compose", _body(e.intent))


def _thread_open(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    m, want = _app(phone, "messages"), intent.get("contact")
    return phone.fg == "messages" and m.page == "thread" and (same_person(m.current, want) or _number_of(phone, m.current, want))


@builtin_family(
    "open_thread", "phone", predicate=_thread_open, setup=_with_contact("contact"), doc="the conversation with them is open"
)
@in_app("messages")
def _thread_plan(e: ExpertStep) -> Action:
    return _to_thread(e) or Action.back()


# ---- contacts ------------------------------------------------------------------------------
def _added(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    name, number = intent.get("name").lower(), intent.get("number")
    before = ctx.initial.get("contacts", 0)
    return any(c.name.lower() == name and (not number or c.number == number) for c in phone.contacts[before:])


def _no_such_contact(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    phone.contacts = [c for c in phone.contacts if c.name.lower() != intent.get("name").lower()]
    ctx.initial["contacts"] = len(phone.contacts)


@builtin_family(
    "add_contact", "phone", predicate=_added, setup=_no_such_contact, doc="a new contact with that name (and number) exists"
)
@in_app("contacts")
def _add_plan(e: ExpertStep) -> Action:
    c = _app(e.phone, "contacts")
    if c.page == "list":
        return e.goto("contacts.add") or Action.back()
    if c.page != "edit":
        return Action.back()
    name, number = e.intent.get("name"), e.intent.get("number")
    if c.fields.get("name", "").strip() != name:
        return e.type_into(c, "name", "contacts.edit.name", name, submit=False)
    if number and re.sub(r"\D", "", c.fields.get("number", "")) != number:
        return e.type_into(c, "number", "contacts.edit.number", number, submit=False)
    return e.goto("contacts.edit.save") or Action.back()


def _shown(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    c = _app(phone, "contacts")
    return phone.fg == "contacts" and c.page == "detail" and c.shown is not None and same_person(c.shown.name, intent.get("name"))


@builtin_family("view_contact", "phone", predicate=_shown, setup=_with_contact("name"), doc="that contact's page is open")
@in_app("contacts")
def _view_plan(e: ExpertStep) -> Action:
    c, want = _app(e.phone, "contacts"), e.intent.get("name")
    if c.page != "list":
        return Action.back()
    typed = c.fields.get("q", "")
    if typed.strip().lower() == want.lower():
        for i, person in enumerate(find_contacts(e.phone.contacts, typed)):
            if same_person(person.name, want):
                return e.goto(f"contacts.row.{i}") or Action.back()
    return e.type_into(c, "q", "contacts.search", want, submit=False)


# ---- email -----------------------------------------------------------------------------------
def _recipient_ok(phone: Phone, sent_to: str, want: str) -> bool:
    if "@" in want:
        return sent_to.strip().lower() == want.lower()
    if same_person(sent_to, want):
        return True
    return any(same_person(c.name, want) and c.email and c.email.lower() == sent_to.strip().lower() for c in phone.contacts)


def _mailed(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    terms = message_terms(f"{intent.get('subject')} {intent.get('body')}")
    for m in _app(phone, "gmail").sent:
        if _recipient_ok(phone, m.to, intent.get("to")) and terms_in(terms, f"{m.subject} {m.body}"):
            return True
    return False


@builtin_family(
    "send_email", "phone", predicate=_mailed, setup=_with_contact("to"), doc="an email with the words was sent to them"
)
@in_app("gmail")
def _mail_plan(e: ExpertStep) -> Action:
    g = _app(e.phone, "gmail")
    if not g.compose:
        if g.screen() in ("drawer", "email"):
            return Action.back()
        return e.goto("gmail.compose") or Action.back()
    fields = (("to", e.intent.get("to")), ("subject", e.intent.get("subject")), ("body", e.intent.get("body") or "Hi"))
    for name, want in fields:
        if g.fields.get(name, "").strip().lower() != want.strip().lower():
            return e.type_into(g, name, f"gmail.compose.{name}", want, submit=name != "body")
    return e.goto("gmail.send") or Action.back()


# ---- calendar --------------------------------------------------------------------------------
def _event_date(intent: Intent) -> date:
    return date.fromisoformat(intent.get("date")) if intent.get("date") else TODAY


def _scheduled(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    terms, day, hhmm = message_terms(intent.get("title")), _event_date(intent), intent.get("time")
    for ev in _app(phone, "calendar").events:
        if ev.new and terms_in(terms, ev.title) and ev.day == day and (not hhmm or ev.time == hhmm):
            return True
    return False


def _calendar_setup(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    _event_date(intent)  # validates the date (ValueError → the task cannot be set up)


def _event_horizon(intent: Intent) -> int:
    """An event months away takes a tap per month to reach its day: the phone set's steps plus those."""
    from digirl.sim.intents import HORIZONS

    day = _event_date(intent)
    return HORIZONS["phone"] + abs((day.year - TODAY.year) * 12 + day.month - TODAY.month)


@builtin_family(
    "create_event",
    "phone",
    predicate=_scheduled,
    setup=_calendar_setup,
    horizon=_event_horizon,
    doc="an event with the title on that day (and time) exists",
)
@in_app("calendar")
def _event_plan(e: ExpertStep) -> Action:
    cal, day = _app(e.phone, "calendar"), _event_date(e.intent)
    if not cal.editing:
        if cal.month != (day.year, day.month):
            ahead = (day.year, day.month) > cal.month
            return e.goto("calendar.next" if ahead else "calendar.prev") or Action.back()
        if cal.day != day:
            return e.goto(f"calendar.day.{day.day}") or Action.back()
        return e.goto("calendar.add") or Action.back()
    if cal.day != day:
        return Action.back()
    title = e.intent.get("title")
    if cal.fields.get("title", "").strip() != title:
        return e.type_into(cal, "title", "calendar.edit.title", title)
    return e.type_into(cal, "time", "calendar.edit.time", e.intent.get("time"))


# ---- contacts: favourites (with the newer surfaces) ----------------------------------------------
def _starred(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    return any(same_person(n, intent.get("name")) for n in _app(phone, "contacts").favorites)


def _unstarred_contact(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    ensure_contact(phone, intent.get("name"), rng)
    c = _app(phone, "contacts")
    c.favorites = [n for n in c.favorites if not same_person(n, intent.get("name"))]


@builtin_family(
    "favorite_contact", "phone", predicate=_starred, setup=_unstarred_contact, doc="the contact is starred (a favourite)"
)
@in_app("contacts")
def _star_plan(e: ExpertStep) -> Action:
    if not e.phone.surfaces:  # the pinned contact page has no star
        return Action.impossible()
    c, want = _app(e.phone, "contacts"), e.intent.get("name")
    if c.page == "detail" and c.shown is not None and same_person(c.shown.name, want):
        return e.goto("contacts.detail.star") or Action.back()
    if c.page == "list" and c.tab != "All":
        return e.goto("contacts.tab.all") or Action.back()
    return _view_plan(ExpertStep(e.phone, TaskContext(Intent("view_contact", {"name": want})), e.jitter, e.salt))


# ---- contacts: delete one, or change its number (newer surfaces) ---------------------------------
def _to_detail(e: ExpertStep, want: str) -> Action:
    """Steps to the contact's page (from wherever Contacts is)."""
    c = _app(e.phone, "contacts")
    if c.page == "list" and c.tab != "All":
        return e.goto("contacts.tab.all") or Action.back()
    return _view_plan(ExpertStep(e.phone, TaskContext(Intent("view_contact", {"name": want})), e.jitter, e.salt))


def _contact_gone(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    return not any(same_person(c.name, intent.get("name")) for c in phone.contacts)


@builtin_family("delete_contact", "phone", predicate=_contact_gone, setup=_with_contact("name"), doc="the contact is deleted")
@in_app("contacts")
def _delete_contact_plan(e: ExpertStep) -> Action:
    c, want = _app(e.phone, "contacts"), e.intent.get("name")
    if c.page == "detail" and c.shown is not None and same_person(c.shown.name, want):
        return e.goto("contacts.detail.trash") or Action.back()
    return _to_detail(e, want)


def _new_number(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    digits = re.sub(r"\D", "", intent.get("number"))
    return any(same_person(c.name, intent.get("name")) and c.number == digits for c in phone.contacts)


@builtin_family(
    "update_contact", "phone", predicate=_new_number, setup=_with_contact("name"), doc="the contact has the new number"
)
@in_app("contacts")
def _update_contact_plan(e: ExpertStep) -> Action:
    c, want, digits = _app(e.phone, "contacts"), e.intent.get("name"), re.sub(r"\D", "", e.intent.get("number"))
    if c.page == "edit" and c.editing is not None:
        if c.fields.get("number", "") != digits:
            return e.type_into(c, "number", "contacts.edit.number", digits, submit=False)
        return e.goto("contacts.edit.save") or Action.back()
    if c.page == "detail" and c.shown is not None and same_person(c.shown.name, want):
        return e.goto("contacts.detail.edit") or Action.back()
    return _to_detail(e, want)


# ---- calendar: a day's agenda ------------------------------------------------------------------
def _day_shown(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    cal = _app(phone, "calendar")
    return phone.fg == "calendar" and not cal.editing and cal.day == _event_date(intent)


def _other_day(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    """The calendar opens on today; a task for today starts with another day of the month selected."""
    cal, day = _app(phone, "calendar"), _event_date(intent)
    if cal.day == day:
        cal.day = day.replace(day=day.day + 1 if day.day < 28 else day.day - 1)


@builtin_family(
    "calendar_day", "phone", predicate=_day_shown, setup=_other_day, horizon=_event_horizon, doc="that day is selected"
)
@in_app("calendar")
def _day_plan(e: ExpertStep) -> Action:
    cal, day = _app(e.phone, "calendar"), _event_date(e.intent)
    if cal.editing:
        return Action.back()
    if cal.month != (day.year, day.month):
        return e.goto("calendar.next" if (day.year, day.month) > cal.month else "calendar.prev") or Action.back()
    return e.goto(f"calendar.day.{day.day}") or Action.back()
