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
import logging
import queue
import time
from collections import deque
from collections.abc import Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from digirl.browser.env import BrowserEnv
from digirl.browser.pool import BrowserConfig, BrowserPool
from digirl.core.acting import ActFn, ActOutput, as_act_output
from digirl.core.actions import Action
from digirl.core.errors import EnvFailure
from digirl.core.types import Observation, Step, TaskSpec, Trajectory
from digirl.envs.vector import EpisodeJob, RunnerStats

__all__ = ["BrowserVectorEnv", "collect_solver_demos"]

log = logging.getLogger(__name__)

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
        min_batch: int = 1,
    ) -> Iterator[Trajectory]:
        """Run every job; yield each Trajectory when it completes (same contract as ``VectorRunner.run``).

        Every page proceeds on its own: its reset or step runs on the browser loop as soon as it
        has work, and ``act_fn`` gets, in one call, the observations of every page waiting for an
        action at that moment — at least one, or at least ``min_batch`` (fewer when fewer episodes
        are left): a larger ``min_batch`` trades page idle time for fewer, larger policy calls,
        ``min_batch >= num_envs`` is lock-step. The first call gets the first observation of every
        page, reset together. With ``expert=True``
        (``act_fn=None``) the scripted solver acts; its DOM read and the step run as one operation
        on the loop. A reset/step EnvFailure restarts the episode with the same seed up to
        ``max_episode_retries`` times, then the episode is yielded with ``env_failure=True`` and the
        reasons in ``failure_reason``/``metadata["failures"]``. If the caller stops iterating (or
        ``act_fn`` raises), the operations in flight are waited for before ``run`` returns.
        """
        if expert == (act_fn is not None):
            raise ValueError("pass either an act_fn or expert=True (not both, not neither)")
        if max_episode_retries < 0:
            raise ValueError(f"max_episode_retries must be >= 0, got {max_episode_retries}")
        if min_batch < 1:
            raise ValueError(f"min_batch must be >= 1, got {min_batch}")
        jobs = list(jobs)
        for j in jobs:
            if not isinstance(j, EpisodeJob):
                raise TypeError(f"jobs must be EpisodeJob instances, got {type(j).__name__}")
        return _Run(self, act_fn, on_trajectory, expert, max_episode_retries, expert_text, min_batch).run(jobs)


#: What an operation on the browser loop reports back: (slot, kind, payload, result).
_Done = tuple[int, str, Any, Any]


class _Run:
    """One ``BrowserVectorEnv.run``: an episode per page slot, each advanced as its page is ready.

    Reset/step coroutines are submitted to the pool's loop one page at a time; each reports to
    ``self.done`` (a thread-safe queue) when it finishes. The calling thread turns those reports
    into the envs' bookkeeping (via the prefetch hand-off of ``BrowserEnv.reset``/``step``), finishes
    or retries episodes, and batches the observations of every idle page into one ``act_fn`` call.
    """

    #: How long past an operation's own time limit its report may be late before the loop is
    #: declared stuck (the limits are enforced on the loop; this only guards against a dead loop).
    STUCK_MARGIN_S = 15.0

    def __init__(
        self,
        venv: BrowserVectorEnv,
        act_fn: ActFn | None,
        on_trajectory: Callable[[Trajectory], None] | None,
        expert: bool,
        retries: int,
        expert_text: Callable[[Action], str],
        min_batch: int = 1,
    ) -> None:
        self.venv = venv
        self.min_batch = min_batch
        self.stats = venv.stats
        self.act_fn = act_fn
        self.on_trajectory = on_trajectory
        self.expert = expert
        self.retries = retries
        self.expert_text = expert_text
        self.queue: deque[EpisodeJob] = deque()
        self.slots: dict[int, _Episode] = {}
        self.busy: dict[int, float] = {}  # slot -> deadline of its operation in flight
        self.done: queue.SimpleQueue[_Done] = queue.SimpleQueue()

    # ------------------------------------------------------------------ the loop
    def run(self, jobs: list[EpisodeJob]) -> Iterator[Trajectory]:
        self.queue.extend(jobs)
        try:
            for slot in range(self.venv.num_envs):
                if self.queue:
                    self._start(_Episode(self.queue.popleft(), slot))
            first = True
            while self.slots:
                if first or not self._enough(self._idle()):
                    reports = self._wait(wait_all=first)
                    first = False
                else:
                    reports = self._drain()
                for report in reports:
                    yield from self._on_report(report)
                idle = self._idle()
                if idle and self._enough(idle):
                    yield from self._act(idle)
        finally:
            self._settle()

    def _idle(self) -> list[_Episode]:
        """The live episodes waiting for an action (no operation in flight)."""
        return [ep for ep in self.slots.values() if ep.obs is not None and ep.slot not in self.busy]

    def _enough(self, idle: list[_Episode]) -> bool:
        return len(idle) >= max(1, min(self.min_batch, len(self.slots)))

    def _wait(self, wait_all: bool) -> list[_Done]:
        """Block until one report arrives (or, with ``wait_all``, every operation in flight)."""
        if not self.busy:
            raise RuntimeError("BrowserVectorEnv.run: nothing in flight and no page idle")  # a bug
        t0 = time.monotonic()
        out: list[_Done] = []
        while self.busy and (wait_all or not out):
            limit = min(self.busy.values()) + self.STUCK_MARGIN_S - time.monotonic()
            try:
                report = self.done.get(timeout=max(0.0, limit))
            except queue.Empty:
                raise EnvFailure(
                    f"the browser loop did not answer within {self.STUCK_MARGIN_S:.0f} s of an operation's time limit"
                ) from None
            self.busy.pop(report[0], None)
            out.append(report)
        self.stats.env_wait_s += time.monotonic() - t0
        return out + self._drain()

    def _drain(self) -> list[_Done]:
        out: list[_Done] = []
        while True:
            try:
                report = self.done.get_nowait()
            except queue.Empty:
                return out
            self.busy.pop(report[0], None)
            out.append(report)

    def _settle(self) -> None:
        """Wait (bounded) for the operations still in flight, dropping their results."""
        while self.busy:
            try:
                report = self.done.get(timeout=max(0.0, max(self.busy.values()) - time.monotonic()) + 1.0)
            except queue.Empty:
                log.warning("BrowserVectorEnv.run: %d browser operations did not finish", len(self.busy))
                return
            self.busy.pop(report[0], None)

    # ------------------------------------------------------------------ operations on the loop
    def _submit(self, slot: int, kind: str, payload: Any, coro: Coroutine[Any, Any, Any], timeout: float) -> None:
        venv = self.venv
        env = venv.envs[slot]
        if venv.pool.closed:
            coro.close()
            raise EnvFailure("the browser pool is closed")

        async def op() -> None:
            result = await venv._guard(env, coro, timeout)
            self.done.put((slot, kind, payload, result))

        self.busy[slot] = time.monotonic() + timeout
        asyncio.run_coroutine_threadsafe(op(), venv.pool.loop)

    def _start(self, ep: _Episode) -> None:
        """Begin (or restart) ``ep`` on its slot: submit the page reset."""
        self.slots[ep.slot] = ep
        env = self.venv.envs[ep.slot]
        plan, fixed = env._resolve_task(ep.job.task, np.random.default_rng(ep.job.seed))  # user errors raise here
        seed = ep.job.seed if fixed is None else fixed
        self._submit(ep.slot, "reset", None, env.areset(plan, int(seed)), env._reset_timeout())

    def _step(self, ep: _Episode, out: ActOutput) -> None:
        env = self.venv.envs[ep.slot]
        self._submit(ep.slot, "step", out, env.astep(out.action), self.venv.pool.config.operation_timeout_s)

    def _expert_step(self, ep: _Episode) -> None:
        env = self.venv.envs[ep.slot]

        async def solve_and_step() -> tuple[str, Any, Any]:
            try:
                action = await env._a_cheat(env._session.current())
            except Exception as e:  # reported as a cheat failure (the page or the solver's JS)
                return ("cheat", e, None)
            if action is None:
                return ("none", None, None)
            return ("step", action, await env.astep(action))

        self._submit(ep.slot, "expert", None, solve_and_step(), self.venv.pool.config.operation_timeout_s)

    # ------------------------------------------------------------------ reports → bookkeeping
    def _on_report(self, report: _Done) -> Iterator[Trajectory]:
        slot, kind, payload, result = report
        ep = self.slots[slot]
        env = self.venv.envs[slot]
        if kind == "reset":
            env._prefetched = ("reset", result)
            try:
                obs, _ = env.reset(seed=ep.job.seed, options={"task": ep.job.task, "attempt": ep.attempt})
            except EnvFailure as e:
                yield from self._fault(ep, f"reset: {e}")
                return
            ep.obs, ep.task, ep.steps = obs, env.task, []
            return
        if kind == "expert" and not isinstance(result, BaseException):
            what, value, result = result
            if what == "cheat":
                yield from self._fault(ep, f"cheat: {value if isinstance(value, EnvFailure) else EnvFailure(str(value))}")
                return
            if what == "none":
                if not ep.steps:
                    raise ValueError(f"the env in slot {slot} has no scripted solver: cheat() returned None right after reset")
                yield from self._finish(ep, f"expert: cheat() returned None at step {len(ep.steps)}")
                return
            payload = ActOutput(value, self.expert_text(value), None)
        elif kind == "expert":  # the solver's step failed or timed out (action unknown)
            payload = None
        yield from self._apply(ep, payload, result)

    def _apply(self, ep: _Episode, out: ActOutput | None, result: Any) -> Iterator[Trajectory]:
        """Hand a step's result to the env's bookkeeping; record it, finish or retry the episode."""
        env = self.venv.envs[ep.slot]
        if out is None:  # an expert step whose action never came back: only a failure is possible
            assert isinstance(result, BaseException)
            if not isinstance(result, EnvFailure):
                raise result
            yield from self._fault(ep, f"step: {result}")
            return
        if out.action.is_valid:  # an invalid action never reaches the page (result is None)
            env._prefetched = ("step", result)
        try:
            obs, reward, term, trunc, info = env.step(out.action)
        except EnvFailure as e:
            yield from self._fault(ep, f"step: {e}")
            return
        assert ep.obs is not None
        ep.steps.append(Step(ep.obs, out.action, out.text, reward, term, trunc, info, out.log_prob))
        ep.obs = obs
        self.stats.steps += 1
        if term or trunc:
            yield from self._finish(ep, "")

    def _act(self, idle: list[_Episode]) -> Iterator[Trajectory]:
        """One policy call for every idle page (or the solvers), then submit their steps."""
        if self.expert:
            for ep in idle:
                self._expert_step(ep)
            return
        assert self.act_fn is not None
        t0 = time.monotonic()
        raw = list(self.act_fn([ep.obs for ep in idle if ep.obs is not None]))
        self.stats.policy_calls += 1
        self.stats.policy_s += time.monotonic() - t0
        if len(raw) != len(idle):
            raise ValueError(f"act_fn returned {len(raw)} outputs for {len(idle)} observations")
        for ep, out in zip(idle, (as_act_output(o) for o in raw)):
            if out.action.is_valid:
                self._step(ep, out)
            else:  # nothing happens on the page: the env spends the step at once
                yield from self._apply(ep, out, None)

    # ------------------------------------------------------------------ episode ends
    def _fault(self, ep: _Episode, reason: str) -> Iterator[Trajectory]:
        ep.failures.append(reason)
        if ep.attempt <= self.retries:
            self.stats.retries += 1
            self._start(_Episode(ep.job, ep.slot, attempt=ep.attempt + 1, failures=ep.failures))
            return
        n = ep.attempt
        yield from self._finish(ep, f"{reason} ({n} attempt{'s' if n > 1 else ''})")

    def _finish(self, ep: _Episode, failure: str) -> Iterator[Trajectory]:
        """Build the trajectory, give the slot its next job, then yield the trajectory."""
        job = ep.job
        task = ep.task
        if task is None:
            task = job.task if isinstance(job.task, TaskSpec) else TaskSpec(instruction=job.task or "")
        env = self.venv.envs[ep.slot]
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
        del self.slots[ep.slot]
        if self.queue:  # the page starts its next episode while the caller handles this one
            self._start(_Episode(self.queue.popleft(), ep.slot))
        if self.on_trajectory is not None:
            self.on_trajectory(traj)
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
