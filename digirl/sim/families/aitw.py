"""The AitW General and Web Shopping families: predicates in :mod:`digirl.sim.predicates`, plans in
:mod:`digirl.sim.expert`, initial states here (drawn exactly as before the phone families existed,
so the shipped task sets keep their episodes)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from digirl.core.errors import UnsupportedInstructionError
from digirl.sim.family_registry import Setup, TaskFamily, register_family
from digirl.sim.goals import PREDICATES, TaskContext
from digirl.sim.intents import GENERAL_FAMILIES, HORIZONS, WEBSHOP_FAMILIES, Intent, parse_time
from digirl.sim.plans import PLANS

if TYPE_CHECKING:
    import numpy as np

    from digirl.sim.phone import Phone


def _app_present(p: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    """The app to open / configure is installed; a notifications task starts in the other state."""
    key = p.install(intent.get("app")) if intent.get("app") else ""
    if intent.family == "app_notifications" and key:
        state = intent.get("state", "toggle").lower()
        p.notifications[key] = state in ("off", "disable", "disabled") or (
            state not in ("on", "enable", "enabled") and bool(rng.integers(2))
        )
        ctx.initial_notifications = p.notifications[key]


def _app_absent(p: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    p.uninstall(intent.get("app"))


def _alarm_disabled(p: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    """An alarm already at the target time starts disabled (turning it on is the task)."""
    try:
        h, m = parse_time(intent.get("time"))
    except ValueError as e:
        raise UnsupportedInstructionError(str(e)) from e
    clock: Any = p.apps["clock"]
    for a in clock.alarms:
        if (a.hour, a.minute) == (h, m):
            a.enabled = False


def _mail_elsewhere(p: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    """Gmail may open on another folder (in the wild)."""
    if p.dyn.level > 0 and rng.random() < 0.3:
        gmail: Any = p.apps["gmail"]
        gmail.folder = "Sent"


_PREPARE: dict[str, Setup] = {
    "open_app": _app_present,
    "app_settings": _app_present,
    "app_notifications": _app_present,
    "install_app": _app_absent,
}
_SETUP: dict[str, Setup] = {"set_alarm": _alarm_disabled, "check_email": _mail_elsewhere}


def _alarm_horizon(intent: Intent) -> int:
    """An alarm's label and repeat days take steps of their own (a tap per day; tap, type, enter)."""
    days = intent.get("days")
    return HORIZONS["general"] + len(days or "") + (3 if intent.get("label") else 0)


_HORIZON = {"set_alarm": _alarm_horizon}

for _name in GENERAL_FAMILIES + WEBSHOP_FAMILIES:
    register_family(
        TaskFamily(
            _name,
            predicate=PREDICATES[_name],
            plan=PLANS[_name],
            setup=_SETUP.get(_name),
            prepare=_PREPARE.get(_name),
            horizon=_HORIZON.get(_name),
            taskset="webshop" if _name in WEBSHOP_FAMILIES else "general",
        )
    )
