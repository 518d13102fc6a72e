"""Shared fixtures for the browser tests: skip cleanly without Chromium / Playwright / miniwob."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("DIGIRL_CHROMIUM", "/usr/bin/chromium")


def _missing() -> str:
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM}"
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install 'digirl[browser]')"
    return ""


def require_browser() -> None:
    why = _missing()
    if why:
        pytest.skip(why)


def require_miniwob() -> None:
    require_browser()
    from digirl.browser.catalog import miniwob_html_dir

    if miniwob_html_dir() is None:
        pytest.skip("the miniwob package is not installed (pip install 'digirl[browser]')")


@pytest.fixture(scope="module")
def pool() -> Iterator[object]:
    """One Chromium per test module (each env gets its own context and page in it)."""
    require_browser()
    from digirl.browser.pool import BrowserConfig, BrowserPool

    p = BrowserPool(BrowserConfig(operation_timeout_s=15.0))
    yield p
    p.close()
