"""The MiniWoB++ task list and what our action space can do with each task.

Importing this module is cheap: it locates the ``miniwob`` package with ``importlib.util.find_spec``
(which does not execute the package) and lists its ``html/miniwob`` folder. Playwright is not imported.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

__all__ = [
    "CURATED_TASKS",
    "Expressibility",
    "expressibility",
    "miniwob_html_dir",
    "miniwob_tasks",
]

#: Tasks with a scripted solver in :mod:`digirl.browser.solvers` (kept in sync by a test).
CURATED_TASKS: tuple[str, ...] = (
    "click-button",
    "click-button-sequence",
    "click-checkboxes",
    "click-collapsible",
    "click-dialog",
    "click-dialog-2",
    "click-link",
    "click-option",
    "click-tab",
    "click-tab-2",
    "click-test",
    "click-test-2",
    "click-widget",
    "choose-list",
    "enter-password",
    "enter-text",
    "enter-text-2",
    "focus-text",
    "focus-text-2",
    "login-user",
)

Expressibility = tuple[str, str]  # ("yes" | "partial" | "no", why)

# Tasks our tap/swipe/type/enter space cannot fully express. Anything not listed here is "yes".
# A swipe becomes a mouse drag unless it starts over a scrollable area (see docs/browser.md), so
# drag tasks are expressible; what we lack is hover without click, modifier keys, arrow keys and
# other special keys, and right/double clicks.
_LIMITS: dict[str, Expressibility] = {
    "hover-shape": (
        "partial",
        "needs the pointer to rest over a shape; a tap leaves it there but also clicks",
    ),
    "click-scroll-list": ("no", "multi-select needs Ctrl/Shift-click"),
    "copy-paste": ("partial", "no Ctrl-C/Ctrl-V; typing the text itself works"),
    "copy-paste-2": ("partial", "no Ctrl-C/Ctrl-V; typing the text itself works"),
    "text-editor": ("partial", "needs text selection by drag plus toolbar clicks; precise drags are hard"),
    "highlight-text": ("partial", "text selection by drag; swipe maps to a drag, precision is hard"),
    "highlight-text-2": ("partial", "text selection by drag; swipe maps to a drag, precision is hard"),
    "use-autocomplete": ("partial", "suggestions are clickable, but arrow keys are not available"),
    "use-autocomplete-nodelay": ("partial", "suggestions are clickable, but arrow keys are not available"),
    "terminal": ("partial", "typing and Enter work; no Tab completion or arrow keys"),
    "chase-circle": ("no", "needs the pointer held over a moving target in real time"),
    "draw-circle": ("partial", "a swipe is a straight drag; a circle needs a curved path"),
    "resize-textarea": ("partial", "drag of the resize handle works only if the drag starts exactly on it"),
    "drag-cube": ("partial", "3-D rotation by drag; straight drags only"),
    "moving-items": ("partial", "targets move; timing-sensitive"),
    "simon-says": ("partial", "needs watching an animation over several frames before acting"),
}


@lru_cache(maxsize=1)
def miniwob_html_dir() -> Path | None:
    """The ``html/miniwob`` folder of the installed ``miniwob`` package, or ``None`` if not installed."""
    try:
        spec = importlib.util.find_spec("miniwob")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    d = Path(next(iter(spec.submodule_search_locations))) / "html" / "miniwob"
    return d if d.is_dir() else None


@lru_cache(maxsize=1)
def miniwob_tasks() -> tuple[str, ...]:
    """Every task shipped by the ``miniwob`` package (file stems of its HTML pages), sorted.

    Without the package, the curated tasks are returned so they still show up in ``digirl envs list``.
    """
    d = miniwob_html_dir()
    if d is None:
        return tuple(sorted(CURATED_TASKS))
    return tuple(sorted(p.stem for p in d.glob("*.html")))


def expressibility(task: str) -> Expressibility:
    """Whether tap/swipe/type/enter can express ``task``: ``("yes"|"partial"|"no", why)``."""
    return _LIMITS.get(task, ("yes", ""))
