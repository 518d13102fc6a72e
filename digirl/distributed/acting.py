"""Acting on the actors (``env.ray.inference=actor``): what an env actor needs to play whole episodes itself.

With inference in the learner every env step is one Ray round trip (an action out, an observation
back), which costs more than a simulator step. With inference on the actors, one call plays up to
``env.ray.steps_per_call`` steps: the actor holds an :class:`ActorActing` (the env's scripted expert,
or a policy loaded from a saved snapshot) that it fetched once from the object store by its ``key``.

An :class:`ActorActing` is plain, picklable data. ``key`` names its behaviour: two with the same key
act the same (a policy's version), so an actor loads each key once. ``episode(env, seed, attempt)``
starts one episode's acting state (the expert's ε-noise generator, a policy's sampling seed).
"""

from __future__ import annotations

import io
import tarfile
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from digirl.core.actions import Action
from digirl.core.codecs import format_action
from digirl.core.types import Observation
from digirl.policies.base import ActOutput
from digirl.policies.decoding import decode_actions

if TYPE_CHECKING:
    from digirl.envs.base import DeviceEnv
    from digirl.policies.base import ActingPolicy

__all__ = ["ActorActing", "EpisodeActing", "ExpertActing", "PolicyActing", "PolicySnapshot"]


class EpisodeActing(Protocol):
    """One episode's acting on an actor."""

    def act(self, obs: Observation) -> ActOutput | None:
        """The action for ``obs``; ``None`` when there is none (an expert with nothing to say)."""
        ...

    def metadata(self) -> dict[str, Any]:
        """What the trajectory's metadata gets when the episode ends."""
        ...


class ActorActing(Protocol):
    """What an actor acts with: picklable, loaded once per ``key``."""

    key: str

    def episode(self, env: DeviceEnv, seed: int, attempt: int) -> EpisodeActing: ...


# --------------------------------------------------------------------------- the expert
@dataclass(frozen=True)
class ExpertActing:
    """The env's ``cheat()``, with probability ``eps`` replaced by a random action: the same draws, from
    the same generator (seeded by ``(seed, job seed)``), as the runner's central expert, so the same
    trajectories."""

    eps: float = 0.0
    seed: int = 0
    text: Callable[[Action], str] | None = None

    @property
    def key(self) -> str:
        return f"expert:{self.eps}:{self.seed}:{self.text!r}"

    def episode(self, env: DeviceEnv, seed: int, attempt: int) -> EpisodeActing:
        return _ExpertEpisode(self, env, np.random.default_rng([self.seed, int(seed)]))


@dataclass
class _ExpertEpisode:
    cfg: ExpertActing
    env: DeviceEnv
    rng: np.random.Generator
    steps: int = 0
    noisy_steps: list[int] = field(default_factory=list)

    def act(self, obs: Observation) -> ActOutput | None:
        action = self.env.cheat()
        if action is None:
            return None
        if self.cfg.eps > 0 and self.rng.random() < self.cfg.eps:
            action = self.env.action_space.sample(self.rng)
            self.noisy_steps.append(self.steps)
        self.steps += 1
        if self.cfg.text is not None:
            return ActOutput(action, self.cfg.text(action), None)
        try:
            text = format_action(action, getattr(self.env, "action_codec", "json"))
        except (ValueError, KeyError):  # an unknown codec name: keep a readable form (as the central expert)
            text = str(action)
        return ActOutput(action, text, None)

    def metadata(self) -> dict[str, Any]:
        return {"expert": True, "expert_eps": self.cfg.eps, "noisy_steps": list(self.noisy_steps)}


# --------------------------------------------------------------------------- a policy
@dataclass(frozen=True)
class PolicySnapshot:
    """A saved policy folder as bytes (a tar): travels through the object store to actors on any host."""

    data: bytes

    @classmethod
    def of(cls, policy: ActingPolicy) -> PolicySnapshot:
        buf = io.BytesIO()
        with tempfile.TemporaryDirectory() as tmp:
            policy.save(tmp)
            with tarfile.open(fileobj=buf, mode="w") as tar:
                tar.add(tmp, arcname=".")
        return cls(buf.getvalue())

    def load(self) -> ActingPolicy:
        from digirl.policies.registry import load_policy

        with tempfile.TemporaryDirectory() as tmp:
            with tarfile.open(fileobj=io.BytesIO(self.data), mode="r") as tar:
                tar.extractall(tmp, filter="data")
            return load_policy(Path(tmp), device="cpu")


@dataclass
class PolicyActing:
    """A policy acting on the actors (on their CPU): ``key`` is unique per snapshot (a policy version).

    Each episode reseeds the policy's sampling from ``(job seed, attempt)``, so which actor plays an
    episode does not change its actions; the draws differ from the learner's batched sampling, so a
    sampling policy's trajectories differ from ``inference=learner`` ones (greedy ones do not).
    """

    snapshot: PolicySnapshot
    greedy: bool
    temperature: float
    loop_escape: bool = False
    key: str = field(default_factory=lambda: f"policy:{uuid.uuid4().hex}")
    _policy: Any = field(default=None, repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_policy": None}  # the loaded policy stays where it was loaded

    def episode(self, env: DeviceEnv, seed: int, attempt: int) -> EpisodeActing:
        if self._policy is None:
            self._policy = self.snapshot.load()
        reseed = getattr(self._policy, "reseed", None)
        if callable(reseed):
            reseed(int(np.random.SeedSequence([int(seed), int(attempt)]).generate_state(1)[0]))
        return _PolicyEpisode(self._policy, self.greedy, self.temperature, self.loop_escape)


@dataclass
class _PolicyEpisode:
    policy: ActingPolicy
    greedy: bool
    temperature: float
    loop_escape: bool = False

    def act(self, obs: Observation) -> ActOutput | None:
        return decode_actions(self.policy, [obs], greedy=self.greedy, temperature=self.temperature, loop_escape=self.loop_escape)[
            0
        ]

    def metadata(self) -> dict[str, Any]:
        return {}
