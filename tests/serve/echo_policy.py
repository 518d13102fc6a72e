"""A policy kind for the serve tests (imported by the registry, not collected): always presses HOME."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from digirl.core.actions import Action
from digirl.core.types import Observation
from digirl.policies.base import ActOutput


class EchoPolicy:
    kind = "test-echo"

    def act(self, observations: Sequence[Observation], *, greedy: bool = False, temperature: float = 1.0) -> list[ActOutput]:
        return [ActOutput(Action.home(), "home please", None) for _ in observations]

    def save(self, path: str | Path) -> None:
        Path(path).mkdir(parents=True, exist_ok=True)
        (Path(path) / "policy.json").write_text('{"kind": "test-echo"}')

    @classmethod
    def load(cls, path: str | Path, *, device: Any = "cpu", cfg: Any = None) -> EchoPolicy:
        return cls()

    @classmethod
    def from_config(cls, cfg: Any, *, device: Any, seed: int) -> EchoPolicy:
        return cls()
