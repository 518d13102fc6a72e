"""AdbDevice end to end: the real adbutils client → TCP → the test ADB server → a ToyEnv screen.

The server is a protocol-level test double (see android_adb_server.py), not an emulator.
"""

from __future__ import annotations

import socket
import time
from typing import Any

import numpy as np
import pytest

pytest.importorskip("adbutils")
pytestmark = pytest.mark.android

from android_adb_server import EnvScreen, ScreenDevice  # noqa: E402

from digirl.android.device import (  # noqa: E402
    AdbDevice,
    AdbUnavailableError,
    DeviceOfflineError,
    ScreenshotError,
    SettleConfig,
    UntypableTextError,
)
from digirl.core.actions import Action  # noqa: E402
from digirl.core.errors import EnvFailure  # noqa: E402
from digirl.envs.toy import ToyEnv  # noqa: E402

FAST = SettleConfig(min_wait_s=0.0, poll_interval_s=0.0, max_wait_s=0.5)


def _device(adb_server: Any, mode: str = "tap", seed: int = 0, **kw: Any) -> tuple[AdbDevice, ScreenDevice, EnvScreen]:
    screen = EnvScreen(ToyEnv(mode=mode, width=72, height=160, horizon=50), seed=seed)
    dev = ScreenDevice(screen, **kw)
    adb_server.add_device("emulator-5554", dev)
    return AdbDevice("emulator-5554", port=adb_server.port, settle=FAST, command_timeout_s=5), dev, screen


def test_screenshot_tap_and_settle_drive_the_env(adb_server: Any) -> None:
    d, dev, screen = _device(adb_server)
    assert d.state() == "device" and d.ping()
    shot = d.screenshot()
    assert shot.dtype == np.uint8 and shot.shape == (160, 72, 3)
    assert np.array_equal(shot, screen.screenshot())
    # The expert's normalized tap, mapped to pixels by the device and back by the server, solves the task.
    d.perform(screen.env.cheat())
    assert screen.rewards == [1.0]
    assert any(c.startswith("input tap ") for c in dev.commands)
    res = d.settle()
    assert res.settled and res.polls == 2 and res.info()["settle_s"] < 0.5
    # exec: (not shell:) carries the PNG, and the shell,v2-free shell path is used for input.
    assert "exec:screencap -p" in adb_server.requests


def test_swipe_keys_and_text_escaping_over_the_wire(adb_server: Any) -> None:
    d, dev, screen = _device(adb_server, mode="type")
    d.swipe(0.5, 0.8, 0.5, 0.2, duration_ms=120)
    assert dev.commands[-1] == "input swipe 36 128 36 32 120"
    assert screen.actions[-1].is_swipe
    tricky = 'it\'s "$HOME" `id` & | ; <x> (y) \\ * ? ~ #1 50%sale\nnext'
    d.text(tricky)
    assert "".join(dev.typed) == tricky
    for name, code in (("back", 4), ("home", 3), ("enter", 66)):
        d.key(name)
        assert dev.commands[-1] == f"input keyevent {code}"
    with pytest.raises(ValueError):
        d.key("volume_up_please")


def test_emoji_without_and_with_adbkeyboard(adb_server: Any) -> None:
    d, dev, _ = _device(adb_server, mode="type")
    with pytest.raises(UntypableTextError) as ei:
        d.text("ok 👍")
    assert not isinstance(ei.value, EnvFailure)  # the agent's problem, not the env's
    dev.adbkeyboard = True
    d2 = AdbDevice("emulator-5554", port=adb_server.port, settle=FAST)
    d2.text("ok 👍")
    assert dev.typed[-1] == "ok 👍"


def test_screenshot_that_is_not_an_image(adb_server: Any) -> None:
    d, dev, _ = _device(adb_server)
    dev.screencap_override = b"/system/bin/sh: screencap: inaccessible or not found\n"
    with pytest.raises(ScreenshotError, match="did not return a PNG"):
        d.screenshot()
    dev.screencap_override = b"\x89PNG\r\n\x1a\n" + b"\x00" * 40
    with pytest.raises(ScreenshotError, match="corrupt PNG"):
        d.screenshot()
    assert issubclass(ScreenshotError, EnvFailure)


def test_offline_missing_device_and_unreachable_server(adb_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    d, dev, _ = _device(adb_server)
    dev.state = "offline"
    assert not d.ping()
    with pytest.raises(DeviceOfflineError, match="offline"):
        d.tap(0.5, 0.5)
    adb_server.remove_device("emulator-5554")
    with pytest.raises(DeviceOfflineError, match="not found"):
        d.screenshot()
    # A port nobody listens on: a clear error, and no adb server is spawned behind our back.
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    import adbutils._adb

    def no_spawn(*a: Any, **k: Any) -> None:
        raise AssertionError(f"adbutils tried to run {a!r}")

    monkeypatch.setattr(adbutils._adb.subprocess, "run", no_spawn)
    t0 = time.monotonic()
    with pytest.raises(AdbUnavailableError, match="unreachable"):
        AdbDevice("emulator-5554", port=port).screenshot()
    assert time.monotonic() - t0 < 2.0


def test_settle_is_bounded_on_a_screen_that_keeps_changing(adb_server: Any) -> None:
    d, dev, _ = _device(adb_server)
    frames = iter(range(10_000))

    class Blinking:
        env = None

        def screenshot(self) -> np.ndarray:
            img = np.zeros((160, 72, 3), np.uint8)
            img[:, :, 0] = (next(frames) * 97) % 256  # every frame differs
            return img

        def act(self, action: Action) -> None:
            pass

    dev.screen = Blinking()
    res = d.settle(SettleConfig(min_wait_s=0.0, poll_interval_s=0.01, max_wait_s=0.3))
    assert not res.settled and 0.3 <= res.seconds < 1.0 and res.polls >= 3


def test_launch_foreground_and_ui_hierarchy(adb_server: Any) -> None:
    d, _, screen = _device(adb_server)
    assert d.foreground_activity() == "com.android.launcher3/.Launcher"
    d.launch("com.android.chrome")
    assert d.foreground_package() == "com.android.chrome"
    d.launch("com.google.android.youtube", "com.google.android.apps.youtube.app.WatchWhileActivity")
    assert d.foreground_activity() == "com.google.android.youtube/com.google.android.apps.youtube.app.WatchWhileActivity"
    with pytest.raises(ValueError):
        d.launch("evil; reboot")
    els = d.ui_hierarchy()
    assert len(els) == 4 and {e.text for e in els} == {"red", "green", "blue", "yellow"}
    target = next(e for e in els if e.text == screen.env._target)
    d.tap(*target.center)
    assert screen.rewards == [1.0]
    assert d.getprop("sys.boot_completed") == "1" and d.wm_size() == (72, 160)
