"""The browser backend of the collector seam: N pages of one Chromium (:class:`BrowserVectorEnv`)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch

from digirl.browser.vector import BrowserVectorEnv
from digirl.core.acting import ActFn
from digirl.core.actions import Action
from digirl.core.types import Trajectory
from digirl.envs.collector import Collector, CollectorSpec
from digirl.envs.vector import EpisodeJob, RunnerStats

__all__ = ["BrowserCollector", "make_browser_collector"]

log = logging.getLogger(__name__)


class BrowserCollector:
    """:class:`BrowserVectorEnv.run` behind the :class:`~digirl.envs.collector.Collector` protocol.

    ``BrowserVectorEnv.run`` calls the policy while the pages keep working, so the policy shares
    the cores with Chromium. While a run is iterated, torch is limited to ``torch_threads``
    intra-op threads (default: half the cores, at least 1): OpenMP workers waiting for all cores
    would otherwise spin against Chromium (measured on 2 cores, login-user, 4 pages: 8 env steps/s
    with torch's default 2 threads, 27 with 1).
    """

    def __init__(self, venv: BrowserVectorEnv, max_episode_retries: int, *, torch_threads: int | None = None) -> None:
        self.venv = venv
        self.max_episode_retries = max_episode_retries
        self.torch_threads = max(1, (os.cpu_count() or 2) // 2) if torch_threads is None else max(1, torch_threads)

    @property
    def num_envs(self) -> int:
        return self.venv.num_envs

    @property
    def stats(self) -> RunnerStats:
        return self.venv.stats

    def run(
        self,
        act_fn: ActFn | None,
        jobs: Sequence[EpisodeJob],
        *,
        expert: bool = False,
        expert_eps: float = 0.0,
        expert_seed: int = 0,
        expert_text: Callable[[Action], str] | None = None,
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


def make_browser_collector(spec: CollectorSpec) -> Collector:
    """One Chromium with ``num_envs`` pages (the registry's choice for browser envs)."""
    if spec.deterministic:
        log.warning("browser pages run concurrently: collection order and policy batches depend on timing (not deterministic)")
    options = dict(spec.options)
    torch_threads = options.pop("torch_threads", None)
    if options:
        raise ValueError(f"the browser runner takes only torch_threads, got {sorted(options)}")
    venv = BrowserVectorEnv.make(spec.env_id, spec.num_envs, **spec.env_kwargs)
    return BrowserCollector(venv, spec.max_episode_retries, torch_threads=torch_threads)
