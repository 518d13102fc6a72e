"""MiniWoB++ tasks (the HTML pages shipped by the ``miniwob`` package) as :class:`BrowserEnv` envs.

Protocol (from ``miniwob/html/core/core.js``): load ``miniwob/<task>.html`` once per page, then each
reset runs ``core.endEpisode(0); Math.seedrandom(seed); core.setDataMode(mode); core.startEpisodeReal()``
and waits for ``WOB_TASK_READY``. The instruction is ``core.getUtterance()``. After each step
``WOB_DONE_GLOBAL`` ends the episode; reward 1.0 when MiniWoB's raw reward is > 0, else 0.0 (the
raw and time-decayed rewards are kept in ``info``).

Time limit: MiniWoB ends an episode after ``core.EPISODE_MAX_TIME`` of *page* time (10 s by
default) with reward -1, which would silently fail episodes whose policy is slow (a large model
on CPU). By default we set that limit to 24 h and enforce the horizon in *steps* instead;
``page_time_limit_s`` restores a page-time limit (an expiry is then a normal failed episode,
``info["reason"] == "timed out"``).

PRESS_BACK and PRESS_HOME do nothing here (a MiniWoB task is one page; leaving it would end the
episode); the step is spent.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
from playwright.async_api import Page

from digirl.browser.actions import Region
from digirl.browser.catalog import miniwob_html_dir, miniwob_tasks
from digirl.browser.env import BrowserEnv
from digirl.browser.pool import BrowserConfig, BrowserPool
from digirl.browser.server import StaticServer
from digirl.browser.solvers import SOLVERS, solve
from digirl.core.actions import Action
from digirl.core.errors import ConfigError, EnvFailure, UnsupportedInstructionError
from digirl.core.types import TaskSpec
from digirl.envs.base import StepResult

__all__ = ["TASK_AREA", "VIEWPORT", "MiniWoBEnv"]

log = logging.getLogger(__name__)

#: The task area (``#wrap``) every MiniWoB page draws in, in CSS pixels.
TASK_AREA = Region(0, 0, 160, 210)
#: The browser window MiniWoB's own env uses.
VIEWPORT = (500, 320)
_NO_LIMIT_MS = 24 * 3600 * 1000

_READY_JS = "() => typeof core !== 'undefined' && typeof genProblem === 'function'"
# Blur first: focus (and its ring) would otherwise survive from the previous episode. Returns
# [ready, utterance] (one round trip for the reset and the instruction).
_RESET_JS = """([seed, mode, maxMs]) => {
  if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
  core.endEpisode(0);
  Math.seedrandom(seed);
  core.setDataMode(mode);
  core.EPISODE_MAX_TIME = maxMs;
  core.startEpisodeReal();
  return [WOB_TASK_READY, WOB_TASK_READY ? core.getUtterance() : null];
}"""
_UTTERANCE_JS = "() => core.getUtterance()"
_STATUS_JS = "() => [WOB_DONE_GLOBAL, WOB_RAW_REWARD_GLOBAL, WOB_REWARD_GLOBAL, WOB_REWARD_REASON]"


class MiniWoBEnv(BrowserEnv):
    """One MiniWoB++ task (``task="click-button"``) on a page of the shared Chromium.

    Observations are the 160×210 task area resized to ``width``×``height``; actions are normalized
    to that area. ``url_mode``: ``"http"`` (a local server on 127.0.0.1, default) or ``"file"``;
    ``base_url`` points at another copy of the ``html`` folder. ``cheat()`` is the task's scripted
    solver (see :data:`digirl.browser.solvers.SOLVERS`) or ``None``.
    """

    # The reward is read in the same evaluate as the element list; MiniWoB uses no web fonts.
    status_probe = _STATUS_JS
    wait_for_fonts = False

    def __init__(
        self,
        task: str = "click-test",
        *,
        width: int = 160,
        height: int = 210,
        horizon: int = 10,
        data_mode: str = "train",
        page_time_limit_s: float | None = None,
        url_mode: str = "http",
        base_url: str | None = None,
        pool: BrowserPool | None = None,
        browser: BrowserConfig | None = None,
        elements: bool = True,
        image_format: str = "png",
        action_codec: str = "json",
    ) -> None:
        html = miniwob_html_dir()
        if html is None and base_url is None:
            raise ConfigError("MiniWoB++ pages not found: pip install 'digirl[browser]' (the miniwob package)")
        if html is not None and task not in miniwob_tasks():
            raise ConfigError(f"unknown MiniWoB++ task {task!r}; see `digirl envs list` (ids digirl/miniwob.<task>-v0)")
        if url_mode not in ("http", "file"):
            raise ConfigError(f"url_mode must be http or file, got {url_mode!r}")
        if horizon <= 0:
            raise ConfigError("horizon must be positive")
        self._server: StaticServer | None = None
        if base_url is not None:
            base = base_url.rstrip("/") + "/"
        elif url_mode == "http":
            assert html is not None
            self._server = StaticServer.shared(html.parent)
            base = self._server.url
        else:
            assert html is not None
            base = html.parent.as_uri() + "/"
        try:
            super().__init__(
                width=width,
                height=height,
                viewport=VIEWPORT,
                region=TASK_AREA,
                pool=pool,
                browser=browser,
                elements=elements,
                image_format=image_format,
                action_codec=action_codec,
            )
        except BaseException:
            if self._server is not None:
                self._server.release()
            raise
        self.task_name = task
        self.url = f"{base}miniwob/{task}.html"
        self.default_horizon = horizon
        self.data_mode = data_mode
        self.page_time_limit_s = page_time_limit_s
        self.env_id = f"digirl/miniwob.{task}-v0"

    @property
    def has_solver(self) -> bool:
        return self.task_name in SOLVERS

    # ------------------------------------------------------------------ hooks
    def _resolve_task(self, task: Any, rng: np.random.Generator) -> tuple[str, int | None]:
        if task is None:
            return self.task_name, None
        if isinstance(task, TaskSpec):
            name = str(task.params.get("task") or task.task_id.removeprefix("miniwob."))
            seed = task.params.get("seed")
            if name != self.task_name:
                raise UnsupportedInstructionError(f"{self.env_id} runs {self.task_name!r}, not {name!r}")
            return name, (int(seed) if seed is not None else None)
        if isinstance(task, str) and task in (self.task_name, f"miniwob.{self.task_name}", self.env_id):
            return self.task_name, None
        raise UnsupportedInstructionError(
            f"{self.env_id} poses its own (seeded) instructions; pass no task, the task name or a stored TaskSpec"
        )

    async def _a_begin(self, page: Page, plan: Any, seed: int, fresh: bool) -> TaskSpec:
        if fresh:
            self._pointer_moved = False  # a new page has never seen the pointer: nothing hovers
        if fresh or page.url != self.url:
            await page.goto(self.url, wait_until="load")
            await page.wait_for_function(_READY_JS)
        if self._pointer_moved:
            # Park the pointer outside the task area: a hover left by the last episode changes
            # pixels. (A frame-aligned input event: ~17 ms, so it is skipped when not needed.)
            await page.mouse.move(VIEWPORT[0] - 1, VIEWPORT[1] - 1)
            self._pointer_moved = False
        limit_ms = _NO_LIMIT_MS if self.page_time_limit_s is None else int(self.page_time_limit_s * 1000)
        ready, utt = await page.evaluate(_RESET_JS, [seed, self.data_mode, limit_ms])
        if not ready:
            await page.wait_for_function("() => WOB_TASK_READY === true")
            utt = await page.evaluate(_UTTERANCE_JS)
        fields: dict[str, Any] = {}
        if isinstance(utt, dict):  # some tasks return {utterance, fields}
            fields = dict(utt.get("fields") or {})
            utt = utt.get("utterance", "")
        if not isinstance(utt, str):
            raise EnvFailure(f"{self.task_name}: unexpected utterance {utt!r}")
        return TaskSpec(
            instruction=utt,
            task_id=f"miniwob.{self.task_name}",
            family="miniwob",
            split=self.data_mode,
            horizon=self.default_horizon,
            env_id=self.env_id,
            params={"task": self.task_name, "seed": seed, "fields": fields},
        )

    async def _a_before(self, page: Page, action: Action) -> StepResult | None:
        # With a page-time limit the episode may have timed out while the policy thought; acting
        # now would click MiniWoB's START cover and silently begin a new episode.
        if self.page_time_limit_s is None:
            return None
        result = await self._a_status(page, action)
        if result.terminated:
            result.info = {**(result.info or {}), "not_applied": True}
            return result
        return None

    def _status_from_probe(self, value: Any, action: Action) -> StepResult:
        done, raw, decayed, reason = value
        if not done:
            return StepResult(0.0, False, {})
        raw = float(raw or 0.0)
        info = {"raw_reward": raw, "miniwob_reward": float(decayed or 0.0), "reason": reason}
        return StepResult(1.0 if raw > 0 else 0.0, True, info)

    async def _a_cheat(self, page: Page) -> Action | None:
        return await solve(page, self.task_name, self.region, self._history)

    def close(self) -> None:
        super().close()
        if self._server is not None:
            server, self._server = self._server, None
            server.release()
