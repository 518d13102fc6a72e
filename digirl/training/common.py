"""Building blocks shared by sft / collect / train / eval: devices, policies, tasks, runners."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import torch

from digirl.core.types import TaskSpec, Trajectory
from digirl.policies.base import ActOutput
from digirl.policies.default import DefaultPolicy, PolicyNetConfig
from digirl.training.config import EnvConfig, PolicyConfig

log = logging.getLogger(__name__)


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def build_policy(cfg: PolicyConfig, *, seed: int) -> DefaultPolicy:
    device = resolve_device(cfg.device)
    if cfg.init:
        policy = DefaultPolicy.load(cfg.init, device=device)
        log.info("loaded policy from %s", cfg.init)
        return policy
    net = PolicyNetConfig(
        dim=cfg.dim,
        layers=cfg.layers,
        heads=cfg.heads,
        frame_stack=cfg.frame_stack,
        image_width=cfg.image_width,
        image_height=cfg.image_height,
    )
    return DefaultPolicy(net, device=device, seed=seed)


def env_fn(cfg: EnvConfig) -> Callable[[], Any]:
    from digirl.envs.vector import env_factory

    return env_factory(cfg.id, **cfg.env_kwargs())


def is_browser_env(env_id: str) -> bool:
    return env_id.startswith(("digirl/miniwob.", "digirl/webapp"))


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
    if cfg.id.startswith("digirl/miniwob."):
        return [None] * SEEDED_TASK_SLOTS
    if cfg.id.startswith("digirl/sim-"):
        from digirl.sim.tasks.tasksets import load_taskset

        name = cfg.id.removeprefix("digirl/sim-").split("-")[0]
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


def make_runner(cfg: EnvConfig) -> Any:
    """A VectorRunner (one worker process per env), or for browser envs one Chromium with N pages."""
    if is_browser_env(cfg.id):
        from digirl.browser.vector import BrowserVectorEnv

        return BrowserRunner(BrowserVectorEnv.make(cfg.id, cfg.num_envs, **cfg.env_kwargs()), cfg.max_episode_retries)
    from digirl.envs.vector import VectorRunner

    return VectorRunner(
        env_fn(cfg),
        cfg.num_envs,
        mode=cfg.runner,
        step_timeout_s=cfg.step_timeout_s,
        max_episode_retries=cfg.max_episode_retries,
    )


def policy_act_fn(policy: DefaultPolicy, *, greedy: bool, temperature: float) -> Callable[[Sequence[Any]], list[ActOutput]]:
    def act(observations: Sequence[Any]) -> list[ActOutput]:
        return policy.act(observations, greedy=greedy, temperature=temperature)

    return act


def jobs_for(tasks: Sequence[TaskSpec | None], seeds: Sequence[int] | np.ndarray) -> list[Any]:
    from digirl.envs.vector import EpisodeJob

    return [EpisodeJob(task=t, seed=int(s)) for t, s in zip(tasks, seeds)]


class BrowserRunner:
    """Gives ``BrowserVectorEnv`` the ``VectorRunner.run`` signature the training code uses.

    ``BrowserVectorEnv.run`` calls the policy while the pages keep working, so the policy shares
    the cores with Chromium. While a run is iterated, torch is limited to ``torch_threads``
    intra-op threads (default: half the cores, at least 1): OpenMP workers waiting for all cores
    would otherwise spin against Chromium (measured on 2 cores, login-user, 4 pages: 8 env steps/s
    with torch's default 2 threads, 27 with 1).
    """

    def __init__(self, venv: Any, max_episode_retries: int, *, torch_threads: int | None = None) -> None:
        self.venv = venv
        self.max_episode_retries = max_episode_retries
        self.torch_threads = max(1, (os.cpu_count() or 2) // 2) if torch_threads is None else max(1, torch_threads)

    def run(
        self,
        act_fn: Any,
        jobs: Sequence[Any],
        *,
        expert: bool = False,
        expert_eps: float = 0.0,
        expert_seed: int = 0,
        expert_text: Any = None,
    ) -> Iterator[Trajectory]:
        if expert_eps:
            raise ValueError("expert noise is not supported on browser envs (their solvers act on the DOM)")
        kw: dict[str, Any] = {"expert": expert, "max_episode_retries": self.max_episode_retries}
        if expert_text is not None:
            kw["expert_text"] = expert_text
        trajectories = self.venv.run(act_fn, jobs, **kw)
        return trajectories if expert else self._with_torch_threads(trajectories)

    def _with_torch_threads(self, trajectories: Iterator[Trajectory]) -> Iterator[Trajectory]:
        before = torch.get_num_threads()
        if self.torch_threads < before:
            torch.set_num_threads(self.torch_threads)
        try:
            yield from trajectories
        finally:
            if torch.get_num_threads() != before:
                torch.set_num_threads(before)

    def close(self) -> None:
        self.venv.close()


def sample_tasks(pool: Sequence[TaskSpec | None], n: int, rng: np.random.Generator) -> list[TaskSpec | None]:
    idx = rng.integers(0, len(pool), size=n)
    return [pool[int(i)] for i in idx]
