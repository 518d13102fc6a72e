"""Success predicates: :func:`check` evaluates any family's predicate on the phone's state.

The AitW families' predicates and the helpers live in :mod:`digirl.sim.goals`, below the families
that use them; this module is the public face: it loads every built-in family
(:mod:`digirl.sim.families`), so :func:`check` finds each one registered.
"""

from __future__ import annotations

import digirl.sim.families  # noqa: F401  (registers the built-in families check() looks up)
from digirl.sim.goals import PREDICATES, TaskContext, check, query_terms, site_domain
from digirl.sim.intents import parse_time

__all__ = ["PREDICATES", "TaskContext", "check", "parse_time", "query_terms", "site_domain"]
