"""Rule tables: phrasing templates compiled to regexes, each with a handler that builds an intent.

Template syntax (see :func:`template_regex`): a space between literal words may be missing in the
text ("alarmfor"), ``~`` needs whitespace (used next to slots and after articles, so "the" never
eats the start of "Theodore"), ``{x}`` is a lazy slot that cannot span a "?"/"!" outside double quotes. Macros
(``WHATS``, ``ON``, ...) expand to alternations. Templates match the whole (cleaned) text.

A handler returns an :class:`~digirl.sim.intents.Intent`, ``None`` (not this rule after all: the
next rule is tried) or a :class:`Reject` (the phrasing is recognized but unusable, e.g. an alarm
at "25pm"; the reason is reported if no later rule matches).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from digirl.sim.intents import Intent

__all__ = ["MACROS", "USER_RULES", "Handler", "Reject", "RuleTable", "reparse", "set_single_matcher", "template_regex"]


@dataclass(frozen=True)
class Reject:
    """A recognized phrasing that cannot become a task, and why."""

    reason: str


Handler = Callable[[dict[str, str]], "Intent | Reject | None"]

#: Template macros: name → regex alternation (may itself use ``~``).
MACROS: dict[str, str] = {
    "WHATS": "(?:what's|whats|what is|what are|what're)",
    "WHEN": "(?:today|tonight|tomorrow|now|right now|this~week|this~weekend|this~month|this~morning|this~evening)",
}


#: One character of a slot: not "?" / "!", or a whole double-quoted part (which may hold them). A quote
#: with no closing one is a plain character; the three branches never overlap (no backtracking blow-up).
_UNTIL_SENTENCE_END = '(?:"[^"]*"|"(?![^"]*")|[^?!"])'


def template_regex(template: str) -> re.Pattern[str]:
    """Compile a phrasing template (module doc) into a case-insensitive regex."""
    pat = template
    for name, alt in MACROS.items():
        pat = pat.replace(name, alt)
    # A slot (and a hand-written ``[^?!]``) stops at "?" / "!" (a second sentence), except inside double
    # quotes: a quoted message may have them.
    pat = pat.replace("[^?!]", _UNTIL_SENTENCE_END)
    pat = re.sub(r"\{(\w+)\}", r"(?P<\1>" + _UNTIL_SENTENCE_END.replace("\\", "\\\\") + "+?)", pat)
    pat = pat.replace(" ", r"\s*").replace("~", r"\s+")
    return re.compile(pat, re.I)


class RuleTable:
    """An ordered list of (regex, handler) rules; :meth:`match` returns the first intent."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.rules: list[tuple[re.Pattern[str], Handler]] = []

    def rule(self, *templates: str) -> Callable[[Handler], Handler]:
        """Decorator: add ``templates`` (module doc syntax), all handled by the decorated function."""

        def deco(fn: Handler) -> Handler:
            for t in templates:
                self.rules.append((template_regex(t), fn))
            return fn

        return deco

    def add(self, pattern: re.Pattern[str], handler: Handler) -> None:
        self.rules.append((pattern, handler))

    def match(self, text: str) -> Intent | Reject | None:
        """The first intent a rule builds for ``text``; else the first rejection; else ``None``."""
        reject: Reject | None = None
        for rx, handler in self.rules:
            m = rx.fullmatch(text)
            if m is None:
                continue
            groups = {k: v for k, v in m.groupdict().items() if v is not None}
            out = handler(groups)
            if isinstance(out, Intent):
                return out
            if isinstance(out, Reject) and reject is None:
                reject = out
        return reject


#: Phrasings of user-defined families (filled by :func:`digirl.sim.families.register_family`); the
#: parser tries them before any built-in table.
USER_RULES = RuleTable("user")

# The single-family matcher (:func:`digirl.sim.tasks.matching.match_single`), set when that module loads:
# rules in the tables it matches re-read a reworded request through it ("turn wifi back on" as "turn on wifi").
_SINGLE: list[Callable[[str], Intent | None]] = []


def set_single_matcher(match: Callable[[str], Intent | None]) -> None:
    """Install :func:`digirl.sim.tasks.matching.match_single` (that module calls this as it loads)."""
    _SINGLE[:] = [match]


def reparse(text: str) -> Intent | None:
    """One family's intent for ``text`` by a phrasing (:func:`digirl.sim.tasks.matching.match_single`).

    The rules calling this only run while :mod:`digirl.sim.tasks.matching` matches a text, so it is loaded."""
    if not _SINGLE:
        raise RuntimeError("the rule tables are not loaded: import digirl.sim.tasks.matching")
    return _SINGLE[0](text)
