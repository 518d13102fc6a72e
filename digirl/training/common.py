"""Building blocks shared by sft / collect / train / eval: policies, tasks, collectors."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np

from digirl.core.types import Observation, TaskSpec, Trajectory
from digirl.envs.collector import Collector, make_collector
from digirl.envs.vector import EpisodeJob
from digirl.policies.base import ActingPolicy, ActOutput, OwnSampler, Policy, is_trainable
from digirl.policies.decoding import decode_actions
from digirl.policies.registry import build_policy, resolve_device
from digirl.training.config import EnvConfig
from digirl.training.task_sampling import sample_tasks

if TYPE_CHECKING:
    from digirl.distributed.acting import PolicyActing

log = logging.getLogger(__name__)

__all__ = [
    "PolicyActFn",
    "build_policy",
    "in_job_order",
    "jobs_for",
    "make_runner",
    "policy_act_fn",
    "require_trainable",
    "resolve_device",
    "sample_tasks",
    "task_pool",
]


def require_trainable(policy: ActingPolicy, what: str) -> Policy:
    """``policy`` as a trainable :class:`Policy`, or a clear error naming the command."""
    if not is_trainable(policy):
        raise ValueError(f"{what} trains the policy, but policy kind {policy.kind!r} only acts (use it with collect or eval)")
    assert isinstance(policy, Policy)
    return policy


#: Envs whose task is drawn from the episode seed (MiniWoB++) get this many "task slots".
SEEDED_TASK_SLOTS = 10_000


def task_pool(cfg: EnvConfig, split: str) -> list[TaskSpec | None]:
    """The tasks of ``split`` for this env (a task file replaces the train split).

    MiniWoB++ tasks are generated from the episode seed, so their pool is ``None`` entries:
    every episode gets a fresh seed (and evaluation uses fixed seeds).
    """
    if cfg.task_file and split == cfg.train_split:
        from digirl.sim.tasks.tasksets import load_task_file

        return list[TaskSpec | None](load_task_file(cfg.task_file))
    from digirl.envs.registry import spec

    env_spec = spec(cfg.id)
    if env_spec.metadata.get("seeded_tasks"):
        return [None] * SEEDED_TASK_SLOTS
    if env_spec.metadata.get("simulator"):
        from digirl.sim.tasks.tasksets import TASKSETS, load_taskset

        name = str(env_spec.kwargs.get("taskset", ""))
        if name in TASKSETS:  # other simulator sets (compound) list their tasks through the env below
            return list[TaskSpec | None](load_taskset(name, split))
    from digirl.envs.registry import make

    env = make(cfg.id, **cfg.env_kwargs())
    try:
        tasks = getattr(env, "tasks", None)
        if tasks is None:
            raise ValueError(f"{cfg.id} does not list its tasks; give env.task_file=FILE")
        try:
            return list(tasks(split=split))
        except TypeError:
            return list(tasks())
    finally:
        env.close()


def make_runner(cfg: EnvConfig, *, deterministic: bool = False) -> Collector:
    """The collector of ``cfg.runner`` (``auto``: what the env's registration asks for)."""
    return make_collector(
        cfg.id,
        runner=cfg.runner,
        num_envs=cfg.num_envs,
        env_kwargs=cfg.env_kwargs(),
        step_timeout_s=cfg.step_timeout_s,
        max_episode_retries=cfg.max_episode_retries,
        deterministic=deterministic,
        options=cfg.collector_options(),
    )


def in_job_order(trajectories: Iterable[Trajectory], jobs: Sequence[EpisodeJob]) -> list[Trajectory]:
    """Trajectories sorted by their job's position (collectors yield them in completion order)."""
    order = {j.job_id: i for i, j in enumerate(jobs)}
    return sorted(trajectories, key=lambda t: order.get(t.metadata.get("job_id", -1), len(order)))


class PolicyActFn:
    """A policy as an act function. With ``env.ray.inference=actor`` the Ray actors act with a snapshot of
    it instead (:meth:`actor_acting`), one per ``version``: whoever changes the weights bumps it."""

    def __init__(self, policy: ActingPolicy, *, greedy: bool, temperature: float, loop_escape: bool = False) -> None:
        self.policy = policy
        self.greedy = greedy
        self.temperature = temperature
        self.loop_escape = loop_escape  # greedy only: sample where the greedy action would repeat a cycle
        self.version = 0
        self._acting: tuple[int, PolicyActing] | None = None

    def __call__(self, observations: Sequence[Observation]) -> list[ActOutput]:
        return decode_actions(
            self.policy, observations, greedy=self.greedy, temperature=self.temperature, loop_escape=self.loop_escape
        )

    def actor_acting(self, job: EpisodeJob) -> PolicyActing:
        """The snapshot of this version (made once, however many episodes act with it)."""
        from digirl.distributed.acting import PolicyActing, PolicySnapshot

        if self._acting is None or self._acting[0] != self.version:
            snap = PolicySnapshot.of(self.policy)
            self._acting = (self.version, PolicyActing(snap, self.greedy, self.temperature, self.loop_escape))
        return self._acting[1]


def policy_act_fn(policy: ActingPolicy, *, greedy: bool, temperature: float, loop_escape: bool = False) -> PolicyActFn:
    return PolicyActFn(policy, greedy=greedy, temperature=temperature, loop_escape=loop_escape)


@contextmanager
def preserved_sampling(policy: ActingPolicy) -> Iterator[None]:
    """Sample inside the block (a diagnostic evaluation) without moving the random streams that
    training draws from afterwards: torch's (CPU and every CUDA device), numpy's and the policy's own."""
    import torch

    sampler = policy if isinstance(policy, OwnSampler) else None
    own = sampler.sampling_state() if sampler is not None else None
    np_state = np.random.get_state()
    devices = list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []
    with torch.random.fork_rng(devices=devices):
        try:
            yield
        finally:
            np.random.set_state(np_state)
            if sampler is not None and own is not None:
                sampler.set_sampling_state(own)


def jobs_for(tasks: Sequence[TaskSpec | None], seeds: Sequence[int] | np.ndarray) -> list[EpisodeJob]:
    return [EpisodeJob(task=t, seed=int(s)) for t, s in zip(tasks, seeds)]
