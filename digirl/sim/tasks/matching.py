"""Matching one request against the rule tables, in the parser's order (:mod:`.parser` has it).

The app tables are filled by the modules that add rules to them (:mod:`.extra_rules`, then
:mod:`.everyday_rules`, :mod:`.surface_rules`, :mod:`.web_rules`); this module imports them, in that
order, so whoever matches here sees every rule. The compound parser matches each sub-request here.
"""

from __future__ import annotations

from digirl.sim.intents import Intent

# isort: off
# The rule modules append to the app tables as they load: this order is the tables' order.
from digirl.sim.tasks import everyday_rules, extra_rules, surface_rules, web_rules  # noqa: F401

# isort: on
from digirl.sim.tasks.aitw_rules import AITW
from digirl.sim.tasks.app_rules import APPS_EARLY, APPS_LATE
from digirl.sim.tasks.device_rules import DEVICE, DEVICE_REJECTS
from digirl.sim.tasks.normalize import clean_text, normalize_request, strip_politeness
from digirl.sim.tasks.rules import USER_RULES, Reject, set_single_matcher

__all__ = ["USER_RULES", "match_rules", "match_single"]

_TABLES = (USER_RULES, DEVICE, APPS_EARLY, AITW, APPS_LATE, DEVICE_REJECTS)


def match_rules(text: str) -> Intent | Reject | None:
    """The first intent a table's rules build for ``text``, tables in order; else the first rejection."""
    reject: Reject | None = None
    for table in _TABLES:
        out = table.match(text)
        if isinstance(out, Intent):
            return out
        if out is not None and reject is None:
            reject = out
    return reject


def match_single(text: str) -> Intent | None:
    """One family's intent for ``text`` by a phrasing, as written or normalized (no question
    fallback, no compound): what each sub-task of a compound instruction must parse to."""
    cleaned = clean_text(text)
    if not cleaned:
        return None
    cleaned = strip_politeness(cleaned) or cleaned
    found = match_rules(cleaned)
    if isinstance(found, Intent):
        return found
    normalized = normalize_request(cleaned)
    found = match_rules(normalized) if normalized and normalized != cleaned else None
    return found if isinstance(found, Intent) else None


# The rules that re-read a reworded request (:mod:`.extra_rules`) match through this module too.
set_single_matcher(match_single)
