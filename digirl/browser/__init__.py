"""Real-browser backend: MiniWoB++ tasks and any web app in the system Chromium (Playwright, async).

Importing this package is cheap; the names below load Playwright on first access.
See docs/browser.md.
"""

from __future__ import annotations

from digirl.utils.lazy import lazy_attributes

_EXPORTS = {
    "BrowserConfig": "digirl.browser.pool",
    "BrowserPool": "digirl.browser.pool",
    "BrowserEnv": "digirl.browser.env",
    "WebAppEnv": "digirl.browser.env",
    "WebAppTask": "digirl.browser.env",
    "Judge": "digirl.browser.env",
    "MiniWoBEnv": "digirl.browser.miniwob",
    "BrowserVectorEnv": "digirl.browser.vector",
    "collect_solver_demos": "digirl.browser.vector",
    "StaticServer": "digirl.browser.server",
    "CURATED_TASKS": "digirl.browser.catalog",
    "miniwob_tasks": "digirl.browser.catalog",
}

__all__ = sorted(_EXPORTS)


__getattr__ = lazy_attributes(__name__, _EXPORTS)
