"""check_env passes on the toy env (bare and wrapped) and names the broken rule of a broken env."""

from __future__ import annotations

import numpy as np
import pytest

from digirl.core.actions import Action
from digirl.envs.base import StepResult
from digirl.envs.checker import check_env
from digirl.envs.toy import ToyEnv
from digirl.envs.wrappers import MaxSteps


@pytest.mark.parametrize("mode", ["tap", "type", "mixed"])
def test_toy_env_passes(mode: str) -> None:
    report = check_env(ToyEnv(mode), max_tasks=8)
    assert not report.skipped and len(report.passed) == 8
    assert len(report.expert_rewards) == (8 if mode == "mixed" else 4)
    assert all(r == 1.0 for r in report.expert_rewards.values())


def test_wrapped_env_passes_and_skips_are_reported() -> None:
    report = check_env(MaxSteps(ToyEnv("type", horizon=8), 3), check_expert=False)
    assert report.skipped == ["scripted expert: check_expert=False"] and report.to_dict()["env"] == "MaxSteps"


class WrongShape(ToyEnv):
    def _screenshot(self) -> np.ndarray:
        return super()._screenshot()[:10]


class BothFlags(ToyEnv):
    def step(self, action: Action | str):  # type: ignore[no-untyped-def]
        obs, r, term, trunc, info = super().step(action)
        return obs, r, term or trunc, term or trunc, info


class Unseeded(ToyEnv):
    """Ignores the seed: each reset lays the buttons out differently (rotated once more than the last
    time, so two resets never match by chance, as two unseeded shuffles of 4 colours do 1 time in 24)."""

    resets = 0

    def _reset(self, task, rng):  # type: ignore[no-untyped-def]
        spec = super()._reset(task, rng)
        self.resets += 1
        k = self.resets % len(self._slots)
        self._slots = self._slots[k:] + self._slots[:k]
        return spec


class InvalidEnds(ToyEnv):
    def _invalid_step(self, action: Action) -> StepResult:
        return StepResult(0.0, True, {"invalid_action": True})


class ReusedBuffer(ToyEnv):
    def __init__(self) -> None:
        super().__init__()
        self._buf = np.zeros((128, 64, 3), np.uint8)

    def _screenshot(self) -> np.ndarray:
        self._buf[:] = super()._screenshot()
        self._buf[0, 0, 0] = self.elapsed_steps  # a backend that draws into one buffer
        return self._buf


class BadExpert(ToyEnv):
    def cheat(self) -> Action | None:
        return Action.tap(0.01, 0.99)  # misses every button


class NoRaiseAfterEnd(ToyEnv):
    def step(self, action: Action | str):  # type: ignore[no-untyped-def]
        self._done = False
        return super().step(action)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (WrongShape(), r"reset\(\): screenshot is uint8 \(10, 64, 3\), the observation space declares uint8 \(128, 64, 3\)"),
        (BothFlags(), "terminated and truncated are both True"),
        (InvalidEnds(), "an invalid action ended the episode"),
        (ReusedBuffer(), "mutated the screenshot array of an earlier observation"),
        (NoRaiseAfterEnd(), r"step\(\) after the episode ended must raise"),
        (Unseeded(), "not deterministic: seed 0"),
        (BadExpert(), "scripted expert failed task 'toy-tap-red'"),
    ],
)
def test_broken_envs_fail_clearly(env: ToyEnv, message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        check_env(env)
