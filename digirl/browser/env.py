"""Browser envs: the shared base (:class:`BrowserEnv`) and web-app tasks (:class:`WebAppEnv`).

The env API is synchronous (:class:`~digirl.envs.base.DeviceEnv`); the work is a coroutine per
reset/step (``areset`` / ``astep``) run on the shared :class:`~digirl.browser.pool.BrowserPool`
loop. One step = the action, then the screenshot (a raw DevTools capture) concurrently with one page
``evaluate`` that reads the element list, the scroll offset and, for envs with a status probe
(MiniWoB), the reward. Browser and page failures become :class:`~digirl.core.errors.EnvFailure`
(after one automatic retry for resets); after a failed step, call ``reset()``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from digirl.browser.actions import (
    Region,
    apply_pointer_or_key,
    capture,
    elements_from_js,
    frame_from_bytes,
    observe_js,
)
from digirl.browser.pool import LEAVING_JS, BrowserConfig, BrowserPool, PageSession
from digirl.core.actions import Action, ActionType
from digirl.core.errors import EnvFailure, UnsupportedInstructionError
from digirl.core.types import TaskSpec, UIElement
from digirl.envs.base import DeviceEnv, StepResult
from digirl.judge.base import JudgeFunction, SuccessJudge, as_success_judge

__all__ = ["BrowserEnv", "Judge", "WebAppEnv", "WebAppTask"]

log = logging.getLogger(__name__)

#: Most elements reported per observation (keeps the JS call cheap on big pages).
MAX_ELEMENTS = 200
_NAV_ERRORS = ("Execution context was destroyed", "navigation", "Cannot find context")
_FONTS_READY_JS = "() => document.fonts.ready.then(() => 0)"
#: Evaluations retried after "context destroyed" before the error counts (one per navigation in a row).
_NAV_RETRIES = 4


def _short(e: BaseException) -> str:
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0] if lines else ''}"


#: What a web-app task's ``judge`` may be: a :class:`~digirl.judge.base.SuccessJudge` (the one judge
#: protocol, e.g. :class:`~digirl.judge.vlm.VLMJudge`), or a plain function ``fn(task, screenshot,
#: url=..., history=..., **kwargs) -> bool | None`` (None: cannot tell, counted as no success), which
#: :func:`~digirl.judge.base.as_success_judge` adapts. It runs in a worker thread, so it may block.
Judge = SuccessJudge | JudgeFunction


class BrowserEnv(DeviceEnv):
    """Base of the Chromium envs: one page (in its own context) of a shared browser.

    Subclasses implement ``_resolve_task`` (sync, cheap), ``_a_begin`` and either ``_a_status``
    (async, runs concurrently with the screenshot) or a ``status_probe`` (a synchronous JS function
    text read in the same ``evaluate`` as the element list) with ``_status_from_probe``.
    """

    #: JS function text whose value ``_status_from_probe`` turns into the step's reward/termination.
    status_probe: str | None = None
    #: Wait for ``document.fonts.ready`` before each screenshot (what ``page.screenshot`` does);
    #: pages without web fonts (MiniWoB) skip the round trip.
    wait_for_fonts: bool = True

    def __init__(
        self,
        *,
        width: int,
        height: int,
        viewport: tuple[int, int],
        region: Region | None = None,
        pool: BrowserPool | None = None,
        browser: BrowserConfig | None = None,
        elements: bool = True,
        image_format: str = "png",
        reset_retries: int = 1,
        action_codec: str = "json",
    ) -> None:
        super().__init__(width=width, height=height, action_codec=action_codec)
        if image_format not in ("png", "jpeg"):
            raise ValueError(f"image_format must be png or jpeg, got {image_format!r}")
        self._owns_ref = pool is None
        self._pool = BrowserPool.shared(browser) if pool is None else pool
        self._session = PageSession(self._pool, viewport=viewport)
        self.viewport = viewport
        self.region = region or Region(0, 0, viewport[0], viewport[1])
        self.with_elements = elements
        self.image_format = image_format
        self.reset_retries = max(0, int(reset_retries))
        self._frame: np.ndarray | None = None
        self._elems: tuple[UIElement, ...] | None = None
        self._scroll = (0.0, 0.0)  # the page's last known scroll offset (screenshot clips need it)
        self._pointer_moved = True  # the mouse may be somewhere on the page (a reset may park it)
        self._observe_js = {el: observe_js(self.status_probe, el) for el in (False, True)}
        self._prefetched: tuple[str, Any] | None = None
        self._seed_arg: int | None = None
        #: The seed of the current episode (drawn from the env's rng when reset() got none).
        self.episode_seed: int | None = None
        self._closed = False

    @property
    def pool(self) -> BrowserPool:
        return self._pool

    # ------------------------------------------------------------------ subclass hooks
    def _resolve_task(self, task: Any, rng: np.random.Generator) -> tuple[Any, int | None]:
        """Turn ``options["task"]`` into an episode plan (and a seed it fixes, if any). No I/O."""
        raise NotImplementedError

    async def _a_begin(self, page: Page, plan: Any, seed: int, fresh: bool) -> TaskSpec:
        """Start the episode on ``page`` (``fresh``: the page was just opened). Returns the task."""
        raise NotImplementedError

    async def _a_status(self, page: Page, action: Action) -> StepResult:
        """Reward and termination after ``action`` (runs concurrently with the screenshot)."""
        if self.status_probe is None:
            raise NotImplementedError
        return self._status_from_probe(await self._eval(page, self.status_probe), action)

    def _status_from_probe(self, value: Any, action: Action) -> StepResult:
        """Reward and termination from the value of :attr:`status_probe`."""
        raise NotImplementedError

    async def _a_finish(self, page: Page, action: Action, result: StepResult) -> StepResult:
        """Last word on a step, after the screenshot was taken (e.g. a screenshot judge)."""
        return result

    async def _a_before(self, page: Page, action: Action) -> StepResult | None:
        """A result that pre-empts ``action`` (the episode already ended on its own), or ``None``."""
        return None

    async def _a_settle(self, page: Page) -> None:
        """Wait, after an action, until the page can be observed (e.g. a navigation it started)."""

    async def _a_back(self, page: Page) -> dict[str, Any]:
        return {"noop": True}

    async def _a_home(self, page: Page) -> dict[str, Any]:
        return {"noop": True}

    async def _a_cheat(self, page: Page) -> Action | None:
        return None

    # ------------------------------------------------------------------ async core
    async def _a_capture(self, page: Page) -> Any:
        """Screenshot + element list (+ the status probe's value, which is returned).

        The capture uses the last known scroll offset; the ``evaluate`` running next to it reports
        the current one, and in the rare case they differ (the step scrolled the page) the region
        is captured again at the right place.
        """
        r = self.region
        cdp = self._session.cdp
        if self.wait_for_fonts:
            await self._eval(page, _FONTS_READY_JS)
        shot = capture(cdp, r, self._scroll, self.image_format)
        value: Any = None
        if self.with_elements or self.status_probe is not None:
            args = [r.x, r.y, r.width, r.height, MAX_ELEMENTS]
            js = self._observe_js[self.with_elements]
            data, (sx, sy, rows, value) = await asyncio.gather(shot, self._eval(page, js, args))
            self._elems = elements_from_js(rows, r) if rows is not None else None
        else:
            data, metrics = await asyncio.gather(shot, cdp.send("Page.getLayoutMetrics"))
            sx, sy = metrics["cssVisualViewport"]["pageX"], metrics["cssVisualViewport"]["pageY"]
            self._elems = None
        scroll = (float(sx), float(sy))
        if scroll != self._scroll:
            self._scroll = scroll
            data = await capture(cdp, r, scroll, self.image_format)
        h, w = self.observation_space.screenshot.height, self.observation_space.screenshot.width
        self._frame = frame_from_bytes(data, w, h)
        return value

    @staticmethod
    async def _eval(page: Page, js: str, arg: Any = None) -> Any:
        """``page.evaluate`` that waits out navigations in progress (a redirect chain: a few in a row)."""
        for _ in range(_NAV_RETRIES):
            try:
                return await page.evaluate(js, arg)
            except PlaywrightError as e:
                if not any(s in str(e) for s in _NAV_ERRORS):
                    raise
                await page.wait_for_load_state("domcontentloaded")
        return await page.evaluate(js, arg)

    async def _a_follow_navigation(self, page: Page) -> None:
        """After an action: if it started a navigation (a link, a form), wait for the new document.

        A condition, not a delay: the document reports the navigations it started (``NAV_WATCH_JS``
        of the pool), and the session counts the main frame's commits.
        """
        mark = self._session.navigations
        leaving = await self._eval(page, LEAVING_JS)
        await self._session.await_navigation(page, int(leaving or 0), mark, self._pool.config.navigation_timeout_s)

    async def areset(self, plan: Any, seed: int) -> TaskSpec:
        """Start an episode; retries once on a fresh page, then raises :class:`EnvFailure`."""
        last: BaseException | None = None
        nav = self._pool.config.navigation_timeout_s
        for attempt in range(self.reset_retries + 1):
            try:
                page, fresh = await self._session.ensure()
                spec = await asyncio.wait_for(self._a_begin(page, plan, seed, fresh), nav + 5.0)
                await self._a_capture(page)
                return spec
            except (PlaywrightError, EnvFailure, asyncio.TimeoutError) as e:
                last = e
                log.warning("reset attempt %d failed: %s", attempt + 1, _short(e))
                await self._session.discard()
        raise EnvFailure(f"browser reset failed after {self.reset_retries + 1} attempts: {_short(last or Exception())}")

    async def astep(self, action: Action) -> StepResult:
        """Apply a valid action, then read the reward and capture the screen."""
        try:
            page = self._session.current()
            early = await self._a_before(page, action)
            if early is not None:
                await self._a_capture(page)
                return early
            if action.type is ActionType.PRESS_BACK:
                info = await self._a_back(page)
            elif action.type is ActionType.PRESS_HOME:
                info = await self._a_home(page)
            elif action.ends_episode:
                info = {}
            else:
                if action.type is ActionType.DUAL_POINT:
                    self._pointer_moved = True
                info = await apply_pointer_or_key(page, action, self.region)
            await self._a_settle(page)
            if self.status_probe is not None:
                result = self._status_from_probe(await self._a_capture(page), action)
            else:
                _, result = await asyncio.gather(self._a_capture(page), self._a_status(page, action))
            result = await self._a_finish(page, action, result)
        except (PlaywrightError, asyncio.TimeoutError) as e:
            await self._session.discard()
            raise EnvFailure(f"browser step failed: {_short(e)}") from e
        except EnvFailure:
            await self._session.discard()
            raise
        if info:
            result.info = {**info, **(result.info or {})}
        return result

    # ------------------------------------------------------------------ sync DeviceEnv hooks
    def _call(self, coro: Any, timeout: float | None = None) -> Any:
        try:
            return self._pool.run(coro, timeout)
        except EnvFailure:
            if not self._pool.closed:  # a timed-out op may have left a hung page behind
                try:
                    self._pool.run(self._session.discard(), 10.0)
                except EnvFailure:
                    pass
            raise

    def _take(self, kind: str) -> Any:
        if self._prefetched is None or self._prefetched[0] != kind:
            return None
        value = self._prefetched[1]
        self._prefetched = None
        if isinstance(value, BaseException):
            raise value
        return value

    def _reset_timeout(self) -> float:
        c = self._pool.config
        return c.launch_timeout_s + (self.reset_retries + 1) * (c.navigation_timeout_s + c.operation_timeout_s)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        if self._closed:
            raise RuntimeError("reset() on a closed env")
        self._seed_arg = seed
        return super().reset(seed=seed, options=options)

    def _reset(self, task: TaskSpec | str | None, rng: np.random.Generator) -> TaskSpec:
        plan, fixed_seed = self._resolve_task(task, rng)
        seed = fixed_seed if fixed_seed is not None else self._seed_arg
        if seed is None:
            seed = int(rng.integers(0, 2**31 - 1))
        self._seed_arg = None
        spec = self._take("reset")
        if spec is None:
            spec = self._call(self.areset(plan, seed), self._reset_timeout())
        self.episode_seed = seed
        return spec  # type: ignore[no-any-return]

    def _step(self, action: Action) -> StepResult:
        result = self._take("step")
        if result is None:
            result = self._call(self.astep(action))
        return result  # type: ignore[no-any-return]

    def _screenshot(self) -> np.ndarray:
        if self._frame is None:
            self._call(self._a_capture(self._session.current()))
        assert self._frame is not None
        return self._frame

    def _elements(self) -> tuple[UIElement, ...] | None:
        return self._elems

    def cheat(self) -> Action | None:
        """The scripted solver's next action, computed from the page's DOM (``None``: no solver)."""
        if self._done:
            return None

        async def run() -> Action | None:
            return await self._a_cheat(self._session.current())

        return self._call(run())  # type: ignore[no-any-return]

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if not self._pool.closed:
            try:
                self._pool.run(self._session.discard(), 10.0)
            except EnvFailure:
                pass
        if self._owns_ref:
            self._pool.release()

    def __del__(self) -> None:  # a forgotten env must not keep the shared browser alive forever
        try:
            # Never from the pool's own loop thread: closing would wait on that very thread.
            if not self._closed and self._owns_ref and threading.current_thread() is not self._pool._thread:
                self.close()
        except Exception:  # interpreter shutdown
            pass


# ============================================================================ web apps
@dataclass(frozen=True)
class WebAppTask:
    """A task on any web page: start at ``start_url``; success by a JS predicate and/or a judge.

    ``success_js`` is a JavaScript expression (or function text) evaluated in the page after every
    step; a truthy value is success. ``judge`` (see :class:`Judge`) is asked when the agent declares
    completion or on the last step of the horizon (or after every step with ``judge_every_step``).
    """

    start_url: str
    instruction: str
    success_js: str | None = None
    judge: Judge | None = None
    horizon: int = 10
    task_id: str = ""

    def __post_init__(self) -> None:
        if not self.start_url or "://" not in self.start_url:
            raise ValueError(f"start_url must be an absolute URL, got {self.start_url!r}")
        if not self.instruction.strip():
            raise ValueError("a web-app task needs an instruction")
        if self.horizon <= 0:
            raise ValueError("horizon must be positive")

    def spec(self) -> TaskSpec:
        return TaskSpec(
            instruction=self.instruction,
            task_id=self.task_id or self.instruction,
            family="webapp",
            horizon=self.horizon,
            env_id="digirl/webapp-v0",
            params={"start_url": self.start_url, "success_js": self.success_js},
        )


class WebAppEnv(BrowserEnv):
    """Any web app in Chromium. Each episode starts in a fresh browser context (no shared cookies/storage).

    PRESS_BACK is history back; PRESS_HOME loads the task's start URL again. Without ``success_js``
    and ``judge`` the reward is always 0 (useful to collect data for a later judge).
    """

    def __init__(
        self,
        tasks: WebAppTask | Sequence[WebAppTask] = (),
        *,
        width: int = 400,
        height: int = 600,
        viewport: tuple[int, int] | None = None,
        judge: Judge | None = None,
        judge_every_step: bool = False,
        pool: BrowserPool | None = None,
        browser: BrowserConfig | None = None,
        elements: bool = True,
        image_format: str = "png",
        action_codec: str = "json",
    ) -> None:
        super().__init__(
            width=width,
            height=height,
            viewport=viewport or (width, height),
            pool=pool,
            browser=browser,
            elements=elements,
            image_format=image_format,
            action_codec=action_codec,
        )
        self.tasks = [tasks] if isinstance(tasks, WebAppTask) else list(tasks)
        self.default_judge = judge
        self.judge_every_step = judge_every_step
        self._current: WebAppTask | None = None

    def _resolve_task(self, task: Any, rng: np.random.Generator) -> tuple[WebAppTask, int | None]:
        if isinstance(task, WebAppTask):
            return task, None
        if task is None:
            if not self.tasks:
                raise UnsupportedInstructionError("WebAppEnv has no tasks: pass tasks=... or options={'task': WebAppTask}")
            return self.tasks[int(rng.integers(len(self.tasks)))], None
        if isinstance(task, TaskSpec) and task.params.get("start_url"):
            found = self._lookup(task.task_id) or self._lookup(task.instruction)
            if found is not None:
                return found, None
            return (
                WebAppTask(
                    start_url=str(task.params["start_url"]),
                    instruction=task.instruction,
                    success_js=task.params.get("success_js"),
                    judge=self.default_judge,
                    horizon=task.horizon,
                    task_id=task.task_id,
                ),
                None,
            )
        key = task.task_id or task.instruction if isinstance(task, TaskSpec) else str(task)
        found = self._lookup(key)
        if found is None:
            raise UnsupportedInstructionError(f"WebAppEnv has no task {key!r} (known: {[t.task_id for t in self.tasks][:10]})")
        return found, None

    def _lookup(self, key: str) -> WebAppTask | None:
        for t in self.tasks:
            if key and key in (t.task_id, t.instruction):
                return t
        return None

    async def _a_begin(self, page: Page, plan: Any, seed: int, fresh: bool) -> TaskSpec:
        if not fresh:  # isolation: a new context per episode
            await self._session.discard()
            page, _ = await self._session.ensure()
        task: WebAppTask = plan
        await page.goto(task.start_url, wait_until="load")
        self._current = task
        return task.spec()

    async def _a_settle(self, page: Page) -> None:
        # A click, Enter in a form or a script may start a navigation: observe the new document once
        # it reaches DOMContentLoaded, never the one being replaced.
        await self._a_follow_navigation(page)
        await page.wait_for_load_state("domcontentloaded")

    async def _a_back(self, page: Page) -> dict[str, Any]:
        resp = await page.go_back(wait_until="load")
        return {} if resp is not None else {"noop": True}

    async def _a_home(self, page: Page) -> dict[str, Any]:
        assert self._current is not None
        await page.goto(self._current.start_url, wait_until="load")
        return {}

    async def _a_status(self, page: Page, action: Action) -> StepResult:
        task = self._current
        assert task is not None
        if task.success_js is None:
            return StepResult(0.0, False, {})
        try:
            ok = bool(await self._eval(page, task.success_js))
        except PlaywrightError as e:
            if page.is_closed() or not self._session.is_open:
                raise
            return StepResult(0.0, False, {"predicate_error": _short(e)})
        return StepResult(1.0 if ok else 0.0, ok, {"predicate": ok})

    async def _a_finish(self, page: Page, action: Action, result: StepResult) -> StepResult:
        task = self._current
        assert task is not None
        judge = task.judge or self.default_judge
        if judge is None or result.terminated:
            return result
        last_step = self._steps + 1 >= self.horizon
        if not (self.judge_every_step or action.type is ActionType.STATUS_TASK_COMPLETE or last_step):
            return result
        assert self._frame is not None and self._task is not None
        success_judge = as_success_judge(judge, url=page.url)  # a function judge also gets the page's url
        call = functools.partial(success_judge.judge, self._task, self._frame, actions=(*self._history, action))
        verdict = (await asyncio.get_running_loop().run_in_executor(None, call)).success
        info = {**(result.info or {}), "judge": verdict}
        if verdict is True:
            return replace(result, reward=1.0, terminated=True, info=info)
        return replace(result, info=info)
