"""BrowserVectorEnv.run: pages proceed independently; early stop; min_batch; screenshots via DevTools."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.browser.conftest import require_browser, require_miniwob

pytestmark = pytest.mark.browser

BLANK = (0.5, 0.02)  # the instruction bar of click-test: nothing happens there


def test_a_slow_page_does_not_hold_back_the_others(pool: object) -> None:
    """Page 0 takes 0.6 s per step; the two others keep stepping (no lock-step barrier)."""
    require_miniwob()
    from digirl.browser.miniwob import MiniWoBEnv
    from digirl.browser.vector import BrowserVectorEnv
    from digirl.core.actions import Action
    from digirl.envs.vector import EpisodeJob

    envs = [MiniWoBEnv("click-test", pool=pool, elements=False, horizon=3) for _ in range(3)]  # type: ignore[arg-type]

    async def slow_settle(page: Any) -> None:
        await asyncio.sleep(0.6)

    envs[0]._a_settle = slow_settle  # type: ignore[method-assign]
    batches: list[int] = []

    def act(observations: list) -> list[Action]:  # type: ignore[type-arg]
        batches.append(len(observations))
        return [Action.tap(*BLANK) for _ in observations]

    with BrowserVectorEnv(envs) as venv:
        out = list(venv.run(act, [EpisodeJob(None, s) for s in range(10)]))
    assert len(out) == 10 and all(t.length == 3 and t.truncated for t in out)
    workers = [t.metadata["worker"] for t in out]
    # while page 0 did its 3 slow steps, pages 1 and 2 ran the 9 other episodes (27 steps)
    assert workers.count(0) == 1 and workers[-1] == 0
    assert batches[0] == 3 and min(batches) == 1


def test_stopping_early_waits_for_the_pages_and_keeps_the_envs_usable(pool: object) -> None:
    require_miniwob()
    from digirl.browser.vector import BrowserVectorEnv
    from digirl.core.actions import Action
    from digirl.envs.vector import EpisodeJob

    with BrowserVectorEnv.make("digirl/miniwob.click-test-v0", 3, pool=pool, elements=False, horizon=4) as venv:
        act = lambda obs: [Action.tap(*BLANK) for _ in obs]  # noqa: E731
        run = venv.run(act, [EpisodeJob(None, s) for s in range(30)])
        first = next(iter(run))
        assert first.length == 4
        run.close()  # type: ignore[attr-defined]  # stops; the steps in flight finish first
        out = list(venv.run(act, [EpisodeJob(None, s) for s in range(3)]))
        assert sorted(t.seed for t in out) == [0, 1, 2] and not any(t.env_failure for t in out)
        with pytest.raises(ValueError, match="min_batch"):
            venv.run(act, [], min_batch=0)


def test_min_batch_and_invalid_actions(pool: object) -> None:
    """min_batch=3 on 3 pages batches every call fully; an invalid action spends a step off-page."""
    require_miniwob()
    from digirl.browser.vector import BrowserVectorEnv
    from digirl.core.actions import Action
    from digirl.envs.vector import EpisodeJob

    with BrowserVectorEnv.make("digirl/miniwob.click-test-v0", 3, pool=pool, elements=False, horizon=2) as venv:
        batches: list[int] = []

        def act(observations: list) -> list[Action]:  # type: ignore[type-arg]
            batches.append(len(observations))
            return [Action.invalid("???", "not an action") if o.step == 0 else Action.tap(*BLANK) for o in observations]

        out = list(venv.run(act, [EpisodeJob(None, s) for s in range(6)], min_batch=3))
    assert len(out) == 6 and set(batches) == {3}
    for t in out:
        assert t.steps[0].info.get("invalid_action") and t.length == 2 and not t.env_failure


def test_expert_run_and_solver_demos_round_trip(pool: object) -> None:
    """The solver acts through run(expert=True); its typed text is what the page received."""
    require_miniwob()
    from digirl.browser.vector import BrowserVectorEnv
    from digirl.envs.vector import EpisodeJob

    with BrowserVectorEnv.make("digirl/miniwob.login-user-v0", 2, pool=pool) as venv:
        out = list(venv.run(None, [EpisodeJob(None, s) for s in range(4)], expert=True))
    assert len(out) == 4 and all(t.success for t in out)
    for t in out:
        user, password = re.findall(r'"([^"]*)"', t.task.instruction)
        assert [s.action.kind for s in t.steps] == ["tap", "type", "tap", "type", "tap"]
        assert [s.action.text for s in t.steps if s.action.kind == "type"] == [user, password]
        typed = t.steps[2].observation.elements  # after typing the username: the field shows it
        assert any(e.kind == "input" and e.text == user for e in typed or ())


# ----------------------------------------------------------------------------- screenshots
PAGE = """<!doctype html><html><body style="margin:0;font:14px sans-serif">
<input id="f" style="position:absolute;left:10px;top:10px;width:200px;font-size:20px" value="caret">
<div style="position:absolute;left:10px;top:60px;width:300px;height:1500px;
  background:linear-gradient(#f00, #00f)">tall</div>
<div style="position:absolute;left:10px;top:300px">far below</div></body></html>"""


@pytest.fixture(scope="module")
def tall_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    require_browser()
    from digirl.browser.server import StaticServer

    root: Path = tmp_path_factory.mktemp("tall")
    (root / "index.html").write_text(PAGE)
    with StaticServer(root) as srv:
        yield srv.url + "index.html"


def test_screenshots_follow_scrolling_and_hide_the_caret(pool: object, tall_app: str) -> None:
    from digirl.browser.actions import frame_from_bytes
    from digirl.browser.env import WebAppEnv, WebAppTask
    from digirl.core.actions import Action

    w, h = 320, 240
    env = WebAppEnv(WebAppTask(tall_app, "look around", horizon=10), width=w, height=h, pool=pool)  # type: ignore[arg-type]

    async def reference() -> np.ndarray:  # Playwright's own screenshot of the viewport
        page = env._session.current()
        return frame_from_bytes(await page.screenshot(type="png"), w, h)

    try:
        env.reset(seed=0)
        obs, *_ = env.step(Action.swipe((0.5, 0.9), (0.5, 0.2)))  # finger up: the page scrolls down
        scrolled = env.pool.run(env._session.current().evaluate("window.scrollY"))
        assert scrolled > 0
        ref = env.pool.run(reference())
        bad = np.argwhere((obs.screenshot != ref).any(axis=2))
        assert np.array_equal(obs.screenshot, ref), (scrolled, env._scroll, bad[:3], bad[-3:], len(bad))
        assert any(e.text == "far below" for e in obs.elements or ())
        obs, *_ = env.step(Action.swipe((0.5, 0.2), (0.5, 0.9)))  # back to the top
        obs, *_ = env.step(Action.tap(20 / w, 20 / h))  # focus the field: a caret would blink
        frames = [obs.screenshot]
        for _ in range(3):
            time.sleep(0.35)
            frames.append(env.step(Action.tap(20 / w, 20 / h))[0].screenshot)
        assert all(np.array_equal(frames[0], f) for f in frames[1:])
        assert np.array_equal(frames[0], env.pool.run(reference()))
    finally:
        env.close()


def test_element_list_reports_checkbox_state_and_clickable_labels(pool: object) -> None:
    require_miniwob()
    from digirl.browser.miniwob import MiniWoBEnv

    env = MiniWoBEnv("click-checkboxes", pool=pool)  # type: ignore[arg-type]
    try:
        obs, _ = env.reset(seed=3)
        boxes = [e for e in obs.elements or () if e.kind == "checkbox"]
        labels = [e for e in obs.elements or () if e.ref.startswith("label:")]
        assert boxes and [b.text for b in boxes] == ["off"] * len(boxes)  # the state, not value="on"
        assert labels and all(lab.clickable for lab in labels)  # a label click toggles its box
        obs, *_ = env.step(env.cheat())  # type: ignore[arg-type]
        assert [b.text for b in obs.elements or () if b.kind == "checkbox"].count("on") == 1
    finally:
        env.close()
