"""Registers the Android env ids (strings only: importing this never imports adbutils)."""

from __future__ import annotations

from digirl.envs.registry import register

_META = {
    "backend": "adb (adbutils)",
    "reward": "VLM judge (digirl.judge.VLMJudge)",
    "verified": "wire-protocol test double and fake emulator only; see docs/android.md",
    "state_clone": False,  # a phone's state cannot be copied: branching scores actions with a critic
}

register(
    "digirl/android-general-v0",
    "digirl.android.env:AndroidEnv",
    description="AitW General instructions on an Android device/emulator over adb, VLM-judged (horizon 10)",
    requires="android",
    metadata=_META,
    taskset="general",
    horizon=10,
    env_id="digirl/android-general-v0",
)
register(
    "digirl/android-webshop-v0",
    "digirl.android.env:AndroidEnv",
    description="AitW Web Shopping instructions on an Android device over adb, VLM-judged (horizon 20)",
    requires="android",
    metadata=_META,
    taskset="webshop",
    horizon=20,
    env_id="digirl/android-webshop-v0",
)
