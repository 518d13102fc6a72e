"""Instruction text → :class:`~digirl.sim.intents.Intent`, or the reason it cannot be a task.

The parser recognises *phrasing families* ("What's the weather like in X?", "Turn off wifi",
"Text Mom that …"), not individual lines: any entity in a known phrasing parses. Rule tables are
tried in this order on the cleaned text (:func:`~digirl.sim.tasks.normalize.clean_text`, then
:func:`~digirl.sim.tasks.normalize.strip_politeness`):

1. user-defined families (:mod:`digirl.sim.families.spec`),
2. on-device families (:mod:`.device_rules`) and app phrasings that the AitW rules would misread
   (:data:`.app_rules.APPS_EARLY`),
3. the AitW General / Web Shopping phrasings (:mod:`.aitw_rules`: they define what the shipped
   task sets mean),
4. everyday phrasings of the same families (:data:`.app_rules.APPS_LATE`).

If nothing matches, the same tables are tried on the normalized request (command-word typos
fixed, shouting lower-cased: :func:`~digirl.sim.tasks.normalize.normalize_request`). A text made of
several requests ("open YouTube and search for lofi", "turn off wifi, then open Gmail") becomes a
``compound`` intent (:mod:`.compound_rules`): when no single phrasing takes it, or when the one
that did swallowed a second request into a slot ("open Spotify and Instagram"). An information
request no family places then becomes a web search (:mod:`.questions`); anything else is rejected
with a reason (:func:`explain_instruction`).
"""

from __future__ import annotations

from dataclasses import dataclass

from digirl.sim.intents import Intent
from digirl.sim.tasks import in_app_steps, shop_steps  # noqa: F401  (add their steps to compound_rules.CONTEXT_RULES)
from digirl.sim.tasks.compound_rules import failed_step, second_request, swallowed_connective
from digirl.sim.tasks.matching import USER_RULES, match_rules, match_single
from digirl.sim.tasks.normalize import (
    canonical_app,
    canonical_shop_site,
    canonical_site,
    clean_text,
    key_terms_match,
    normalize_request,
    parse_time,
    query_terms,
    strip_politeness,
)
from digirl.sim.tasks.questions import question_search, unplaceable_reason
from digirl.sim.tasks.rules import Reject

__all__ = [
    "USER_RULES",
    "ParseResult",
    "canonical_app",
    "canonical_shop_site",
    "canonical_site",
    "explain_instruction",
    "key_terms_match",
    "match_single",
    "parse_instruction",
    "parse_time",
    "query_terms",
]

MAX_CHARS = 300


@dataclass(frozen=True)
class ParseResult:
    """What :func:`explain_instruction` found: an intent, or the reason there is none.

    ``how``: ``rule`` (a phrasing matched the text as written), ``normalized`` (it matched after
    dropping politeness / fixing typos), ``compound`` (sub-requests joined by "and" / "then",
    :mod:`.compound_rules`), ``question`` (an information request turned into a web search) or
    ``""`` (rejected).
    """

    intent: Intent | None
    reason: str = ""
    how: str = ""


def _compound(text: str) -> Intent | None:
    from digirl.sim.families.compound import compound_intent
    from digirl.sim.tasks.compound_rules import parse_compound

    parts = parse_compound(text)
    if parts and len(parts) == 1:  # "write an email to Ravi and send it": one step said twice
        return parts[0]
    return compound_intent(parts) if parts else None


def _single_or_compound(found: Intent, cleaned: str, how: str) -> ParseResult:
    """A phrasing's intent, unless a slot swallowed a second request ("open Spotify and Instagram"):
    then the compound plan, or a rejection naming the request no plan could place."""
    if not swallowed_connective(found):
        return ParseResult(found, how=how)
    plan = _compound(cleaned)
    if plan is not None:
        return ParseResult(plan, how="compound")
    rest = second_request(found) or _after_quotes(cleaned)
    if rest:
        return ParseResult(None, f"a compound request whose step {rest!r} no task family does on the simulated phone")
    return ParseResult(found, how=how)


def _after_quotes(text: str) -> str:
    """A request after the last quoted message ("text Zainab "…?" then set a reminder …"), or ""."""
    from digirl.sim.tasks.compound_rules import second_request

    tail = text.rsplit('"', 1)[1] if text.count('"') >= 2 else ""
    return second_request(Intent("web_search", {"query": tail})) if tail.strip() else ""


def explain_instruction(text: str) -> ParseResult:
    """The intent of an instruction and how it was found, or why it cannot be a simulator task."""
    if not isinstance(text, str):
        return ParseResult(None, f"not text: {type(text).__name__}")
    cleaned = clean_text(text)
    if not cleaned:
        return ParseResult(None, "empty instruction")
    if len(cleaned) > MAX_CHARS:
        return ParseResult(None, f"longer than {MAX_CHARS} characters")
    # Politeness is dropped before any rule sees the text: "call dad please" must not call "Dad Please".
    cleaned = strip_politeness(cleaned) or cleaned
    first = match_rules(cleaned)
    if isinstance(first, Intent):
        return _single_or_compound(first, cleaned, "rule")
    normalized = normalize_request(cleaned)
    second = match_rules(normalized) if normalized and normalized != cleaned else None
    if isinstance(second, Intent):
        return _single_or_compound(second, cleaned, "normalized")
    plan = _compound(cleaned)
    if plan is None and normalized and normalized != cleaned:  # "pls open settings n turn of wifi"
        plan = _compound(normalized)
    if plan is not None:
        return ParseResult(plan, how="compound")
    search = question_search(normalized or cleaned)
    if search is not None:
        rest = second_request(search)
        if rest:  # "show me the notifications and clear them all" is not one search
            return ParseResult(None, f"a compound request whose step {rest!r} no task family does on the simulated phone")
        return ParseResult(search, how="question")
    reject = first or second
    if isinstance(reject, Reject):
        return ParseResult(None, reject.reason)
    return ParseResult(None, failed_step(cleaned) or unplaceable_reason(normalized or cleaned))


def parse_instruction(text: str) -> Intent | None:
    """The :class:`Intent` of an instruction, or ``None`` when it cannot be a simulator task
    (:func:`explain_instruction` says why)."""
    return explain_instruction(text).intent
