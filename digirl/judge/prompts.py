"""The judge's prompt: rules and few-shot examples per task family, and answer parsing.

Families: ``general`` (AitW General: search, apps, settings), ``webshop`` (AitW Web Shopping:
go to a shop site, search it, open the first result) and ``webapp`` (web pages such as MiniWoB).
Each family has text-only few-shot examples written here (the screen is *described*). Examples
with real screenshots come from an :data:`ExampleProvider`; :func:`env_example_provider` makes
them lazily from a deterministic env (the embedded simulator) by running its scripted expert to
success (positive) or stopping it early (negative) — no binary files are shipped.

The model answers with a ``Reason:`` line and a ``Status: success|failure`` line;
:func:`parse_answer` also accepts a JSON object. Anything else is *undecided* (``None``).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from digirl.core.types import TaskSpec

__all__ = [
    "FAMILIES",
    "ExampleProvider",
    "FewShotExample",
    "build_messages",
    "env_example_provider",
    "parse_answer",
    "task_family",
    "text_examples",
]

log = logging.getLogger(__name__)

FAMILIES = ("general", "webshop", "webapp")
_WEBSHOP_FAMILIES = {"webshop", "web_shopping", "shop_goto", "shop_search", "shop_select"}


@dataclass(frozen=True)
class FewShotExample:
    """One worked example: the task, the screen (image or description) and the right answer."""

    instruction: str
    success: bool
    reason: str
    image: np.ndarray | None = None
    description: str = ""


#: ``family -> examples``; called once per family and cached by the judge.
ExampleProvider = Callable[[str], Sequence[FewShotExample]]


def task_family(task: TaskSpec | str, default: str = "general") -> str:
    """The prompt family for a task: from its ``family``/``env_id``, else ``default``."""
    if isinstance(task, str):
        return default
    fam = (task.family or "").lower()
    env_id = (task.env_id or "").lower()
    if fam in FAMILIES:
        return fam
    if fam in _WEBSHOP_FAMILIES or "webshop" in env_id or "shopping" in env_id:
        return "webshop"
    if any(k in env_id for k in ("browser", "miniwob", "webapp")) or fam.startswith(("miniwob", "webapp")):
        return "webapp"
    return "general" if fam or env_id else default


_SYSTEM = """You are the success judge for an agent that operates a phone or a web browser.
You get the task the agent was given and a screenshot of the screen after its latest action
(sometimes also the screen before it and the agent's recent actions). Decide whether the
screenshot shows that the task has been accomplished.

Rules:
- Judge only what the screenshot shows. Do not assume steps that are not visible.
- A task that is only partly done (text typed but not submitted, the wrong page, the wrong item) is a failure.
{rules}
Answer in exactly two lines:
Reason: <one or two sentences about what the screen shows>
Status: success   (or: Status: failure)"""

_RULES = {
    "general": """- Search and question tasks ("What's the weather in X?", "Search for Y") succeed when
  a results page of a search engine for a query containing the requested terms is shown; the suggestion list
  under a search box does not count.
- "Open <app>" succeeds when that app is in the foreground. Settings tasks succeed when the named
  settings page is open and any switch the task mentions has the requested state.""",
    "webshop": """- "Go to <site>" succeeds when that site's page is shown.
- "Search <site> for X" succeeds when that site's search results for X are shown.
- "...select the first entry" succeeds only when the product page of the first search result is
  open; the results list alone is a failure. Another site, or results of a different query, fail.""",
    "webapp": """- The page must show the requested end state: the form submitted with the requested values,
  the requested item selected or the requested page open.""",
}

_TEXT_EXAMPLES: dict[str, tuple[FewShotExample, ...]] = {
    "general": (
        FewShotExample(
            "What's the news in India?",
            True,
            "A search results page for 'news india' is shown with a Top stories section.",
            description="Browser showing search results for 'news india' with news headlines.",
        ),
        FewShotExample(
            "Search for hotels in Chicago",
            False,
            "The query is typed in the search box but not submitted; only suggestions are shown.",
            description="Search page with 'hotels in chic' typed and the suggestion list open.",
        ),
        FewShotExample(
            "Open the settings",
            False,
            "The home screen is shown; Settings is not open.",
            description="The phone's home screen with app icons.",
        ),
    ),
    "webshop": (
        FewShotExample(
            "Go to bestbuy.com, search for 'macbook pro', and select the first entry",
            False,
            "Best Buy search results for 'macbook pro' are shown, but no product page is open.",
            description="bestbuy.com search results list for 'macbook pro'.",
        ),
        FewShotExample(
            "Go to bestbuy.com, search for 'macbook pro', and select the first entry",
            True,
            "The product page of the first result for 'macbook pro' on Best Buy is open.",
            description="bestbuy.com product page of the first 'macbook pro' result, Add to Cart button.",
        ),
        FewShotExample(
            "Go to ebay.com",
            True,
            "The ebay.com front page is shown.",
            description="ebay.com front page with its search bar.",
        ),
    ),
    "webapp": (
        FewShotExample(
            "Click the Submit button",
            True,
            "The page confirms the submission.",
            description="A page saying 'Thank you, your response was recorded'.",
        ),
        FewShotExample(
            "Select 'Blue' from the list and submit",
            False,
            "The list shows 'Red' and the form has not been submitted.",
            description="A form whose drop-down shows 'Red' and an unpressed Submit button.",
        ),
    ),
}


def text_examples(family: str) -> Sequence[FewShotExample]:
    """The text-only few-shot examples of ``family`` (no images)."""
    return _TEXT_EXAMPLES.get(family, _TEXT_EXAMPLES["general"])


def _answer_text(ex: FewShotExample) -> str:
    return f"Reason: {ex.reason}\nStatus: {'success' if ex.success else 'failure'}"


def _image_part(url: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": url}}


def build_messages(
    instruction: str,
    family: str,
    screenshot_url: str,
    *,
    previous_url: str | None = None,
    actions: Sequence[str] = (),
    examples: Sequence[tuple[FewShotExample, str | None]] = (),
) -> list[dict[str, Any]]:
    """OpenAI chat messages: system rules, few-shot turns, then the screen to judge.

    ``examples`` pairs each example with its image as a data URL (or ``None`` when described).
    """
    msgs: list[dict[str, Any]] = [{"role": "system", "content": _SYSTEM.format(rules=_RULES.get(family, _RULES["general"]))}]
    for ex, url in examples:
        parts: list[dict[str, Any]] = [{"type": "text", "text": f"Task: {ex.instruction}"}]
        if url is not None:
            parts.append(_image_part(url))
        else:
            parts[0]["text"] += f"\nScreen (described): {ex.description}"
        msgs.append({"role": "user", "content": parts})
        msgs.append({"role": "assistant", "content": _answer_text(ex)})
    text = f"Task: {instruction}"
    if actions:
        text += "\nRecent actions: " + "; ".join(actions[-5:])
    parts = [{"type": "text", "text": text}]
    if previous_url is not None:
        parts += [{"type": "text", "text": "Screen before the last action:"}, _image_part(previous_url)]
        parts.append({"type": "text", "text": "Screen now (judge this one):"})
    parts.append(_image_part(screenshot_url))
    msgs.append({"role": "user", "content": parts})
    return msgs


_POS = {"success", "successful", "succeeded", "complete", "completed", "done", "yes", "true"}
_NEG = {
    "failure",
    "failed",
    "fail",
    "incomplete",
    "no",
    "false",
    "not complete",
    "not completed",
    "not successful",
    "unsuccessful",
}
_STATUS_RE = re.compile(
    r"status\W{0,4}(not[ _-]?complete[d]?|not[ _-]?successful|unsuccessful|success(?:ful)?|succeeded"
    r"|complete[d]?|incomplete|done|yes|true|failure|failed|fail|no|false)\b",
    re.IGNORECASE,
)


def _from_json(text: str) -> bool | None:
    m = re.search(r"\{.*\}", text, re.DOTALL)
    if not m:
        return None
    try:
        obj = json.loads(m.group(0))
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    v = obj.get("success", obj.get("status"))
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        s = v.strip().lower().replace("_", " ")
        return True if s in _POS else False if s in _NEG else None
    return None


def parse_answer(text: str) -> tuple[bool | None, str]:
    """``(success, reason)`` from a model answer; ``success`` is ``None`` when undecidable."""
    if not isinstance(text, str) or not text.strip():
        return None, ""
    m_reason = re.search(r"reason\s*:\s*(.+)", text, re.IGNORECASE)
    reason = (m_reason.group(1) if m_reason else text).strip()[:300]
    matches = _STATUS_RE.findall(text)
    if matches:
        word = matches[-1].lower().replace("_", " ").replace("-", " ")
        if word in _POS:
            return True, reason
        if word in _NEG or word.startswith("not"):
            return False, reason
    return _from_json(text), reason


def env_example_provider(env_ids: dict[str, str], *, per_family: int = 2, seed: int = 10_000) -> ExampleProvider:
    """Few-shot examples with screenshots from deterministic envs (e.g. the simulator).

    ``env_ids`` maps a family to an env id. For each family, ``per_family`` episodes of the
    scripted expert give one positive (final screen) and one negative (early-stop screen)
    example each. Seeds start at ``seed`` so examples do not overlap audit episodes.
    Families without an env id, or whose env cannot be built, get the text examples.
    """

    def provide(family: str) -> Sequence[FewShotExample]:
        env_id = env_ids.get(family)
        if not env_id:
            return text_examples(family)
        from digirl.judge.episodes import expert_cases

        try:
            cases = expert_cases(env_id, per_family, seed=seed)
        except Exception as e:  # the sim missing or broken must not stop judging
            log.warning("no screenshot examples for %s from %s (%s); using text examples", family, env_id, e)
            return text_examples(family)
        out = [FewShotExample(c.task.instruction, c.label, _case_reason(c.label), image=c.screenshot) for c in cases]
        return out or text_examples(family)

    return provide


def _case_reason(label: bool) -> str:
    if label:
        return "The screen shows the requested end state."
    return "The task is not finished yet: the screen does not show the requested end state."
