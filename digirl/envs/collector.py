"""The collector seam: run episodes over a pool of environments and yield their trajectories.

Every backend implements :class:`Collector` — the process/inline :class:`~digirl.envs.vector.VectorRunner`,
the browser's batched pages (:mod:`digirl.browser.collector`), Ray actors (:mod:`digirl.distributed.runner`)
— so training code never asks which one it has. :func:`make_collector` picks the backend: ``runner="auto"`` takes the one
the env's registration asks for (``metadata["collector"]``, e.g. ``browser``), else ``process``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict, runtime_checkable

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from digirl.core.acting import ActFn
    from digirl.core.actions import Action
    from digirl.core.types import Trajectory
    from digirl.envs.vector import EpisodeJob, RunnerStats

__all__ = [
    "Collector",
    "CollectorFactory",
    "CollectorSpec",
    "CollectorWrapper",
    "RunOptions",
    "collector_names",
    "make_collector",
    "register_collector",
]


class RunOptions(TypedDict, total=False):
    """The keywords of :meth:`Collector.run` (defaults there), for collectors that pass them on."""

    expert: bool
    expert_eps: float
    expert_seed: int
    expert_text: Callable[[Action], str] | None


@runtime_checkable
class Collector(Protocol):
    """Runs :class:`~digirl.envs.vector.EpisodeJob` s to completion on ``num_envs`` environments."""

    @property
    def num_envs(self) -> int:
        """Environments stepped at once."""
        ...

    @property
    def stats(self) -> RunnerStats:
        """Counters since the collector was built (episodes, steps, restarts, time in the policy)."""
        ...

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
        """Yield one trajectory per job, in completion order.

        ``act_fn`` acts on batches of observations; with ``expert=True`` (and no ``act_fn``) the env's
        scripted expert acts, a random action replacing its step with probability ``expert_eps``.
        An episode whose env crashed or hung is retried with the same seed, then yielded with
        ``env_failure=True`` — never scored as a failure of the agent.
        """
        ...

    def close(self) -> None:
        """Release every environment (and worker). Safe to call twice."""
        ...


class CollectorWrapper:
    """A :class:`Collector` over another one, ``inner``, that it hands everything to; a subclass
    changes what it needs, e.g. what every run happens inside (:meth:`_running`)."""

    def __init__(self, inner: Collector) -> None:
        self.inner = inner

    @property
    def num_envs(self) -> int:
        return self.inner.num_envs

    @property
    def stats(self) -> RunnerStats:
        return self.inner.stats

    def _running(self) -> AbstractContextManager[object]:
        """Entered for the whole of each run (until its last trajectory is taken or the iterator is closed)."""
        return nullcontext()

    def run(self, act_fn: ActFn | None, jobs: Sequence[EpisodeJob], **options: Unpack[RunOptions]) -> Iterator[Trajectory]:
        with self._running():
            yield from self.inner.run(act_fn, jobs, **options)

    def close(self) -> None:
        self.inner.close()


@dataclass(frozen=True)
class CollectorSpec:
    """What every collector backend is built from: :func:`make_collector`'s arguments, settled."""

    env_id: str
    #: The backend's registered name (``process``, ``inline``, ``browser``, ``ray``, ...; never ``auto``).
    runner: str
    num_envs: int = 1
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    step_timeout_s: float = 30.0
    max_episode_retries: int = 2
    #: Schedule episodes so the same jobs and policy give the same trajectories whatever the timing.
    deterministic: bool = False
    #: Backend-specific options (``env.ray.*`` for Ray; the browser's ``torch_threads``).
    options: dict[str, Any] = field(default_factory=dict)

    def episode_runner_kwargs(self) -> dict[str, Any]:
        """The keywords the episode runners (process/inline, Ray) take from the spec. ``deterministic``:
        waiting for every reset makes each policy batch hold every active episode, so batches (and the
        actions sampled) no longer depend on timing; it costs little unless resets are slow (emulators)."""
        return {
            "step_timeout_s": self.step_timeout_s,
            "max_episode_retries": self.max_episode_retries,
            "reset_batch_wait_s": float("inf") if self.deterministic else 1.0,
        }


class CollectorFactory(Protocol):
    """The one signature of a collector backend's factory (what :func:`register_collector` registers)."""

    def __call__(self, spec: CollectorSpec, /) -> Collector: ...


#: name → ``"module:function"``: a :class:`CollectorFactory`.
_COLLECTORS: dict[str, str] = {
    "process": "digirl.envs.collector:_vector_collector",
    "inline": "digirl.envs.collector:_vector_collector",
    "browser": "digirl.browser.collector:make_browser_collector",
    "ray": "digirl.distributed.runner:make_ray_collector",
}


def register_collector(name: str, entry_point: str) -> None:
    """Register (or replace) a collector backend; ``entry_point`` is ``"module:function"``, a
    :class:`CollectorFactory` (``fn(spec: CollectorSpec) -> Collector``)."""
    if ":" not in entry_point:
        raise ValueError(f"entry_point must be 'module:function', got {entry_point!r}")
    _COLLECTORS[name] = entry_point


def collector_names() -> list[str]:
    return ["auto", *sorted(_COLLECTORS)]


def make_collector(
    env_id: str,
    *,
    runner: str = "auto",
    num_envs: int = 1,
    env_kwargs: Mapping[str, Any] | None = None,
    step_timeout_s: float = 30.0,
    max_episode_retries: int = 2,
    deterministic: bool = False,
    options: Mapping[str, Any] | None = None,
) -> Collector:
    """A collector for ``env_id``; ``options`` are backend-specific (e.g. a Ray cluster address).

    ``deterministic``: schedule episodes so that the same jobs and policy give the same trajectories
    whatever the timing (backends that cannot, e.g. the browser's concurrent pages, say so in a warning).
    """
    from digirl.envs.registry import spec

    s = spec(env_id)  # unknown ids fail here, before any worker starts
    name = runner if runner != "auto" else str(s.metadata.get("collector", "process"))
    if name not in _COLLECTORS:
        raise ValueError(f"unknown env.runner {runner!r}; known: {', '.join(collector_names())}")
    mod_name, _, attr = _COLLECTORS[name].partition(":")
    factory: CollectorFactory = getattr(importlib.import_module(mod_name), attr)
    request = CollectorSpec(
        env_id,
        runner=name,
        num_envs=num_envs,
        env_kwargs=dict(env_kwargs or {}),
        step_timeout_s=step_timeout_s,
        max_episode_retries=max_episode_retries,
        deterministic=deterministic,
        options=dict(options or {}),
    )
    return factory(request)


def _vector_collector(spec: CollectorSpec) -> Collector:
    from digirl.envs.vector import VectorRunner, env_factory

    if spec.options:
        raise ValueError(f"the {spec.runner} runner takes no options, got {sorted(spec.options)}")
    mode: Literal["process", "inline"] = "inline" if spec.runner == "inline" else "process"
    return VectorRunner(env_factory(spec.env_id, **spec.env_kwargs), spec.num_envs, mode=mode, **spec.episode_runner_kwargs())
