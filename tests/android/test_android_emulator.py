"""EmulatorPool and DevicePool against a FAKE emulator executable and the test ADB server."""

from __future__ import annotations

import json
import stat
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("adbutils")
pytestmark = pytest.mark.android

from android_adb_server import free_port_block  # noqa: E402

from digirl.android.console import ConsoleError, EmulatorConsole  # noqa: E402
from digirl.android.emulator import HEADLESS_FLAGS, DevicePool, EmulatorBootError, EmulatorPool  # noqa: E402
from digirl.core.errors import EnvFailure  # noqa: E402

FAKE = Path(__file__).parent / "android_fake_emulator.py"


def _setup(tmp_path: Path, cfg: dict[str, Any]) -> tuple[str, dict[str, str], str]:
    """Write the fake emulator (executable) and its config into tmp_path."""
    exe = tmp_path / "emulator"
    exe.write_text(f"#!{sys.executable}\n" + FAKE.read_text())
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    token = tmp_path / "console_token"
    token.write_text("s3cret-token\n")
    cfg.setdefault("default", {}).setdefault("token_file", str(token))
    (tmp_path / "fake.json").write_text(json.dumps(cfg))
    return str(exe), {"FAKE_EMU_CONFIG": str(tmp_path / "fake.json")}, str(token)


def _pool(tmp_path: Path, adb_server: Any, n: int, cfg: dict[str, Any], **kw: Any) -> EmulatorPool:
    exe, env, token = _setup(tmp_path, cfg)
    base = free_port_block(2 * n)
    return EmulatorPool(
        "digirl_pixel",
        n,
        emulator_bin=exe,
        adb_port=adb_server.port,
        base_port=base,
        env=env,
        console_token_path=token,
        boot_timeout_s=kw.pop("boot_timeout_s", 10.0),
        poll_s=0.05,
        kill_timeout_s=3.0,
        log_dir=tmp_path / "logs",
        **kw,
    )


def test_pool_boots_resets_restarts_and_shuts_down(tmp_path: Path, adb_server: Any) -> None:
    pool = _pool(tmp_path, adb_server, 2, {"default": {"boot_delay": 0.3}})
    with pool:
        procs = [s.proc for s in pool._slots]
        assert all(p is not None and p.poll() is None for p in procs)
        assert sorted(adb_server.device_states()) == sorted(pool.serials)
        # The command line is the headless, read-only one (no AVD cloning), with the snapshot.
        argv = json.loads((tmp_path / f"argv-{pool._slots[0].port}.jsonl").read_text().splitlines()[0])
        for flag in HEADLESS_FLAGS:
            assert flag in argv
        assert argv[argv.index("-snapshot") + 1] == "digirl_clean"
        assert all(s["boot_s"][0] >= 0.3 for s in pool.stats())  # waited for sys.boot_completed

        # Reset = snapshot load through the console (authenticated), not a reboot.
        dev = pool.device(0)
        dev.tap(0.5, 0.5)
        info = pool.reset(0)
        assert info["restarted"] is False and dev.getprop("digirl.snapshot_loads") == "1"
        assert info["reset_s"] < 2.0

        # A dead emulator is detected and restarted on the same port.
        victim = procs[1]
        assert victim is not None
        victim.kill()
        victim.wait()
        assert not pool.is_healthy(1)
        info = pool.reset(1)
        assert info["restarted"] is True and pool.stats()[1]["restarts"] == 1
        assert pool.is_healthy(1) and pool.device(1).getprop("digirl.snapshot_loads") == "1"
        new_procs = [s.proc for s in pool._slots]
    # close(): every process the pool started has exited (console kill: exit code 0).
    for p in [*procs, *new_procs]:
        assert p is not None and p.poll() is not None
    assert new_procs[0] is not None and new_procs[0].returncode == 0
    assert all(s.proc is None for s in pool._slots)


def test_never_booting_emulator_fails_within_the_bound(tmp_path: Path, adb_server: Any) -> None:
    pool = _pool(tmp_path, adb_server, 1, {"default": {"never_boot": True}}, boot_timeout_s=1.0)
    t0 = time.monotonic()
    with pytest.raises(EmulatorBootError, match="did not finish booting within"):
        pool.start()
    assert time.monotonic() - t0 < 5.0
    assert pool._slots[0].proc is None  # stopped after the failure


def test_emulator_dying_during_boot_and_bad_binary(tmp_path: Path, adb_server: Any) -> None:
    pool = _pool(tmp_path, adb_server, 1, {"default": {"never_boot": True, "die_after": 0.2}})
    with pytest.raises(EmulatorBootError, match="exited with code 3"):
        pool.start()
    bad = EmulatorPool("x", 1, emulator_bin=str(tmp_path / "nope"), adb_port=adb_server.port, base_port=free_port_block(2))
    with pytest.raises(EmulatorBootError, match="cannot run the emulator"):
        bad.start()
    assert isinstance(EmulatorBootError("x"), EnvFailure)


def test_console_auth_and_errors(tmp_path: Path, adb_server: Any) -> None:
    pool = _pool(tmp_path, adb_server, 1, {"default": {"boot_delay": 0.0}})
    with pool:
        port = pool._slots[0].port
        with pytest.raises(ConsoleError, match="refused the token"):
            wrong = tmp_path / "wrong"
            wrong.write_text("nope")
            EmulatorConsole(port, token_path=wrong, timeout_s=3).command("ping")
        with pytest.raises(ConsoleError, match="does not exist"):
            pool.console(0).snapshot_load("missing")
        assert "alive" in pool.console(0).command("ping")
    with pytest.raises(ConsoleError, match="unreachable"):
        EmulatorConsole(port, token_path=tmp_path / "console_token", timeout_s=1).command("ping")


def test_device_pool_over_physical_serials(adb_server: Any) -> None:
    from android_adb_server import EnvScreen, ScreenDevice

    from digirl.envs.toy import ToyEnv

    dev = ScreenDevice(EnvScreen(ToyEnv(horizon=50), seed=1))
    adb_server.add_device("R58M12345", dev)
    pool = DevicePool(["R58M12345"], adb_port=adb_server.port, reset_packages=["com.android.chrome"], online_timeout_s=0.5)
    assert len(pool) == 1 and pool.is_healthy(0)
    info = pool.reset(0)
    assert info["serial"] == "R58M12345"
    assert "am force-stop com.android.chrome" in dev.commands and "input keyevent 3" in dev.commands
    dev.state = "offline"
    assert not pool.is_healthy(0)
    with pytest.raises(EnvFailure, match="not reachable"):
        pool.ensure_healthy(0)
    pool.close()
