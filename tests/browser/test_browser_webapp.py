"""Web-app tasks on a small local app: JS predicate, judge seam, action mapping, back/home, hangs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.browser.conftest import require_browser

pytestmark = pytest.mark.browser

INDEX = """<!doctype html><html><body style="margin:0;font:14px sans-serif">
<button id="go" style="position:absolute;left:20px;top:20px;width:100px;height:40px"
  onclick="document.getElementById('status').textContent='done'">Finish</button>
<div id="status" style="position:absolute;left:20px;top:70px">todo</div>
<input id="name" style="position:absolute;left:20px;top:100px;width:150px"
  onkeydown="if (event.key === 'Enter') document.getElementById('status').textContent = 'hi ' + this.value">
<a id="next" href="page2.html" style="position:absolute;left:20px;top:140px">next page</a>
<div id="list" style="position:absolute;left:20px;top:170px;width:150px;height:60px;overflow-y:auto">
  <div style="height:400px">long list</div></div>
<div id="pad" style="position:absolute;left:200px;top:170px;width:150px;height:100px;background:#ccc"></div>
<button id="hang" style="position:absolute;left:200px;top:20px;width:100px;height:40px"
  onclick="while (true) {}">Hang</button>
<a id="late" href="#" style="position:absolute;left:200px;top:70px"
  onclick="event.preventDefault(); setTimeout(() => { location.href = 'page2.html'; }, 0)">late link</a>
<form action="page2.html" style="position:absolute;left:200px;top:100px;margin:0">
  <input id="q" name="q" style="width:120px"></form>
<script>
  const pad = document.getElementById('pad'); window.drag = [];
  pad.addEventListener('mousedown', (e) => window.drag.push('down'));
  pad.addEventListener('mousemove', (e) => { if (e.buttons) window.drag.push('move'); });
  pad.addEventListener('mouseup', (e) => window.drag.push('up'));
</script></body></html>"""
PAGE2 = "<!doctype html><html><body><h1 id='p2'>second page</h1></body></html>"

W, H = 400, 300
DONE_JS = "document.getElementById('status').textContent === 'done'"


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    require_browser()
    from digirl.browser.server import StaticServer

    root: Path = tmp_path_factory.mktemp("webapp")
    (root / "index.html").write_text(INDEX)
    (root / "page2.html").write_text(PAGE2)
    with StaticServer(root) as srv:
        assert srv.url.startswith("http://127.0.0.1:")
        yield srv.url


def _px(x: float, y: float) -> tuple[float, float]:
    return (x / W, y / H)


def test_js_predicate_rewards_and_terminates(pool: object, app: str) -> None:
    from digirl.browser.env import WebAppEnv, WebAppTask
    from digirl.core.actions import Action

    task = WebAppTask(app + "index.html", "Press Finish", success_js=DONE_JS)
    env = WebAppEnv(task, width=W, height=H, pool=pool)  # type: ignore[arg-type]
    try:
        obs, info = env.reset(seed=0)
        assert obs.screenshot.shape == (H, W, 3) and info["task"]["params"]["start_url"].endswith("index.html")
        finish = next(e for e in obs.elements or () if e.text == "Finish")
        assert finish.kind == "button" and finish.contains(*_px(70, 40))
        _, r, term, _, info = env.step(Action.tap(*_px(300, 280)))  # empty space
        assert (r, term, info["predicate"]) == (0.0, False, False)
        _, r, term, _, _ = env.step(Action.tap(*finish.center))
        assert (r, term) == (1.0, True)
        # a new episode starts in a fresh context: the page is back to "todo"
        obs, _ = env.reset(seed=1)
        assert any(e.text == "todo" for e in obs.elements or ())
    finally:
        env.close()


def test_typing_enter_scroll_drag_back_and_home(pool: object, app: str) -> None:
    from digirl.browser.env import WebAppEnv, WebAppTask
    from digirl.core.actions import Action

    greeted = "document.getElementById('status').textContent === 'hi Ada'"
    task = WebAppTask(app + "index.html", "Greet Ada", success_js=greeted, horizon=20)
    env = WebAppEnv(task, width=W, height=H, pool=pool)  # type: ignore[arg-type]
    try:
        env.reset(seed=0)

        async def js(expr: str) -> Any:
            return await env._session.current().evaluate(expr)

        env.step(Action.tap(*_px(60, 110)))
        obs, r, *_ = env.step(Action.type_text("Ada"))
        assert r == 0.0 and any(e.focused and e.text == "Ada" for e in obs.elements or ())
        # scroll: finger moves up over the scrollable list -> content scrolls down
        _, _, _, _, info = env.step(Action.swipe(_px(90, 220), _px(90, 180)))
        assert info["gesture"] == "scroll"
        # drag: the grey pad does not scroll, so the swipe is a mouse drag
        _, _, _, _, info = env.step(Action.swipe(_px(220, 200), _px(330, 250)))
        assert info["gesture"] == "drag"
        drag = pool.run(js("window.drag"))  # type: ignore[attr-defined]
        assert drag[0] == "down" and drag[-1] == "up" and "move" in drag
        assert pool.run(js("document.getElementById('list').scrollTop")) > 0  # type: ignore[attr-defined]
        # navigation: link -> back -> (link) -> home
        env.step(Action.tap(*_px(50, 147)))
        assert pool.run(js("location.pathname")).endswith("page2.html")  # type: ignore[attr-defined]
        env.step(Action.back())
        assert pool.run(js("location.pathname")).endswith("index.html")  # type: ignore[attr-defined]
        env.step(Action.tap(*_px(50, 147)))
        env.step(Action.home())
        assert pool.run(js("location.pathname")).endswith("index.html")  # type: ignore[attr-defined]
        env.step(Action.tap(*_px(60, 110)))
        env.step(Action.type_text("Ada"))
        _, r, term, _, _ = env.step(Action.enter())
        assert (r, term) == (1.0, True)
    finally:
        env.close()


def test_judge_seam_is_asked_on_complete(pool: object, app: str) -> None:
    from digirl.browser.env import WebAppEnv, WebAppTask
    from digirl.core.actions import Action
    from digirl.core.types import TaskSpec

    calls: list[dict[str, Any]] = []

    def judge(task: TaskSpec, screenshot: np.ndarray, **kw: Any) -> bool | None:
        calls.append({"task": task, "shape": screenshot.shape, **kw})
        return len(calls) > 1  # says no the first time

    task = WebAppTask(app + "index.html", "Open the second page", judge=judge)
    env = WebAppEnv(task, width=W, height=H, pool=pool)  # type: ignore[arg-type]
    try:
        env.reset(seed=0)
        _, r, term, _, info = env.step(Action.tap(*_px(50, 147)))
        assert not calls and r == 0.0  # not asked on ordinary steps
        env.reset(seed=0)
        _, r, term, _, info = env.step(Action.complete())
        assert info["judge"] is False and r == 0.0 and term
        env.reset(seed=0)
        _, r, term, _, info = env.step(Action.complete())
        assert info["judge"] is True and r == 1.0 and term
        assert calls[-1]["url"].endswith("index.html") and calls[-1]["shape"] == (H, W, 3)
        assert calls[-1]["task"].instruction == "Open the second page" and calls[-1]["history"][-1].kind == "complete"
    finally:
        env.close()


def test_tasks_by_id_and_bad_input(pool: object, app: str) -> None:
    from digirl.browser.env import WebAppEnv, WebAppTask
    from digirl.core.errors import UnsupportedInstructionError

    with pytest.raises(ValueError):
        WebAppTask("index.html", "relative url")
    t = WebAppTask(app + "page2.html", "Look", success_js="!!document.getElementById('p2')", task_id="look")
    env = WebAppEnv([t], width=W, height=H, pool=pool)  # type: ignore[arg-type]
    try:
        _, info = env.reset(options={"task": "look"})
        assert info["task"]["task_id"] == "look"
        with pytest.raises(UnsupportedInstructionError):
            env.reset(options={"task": "nope"})
        # a stored TaskSpec (e.g. from a dataset) replays without the original WebAppTask
        env2 = WebAppEnv(width=W, height=H, pool=pool)  # type: ignore[arg-type]
        try:
            _, info = env2.reset(options={"task": t.spec()})
            assert info["task"]["params"]["success_js"] == t.success_js
        finally:
            env2.close()
    finally:
        env.close()


def test_hung_page_is_bounded_and_recovered(app: str) -> None:
    from digirl.browser.env import WebAppEnv, WebAppTask
    from digirl.browser.pool import BrowserConfig
    from digirl.core.actions import Action
    from digirl.core.errors import EnvFailure

    task = WebAppTask(app + "index.html", "Press Finish", success_js=DONE_JS)
    env = WebAppEnv(task, width=W, height=H, browser=BrowserConfig(operation_timeout_s=3.0))
    try:
        env.reset(seed=0)
        with pytest.raises(EnvFailure):
            env.step(Action.tap(*_px(250, 40)))  # the Hang button spins forever
        env.reset(seed=0)  # a fresh page
        _, r, term, _, _ = env.step(Action.tap(*_px(70, 40)))
        assert (r, term) == (1.0, True)
    finally:
        env.close()


def test_observations_follow_navigations_on_a_slow_page(pool: object, app: str) -> None:
    """A navigation an action starts (a link whose script navigates in the next task, Enter in a form)
    is waited for — a condition, not a delay: the observation shows the new page, even with the
    page's CPU slowed down 6x (what a loaded machine does)."""
    from digirl.browser.actions import frame_from_bytes
    from digirl.browser.env import WebAppEnv, WebAppTask
    from digirl.core.actions import Action

    env = WebAppEnv(WebAppTask(app + "index.html", "Go on", horizon=20), width=W, height=H, pool=pool)  # type: ignore[arg-type]

    def shows_now(obs: Any) -> bool:  # the observation's pixels are the page as it is now
        async def shot() -> bytes:
            return await env._session.current().screenshot(type="png")

        return bool(np.array_equal(obs.screenshot, frame_from_bytes(pool.run(shot()), W, H)))  # type: ignore[attr-defined]

    try:
        for rate in (1, 6):
            env.reset(seed=0)
            pool.run(env._session.cdp.send("Emulation.setCPUThrottlingRate", {"rate": rate}))  # type: ignore[attr-defined]
            obs, *_ = env.step(Action.tap(*_px(215, 77)))  # the late link
            assert any(e.text == "second page" for e in obs.elements or ()), [e.text for e in obs.elements or ()]
            assert shows_now(obs)
            obs, *_ = env.step(Action.back())
            assert any(e.text == "late link" for e in obs.elements or ())
            env.step(Action.tap(*_px(250, 110)))  # the form's only field
            env.step(Action.type_text("hello"))
            obs, *_ = env.step(Action.enter())  # implicit submission navigates to page2.html?q=hello
            assert any(e.text == "second page" for e in obs.elements or ()), [e.text for e in obs.elements or ()]
            assert shows_now(obs)
            assert env.pool.run(env._session.current().evaluate("location.search")) == "?q=hello"
            obs, *_ = env.step(Action.tap(*_px(10, 290)))  # no navigation: nothing to wait for
            assert any(e.text == "second page" for e in obs.elements or ())
    finally:
        env.close()
