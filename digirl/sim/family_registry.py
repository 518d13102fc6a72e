"""The task-family registry: :class:`TaskFamily` and the table every family registers into.

It sits below the families, the expert and the predicates: the built-in family modules
(:mod:`digirl.sim.families`) register here when they load, and the expert and the predicates look a
family up here. :mod:`digirl.sim.families` imports every built-in module, so whoever imports it
(the env, :mod:`digirl.sim.predicates`, :mod:`digirl.sim.expert`) finds them all registered.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from digirl.sim.intents import EXTRA_FAMILIES, FAMILIES, Intent, declare_family, forget_family, known_families
from digirl.sim.tasks.rules import USER_RULES, template_regex

if TYPE_CHECKING:
    import numpy as np

    from digirl.core.actions import Action
    from digirl.sim.goals import TaskContext
    from digirl.sim.phone import Phone
    from digirl.sim.plans import ExpertStep

Predicate = Callable[["Phone", Intent, "TaskContext"], bool]
Plan = Callable[["ExpertStep"], "Action"]
Setup = Callable[["Phone", Intent, "TaskContext", "np.random.Generator"], None]
_Fn = TypeVar("_Fn", bound=Callable[..., Any])


@dataclass(frozen=True)
class TaskFamily:
    """One task family.

    - ``predicate(phone, intent, ctx)``: whether the task is done, from the phone's state;
    - ``plan(step)``: the expert's next action (an :class:`~digirl.sim.expert.ExpertStep` gives the
      phone, the intent and helpers: ``open_app``, ``goto(ref)``, ``type_into``, ``wait``); it is
      called again after every step, so it decides from what is on screen now;
    - ``setup(phone, intent, ctx, rng)``: puts the phone in the task's initial state after the
      shared one is drawn (make the target alarm exist, turn the setting to its opposite, ...)
      and may record it in ``ctx.initial``;
    - ``prepare``: like ``setup`` but before the shared initial state (the AitW app families use
      it, so their episodes stay the same as before the phone families existed);
    - ``observe(phone, intent, ctx)``: called by the env after every step, before the predicate;
      the one place a family may keep progress in ``ctx`` (a compound task's sub-goals reached so
      far), so predicates and plans stay pure;
    - ``horizon(intent)``: the fewest steps the task may get (a compound task's scales with its
      plan); ``None`` keeps the task set's horizon.
    """

    name: str
    predicate: Predicate
    plan: Plan
    setup: Setup | None = None
    prepare: Setup | None = None
    taskset: str = "general"
    doc: str = ""
    observe: Callable[[Phone, Intent, TaskContext], None] | None = None
    horizon: Callable[[Intent], int] | None = None


_REGISTRY: dict[str, TaskFamily] = {}
#: How to rebuild a user family in another process: {"spec": dict} or {"module": name}.
_SOURCES: dict[str, dict[str, Any]] = {}


def register_family(
    family: TaskFamily,
    *,
    phrasings: Sequence[str] = (),
    parse: Callable[[dict[str, str]], dict[str, str] | None] | None = None,
    replace: bool = False,
    source: dict[str, Any] | None = None,
) -> TaskFamily:
    """Add a family to the registry (and, for a new one, to the valid intent families).

    ``phrasings`` are templates with ``{slot}`` placeholders ("turn {state} data saver"); an
    instruction matching one becomes ``Intent(family.name, slots)``. They are tried before the
    built-in phrasings (docs/tasks.md has the template syntax). ``parse`` may clean the slots or
    return ``None`` to reject a match. ``replace`` allows re-registering a user family.
    """
    builtin = family.name in FAMILIES or family.name in EXTRA_FAMILIES
    if family.name in _REGISTRY and not replace:
        raise ValueError(f"task family {family.name!r} is already registered (pass replace=True to redefine it)")
    if builtin and phrasings:
        raise ValueError(f"{family.name!r} is a built-in family: add phrasings to a new family instead")
    if not builtin and family.name not in known_families():
        declare_family(family.name, family.taskset)
    _REGISTRY[family.name] = family
    if not builtin:
        module = getattr(family.plan, "__module__", "")
        _SOURCES[family.name] = source or ({"module": module} if module and module != "__main__" else {})
    if phrasings:
        _add_phrasings(family.name, phrasings, parse)
    return family


class _UserPhrasing:
    """Builds the intent of a user family from a matched phrasing's slots."""

    def __init__(self, family: str, parse: Callable[[dict[str, str]], dict[str, str] | None] | None) -> None:
        self.family, self.parse = family, parse

    def __call__(self, groups: dict[str, str]) -> Intent | None:
        slots = {k: re.sub(r"\s+", " ", v).strip(" \"'") for k, v in groups.items()}
        if self.parse is not None:
            cleaned = self.parse(slots)
            if cleaned is None:
                return None
            slots = {str(k): str(v) for k, v in cleaned.items()}
        return Intent(self.family, slots)


def _add_phrasings(name: str, phrasings: Sequence[str], parse: Callable[[dict[str, str]], dict[str, str] | None] | None) -> None:
    # A re-registered family replaces its phrasings.
    USER_RULES.rules = [r for r in USER_RULES.rules if not (isinstance(r[1], _UserPhrasing) and r[1].family == name)]
    handler = _UserPhrasing(name, parse)
    for t in phrasings:
        if not isinstance(t, str) or not t.strip():
            raise ValueError(f"family {name!r}: a phrasing must be non-empty text, got {t!r}")
        USER_RULES.add(template_regex(user_template(t)), handler)


def user_template(phrasing: str) -> str:
    """A user phrasing as a rule template: ``{slot}`` is a slot, ``(a|b)`` alternatives, ``(a|)``
    optional; everything else is literal text, matched ignoring case, with a space meaning one or
    more spaces ("turn (on|off) data saver", "set the font size to {size}")."""
    out, pos = [], 0
    text = phrasing.strip().rstrip(".?! ")
    for m in re.finditer(r"\{\w+\}|\([^()]*\)", text):
        out.append(_literal(text[pos : m.start()]))
        tok = m.group(0)
        if tok.startswith("{"):
            out.append(tok)
        else:
            alts = [_literal(a.strip()) for a in tok[1:-1].split("|")]
            out.append("(?:" + "|".join(a for a in alts if a) + ")" + ("?" if "" in alts else ""))
        pos = m.end()
    out.append(_literal(text[pos:]))
    pat = re.sub(r"~+", "~", "".join(out)).strip("~")
    # An optional word next to spaces: one of the two spaces goes with it ("turn (the|) wifi").
    pat = re.sub(r"~(\(\?:[^()]*\)\?)~", r" \1~", pat)
    return re.sub(r"~(\(\?:[^()]*\)\?)$", r" \1", re.sub(r"^(\(\?:[^()]*\)\?)~", r"\1 ", pat))


def _literal(text: str) -> str:
    # Lower-case so that no literal reads as a template macro (WHATS, @ON, ...).
    words = "~".join(re.escape(w) for w in text.lower().split())
    return ("~" if text[:1].isspace() else "") + words + ("~" if text[-1:].isspace() and words else "")


def unregister_family(name: str) -> None:
    """Remove user family ``name`` (its phrasings too); built-in families cannot be removed."""
    if name in FAMILIES or name in EXTRA_FAMILIES:
        raise ValueError(f"{name!r} is a built-in family")
    _REGISTRY.pop(name, None)
    _SOURCES.pop(name, None)
    forget_family(name)
    USER_RULES.rules = [r for r in USER_RULES.rules if not (isinstance(r[1], _UserPhrasing) and r[1].family == name)]


def family_source(name: str) -> dict[str, Any] | None:
    """How to rebuild user family ``name`` elsewhere (``None`` for built-in families)."""
    return _SOURCES.get(name) or None


def get_family(name: str) -> TaskFamily:
    """The registered family ``name``."""
    fam = _REGISTRY.get(name)
    if fam is None:
        raise KeyError(f"no task family {name!r} is registered; known: {', '.join(sorted(_REGISTRY))}")
    return fam


def family_names() -> list[str]:
    """Every registered family, built-in first."""
    return list(_REGISTRY)


def builtin_family(name: str, taskset: str, **kw: Any) -> Callable[[Plan], Plan]:
    """Decorator for the built-in modules: register ``name`` with the decorated plan and ``kw``."""

    def deco(plan: Plan) -> Plan:
        register_family(TaskFamily(name, plan=plan, taskset=taskset, **kw))
        return plan

    return deco


def keyed(table: dict[str, _Fn], *families: str) -> Callable[[_Fn], _Fn]:
    """Decorator: file the decorated predicate or plan in ``table`` under each of ``families``."""

    def deco(fn: _Fn) -> _Fn:
        for name in families:
            table[name] = fn
        return fn

    return deco
