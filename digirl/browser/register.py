"""Registers ``digirl/miniwob.<task>-v0`` for every MiniWoB++ task and ``digirl/webapp-v0``.

Cheap: the task list comes from the ``miniwob`` package's HTML folder (found without importing
the package or Playwright); nothing browser-related is imported until ``make``.
"""

from __future__ import annotations

from digirl.browser.catalog import CURATED_TASKS, expressibility, miniwob_tasks
from digirl.envs.registry import register

for _task in miniwob_tasks():
    _level, _why = expressibility(_task)
    register(
        f"digirl/miniwob.{_task}-v0",
        "digirl.browser.miniwob:MiniWoBEnv",
        description=f"MiniWoB++ {_task} in Chromium (seeded; reward from the task's JavaScript)",
        requires="browser",
        metadata={
            "backend": "browser",
            "collector": "browser",
            "seeded_tasks": True,
            "family": "miniwob",
            "expressible": _level,
            **({"expressible_note": _why} if _why else {}),
            "scripted_solver": _task in CURATED_TASKS,
            "state_clone": False,  # a live page cannot be copied
        },
        task=_task,
    )

register(
    "digirl/webapp-v0",
    "digirl.browser.env:WebAppEnv",
    description="Any web app in Chromium: pass tasks=[WebAppTask(start_url, instruction, success_js=...)]",
    requires="browser",
    metadata={"backend": "browser", "collector": "browser", "family": "webapp", "expressible": "yes", "state_clone": False},
)
