"""A small run folder for the viewer tests (imported, not collected): online + offline data, annotations
with values, advantages, kept flags and Digi-Q-style candidates."""

from __future__ import annotations

from pathlib import Path

from digirl.core.actions import Action
from digirl.core.codecs import action_to_dict
from digirl.data.annotations import StepAnnotation, write_annotations
from digirl.data.store import TrajectoryStore
from tests.data.trajfactory import build_traj


def make_run(root: Path) -> Path:
    """``root/run`` (online data of iterations 0 and 1, annotations of updates 0-1) and ``root/offline``."""
    run, offline = root / "run", root / "offline"
    TrajectoryStore(offline, durable=False).append([build_traj(3, seed=s, traj_id=f"off{s}", family="type") for s in (20, 21)])
    online = [build_traj(3, seed=s, traj_id=f"on{s}", family="tap", success=s % 2 == 0) for s in (0, 1)]
    online += [build_traj(2, seed=s, traj_id=f"on{s}", family="swipe", success=False) for s in (3, 5)]
    for t in online:
        t.metadata = {"iteration": 0 if t.traj_id in ("on0", "on1") else 1}
    TrajectoryStore(run / "data", durable=False).append(online)
    (run / "config.yaml").write_text(f"mode: off2on\noffline_dataset: {offline}\n")
    for it in (0, 1):
        notes = []
        for t in online + [build_traj(3, seed=s, traj_id=f"off{s}", family="type") for s in (20, 21)]:
            for i, s in enumerate(t.steps):
                cands = [
                    {"action": action_to_dict(s.action), "q": 0.8},
                    {"action": action_to_dict(Action.tap(0.9, 0.9)), "q": 0.2},
                    {"action": action_to_dict(Action.back()), "q": 0.5},
                ]
                notes.append(
                    StepAnnotation(
                        t.traj_id,
                        i,
                        value=0.5 + it / 10,
                        q=0.8,
                        advantage=0.3 - it / 10,
                        kept=i % 2 == 0,
                        weight=1.0,
                        extra={"candidates": cands},
                    )
                )
            notes.append(StepAnnotation(t.traj_id, -1, value=0.42))
        write_annotations(run / "annotations", it, notes)
    return run
