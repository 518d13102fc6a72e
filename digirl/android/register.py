"""Registers the Android env ids (strings only: importing this never imports adbutils)."""

from __future__ import annotations

from digirl.envs.registry import register

_META = {
    "backend": "adb (adbutils)",
    "reward": "VLM judge (digirl.judge.VLMJudge)",
    "verified": "wire-protocol test double and fake emulator only; see docs/android.md",
    "state_clone": False,  # a phone's state cannot be copied: branching scores actions with a critic
}

# (task set, its name in the description, where it runs, horizon)
_TASKSETS = (
    ("general", "General", "an Android device/emulator", 10),
    ("webshop", "Web Shopping", "an Android device", 20),
)

for _taskset, _title, _where, _horizon in _TASKSETS:
    _env_id = f"digirl/android-{_taskset}-v0"
    register(
        _env_id,
        "digirl.android.env:AndroidEnv",
        description=f"AitW {_title} instructions on {_where} over adb, VLM-judged (horizon {_horizon})",
        requires="android",
        metadata=_META,
        taskset=_taskset,
        horizon=_horizon,
        env_id=_env_id,
    )
