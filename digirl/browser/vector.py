"""Batched browser envs: N pages of one Chromium stepped concurrently with ``asyncio.gather``.

:class:`BrowserVectorEnv` runs the reset/step coroutines of N :class:`BrowserEnv` s in one gather on
the pool's loop, then lets each env's ordinary ``reset``/``step`` pick up its prefetched result, so
the bookkeeping (horizon, history, previous frame) is exactly the single-env one. A failed page
does not sink the batch: its slot holds an :class:`EnvFailure` instead of a result.

:meth:`BrowserVectorEnv.run` has the signature and semantics of
:meth:`digirl.envs.vector.VectorRunner.run` (``EpisodeJob`` s in, ``Trajectory`` s out in completion
order, failed episodes retried with the same seed then yielded with ``env_failure=True``), so a
collector can use either. It is the better choice for browsers: one browser process serves every
page, where the process runner would start one Chromium per worker.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from digirl.browser.env import BrowserEnv
from digirl.browser.pool import BrowserConfig, BrowserPool
from digirl.core.actions import Action
from digirl.core.errors import EnvFailure
from digirl.core.types import Observation, Step, TaskSpec, Trajectory
from digirl.envs.vector import EpisodeJob, RunnerStats
from digirl.policies.base import ActFn, ActOutput, as_act_output

__all__ = ["BrowserVectorEnv", "collect_solver_demos"]

StepOut = tuple[Observation, float, bool, bool, dict[str, Any]]


@dataclass
class _Episode:
    job: EpisodeJob
    slot: int
    attempt: int = 1
    t0: float = field(default_factory=time.monotonic)
    obs: Observation | None = None
    task: TaskSpec | None = None
    steps: list[Step] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    expert_action: Action | None = None


class BrowserVectorEnv:
    """N browser envs sharing one :class:`BrowserPool`, reset and stepped as a batch.

    Build it from envs (``BrowserVectorEnv([MiniWoBEnv("click-test", pool=pool), ...])``) or with
    :meth:`make`. ``close()`` closes the envs and, when :meth:`make` created it, the pool.
    """

    def __init__(self, envs: Sequence[BrowserEnv], *, pool_owned: bool = False) -> None:
        if not envs:
            raise ValueError("BrowserVectorEnv needs at least one env")
        pools = {id(e.pool) for e in envs}
        if len(pools) != 1:
            raise ValueError("all envs of a BrowserVectorEnv must share one BrowserPool (pass pool=...)")
        self.envs = list(envs)
        self.pool = self.envs[0].pool
        self._pool_owned = pool_owned
        self._rng = np.random.default_rng()
        self.stats = RunnerStats()
        self._closed = False

    @classmethod
    def make(
        cls,
        factory: str | Callable[..., BrowserEnv],
        num_envs: int,
        *,
        browser: BrowserConfig | None = None,
        pool: BrowserPool | None = None,
        **kwargs: Any,
    ) -> BrowserVectorEnv:
        """``num_envs`` envs from an env id (``digirl/miniwob.click-test-v0``) or a factory taking pool=."""
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        owned = pool is None
        pool = BrowserPool(browser) if pool is None else pool
        envs: list[BrowserEnv] = []
        try:
            for _ in range(num_envs):
                if isinstance(factory, str):
                    from digirl.envs.registry import make

                    env = make(factory, pool=pool, **kwargs)
                else:
                    env = factory(pool=pool, **kwargs)
                if not isinstance(env, BrowserEnv):
                    raise TypeError(f"{factory!r} did not build a BrowserEnv")
                envs.append(env)
        except BaseException:
            for e in envs:
                e.close()
            if owned:
                pool.close()
            raise
        return cls(envs, pool_owned=owned)

    @property
    def num_envs(self) -> int:
        return len(self.envs)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for e in self.envs:
            e.close()
        if self._pool_owned:
            self.pool.close()

    def __enter__(self) -> BrowserVectorEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ batched primitives
    async def _guard(self, env: BrowserEnv, coro: Any, timeout: float) -> Any:
        try:
            return await asyncio.wait_for(coro, timeout)
        except asyncio.TimeoutError:
            await env._session.discard()  # a hung page: drop it, the next reset opens a new one
            return EnvFailure(f"browser operation timed out after {timeout:.1f} s")
        except Exception as e:  # delivered to (and raised by) that env's own reset/step
            return e

    def _gather(self, jobs: list[tuple[BrowserEnv, Any]], timeout: float) -> list[Any]:
        async def run_all() -> list[Any]:
            return list(await asyncio.gather(*(self._guard(env, c, timeout) for env, c in jobs)))

        return self.pool.run(run_all(), timeout + 10.0)

    def reset_many(
        self,
        seeds: Sequence[int | None] | None = None,
        tasks: Sequence[Any] | None = None,
        indices: Sequence[int] | None = None,
        options: Sequence[dict[str, Any] | None] | None = None,
    ) -> list[tuple[Observation, dict[str, Any]] | EnvFailure]:
        """Reset the envs at ``indices`` (default: all) concurrently; a failed one gives its EnvFailure.

        ``seeds[k]``/``tasks[k]`` go to env ``indices[k]`` (missing seeds are drawn here, so they are
        known and reproducible); ``options[k]`` adds reset options (``task`` is taken from ``tasks``).
        """
        idx = list(range(self.num_envs)) if indices is None else list(indices)
        seeds = list(seeds) if seeds is not None else [None] * len(idx)
        tasks = list(tasks) if tasks is not None else [None] * len(idx)
        opts = list(options) if options is not None else [None] * len(idx)
        if not (len(seeds) == len(tasks) == len(opts) == len(idx)):
            raise ValueError("seeds, tasks and options must have one entry per index")
        drawn = [int(self._rng.integers(0, 2**31 - 1)) if s is None else int(s) for s in seeds]
        work = []
        for i, seed, task in zip(idx, drawn, tasks):
            env = self.envs[i]
            plan, fixed = env._resolve_task(task, np.random.default_rng(seed))  # user errors raise here
            work.append((env, env.areset(plan, seed if fixed is None else fixed)))
        timeout = max(e._reset_timeout() for e, _ in work)
        for (env, _), res in zip(work, self._gather(work, timeout)):
            env._prefetched = ("reset", res)
        out: list[tuple[Observation, dict[str, Any]] | EnvFailure] = []
        for i, seed, task, opt in zip(idx, drawn, tasks, opts):
            try:
                out.append(self.envs[i].reset(seed=seed, options={**(opt or {}), "task": task}))
            except EnvFailure as e:
                out.append(e)
        return out

    def step_many(self, actions: Sequence[Action | str], indices: Sequence[int] | None = None) -> list[StepOut | EnvFailure]:
        """Step the envs at ``indices`` (default: all) concurrently, one action each."""
        idx = list(range(self.num_envs)) if indices is None else list(indices)
        if len(actions) != len(idx):
            raise ValueError(f"got {len(actions)} actions for {len(idx)} envs")
        parsed = [self.envs[i].parse_action(a) if isinstance(a, str) else a for i, a in zip(idx, actions)]
        work = [(self.envs[i], self.envs[i].astep(a)) for i, a in zip(idx, parsed) if a.is_valid and not self.envs[i]._done]
        results = self._gather(work, self.pool.config.operation_timeout_s) if work else []
        for (env, _), res in zip(work, results):
            env._prefetched = ("step", res)
        out: list[StepOut | EnvFailure] = []
        for i, a in zip(idx, parsed):
            try:
                out.append(self.envs[i].step(a))
            except EnvFailure as e:
                out.append(e)
        return out

    def cheat_many(self, indices: Sequence[int] | None = None) -> list[Action | EnvFailure | None]:
        """Each env's scripted-solver action, computed concurrently."""
        idx = list(range(self.num_envs)) if indices is None else list(indices)

        async def one(env: BrowserEnv) -> Action | None:
            return await env._a_cheat(env._session.current())

        work = [(self.envs[i], one(self.envs[i])) for i in idx]
        res = self._gather(work, self.pool.config.operation_timeout_s)
        return [r if (r is None or isinstance(r, (Action, EnvFailure))) else EnvFailure(str(r)) for r in res]

    # ------------------------------------------------------------------ VectorRunner-compatible loop
    def run(
        self,
        act_fn: ActFn | None,
        jobs: Sequence[EpisodeJob],
        *,
        on_trajectory: Callable[[Trajectory], None] | None = None,
        expert: bool = False,
        max_episode_retries: int = 2,
        expert_text: Callable[[Action], str] = str,
    ) -> Iterator[Trajectory]:
        """Run every job; yield each Trajectory when it completes (same contract as ``VectorRunner.run``).

        ``act_fn`` gets the observations of every env waiting for an action, in one call. With
        ``expert=True`` (``act_fn=None``) the scripted solver acts. A reset/step EnvFailure restarts
        the episode with the same seed up to ``max_episode_retries`` times, then the episode is
        yielded with ``env_failure=True`` and the reasons in ``failure_reason``/``metadata["failures"]``.
        """
        if expert == (act_fn is not None):
            raise ValueError("pass either an act_fn or expert=True (not both, not neither)")
        jobs = list(jobs)
        for j in jobs:
            if not isinstance(j, EpisodeJob):
                raise TypeError(f"jobs must be EpisodeJob instances, got {type(j).__name__}")
        return self._run(act_fn, jobs, on_trajectory, expert, max_episode_retries, expert_text)

    def _run(
        self,
        act_fn: ActFn | None,
        jobs: list[EpisodeJob],
        on_trajectory: Callable[[Trajectory], None] | None,
        expert: bool,
        retries: int,
        expert_text: Callable[[Action], str],
    ) -> Iterator[Trajectory]:
        queue = deque(jobs)
        slots: dict[int, _Episode] = {}
        restart: list[_Episode] = []
        while queue or slots or restart:
            # 1. start episodes in free slots (restarts first)
            starting = restart[:]
            restart.clear()
            for i in range(self.num_envs):
                if i not in slots and i not in {e.slot for e in starting} and queue:
                    starting.append(_Episode(queue.popleft(), i))
            if starting:
                res = self.reset_many(
                    [e.job.seed for e in starting],
                    [e.job.task for e in starting],
                    [e.slot for e in starting],
                    [{"attempt": e.attempt} for e in starting],
                )
                for ep, r in zip(starting, res):
                    slots[ep.slot] = ep
                    if isinstance(r, EnvFailure):
                        yield from self._fault(ep, slots, restart, f"reset: {r}", retries, on_trajectory)
                    else:
                        ep.obs, ep.task, ep.steps = r[0], self.envs[ep.slot].task, []
            ready = [ep for ep in slots.values() if ep.obs is not None]
            if not ready:
                continue
            # 2. one policy call for every env waiting
            if expert:
                acts = self.cheat_many([ep.slot for ep in ready])
                outs: list[ActOutput | EnvFailure | None] = [
                    a if not isinstance(a, Action) else ActOutput(a, expert_text(a), None) for a in acts
                ]
            else:
                assert act_fn is not None
                t0 = time.monotonic()
                raw = list(act_fn([ep.obs for ep in ready if ep.obs is not None]))
                self.stats.policy_calls += 1
                self.stats.policy_s += time.monotonic() - t0
                if len(raw) != len(ready):
                    raise ValueError(f"act_fn returned {len(raw)} outputs for {len(ready)} observations")
                outs = [as_act_output(o) for o in raw]
            stepping = []
            for ep, out in zip(ready, outs):
                if isinstance(out, EnvFailure):
                    yield from self._fault(ep, slots, restart, f"cheat: {out}", retries, on_trajectory)
                elif out is None:
                    if not ep.steps:
                        raise ValueError(
                            f"the env in slot {ep.slot} has no scripted solver: cheat() returned None right after reset"
                        )
                    yield from self._done(ep, slots, f"expert: cheat() returned None at step {len(ep.steps)}", on_trajectory)
                else:
                    stepping.append((ep, out))
            if not stepping:
                continue
            # 3. one concurrent step of every env that has an action
            t0 = time.monotonic()
            results = self.step_many([o.action for _, o in stepping], [ep.slot for ep, _ in stepping])
            self.stats.env_wait_s += time.monotonic() - t0
            for (ep, out), sr in zip(stepping, results):
                if isinstance(sr, EnvFailure):
                    yield from self._fault(ep, slots, restart, f"step: {sr}", retries, on_trajectory)
                    continue
                obs, reward, term, trunc, info = sr
                assert ep.obs is not None
                ep.steps.append(Step(ep.obs, out.action, out.text, reward, term, trunc, info, out.log_prob))
                ep.obs = obs
                self.stats.steps += 1
                if term or trunc:
                    yield from self._done(ep, slots, "", on_trajectory)

    def _fault(
        self,
        ep: _Episode,
        slots: dict[int, _Episode],
        restart: list[_Episode],
        reason: str,
        retries: int,
        on_trajectory: Callable[[Trajectory], None] | None,
    ) -> Iterator[Trajectory]:
        ep.failures.append(reason)
        if ep.attempt <= retries:
            self.stats.retries += 1
            restart.append(_Episode(ep.job, ep.slot, attempt=ep.attempt + 1, failures=ep.failures))
            del slots[ep.slot]
            return
        n = ep.attempt
        yield from self._done(ep, slots, f"{reason} ({n} attempt{'s' if n > 1 else ''})", on_trajectory)

    def _done(
        self,
        ep: _Episode,
        slots: dict[int, _Episode],
        failure: str,
        on_trajectory: Callable[[Trajectory], None] | None,
    ) -> Iterator[Trajectory]:
        job = ep.job
        task = ep.task
        if task is None:
            task = job.task if isinstance(job.task, TaskSpec) else TaskSpec(instruction=job.task or "")
        env = self.envs[ep.slot]
        traj = Trajectory(
            task=task,
            steps=ep.steps,
            final_observation=ep.obs,
            env_failure=bool(failure),
            failure_reason=failure,
            seed=int(job.seed),
            metadata={
                "job_id": job.job_id,
                "attempts": ep.attempt,
                "worker": ep.slot,
                "wall_time_s": round(time.monotonic() - ep.t0, 6),
                "failures": list(ep.failures),
                "env_id": getattr(env, "env_id", type(env).__name__),
                "episode_seed": env.episode_seed,
            },
        )
        self.stats.episodes += 1
        self.stats.env_failures += int(bool(failure))
        del slots[ep.slot]
        if on_trajectory is not None:
            on_trajectory(traj)
        yield traj


def collect_solver_demos(
    task: str,
    n: int,
    seeds: Sequence[int] | None = None,
    *,
    num_envs: int = 4,
    only_successful: bool = False,
    browser: BrowserConfig | None = None,
    **env_kwargs: Any,
) -> list[Trajectory]:
    """Demonstrations of the scripted solver on MiniWoB++ ``task``: ``n`` episodes, in seed order.

    ``seeds`` defaults to ``0..n-1``. ``env_kwargs`` go to :class:`~digirl.browser.miniwob.MiniWoBEnv`
    (``width``, ``height``, ``horizon`` ...). Environment failures are retried, then returned marked
    ``env_failure`` (or dropped with ``only_successful``).
    """
    from digirl.browser.solvers import SOLVERS

    if task not in SOLVERS:
        raise ValueError(f"no scripted solver for {task!r}; tasks with one: {sorted(SOLVERS)}")
    seeds = list(range(n)) if seeds is None else list(seeds)[:n]
    if len(seeds) < n:
        raise ValueError(f"need {n} seeds, got {len(seeds)}")
    jobs = [EpisodeJob(None, int(s)) for s in seeds]
    order = {j.job_id: k for k, j in enumerate(jobs)}
    with BrowserVectorEnv.make(f"digirl/miniwob.{task}-v0", min(num_envs, max(1, n)), browser=browser, **env_kwargs) as venv:
        trajs = sorted(venv.run(None, jobs, expert=True), key=lambda t: order[t.metadata["job_id"]])
    return [t for t in trajs if t.success] if only_successful else trajs
