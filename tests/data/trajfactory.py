"""Trajectory builders shared by the data tests (imported, not collected): 8x16 frames keep them fast."""

from __future__ import annotations

import numpy as np

from digirl.core.actions import Action
from digirl.core.types import Observation, Step, TaskSpec, Trajectory, UIElement

ALL_ACTIONS = [
    Action.tap(0.25, 0.5),
    Action.swipe((0.1, 0.9), (0.1, 0.2)),
    Action.type_text('héllo "world"\n'),
    Action.back(),
    Action.home(),
    Action.enter(),
    Action.invalid("tap at the blue thing", "no coordinates"),
    Action.complete(),
    Action.impossible(),
]


def frame(seed: int, h: int = 8, w: int = 16) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, size=(h, w, 3), dtype=np.uint8)


def build_traj(
    n_steps: int = 3,
    *,
    seed: int = 0,
    traj_id: str | None = None,
    family: str = "tap",
    success: bool = True,
    env_failure: bool = False,
    final: bool = True,
    actions: list[Action] | None = None,
    repeat_frames: bool = False,
) -> Trajectory:
    """A trajectory whose step i shows frame(seed*100+i); with repeat_frames all frames are equal."""
    task = TaskSpec(
        instruction=f"Tap the {family} {seed}",
        task_id=f"task-{family}-{seed % 3}",
        family=family,
        split="train",
        horizon=max(n_steps, 1),
        env_id="digirl/toy-tap-v0",
        params={"target": seed, "nested": {"a": [1, 2]}},
    )
    acts = actions or [ALL_ACTIONS[(seed + i) % len(ALL_ACTIONS)] for i in range(n_steps)]
    frames = [frame(seed * 100 + (0 if repeat_frames else i)) for i in range(n_steps + 1)]
    steps = []
    history: list[Action] = []
    for i in range(n_steps):
        obs = Observation(
            screenshot=frames[i],
            instruction=task.instruction,
            step=i,
            history=tuple(history),
            elements=(UIElement((0.0, 0.1, 0.5, 0.2), "OK", "button", True, False, f"n{i}"),) if i % 2 == 0 else None,
            previous_screenshot=frames[i - 1] if i else None,
        )
        last = i == n_steps - 1
        steps.append(
            Step(
                observation=obs,
                action=acts[i],
                action_text=f"raw text {i}",
                reward=1.0 if (last and success and not env_failure) else 0.0,
                terminated=last and success,
                truncated=last and not success,
                info={"action_kind": acts[i].kind, "i": i, "np": np.float32(0.5), "lst": [1, "x"]},
                log_prob=None if i % 2 else -0.25 * i,
            )
        )
        history.append(acts[i])
    final_obs = (
        Observation(
            screenshot=frames[n_steps],
            instruction=task.instruction,
            step=n_steps,
            history=tuple(history),
            elements=None,
            previous_screenshot=frames[n_steps - 1] if n_steps else None,
        )
        if final
        else None
    )
    kw = {"traj_id": traj_id} if traj_id else {}
    return Trajectory(
        task=task,
        steps=steps,
        final_observation=final_obs,
        env_failure=env_failure,
        failure_reason="emulator crashed" if env_failure else "",
        seed=seed if seed % 2 == 0 else None,
        metadata={"collector": "test", "iteration": seed},
        **kw,
    )
