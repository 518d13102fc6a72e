"""One Chromium per process, driven by Playwright's async API from a dedicated event-loop thread.

:class:`BrowserPool` owns the event loop thread, the Playwright driver and the browser. Envs (which
have the synchronous Gymnasium-style API) submit coroutines to it with :meth:`BrowserPool.run`, so
N envs in one process share one browser and their page work interleaves on the loop, whether they
are stepped from N threads or through the batched :class:`~digirl.browser.vector.BrowserVectorEnv`.

A crashed browser is relaunched on next use (:meth:`BrowserPool.browser`); each env's
:class:`PageSession` notices the new generation and opens a fresh context and page. ``close()``
closes the browser and then kills, by pid, any Chromium process of that browser still alive.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import signal
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from playwright.async_api import Browser, BrowserContext, CDPSession, Page, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

from digirl.core.errors import ConfigError, EnvFailure
from digirl.utils.shared import SharedInstances

__all__ = [
    "DEFAULT_ARGS",
    "FAST_FRAME_ARGS",
    "HIDE_CARET_JS",
    "LEAVING_JS",
    "NAV_WATCH_JS",
    "BrowserConfig",
    "BrowserPool",
    "PageSession",
    "chromium_pids",
]

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Flags that keep Chromium quiet and off the network (feasibility probe 2).
DEFAULT_ARGS: tuple[str, ...] = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--no-default-browser-check",
    "--no-first-run",
    "--metrics-recording-only",
    "--mute-audio",
)
#: Uncapped compositor frames: a screenshot waits ~26 ms instead of ~33 ms (feasibility probe 2), so
#: one page steps faster; but idle pages then burn CPU (measured here: 0.25 vs 0.11 cores for 4 idle
#: pages, 42 vs 26 ms Chromium CPU per step), which loses throughput once pages share 2 cores.
#: Opt in with ``BrowserConfig(extra_args=FAST_FRAME_ARGS)``.
FAST_FRAME_ARGS: tuple[str, ...] = ("--disable-frame-rate-limit", "--disable-gpu-vsync")


@dataclass(frozen=True)
class BrowserConfig:
    """How to launch Chromium and how long browser operations may take."""

    #: System Chromium (never a downloaded one). ``DIGIRL_CHROMIUM`` overrides the default.
    executable_path: str = field(default_factory=lambda: os.environ.get("DIGIRL_CHROMIUM", "/usr/bin/chromium"))
    headless: bool = True
    args: tuple[str, ...] = DEFAULT_ARGS
    extra_args: tuple[str, ...] = ()
    launch_timeout_s: float = 30.0
    #: Bound on page loads (``goto``, back, home).
    navigation_timeout_s: float = 15.0
    #: Bound on one env operation (a whole reset or step: action, reward read, screenshot).
    operation_timeout_s: float = 20.0

    def validate(self) -> None:
        p = Path(self.executable_path)
        if not p.exists():
            raise ConfigError(
                f"Chromium not found at {self.executable_path!r}: install it (apt-get install chromium) "
                "or pass BrowserConfig(executable_path=...) / set DIGIRL_CHROMIUM "
                "(digirl never downloads browsers)."
            )
        if self.navigation_timeout_s <= 0 or self.operation_timeout_s <= 0 or self.launch_timeout_s <= 0:
            raise ConfigError("browser timeouts must be positive")


#: Runs in every document before its own scripts: a constructed (DOM-less) style sheet that makes
#: text carets transparent, so a blinking caret never changes the pixels of an observation. This is
#: what Playwright's ``page.screenshot(caret="hide")`` does, but once per document instead of adding
#: and removing a style sheet around every screenshot (two extra round trips and a style recalc).
HIDE_CARET_JS = """(() => {
  try {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync('*, *::before, *::after { caret-color: transparent !important; }');
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  } catch (e) {}
})();"""


#: Runs in every document: counts the navigations it starts that will replace it (a link click, a
#: form submission, a location change; the Navigation API's ``navigate`` event fires when one starts).
#: An env reads the count after an action to know whether to wait for the next document instead of
#: observing this one (:meth:`PageSession.await_navigation`).
NAV_WATCH_JS = """(() => {
  window.__digirlLeaving = 0;
  try {
    navigation.addEventListener('navigate', (e) => { if (!e.destination.sameDocument) window.__digirlLeaving++; });
  } catch (e) {}
})();"""
#: Resolves, after the tasks already queued (a form submission is one), to that count.
LEAVING_JS = "() => new Promise((resolve) => setTimeout(() => resolve(window.__digirlLeaving || 0), 0))"


# ----------------------------------------------------------------------------- process helpers
def _proc_table() -> dict[int, tuple[int, str]]:
    """pid -> (ppid, cmdline) for every readable process."""
    out: dict[int, tuple[int, str]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read().decode(errors="replace")
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        # comm may contain spaces/parens: ppid is the second field after the last ')'.
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        out[int(name)] = (ppid, cmd)
    return out


def chromium_pids(root: int | None = None) -> set[int]:
    """Chromium processes descending from ``root`` (default: this process)."""
    table = _proc_table()
    root = os.getpid() if root is None else root
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    stack = list(children.get(root, []))
    while stack:
        pid = stack.pop()
        if "chrom" in table[pid][1]:
            found.add(pid)
        stack.extend(children.get(pid, []))
    return found


def _descendants(pids: set[int]) -> set[int]:
    table = _proc_table()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    out = set(p for p in pids if p in table)
    stack = list(out)
    while stack:
        for c in children.get(stack.pop(), []):
            if c not in out:
                out.add(c)
                stack.append(c)
    return out


def _kill_chromium(pids: set[int]) -> int:
    """SIGKILL the given pids that are still Chromium processes (guards against pid reuse)."""
    n = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"chrom" not in f.read():
                    continue
            os.kill(pid, signal.SIGKILL)
            n += 1
        except (OSError, ProcessLookupError):
            continue
    return n


# ----------------------------------------------------------------------------- the pool
class BrowserPool:
    """An event-loop thread owning one Playwright driver and one Chromium (relaunched after a crash).

    Use :meth:`shared` to get the process-wide pool for a config (reference-counted: the browser
    closes when the last env releases it), or create a private one and :meth:`close` it yourself.
    """

    _shared: SharedInstances[BrowserConfig, BrowserPool] = SharedInstances()

    def __init__(self, config: BrowserConfig | None = None) -> None:
        self.config = config or BrowserConfig()
        self.config.validate()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="digirl-browser-loop", daemon=True)
        self._thread.start()
        self._pw: Playwright | None = None
        self._browser: Browser | None = None
        self._launch_lock: asyncio.Lock | None = None
        self._roots: set[int] = set()  # browser (root) pids launched by this pool
        self._closed = False
        #: Incremented on every (re)launch; sessions opened under an older generation are stale.
        self.generation = 0
        #: How many times the browser was launched (1 + relaunches).
        self.launches = 0

    # ------------------------------------------------------------------ sharing
    @classmethod
    def shared(cls, config: BrowserConfig | None = None) -> BrowserPool:
        """The process-wide pool for ``config``, with its reference count incremented."""
        return cls._shared.acquire(config or BrowserConfig(), cls)

    def release(self) -> None:
        """Drop one reference taken by :meth:`shared`; the last one closes the pool."""
        if self._shared.release(self.config, self):
            self.close()

    # ------------------------------------------------------------------ running coroutines
    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the browser loop and wait for its result (from any thread but the loop's).

        ``timeout`` (default: the config's operation timeout) bounds the whole coroutine; when it
        expires the coroutine is cancelled and :class:`EnvFailure` is raised.
        """
        if self._closed:
            coro.close()
            raise EnvFailure("the browser pool is closed")
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("BrowserPool.run() called from the browser loop; await the coroutine instead")
        limit = self.config.operation_timeout_s if timeout is None else timeout
        fut = asyncio.run_coroutine_threadsafe(asyncio.wait_for(coro, limit), self._loop)
        try:
            # The inner wait_for cancels the coroutine; the outer margin only guards a stuck loop.
            return fut.result(limit + 5.0)
        except (asyncio.TimeoutError, concurrent.futures.TimeoutError) as e:
            fut.cancel()
            raise EnvFailure(f"browser operation timed out after {limit:.1f} s") from e

    # ------------------------------------------------------------------ browser lifecycle (loop side)
    async def browser(self) -> Browser:
        """The connected browser, launching or relaunching it as needed."""
        if self._browser is not None and self._browser.is_connected():
            return self._browser
        if self._launch_lock is None:
            self._launch_lock = asyncio.Lock()
        async with self._launch_lock:
            if self._browser is not None and self._browser.is_connected():
                return self._browser
            if self._closed:
                raise EnvFailure("the browser pool is closed")
            await self._launch()
            assert self._browser is not None
            return self._browser

    async def _launch(self) -> None:
        if self._browser is not None:  # a dead browser: reap what is left of it
            log.warning("Chromium disconnected; relaunching it")
            try:
                await self._browser.close()
            except PlaywrightError:
                pass
            _kill_chromium(_descendants(self._roots))
            self._roots.clear()
            self._browser = None
        before = chromium_pids()
        t0 = time.perf_counter()
        for attempt in (0, 1):
            if self._pw is None:
                self._pw = await async_playwright().start()
            try:
                self._browser = await self._pw.chromium.launch(
                    executable_path=self.config.executable_path,
                    headless=self.config.headless,
                    args=[*self.config.args, *self.config.extra_args],
                    timeout=self.config.launch_timeout_s * 1000,
                )
                break
            except PlaywrightError as e:
                # The driver itself may be gone (killed with the browser): restart it once.
                log.warning("Chromium launch failed (%s); restarting the Playwright driver", str(e).splitlines()[0])
                try:
                    await self._pw.stop()
                except Exception:  # the driver is already dead
                    pass
                self._pw = None
                if attempt:
                    raise EnvFailure(f"could not launch Chromium at {self.config.executable_path}: {e}") from e
        table = _proc_table()
        self._roots = {p for p in chromium_pids() - before if "--type=" not in table.get(p, (0, ""))[1]}
        self.generation += 1
        self.launches += 1
        log.debug("Chromium launched in %.2f s (pids %s)", time.perf_counter() - t0, sorted(self._roots))

    async def _aclose(self) -> None:
        if self._browser is not None:
            try:
                await self._browser.close()
            except PlaywrightError:
                pass
            self._browser = None
        if self._pw is not None:
            try:
                await self._pw.stop()
            except Exception:  # already stopped or the driver died
                pass
            self._pw = None

    def browser_pids(self) -> set[int]:
        """Pids of the Chromium processes of this pool's current browser (for tests and monitoring)."""
        return _descendants(self._roots) & chromium_pids()

    def close(self) -> None:
        """Close the browser and stop the loop thread. Kills leftover Chromium processes. Idempotent."""
        if self._closed:
            return
        pids = _descendants(self._roots)
        try:
            fut = asyncio.run_coroutine_threadsafe(self._aclose(), self._loop)
            fut.result(self.config.launch_timeout_s)
        except Exception as e:  # closing must not raise; leftovers are killed below
            log.warning("closing the browser failed: %s", e)
        self._closed = True
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self._loop.close()
        # Chromium exits asynchronously after close(); give it a moment, then kill what remains.
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline and any(os.path.exists(f"/proc/{p}") for p in pids):
            time.sleep(0.05)
        killed = _kill_chromium({p for p in pids if os.path.exists(f"/proc/{p}")})
        if killed:
            log.warning("killed %d leftover Chromium processes", killed)
        self._roots.clear()

    def __enter__(self) -> BrowserPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class PageSession:
    """One browser context with one page, reopened after a crash or a browser relaunch.

    :attr:`cdp` is a raw DevTools session on the page: envs take their screenshots through it
    (``Page.captureScreenshot``), which skips the per-call preparation of ``page.screenshot``.
    """

    def __init__(self, pool: BrowserPool, *, viewport: tuple[int, int]) -> None:
        self.pool = pool
        self.viewport = viewport
        self._context: BrowserContext | None = None
        self._page: Page | None = None
        self._cdp: CDPSession | None = None
        self._generation = -1
        self._crashed = False
        #: Main-frame navigations committed in the current page (see :meth:`await_navigation`).
        self.navigations = 0
        self._navigated: asyncio.Event | None = None

    @property
    def is_open(self) -> bool:
        return (
            self._page is not None
            and not self._crashed
            and self._generation == self.pool.generation
            and not self._page.is_closed()
        )

    async def ensure(self) -> tuple[Page, bool]:
        """The page, opening a new one if needed. The flag says whether it is new (needs loading)."""
        browser = await self.pool.browser()  # relaunches a dead browser
        if self.is_open:
            assert self._page is not None
            return self._page, False
        await self.discard()
        ctx = await browser.new_context(
            viewport={"width": self.viewport[0], "height": self.viewport[1]},
            device_scale_factor=1,
            service_workers="block",
        )
        self._context = ctx  # closed by discard() if what follows fails
        nav_ms = self.pool.config.navigation_timeout_s * 1000
        ctx.set_default_navigation_timeout(nav_ms)
        ctx.set_default_timeout(self.pool.config.operation_timeout_s * 1000)
        await ctx.add_init_script(script=HIDE_CARET_JS + NAV_WATCH_JS)
        page = await ctx.new_page()
        page.on("crash", self._on_crash)
        self.navigations = 0
        self._navigated = asyncio.Event()
        page.on("framenavigated", lambda frame: self._on_navigated(page, frame))
        self._cdp = await ctx.new_cdp_session(page)
        self._page = page
        self._generation = self.pool.generation
        self._crashed = False
        return page, True

    def current(self) -> Page:
        """The open page; raises :class:`EnvFailure` if it crashed or the browser was relaunched."""
        if not self.is_open:
            raise EnvFailure("the page was lost (page or browser crash); the episode cannot continue")
        assert self._page is not None
        return self._page

    @property
    def cdp(self) -> CDPSession:
        """The DevTools session of the open page (see :meth:`current`)."""
        if self._cdp is None or not self.is_open:
            raise EnvFailure("the page was lost (page or browser crash); the episode cannot continue")
        return self._cdp

    def _on_navigated(self, page: Page, frame: Any) -> None:
        if frame == page.main_frame:
            self.navigations += 1
            if self._navigated is not None:
                self._navigated.set()

    async def await_navigation(self, page: Page, leaving: int, mark: int, timeout_s: float) -> bool:
        """Wait until the main frame commits a navigation counted after ``mark`` (a
        :attr:`navigations` value read before ``leaving`` was), when the document said it is
        ``leaving`` (see :data:`NAV_WATCH_JS`); then until the new document's DOMContentLoaded.

        Returns whether a new document came. A navigation that never commits (a download, a 204
        response, one cancelled by the page) leaves the old document in place: the wait gives up
        after ``timeout_s`` and the caller observes that document.
        """
        if not leaving or self._navigated is None:
            return False
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while self.navigations == mark:
            self._navigated.clear()
            if self.navigations != mark:
                break
            try:
                await asyncio.wait_for(self._navigated.wait(), max(0.0, deadline - loop.time()))
            except asyncio.TimeoutError:
                log.warning("a navigation the page started did not commit within %.0f s; observing the current page", timeout_s)
                return False
        await page.wait_for_load_state("domcontentloaded")
        return True

    def _on_crash(self, _page: Page) -> None:
        log.warning("a page crashed")
        self._crashed = True

    async def discard(self) -> None:
        """Close the context (if any); the next :meth:`ensure` opens a fresh one."""
        ctx, self._context, self._page, self._cdp = self._context, None, None, None
        if ctx is not None:
            try:
                await asyncio.wait_for(ctx.close(), 5.0)
            except (PlaywrightError, asyncio.TimeoutError):
                pass
