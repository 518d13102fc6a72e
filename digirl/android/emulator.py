"""Pools of Android devices: emulators this process starts, or phones already attached.

:class:`EmulatorPool` starts ``n`` headless emulators of one AVD on distinct console ports
(``-read-only`` lets them share the AVD, so nothing is cloned), waits for ``sys.boot_completed``
with a bound, resets an episode by loading a named snapshot through the emulator console (what
``adb emu avd snapshot load <name>`` does: seconds, not a cold boot), health-checks each slot
(``get-state`` + a shell ``echo``) and restarts a dead emulator. ``close()`` stops only the
processes the pool started: console ``kill`` first, then terminate, then kill.

:class:`DevicePool` offers the same interface over physical devices (no snapshots: a reset
force-stops the listed packages and presses HOME).
"""

from __future__ import annotations

import logging
import os
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from digirl.android.console import ConsoleError, EmulatorConsole
from digirl.android.device import AdbDevice, AndroidDeviceError, DeviceOfflineError
from digirl.core.errors import EnvFailure

__all__ = ["HEADLESS_FLAGS", "DevicePool", "DeviceProvider", "EmulatorBootError", "EmulatorPool"]

log = logging.getLogger(__name__)

#: Flags for unattended emulators; ``-read-only`` allows several instances of one AVD.
HEADLESS_FLAGS = ("-no-window", "-no-audio", "-no-boot-anim", "-read-only", "-no-snapshot-save")


class EmulatorBootError(EnvFailure):
    """An emulator exited or did not finish booting within the bound."""


class DeviceProvider(Protocol):
    """What :class:`~digirl.android.env.AndroidEnv` needs from a pool of devices."""

    def __len__(self) -> int: ...

    def device(self, i: int) -> AdbDevice: ...

    def reset(self, i: int) -> dict[str, Any]: ...

    def is_healthy(self, i: int) -> bool: ...

    def ensure_healthy(self, i: int) -> bool: ...

    def close(self) -> None: ...


@dataclass
class _Slot:
    index: int
    port: int
    device: AdbDevice
    proc: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None
    restarts: int = 0
    spawned_at: float = 0.0
    boots: list[float] = field(default_factory=list)

    @property
    def serial(self) -> str:
        return self.device.serial


class EmulatorPool:
    """``n`` emulators of ``avd`` on console ports ``base_port, base_port + 2, ...``.

    ``emulator_bin`` is the SDK's ``emulator`` executable; the emulators register with the adb
    server at ``adb_host:adb_port`` (passed as ``ANDROID_ADB_SERVER_PORT``). ``snapshot`` names the
    clean-state snapshot saved in the AVD (see docs/android.md). Use as a context manager.
    """

    def __init__(
        self,
        avd: str,
        n: int,
        *,
        emulator_bin: str = "emulator",
        adb_host: str = "127.0.0.1",
        adb_port: int = 5037,
        base_port: int = 5554,
        snapshot: str = "digirl_clean",
        headless_flags: Sequence[str] = HEADLESS_FLAGS,
        extra_args: Sequence[str] = (),
        boot_timeout_s: float = 300.0,
        reset_timeout_s: float = 60.0,
        kill_timeout_s: float = 15.0,
        poll_s: float = 0.5,
        console_token_path: str | None = None,
        log_dir: str | os.PathLike[str] | None = None,
        env: dict[str, str] | None = None,
        device_kwargs: dict[str, Any] | None = None,
    ) -> None:
        if n < 1:
            raise ValueError("an emulator pool needs n >= 1")
        if base_port % 2 or not (1024 <= base_port <= 65534 - 2 * n):
            raise ValueError(f"base_port must be an even port in [1024, {65534 - 2 * n}], got {base_port}")
        self.avd = avd
        self.emulator_bin = emulator_bin
        self.adb_host = adb_host
        self.adb_port = adb_port
        self.snapshot = snapshot
        self.headless_flags = tuple(headless_flags)
        self.extra_args = tuple(extra_args)
        self.boot_timeout_s = boot_timeout_s
        self.reset_timeout_s = reset_timeout_s
        self.kill_timeout_s = kill_timeout_s
        self.poll_s = poll_s
        self.console_token_path = console_token_path
        self.log_dir = Path(log_dir) if log_dir else None
        self.env = dict(env or {})
        kw = dict(device_kwargs or {})
        self._slots = [
            _Slot(
                i,
                base_port + 2 * i,
                AdbDevice(f"emulator-{base_port + 2 * i}", host=adb_host, port=adb_port, **kw),
            )
            for i in range(n)
        ]
        self._started = False

    # ------------------------------------------------------------------ introspection
    def __len__(self) -> int:
        return len(self._slots)

    def __repr__(self) -> str:
        return f"EmulatorPool(avd={self.avd!r}, n={len(self)}, ports={[s.port for s in self._slots]})"

    @property
    def serials(self) -> list[str]:
        return [s.serial for s in self._slots]

    def device(self, i: int) -> AdbDevice:
        return self._slots[i].device

    def console(self, i: int) -> EmulatorConsole:
        return EmulatorConsole(self._slots[i].port, token_path=self.console_token_path, timeout_s=10.0)

    def stats(self) -> list[dict[str, Any]]:
        """Per slot: serial, pid, restarts and boot times (seconds)."""
        return [
            {
                "serial": s.serial,
                "pid": s.proc.pid if s.proc else None,
                "restarts": s.restarts,
                "boot_s": [round(b, 3) for b in s.boots],
            }
            for s in self._slots
        ]

    # ------------------------------------------------------------------ lifecycle
    def command_line(self, i: int) -> list[str]:
        s = self._slots[i]
        cmd = [self.emulator_bin, "-avd", self.avd, "-port", str(s.port), *self.headless_flags]
        if self.snapshot:
            cmd += ["-snapshot", self.snapshot]
        return cmd + list(self.extra_args)

    def _spawn(self, s: _Slot) -> None:
        env = {**os.environ, **self.env, "ANDROID_ADB_SERVER_PORT": str(self.adb_port)}
        out: Any = subprocess.DEVNULL
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            s.log_path = self.log_dir / f"emulator-{s.port}.log"
            out = s.log_path.open("ab")
        try:
            s.proc = subprocess.Popen(
                self.command_line(s.index),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
            )
        except OSError as e:
            raise EmulatorBootError(f"cannot run the emulator {self.emulator_bin!r}: {e}") from e
        finally:
            if out is not subprocess.DEVNULL:
                out.close()
        s.spawned_at = time.monotonic()
        log.info("started %s (pid %d)", s.serial, s.proc.pid)

    def _log_tail(self, s: _Slot) -> str:
        if s.log_path is None or not s.log_path.exists():
            return ""
        return " | log: " + s.log_path.read_text(errors="replace")[-400:].replace("\n", " / ")

    def _wait_booted(self, s: _Slot, timeout_s: float, t0: float | None = None) -> float:
        """Wait until ``s`` is online with ``sys.boot_completed=1``; seconds since ``t0`` (default now)."""
        t0 = time.monotonic() if t0 is None else t0
        deadline = t0 + timeout_s
        while True:
            if s.proc is not None and s.proc.poll() is not None:
                raise EmulatorBootError(f"{s.serial} exited with code {s.proc.returncode} while booting{self._log_tail(s)}")
            try:
                if s.device.state() == "device" and s.device.getprop("sys.boot_completed") == "1":
                    return time.monotonic() - t0
            except AndroidDeviceError:
                pass  # not registered with adb yet
            if time.monotonic() >= deadline:
                raise EmulatorBootError(f"{s.serial} did not finish booting within {timeout_s:.0f}s{self._log_tail(s)}")
            time.sleep(self.poll_s)

    def start(self) -> None:
        """Start every emulator, then wait for each to boot. On failure, stop them all."""
        if self._started:
            return
        self._started = True
        try:
            for s in self._slots:
                self._spawn(s)
            for s in self._slots:  # they boot in parallel; each bound counts from its own start
                s.boots.append(self._wait_booted(s, self.boot_timeout_s, s.spawned_at))
        except BaseException:
            self.close()
            raise
        log.info("%d emulators booted: %s", len(self), self.serials)

    def _stop(self, s: _Slot) -> None:
        proc, s.proc = s.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            try:
                EmulatorConsole(s.port, token_path=self.console_token_path, timeout_s=5.0).kill()
            except ConsoleError as e:
                log.debug("console kill of %s failed: %s", s.serial, e)
            try:
                proc.wait(timeout=self.kill_timeout_s)
            except subprocess.TimeoutExpired:
                proc.terminate()
                try:
                    proc.wait(timeout=5.0)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=5.0)
        log.info("stopped %s (exit code %s)", s.serial, proc.returncode)

    def restart(self, i: int) -> float:
        """Stop slot ``i``'s emulator (if still running) and boot a fresh one. Returns boot seconds."""
        s = self._slots[i]
        self._stop(s)
        s.restarts += 1
        self._spawn(s)
        try:
            took = self._wait_booted(s, self.boot_timeout_s, s.spawned_at)
        except BaseException:
            self._stop(s)
            raise
        s.boots.append(took)
        return took

    def close(self) -> None:
        """Stop every emulator this pool started. Safe to call twice."""
        for s in self._slots:
            try:
                self._stop(s)
            except Exception as e:  # keep stopping the others
                log.warning("could not stop %s: %s", s.serial, e)
        self._started = False

    def __enter__(self) -> EmulatorPool:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ episodes
    def is_healthy(self, i: int) -> bool:
        s = self._slots[i]
        if s.proc is None or s.proc.poll() is not None:
            return False
        return s.device.ping()

    def ensure_healthy(self, i: int) -> bool:
        """Restart slot ``i`` if it is dead or unresponsive. Returns True when it restarted it."""
        if self.is_healthy(i):
            return False
        log.warning("%s is unhealthy; restarting it", self._slots[i].serial)
        self.restart(i)
        return True

    def reset(self, i: int) -> dict[str, Any]:
        """Load the clean snapshot on slot ``i`` (restarting a dead emulator first)."""
        t0 = time.monotonic()
        restarted = self.ensure_healthy(i)
        s = self._slots[i]
        if self.snapshot:
            self.console(i).snapshot_load(self.snapshot)
            self._wait_booted(s, self.reset_timeout_s)
        return {"reset_s": round(time.monotonic() - t0, 4), "restarted": restarted, "serial": s.serial}


class DevicePool:
    """Physical devices (or emulators started elsewhere) by serial; no process management.

    A reset force-stops ``reset_packages`` and presses HOME: physical devices have no snapshots,
    so state that apps keep (logins, carts, history) persists between episodes.
    """

    def __init__(
        self,
        serials: Sequence[str],
        *,
        adb_host: str = "127.0.0.1",
        adb_port: int = 5037,
        reset_packages: Sequence[str] = (),
        online_timeout_s: float = 30.0,
        device_kwargs: dict[str, Any] | None = None,
    ) -> None:
        if not serials:
            raise ValueError("DevicePool needs at least one serial")
        kw = dict(device_kwargs or {})
        self._devices = [AdbDevice(s, host=adb_host, port=adb_port, **kw) for s in serials]
        self.reset_packages = tuple(reset_packages)
        self.online_timeout_s = online_timeout_s

    def __len__(self) -> int:
        return len(self._devices)

    def __repr__(self) -> str:
        return f"DevicePool({[d.serial for d in self._devices]})"

    def device(self, i: int) -> AdbDevice:
        return self._devices[i]

    def is_healthy(self, i: int) -> bool:
        return self._devices[i].ping()

    def ensure_healthy(self, i: int) -> bool:
        """Wait (bounded) for the device to come back; raise :class:`DeviceOfflineError` if it does not."""
        deadline = time.monotonic() + self.online_timeout_s
        while not self.is_healthy(i):
            if time.monotonic() >= deadline:
                raise DeviceOfflineError(f"{self._devices[i].serial} is not reachable (waited {self.online_timeout_s}s)")
            time.sleep(0.5)
        return False

    def reset(self, i: int) -> dict[str, Any]:
        t0 = time.monotonic()
        self.ensure_healthy(i)
        d = self._devices[i]
        for p in self.reset_packages:
            d.force_stop(p)
        d.home()
        return {"reset_s": round(time.monotonic() - t0, 4), "restarted": False, "serial": d.serial}

    def close(self) -> None:
        """Nothing to stop: the devices are not ours."""
