"""Each actor claims a device of its own from the host's list (no Ray needed to test the claim)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from digirl.distributed.devices import claim_device


def test_claims_are_exclusive_and_released_with_the_holder(tmp_path, monkeypatch):
    monkeypatch.setenv("DIGIRL_DEVICE_LOCK_DIR", str(tmp_path))
    monkeypatch.setenv("TEST_DEVICES", "emulator-5554, emulator-5556")
    a, fa = claim_device("TEST_DEVICES")
    b, fb = claim_device("TEST_DEVICES")
    assert (a, b) == ("emulator-5554", "emulator-5556")
    with pytest.raises(RuntimeError, match=r"all 2 devices in \$TEST_DEVICES .* are claimed"):
        claim_device("TEST_DEVICES")
    fa.close()  # the holder ends: its device is free again
    again, fa = claim_device("TEST_DEVICES")
    assert again == "emulator-5554"
    # another process sees the claim too (flock); a process's claims end with it
    code = "from digirl.distributed.devices import claim_device; print(claim_device('TEST_DEVICES')[0])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode != 0 and "are claimed" in out.stderr
    fb.close()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "emulator-5556"
    fa.close()


def test_an_unset_list_says_what_to_export(monkeypatch):
    monkeypatch.delenv("NO_SUCH_DEVICES", raising=False)
    with pytest.raises(RuntimeError, match=r"NO_SUCH_DEVICES is not set .* before `ray start`"):
        claim_device("NO_SUCH_DEVICES")


def test_env_actors_build_their_env_with_the_device_they_claimed(tmp_path, monkeypatch):
    import functools

    from digirl.distributed.actor import EnvActor
    from digirl.envs.toy import ToyEnv

    monkeypatch.setenv("DIGIRL_DEVICE_LOCK_DIR", str(tmp_path))
    monkeypatch.setenv("TEST_DEVICES", "tap,type")  # the toy env's `mode` stands in for a device serial
    env_fn = functools.partial(ToyEnv, horizon=3)
    a, b = EnvActor(env_fn, device_pool=("mode", "TEST_DEVICES")), EnvActor(env_fn, device_pool=("mode", "TEST_DEVICES"))
    assert (a.where["device"], b.where["device"]) == ("tap", "type")
    (status, out), where = a.execute("reset", (0, None, 1, False))
    assert status == "ok" and out[3].family == "tap" and where["pid"] > 0
    third = EnvActor(env_fn, device_pool=("mode", "TEST_DEVICES"))  # no device left: a build fault, sent on use
    (status, fault), _ = third.execute("reset", (0, None, 1, False))
    assert status == "err" and fault.kind == "build" and "claimed" in fault.message
    fixed = EnvActor(env_fn, device=("mode", "type"))  # env.ray.devices: one per slot
    assert fixed.env is not None and fixed.env.mode == "type"
    for actor in (a, b, fixed):
        actor.close()
