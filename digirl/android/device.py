"""One Android device (emulator or phone) driven over adb with ``adbutils``.

:class:`AdbDevice` takes screenshots (``exec:screencap -p``, PNG, validated), sends taps and
swipes (normalized coordinates mapped onto the pixels of the last screenshot, so rotation is
handled), types text (see :mod:`digirl.android.textinput` for the escaping rules), presses keys,
launches apps, reads the foreground activity and, optionally, the UI hierarchy.

After an action it **settles by observation**: it polls screenshots, hashing a downscaled grey
copy of each, until ``stable_frames`` consecutive frames hash the same or ``max_wait_s`` passes,
instead of sleeping a fixed 5 s; the time spent is reported in the step info.

Every adb-level failure (server unreachable, device offline or gone, timeout, a screenshot that
is not an image) raises a subclass of :class:`digirl.core.errors.EnvFailure`, so runners record
an environment failure instead of a task failure. The client never spawns an adb server by
itself (``adbutils`` would); start one with ``adb start-server`` or pass ``auto_start_server``.
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from PIL import Image, UnidentifiedImageError

from digirl.android.textinput import UntypableTextError, plan_text_input
from digirl.core.actions import Action, ActionType
from digirl.core.errors import EnvFailure
from digirl.core.types import UIElement
from digirl.utils.images import resize

try:
    import adbutils
    from adbutils import AdbConnection as _AdbConnection
    from adbutils.errors import AdbConnectionError, AdbError, AdbTimeout
except ModuleNotFoundError as _e:  # pragma: no cover - exercised only without the extra
    raise ModuleNotFoundError("digirl.android needs adbutils: pip install 'digirl[android]'", name=_e.name) from _e

__all__ = [
    "KEYCODES",
    "AdbDevice",
    "AdbUnavailableError",
    "AndroidDeviceError",
    "DeviceOfflineError",
    "DeviceTimeoutError",
    "ScreenshotError",
    "SettleConfig",
    "SettleResult",
    "UntypableTextError",
    "frame_hash",
    "parse_ui_dump",
]

log = logging.getLogger(__name__)
T = TypeVar("T")

KEYCODES: dict[str, int] = {"home": 3, "back": 4, "enter": 66, "tab": 61, "del": 67, "app_switch": 187}
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_PACKAGE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$")
_ACTIVITY_RE = re.compile(r"^[A-Za-z0-9_.$]+$")
_FOCUS_RES = (
    re.compile(r"mCurrentFocus=Window\{[^}]*?\s([\w.]+)/([\w.$]+)\}"),
    re.compile(r"mFocusedApp=.*?ActivityRecord\{[^}]*?\s([\w.]+)/([\w.$]+)"),
    re.compile(r"mResumedActivity:.*?\s([\w.]+)/([\w.$]+)"),
)


class AndroidDeviceError(EnvFailure):
    """Base class of device failures; an :class:`EnvFailure`, so the episode is not the agent's fault."""


class AdbUnavailableError(AndroidDeviceError):
    """The adb server cannot be reached."""


class DeviceOfflineError(AndroidDeviceError):
    """The device is offline, unauthorized or no longer listed by the adb server."""


class DeviceTimeoutError(AndroidDeviceError):
    """An adb command did not answer in time."""


class ScreenshotError(AndroidDeviceError):
    """``screencap`` returned something that is not an image."""


@dataclass(frozen=True)
class SettleConfig:
    """How to wait for the screen to settle after an action.

    ``stable_frames`` consecutive equal frame hashes end the wait; ``max_wait_s`` bounds it;
    ``min_wait_s`` gives the device time to *start* reacting before the first poll.
    """

    stable_frames: int = 2
    max_wait_s: float = 3.0
    min_wait_s: float = 0.15
    poll_interval_s: float = 0.05
    #: Hash grid (width, height) and grey-level quantization shift; tolerant of tiny noise.
    hash_size: tuple[int, int] = (36, 64)
    quant_shift: int = 3

    def __post_init__(self) -> None:
        if self.stable_frames < 1:
            raise ValueError("stable_frames must be >= 1")
        if self.max_wait_s < 0 or self.min_wait_s < 0 or self.poll_interval_s < 0:
            raise ValueError("settle times must be >= 0")


@dataclass
class SettleResult:
    """The frame the screen settled on and how long it took."""

    frame: np.ndarray
    seconds: float
    polls: int
    settled: bool

    def info(self) -> dict[str, Any]:
        return {"settle_s": round(self.seconds, 4), "settle_polls": self.polls, "settled": self.settled}


def frame_hash(img: Image.Image, size: tuple[int, int] = (36, 64), quant_shift: int = 3) -> str:
    """A cheap perceptual hash: grey, downscaled, quantized; equal for visually equal frames."""
    small = resize(img.convert("L"), size, Image.Resampling.BILINEAR)
    arr = np.asarray(small, dtype=np.uint8) >> quant_shift
    return hashlib.blake2b(arr.tobytes(), digest_size=16).hexdigest()


def decode_png(data: bytes) -> Image.Image:
    """Decode ``screencap -p`` output or raise :class:`ScreenshotError` with what came back."""
    if not data.startswith(_PNG_MAGIC):
        head = data[:60]
        raise ScreenshotError(f"screencap did not return a PNG ({len(data)} bytes, starting {head!r})")
    try:
        img = Image.open(io.BytesIO(data))
        img.load()
    except (UnidentifiedImageError, OSError, SyntaxError) as e:
        raise ScreenshotError(f"screencap returned a corrupt PNG ({len(data)} bytes): {e}") from e
    return img


class _NoSpawnConnection(_AdbConnection):  # type: ignore[misc]
    """adbutils' connection, minus its habit of running ``adb start-server`` when connect fails.

    Overrides a private hook of adbutils (checked with 2.12); tests assert no server is spawned.
    """

    def _safe_connect(self) -> Any:
        return self._create_socket()


class _Client(adbutils.AdbClient):  # type: ignore[misc]
    def __init__(self, host: str, port: int, socket_timeout: float | None, auto_start: bool) -> None:
        super().__init__(host=host, port=port, socket_timeout=socket_timeout)
        self._timeout = socket_timeout
        self._auto_start = auto_start

    def make_connection(self, timeout: float | None = None) -> Any:
        if self._auto_start:
            return super().make_connection(timeout)
        try:
            c = _NoSpawnConnection(self.host, self.port)
        except TimeoutError as e:
            raise AdbTimeout("connect to adb server timeout") from e
        t = timeout or self._timeout
        if t:
            c.conn.settimeout(t)
        return c


class AdbDevice:
    """A device reached through an adb server at ``host:port``.

    ``command_timeout_s`` bounds every adb command; ``settle`` configures the wait after actions;
    ``adbkeyboard`` says whether the ADBKeyBoard IME may be used for non-ASCII text (``None``:
    detect on first need); ``swipe_ms`` is the swipe duration.
    """

    def __init__(
        self,
        serial: str,
        *,
        host: str = "127.0.0.1",
        port: int = 5037,
        command_timeout_s: float = 20.0,
        settle: SettleConfig | None = None,
        adbkeyboard: bool | None = None,
        swipe_ms: int = 300,
        auto_start_server: bool = False,
    ) -> None:
        if not serial:
            raise ValueError("AdbDevice needs a serial (see `adb devices`)")
        self.serial = serial
        self.host = host
        self.port = port
        self.command_timeout_s = command_timeout_s
        self.settle_config = settle or SettleConfig()
        self.swipe_ms = swipe_ms
        self._adbkeyboard = adbkeyboard
        self._client = _Client(host, port, command_timeout_s, auto_start_server)
        self._dev = self._client.device(serial)
        self._last_size: tuple[int, int] | None = None
        self._wm_size: tuple[int, int] | None = None

    def __repr__(self) -> str:
        return f"AdbDevice(serial={self.serial!r}, host={self.host!r}, port={self.port})"

    # ------------------------------------------------------------------ error mapping
    @contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        try:
            yield
        except AndroidDeviceError:
            raise
        except AdbTimeout as e:
            raise DeviceTimeoutError(f"{self.serial}: {what} timed out after {self.command_timeout_s}s") from e
        except AdbConnectionError as e:
            raise AdbUnavailableError(f"adb server at {self.host}:{self.port} unreachable ({what}): {e}") from e
        except AdbError as e:
            raise DeviceOfflineError(f"{self.serial}: {what} failed: {e}") from e
        except (TimeoutError, EOFError) as e:
            raise DeviceTimeoutError(f"{self.serial}: {what} failed: {e!r}") from e
        except ConnectionRefusedError as e:
            raise AdbUnavailableError(f"adb server at {self.host}:{self.port} unreachable ({what})") from e
        except OSError as e:
            raise DeviceOfflineError(f"{self.serial}: {what} failed: {e!r}") from e

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        with self._errors(what):
            return fn()

    # ------------------------------------------------------------------ raw commands
    def shell(self, cmd: str) -> str:
        """Run ``cmd`` in the device shell and return its output (stdout and stderr merged)."""
        out: str = self._call(cmd.split(" ", 1)[0], lambda: self._dev.shell(cmd, timeout=self.command_timeout_s))
        return out

    def exec_out(self, cmd: str) -> bytes:
        """Run ``cmd`` through the ``exec:`` service: raw bytes, no pty newline mangling."""

        def run() -> bytes:
            c = self._dev.open_transport(timeout=self.command_timeout_s)
            try:
                c.send_command("exec:" + cmd)
                c.check_okay()
                data: bytes = c.read_until_close(encoding=None)
                return data
            finally:
                c.close()

        return self._call(cmd.split(" ", 1)[0], run)

    def _input(self, cmd: str) -> None:
        out = self.shell(cmd)
        # `input` prints a Java exception or an error line instead of failing with a status.
        if "Exception" in out or out.startswith(("Error", "error")) or "not found" in out:
            raise AndroidDeviceError(f"{self.serial}: `{cmd[:60]}` failed: {out[:300]}")

    def state(self) -> str:
        """The adb state (``device``, ``offline``, ``unauthorized``...)."""
        s: str = self._call("get-state", self._dev.get_state)
        return s

    def ping(self) -> bool:
        """True when the device is listed as ``device`` and answers a shell ``echo``."""
        try:
            return self.state() == "device" and self.shell("echo digirl-ok").strip() == "digirl-ok"
        except AndroidDeviceError:
            return False

    def getprop(self, name: str) -> str:
        if not re.fullmatch(r"[\w.\-]+", name):
            raise ValueError(f"bad property name {name!r}")
        return self.shell(f"getprop {name}").strip()

    # ------------------------------------------------------------------ screen
    def screenshot_image(self) -> Image.Image:
        """The screen as a PIL image (validated PNG from ``screencap -p``)."""
        img = decode_png(self.exec_out("screencap -p"))
        self._last_size = img.size
        return img

    def screenshot(self) -> np.ndarray:
        """The screen as uint8 H×W×3 (RGB, device resolution)."""
        return np.asarray(self.screenshot_image().convert("RGB"), dtype=np.uint8)

    def wm_size(self) -> tuple[int, int]:
        """Screen size in pixels from ``wm size`` (the override size when one is set)."""
        if self._wm_size is None:
            out = self.shell("wm size")
            sizes = re.findall(r"(Physical|Override) size:\s*(\d+)x(\d+)", out)
            if not sizes:
                raise AndroidDeviceError(f"{self.serial}: cannot parse `wm size` output {out[:120]!r}")
            pick = [s for s in sizes if s[0] == "Override"] or sizes
            self._wm_size = (int(pick[0][1]), int(pick[0][2]))
        return self._wm_size

    def screen_size(self) -> tuple[int, int]:
        """(width, height) that normalized coordinates map onto: the last screenshot's size
        (it follows rotation, and it is what the agent saw), else ``wm size``."""
        return self._last_size or self.wm_size()

    def _px(self, x: float, y: float) -> tuple[int, int]:
        if not (0.0 <= x <= 1.0 and 0.0 <= y <= 1.0):
            raise ValueError(f"coordinates must be normalized to [0, 1], got ({x}, {y})")
        w, h = self.screen_size()
        return (min(w - 1, round(x * w)), min(h - 1, round(y * h)))

    # ------------------------------------------------------------------ input
    def tap(self, x: float, y: float) -> None:
        """Tap at normalized ``(x, y)``."""
        px, py = self._px(x, y)
        self._input(f"input tap {px} {py}")

    def swipe(self, x0: float, y0: float, x1: float, y1: float, duration_ms: int | None = None) -> None:
        """Swipe from ``(x0, y0)`` to ``(x1, y1)`` (normalized)."""
        a, b = self._px(x0, y0)
        c, d = self._px(x1, y1)
        self._input(f"input swipe {a} {b} {c} {d} {int(duration_ms or self.swipe_ms)}")

    def key(self, key: str | int) -> None:
        """Press a key by name (``back``, ``home``, ``enter``...) or Android keycode."""
        code = KEYCODES.get(key.lower()) if isinstance(key, str) else int(key)
        if code is None:
            raise ValueError(f"unknown key {key!r}; known: {', '.join(KEYCODES)}")
        self._input(f"input keyevent {code}")

    def back(self) -> None:
        self.key("back")

    def home(self) -> None:
        self.key("home")

    def enter(self) -> None:
        self.key("enter")

    def has_adbkeyboard(self) -> bool:
        """Whether ADBKeyBoard is the active IME (checked once, then cached)."""
        if self._adbkeyboard is None:
            ime = self.shell("settings get secure default_input_method")
            self._adbkeyboard = "com.android.adbkeyboard" in ime
        return self._adbkeyboard

    def text(self, text: str) -> None:
        """Type ``text`` into the focused field.

        Raises :class:`UntypableTextError` (not an env failure) when the text cannot be typed.
        """
        needs_ime = any(not c.isascii() for c in text)
        plan = plan_text_input(text, adbkeyboard=needs_ime and self.has_adbkeyboard())
        for cmd in plan:
            if cmd.kind == "ime":
                out = self.shell(cmd.command)
                if "result=0" not in out and "Broadcast completed" not in out:
                    raise AndroidDeviceError(f"{self.serial}: ADBKeyBoard broadcast failed: {out[:200]}")
            else:
                self._input(cmd.command)

    # ------------------------------------------------------------------ apps and UI
    def launch(self, package: str, activity: str | None = None) -> None:
        """Start ``package`` (its launcher activity, or ``activity`` when given)."""
        if not _PACKAGE_RE.match(package):
            raise ValueError(f"not a package name: {package!r}")
        if activity is not None:
            if not _ACTIVITY_RE.match(activity):
                raise ValueError(f"not an activity name: {activity!r}")
            out = self.shell(f"am start -W -n {package}/{activity}")
        else:
            out = self.shell(f"monkey -p {package} -c android.intent.category.LAUNCHER 1")
        if "Error" in out or "No activities found" in out or "aborted" in out:
            raise AndroidDeviceError(f"{self.serial}: could not launch {package}: {out[:200]}")

    def force_stop(self, package: str) -> None:
        if not _PACKAGE_RE.match(package):
            raise ValueError(f"not a package name: {package!r}")
        self.shell(f"am force-stop {package}")

    def foreground_activity(self) -> str | None:
        """``package/activity`` of the focused window, or ``None`` when it cannot be read."""
        out = self.shell("dumpsys window")
        for rx in _FOCUS_RES:
            m = rx.search(out)
            if m:
                return f"{m.group(1)}/{m.group(2)}"
        return None

    def foreground_package(self) -> str | None:
        act = self.foreground_activity()
        return act.split("/", 1)[0] if act else None

    def ui_hierarchy(self) -> tuple[UIElement, ...]:
        """Visible elements from ``uiautomator dump`` (slow on real devices: ~1-2 s)."""
        path = "/sdcard/digirl_window_dump.xml"
        out = self.shell(f"uiautomator dump {path}")
        if "dumped" not in out.lower():
            raise AndroidDeviceError(f"{self.serial}: uiautomator dump failed: {out[:200]}")
        xml = self.exec_out(f"cat {path}").decode("utf-8", errors="replace")
        return parse_ui_dump(xml, self.screen_size())

    # ------------------------------------------------------------------ actions and settling
    def settle(self, config: SettleConfig | None = None) -> SettleResult:
        """Poll screenshots until ``stable_frames`` equal hashes in a row or ``max_wait_s``."""
        cfg = config or self.settle_config
        t0 = time.monotonic()
        if cfg.min_wait_s:
            time.sleep(cfg.min_wait_s)
        last_hash = ""
        run = 0
        polls = 0
        img = self.screenshot_image()
        polls += 1
        while True:
            h = frame_hash(img, cfg.hash_size, cfg.quant_shift)
            run = run + 1 if h == last_hash else 1
            last_hash = h
            elapsed = time.monotonic() - t0
            if run >= cfg.stable_frames or elapsed >= cfg.max_wait_s:
                break
            if cfg.poll_interval_s:
                time.sleep(min(cfg.poll_interval_s, max(0.0, cfg.max_wait_s - elapsed)))
            img = self.screenshot_image()
            polls += 1
        frame = np.asarray(img.convert("RGB"), dtype=np.uint8)
        return SettleResult(frame, time.monotonic() - t0, polls, run >= cfg.stable_frames)

    def perform(self, action: Action) -> None:
        """Send one valid action to the device (``STATUS_*`` actions do nothing here)."""
        t = action.type
        if t is ActionType.DUAL_POINT:
            assert action.touch is not None and action.lift is not None
            if action.is_tap:
                self.tap(*action.touch)
            else:
                self.swipe(*action.touch, *action.lift)
        elif t is ActionType.TYPE:
            self.text(action.text)
        elif t is ActionType.PRESS_BACK:
            self.back()
        elif t is ActionType.PRESS_HOME:
            self.home()
        elif t is ActionType.PRESS_ENTER:
            self.enter()
        elif t is ActionType.INVALID:
            raise ValueError("cannot perform an invalid action")


def _kind_of(cls: str) -> str:
    c = cls.rsplit(".", 1)[-1]
    if "EditText" in c:
        return "input"
    if "Button" in c and "Image" not in c:
        return "button"
    if "Image" in c:
        return "icon" if "Button" in c else "image"
    if "TextView" in c:
        return "text"
    return "view"


def _unit(v: int, n: int) -> float:
    return min(1.0, max(0.0, v / n))


def parse_ui_dump(xml: str, size: tuple[int, int]) -> tuple[UIElement, ...]:
    """UI elements from a ``uiautomator dump`` XML; bounds normalized by ``size`` = (w, h)."""
    w, h = size
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as e:
        raise AndroidDeviceError(f"uiautomator dump is not valid XML: {e}") from e
    out = []
    for node in root.iter("node"):
        m = re.fullmatch(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]", node.get("bounds", ""))
        if not m:
            continue
        x0, y0, x1, y1 = (int(v) for v in m.groups())
        if x1 <= x0 or y1 <= y0:
            continue
        text = node.get("text") or node.get("content-desc") or ""
        clickable = node.get("clickable") == "true"
        if not text and not clickable:
            continue
        out.append(
            UIElement(
                bounds=(_unit(x0, w), _unit(y0, h), _unit(x1, w), _unit(y1, h)),
                text=text,
                kind=_kind_of(node.get("class", "")),
                clickable=clickable,
                focused=node.get("focused") == "true",
                ref=node.get("resource-id", ""),
            )
        )
    return tuple(out)
