"""Registers the simulator's env ids (imported by :mod:`digirl.envs.registry`; strings only, no heavy imports).

- ``digirl/sim-general-v0`` / ``digirl/sim-general-test-v0``: AitW General-style tasks, horizon 10.
- ``digirl/sim-webshop-v0`` / ``digirl/sim-webshop-test-v0``: Web Shopping tasks, horizon 20.
- ``digirl/sim-phone-v0`` / ``digirl/sim-phone-test-v0``: on-device tasks (settings, clock, calls,
  messages, contacts, calendar, camera, photos, YouTube, Play Store, Chrome, mail), horizon 15.
- ``digirl/sim-compound-v0`` / ``digirl/sim-compound-test-v0``: instructions of two to four sub-goals
  of any family ("open YouTube and search for X", "go to S, search for Q and open the first result");
  each task's horizon is its plan's (the sum of its sub-tasks' task-set horizons, at most 60).

- ``digirl/sim-{general,webshop,phone}-devices-v0`` / ``...-devices-test-v0``: the same tasks, each
  episode on a device drawn from the train pool / the held-out pool (``device_variation``).

The ``-test`` ids use the test split; ``make(id, split=..., perturbation=..., world_version=...)``
overrides any keyword of :class:`digirl.sim.env.SimEnv`.
"""

from __future__ import annotations

from digirl.envs.registry import register

_EP = "digirl.sim.env:SimEnv"
#: ``world_options``: takes ``perturbation`` and ``world_version``; ``state_replay``: a state is rebuilt
#: from its task, seed and actions (Digi-Q's exact labels, ground-truth values); ``state_clone``: ``SimEnv.clone()``
#: copies a mid-episode state (branching: K actions per visited state). Read with ``env_has``.
_META = {
    "simulator": True,
    "expert": True,
    "elements": True,
    "world_options": True,
    "state_replay": True,
    "state_clone": True,
}

for _ts, _desc in (
    ("general", "Simulated phone, AitW General-style tasks (search, apps, settings, alarms; H=10)"),
    ("webshop", "Simulated phone, Web Shopping tasks on 6 shopping sites (go to, search, select; H=20)"),
    ("phone", "Simulated phone, on-device tasks (settings, clock, calls, texts, calendar, camera, apps, Chrome; H=15)"),
    ("compound", "Simulated phone, compound tasks: ordered sub-goals of any family (H = the plan's, <= 60)"),
):
    register(f"digirl/sim-{_ts}-v0", _EP, description=_desc + ", train split", metadata=_META, taskset=_ts, split="train")
    register(f"digirl/sim-{_ts}-test-v0", _EP, description=_desc + ", test split", metadata=_META, taskset=_ts, split="test")

# Per-device variation (docs/simulator.md): each episode on a device of the train pool; the test ids
# evaluate on held-out devices (layouts, docks, wallpapers, themes and date formats never trained on).
for _ts, _name in (("general", "General"), ("webshop", "Web Shopping"), ("phone", "Phone")):
    _d = f"Simulated phone, {_name} tasks on varied devices (home layout, dock, wallpaper, dark theme, date format)"
    for _split, _suffix, _devices in (("train", "", "train devices"), ("test", "-test", "held-out devices")):
        register(
            f"digirl/sim-{_ts}-devices{_suffix}-v0",
            _EP,
            description=f"{_d}, {_split} split, {_devices}",
            metadata=_META,
            taskset=_ts,
            split=_split,
            device_variation=_split,
        )
