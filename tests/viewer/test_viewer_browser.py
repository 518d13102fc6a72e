"""The viewer in headless Chromium: the page loads, a filter narrows the list, a trajectory shows its
screenshots and a step its numbers. With DIGIRL_VIEWER_SHOTS=DIR it also saves the screenshots of
docs/viewer.md there."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import CHROMIUM, require_browser
from tests.viewer.runfactory import make_run

pytestmark = pytest.mark.browser
TIMEOUT_MS = 60_000  # generous: conditions are awaited, never fixed sleeps


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    require_browser()
    pytest.importorskip("gradio")
    from digirl.viewer.app import launch
    from digirl.viewer.source import ViewerSource

    run = Path(os.environ.get("DIGIRL_VIEWER_RUN") or make_run(tmp_path_factory.mktemp("viewer")))
    port = _free_port()
    app = launch(ViewerSource(run), port=port, block=False)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        app.close()


@pytest.fixture(scope="module")
def page(viewer: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        pg = browser.new_page(viewport={"width": 1400, "height": 1000})
        pg.set_default_timeout(TIMEOUT_MS)
        try:
            yield pg
        finally:
            browser.close()


def _rows(pg: Any) -> int:
    return int(pg.locator("#traj-table [role=row]").count()) - 1  # minus the header row


def _wait_text(pg: Any, selector: str, needle: str) -> None:
    pg.wait_for_function(
        "([sel, needle]) => (document.querySelector(sel)?.innerText || '').includes(needle)",
        arg=[selector, needle],
        timeout=TIMEOUT_MS,
    )


def _shot(pg: Any, name: str) -> None:
    out = os.environ.get("DIGIRL_VIEWER_SHOTS")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        pg.screenshot(path=str(Path(out) / name), full_page=True)


@pytest.mark.slow
def test_viewer_lists_filters_and_opens_a_trajectory(page: Any, viewer: str) -> None:
    pg = page
    pg.goto(viewer)
    _wait_text(pg, "#match-count", "trajectories match")
    total = int(pg.inner_text("#match-count").split(" of ")[1].split()[0])  # "N of TOTAL trajectories match"
    custom = bool(os.environ.get("DIGIRL_VIEWER_RUN"))
    if not custom:
        _wait_text(pg, "#match-count", "6 of 6")
        assert total == 6 and _rows(pg) == 6
    _shot(pg, "viewer-list.png")

    # a filter narrows the list
    needle = pg.locator("#traj-table [role=row]").nth(1).locator("[role=gridcell]").nth(1).inner_text().split()[0]
    pg.locator("#f-text textarea, #f-text input").first.fill("Tap the swipe" if not custom else needle)
    if not custom:
        _wait_text(pg, "#match-count", "2 of 6")
        pg.wait_for_function("() => document.querySelectorAll('#traj-table [role=row]').length === 3", timeout=TIMEOUT_MS)
        assert _rows(pg) == 2
    pg.locator("#f-text textarea, #f-text input").first.fill("")
    _wait_text(pg, "#match-count", f"{total} of")

    # a trajectory shows its screenshots; a step its numbers and candidates
    pg.locator("#traj-table [role=row]").nth(2).locator("[role=gridcell]").nth(1).click()
    pg.wait_for_function("() => document.querySelectorAll('#steps-gallery img').length >= 2", timeout=TIMEOUT_MS)
    pg.wait_for_function("() => !!document.querySelector('#step-image img')?.src", timeout=TIMEOUT_MS)
    _wait_text(pg, "#step-info", "step 1 /")
    if not custom:
        _wait_text(pg, "#traj-info", "Tap the tap 1")
        _wait_text(pg, "#step-info", "V = 0.600")
        pg.wait_for_function("() => !!document.querySelector('#cand-image img')?.src", timeout=TIMEOUT_MS)
        steps = pg.locator("#steps-gallery img").count()
        assert steps == 4  # 3 steps and the final screen
    pg.locator("#steps-gallery img").nth(1).click()
    _wait_text(pg, "#step-info", "step 2 /")
    _shot(pg, "viewer-trajectory.png")
