"""Shared test helpers for the simulator: where DigiRL's AitW reference task files are (not shipped)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

_REPO = Path(__file__).resolve().parents[2]


def aitw_dir() -> Path | None:
    """The folder of the AitW reference lines (``general_train.txt`` ...): ``$DIGIRL_AITW_DIR``, else
    ``shared/aitw`` next to the checkout (or next to its parent, for a worktree); ``None`` if absent."""
    env = os.environ.get("DIGIRL_AITW_DIR")
    candidates = [Path(env)] if env else []
    candidates += [_REPO.parent / "shared" / "aitw", _REPO.parent.parent / "shared" / "aitw"]
    for c in candidates:
        if (c / "general_test.txt").is_file():
            return c
    return None


DATA = Path(__file__).resolve().parent / "data"


def assert_expert_solves(text: str, perturbations: tuple[int, ...] = (0, 2), seed: int = 1) -> None:
    """The scripted expert solves the instruction's task on the phone at each perturbation level."""
    from digirl.sim.coverage import run_expert_episode
    from digirl.sim.env import SimEnv
    from digirl.sim.tasks.tasksets import task_from_instruction

    for perturbation in perturbations:
        env = SimEnv(taskset="phone", perturbation=perturbation)
        ok, _, reason = run_expert_episode(env, task_from_instruction(text, taskset="phone"), seed=seed)
        assert ok, (text, perturbation, reason)


def assert_refused(text: str, said: str) -> None:
    """The instruction is refused (no task), with ``said`` in the reason."""
    from digirl.sim.tasks.parser import explain_instruction

    got = explain_instruction(text)
    assert got.intent is None and said in got.reason, got


def plan_steps(text: str) -> list[dict[str, object]]:
    """The sub-tasks an instruction parses into, as dicts (one for a single-step request)."""
    import json

    from digirl.sim.tasks.parser import explain_instruction

    intent = explain_instruction(text).intent
    assert intent is not None, explain_instruction(text)
    if intent.family == "compound":
        return list(json.loads(intent.get("plan")))
    return [{"family": intent.family, "slots": intent.slots}]


@pytest.fixture(autouse=True)
def _forget_user_families() -> Iterator[None]:
    """Task families a test registers are removed after it (the registry is process-wide)."""
    from digirl.sim.families import family_names, unregister_family
    from digirl.sim.intents import FAMILIES

    before = set(family_names())
    yield
    for name in set(family_names()) - before - set(FAMILIES):
        unregister_family(name)
