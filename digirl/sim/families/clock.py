"""Clock families: start or cancel a timer, start or stop the stopwatch, delete or turn off alarms, add a
world-clock city."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from digirl.core.actions import Action
from digirl.sim.apps.clock import Alarm, city_matches, timer_digits
from digirl.sim.family_registry import builtin_family
from digirl.sim.goals import TaskContext
from digirl.sim.intents import Intent, parse_time
from digirl.sim.plans import ExpertStep

if TYPE_CHECKING:
    import numpy as np

    from digirl.sim.phone import Phone


def _clock(phone: Phone) -> Any:
    return phone.apps["clock"]


def _to_tab(e: ExpertStep, tab: str) -> Action | None:
    step = e.open_app("clock")
    if step is not None:
        return step
    c = _clock(e.phone)
    if c.picker is not None:
        return e.goto("clock.picker.cancel") or Action.back()
    if c.tab != tab:
        return e.goto(f"clock.tab.{tab.lower()}") or Action.back()
    return None


# ---- timer, stopwatch ------------------------------------------------------------------
def _timer_ok(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    c = _clock(phone)
    return bool(c.timer_running) and c.timer_total == int(intent.get("seconds", "0"))


@builtin_family("start_timer", "phone", predicate=_timer_ok, doc="a timer of that duration is running")
def _timer_plan(e: ExpertStep) -> Action:
    step = _to_tab(e, "Timer")
    if step is not None:
        return step
    c = _clock(e.phone)
    want = timer_digits(int(e.intent.get("seconds", "0")))
    if c.timer_total:  # a timer with another duration (or paused): delete it first
        return e.goto("clock.timer.reset") or Action.back()
    typed = c.fields.get("timer", "")
    if c.focused != "timer":
        return e.goto("clock.timer") or Action.back()
    if typed == want:
        return Action.enter()
    if want.startswith(typed):
        return Action.type_text(want[len(typed) :])
    return e.goto("kb.backspace") or Action.back()


def _stopwatch_ok(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    return bool(_clock(phone).stopwatch_running)


def _stopwatch_idle(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    """The stopwatch is not running at the start (its default: a no-op that keeps no draw)."""
    _clock(phone).stopwatch_running = False


@builtin_family("start_stopwatch", "phone", predicate=_stopwatch_ok, setup=_stopwatch_idle, doc="the stopwatch is running")
def _stopwatch_plan(e: ExpertStep) -> Action:
    return _to_tab(e, "Stopwatch") or e.goto("clock.stopwatch.start") or Action.back()


def _stopwatch_stopped(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    c = _clock(phone)
    return not c.stopwatch_running and c.stopwatch_elapsed > 0


def _stopwatch_going(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    """The stopwatch runs at the start, some seconds in (as if started before)."""
    c = _clock(phone)
    c.stopwatch_running, c.stopwatch_elapsed = True, 5 + int(rng.integers(0, 120))


@builtin_family(
    "stop_stopwatch",
    "phone",
    predicate=_stopwatch_stopped,
    setup=_stopwatch_going,
    doc="the stopwatch is stopped with time on it",
)
def _stop_stopwatch_plan(e: ExpertStep) -> Action:
    if not _clock(e.phone).stopwatch_running:
        return Action.complete()
    return _to_tab(e, "Stopwatch") or e.goto("clock.stopwatch.start") or Action.back()


def _timer_gone(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    c = _clock(phone)
    return not c.timer_running and c.timer_total == 0


def _timer_going(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    """A timer runs at the start (as if set a while ago): 1-30 minutes, some of it gone."""
    c = _clock(phone)
    c.timer_total = 60 * int(rng.integers(1, 31))
    c.timer_left = max(1, c.timer_total - int(rng.integers(0, 60)))
    c.timer_running = True


@builtin_family("cancel_timer", "phone", predicate=_timer_gone, setup=_timer_going, doc="the running timer is deleted")
def _cancel_timer_plan(e: ExpertStep) -> Action:
    if _timer_gone(e.phone, e.intent, e.ctx):
        return Action.complete()
    return _to_tab(e, "Timer") or e.goto("clock.timer.reset") or Action.back()


# ---- alarms --------------------------------------------------------------------------------
def _target(intent: Intent) -> tuple[int, int] | None:
    t = intent.get("time", "all")
    return None if t == "all" else parse_time(t)


def _alarm_setup(enabled: bool) -> Any:
    """The alarm(s) the task is about exist at the start (enabled, for turning them off)."""

    def setup(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
        c = _clock(phone)
        t = _target(intent)
        if t is None:
            while len(c.alarms) < 2:
                c.alarms.append(Alarm(int(rng.integers(12, 23)), 0, True))
            if enabled:
                c.alarms[int(rng.integers(len(c.alarms)))].enabled = True
        else:
            hits = [a for a in c.alarms if (a.hour, a.minute) == t]
            if not hits:
                c.alarms.append(Alarm(t[0], t[1], enabled or bool(rng.integers(2))))
                c.alarms.sort(key=lambda a: (a.hour, a.minute))
            for a in c.alarms:
                if (a.hour, a.minute) == t and enabled:
                    a.enabled = True
        ctx.initial["alarms"] = len(c.alarms)

    return setup


def _deleted(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    t, alarms = _target(intent), _clock(phone).alarms
    return not alarms if t is None else all((a.hour, a.minute) != t for a in alarms)


@builtin_family("delete_alarm", "phone", predicate=_deleted, setup=_alarm_setup(False), doc="the alarm(s) no longer exist")
def _delete_plan(e: ExpertStep) -> Action:
    return _alarm_plan(e, "delete", enabled_only=False)


def _alarm_plan(e: ExpertStep, control: str, *, enabled_only: bool) -> Action:
    """On the Alarm tab, tap ``control`` of the first targeted alarm (``enabled_only``: of one still on);
    none left: complete."""
    step = _to_tab(e, "Alarm")
    if step is not None:
        return step
    t = _target(e.intent)
    for i, a in enumerate(_clock(e.phone).alarms):
        if (a.enabled or not enabled_only) and (t is None or (a.hour, a.minute) == t):
            return e.goto(f"clock.alarm.{i}.{control}") or Action.back()
    return Action.complete()


def _disabled(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    t, alarms = _target(intent), _clock(phone).alarms
    mine = [a for a in alarms if t is None or (a.hour, a.minute) == t]
    return bool(mine) and not any(a.enabled for a in mine)


@builtin_family("disable_alarm", "phone", predicate=_disabled, setup=_alarm_setup(True), doc="the alarm(s) exist and are off")
def _disable_plan(e: ExpertStep) -> Action:
    return _alarm_plan(e, "switch", enabled_only=True)


# ---- world clock ---------------------------------------------------------------------------
def _city_added(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    return intent.get("city") in _clock(phone).cities


def _city_absent(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    """A city of the default list starts removed (else the task would be done before it starts)."""
    c = _clock(phone)
    c.cities = [x for x in c.cities if x != intent.get("city")]


@builtin_family("add_world_clock", "phone", predicate=_city_added, setup=_city_absent, doc="that city is on the world clock")
def _world_clock_plan(e: ExpertStep) -> Action:
    c = _clock(e.phone)
    city = e.intent.get("city")
    if not c.adding_city:
        return _to_tab(e, "Clock") or e.goto("clock.addcity") or Action.back()
    typed = c.fields.get("city", "")
    hits = city_matches(typed)
    if typed and city in hits:
        return e.goto(f"clock.cityresult.{hits.index(city)}") or Action.back()
    if not typed:
        return Action.type_text(city)
    return e.goto("kb.backspace") or Action.back()
