"""Run many episodes over a pool of envs, batching the policy and surviving broken envs.

:class:`VectorRunner` keeps up to ``num_envs`` episodes in flight. In ``"process"`` mode each
env lives in its own worker process and talks to the parent over a Pipe; in ``"inline"`` mode the
envs live in the calling process (no timeouts, for tests and tiny jobs). ``run(act_fn, jobs)``
yields one :class:`~digirl.core.types.Trajectory` per :class:`EpisodeJob`, in completion order.

Scheduling. The parent sends every pending action, then waits (``multiprocessing.connection.wait``)
until all step replies are in, then calls ``act_fn`` once on the observations of every env that
waits for an action (one batch). So one slow or hung step holds that round up, for at most
``step_timeout_s``. A slow *reset* holds the others up for at most ``reset_batch_wait_s``
(default 1 s: quick resets join the batch, an emulator reload does not stall the pool).
Workers start lazily, with the ``forkserver`` start method by default (our modules preloaded,
so a restart is a fork of a few tens of ms); a worker whose parent dies exits within a second.

Records. ``Step.observation`` is the observation *before* the action; ``Step.action`` is
``ActOutput.action`` (typed; the env never re-parses it) and ``Step.action_text`` is
``ActOutput.text``. ``Trajectory.final_observation`` is the observation after the last step,
``seed`` the job's seed, ``metadata`` holds ``job_id``, ``attempts``, ``worker`` (slot index),
``worker_pid``, ``wall_time_s`` and ``failures`` (reasons of failed attempts).

Failure semantics. An env *fault* is one of

* ``crash``: the worker process died (EOF on its pipe);
* ``hang``: no reply within ``step_timeout_s`` (step) or ``reset_timeout_s`` (reset, which also
  covers starting a fresh worker and building its env); the worker is SIGTERMed, then SIGKILLed;
* ``error``: ``reset``/``step``/``cheat`` raised; the worker sends the traceback (logged).

After a fault the worker is replaced (new process, new env) and the episode restarts from scratch
with the same seed, up to ``max_episode_retries`` times. Then the runner yields the episode with
``env_failure=True`` and ``failure_reason`` such as ``"hang: step exceeded 30.0s (3 attempts)"``,
never a silent reward of 0. Envs receive ``options={"task": ..., "attempt": n}`` (n from 1) on
reset. Faults that are not the env's are raised instead, since retrying cannot help:

* :class:`~digirl.core.errors.UnsupportedInstructionError` from ``reset`` (a task the env does not
  know: a configuration problem) is raised from ``run``;
* :class:`~digirl.core.errors.EnvFailure` is raised when ``env_fn`` fails before any env of this
  runner was ever built (a broken factory); later build failures count as ``error`` faults;
* exceptions raised by ``act_fn`` propagate unchanged.

Only :meth:`VectorRunner.run` exists (no step-level API): a custom loop is an ``act_fn``.
:func:`run_expert` uses each env's ``cheat()`` as the policy (optionally with ε-random actions).
Process mode pickles ``env_fn`` (use :func:`env_factory`) and, with the default ``forkserver``/
``spawn`` start methods, scripts need an ``if __name__ == "__main__":`` guard.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import logging
import math
import multiprocessing as mp
import pickle
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import wait as mp_wait
from typing import Any, Protocol, cast

import numpy as np

from digirl.core.acting import ActFn, ActOutput, as_act_output
from digirl.core.actions import Action
from digirl.core.codecs import format_action
from digirl.core.errors import EnvFailure, UnsupportedInstructionError
from digirl.core.types import Observation, Step, TaskSpec, Trajectory
from digirl.envs._vector_worker import (
    EnvFn,
    Fault,
    Handle,
    InlineHandle,
    ProcessHandle,
    preload_forkserver,
    shutdown,
    unpack_elements,
)
from digirl.envs.base import ActionSpace

__all__ = ["EpisodeJob", "RunnerStats", "VectorRunner", "env_factory", "run_expert", "screen_seed"]

logger = logging.getLogger(__name__)

_job_ids = itertools.count()


def screen_seed(obs: Observation) -> int:
    """A stable 32-bit seed of a screen's layout: the kinds and bounds of its UI elements, not their
    texts (a search page is one screen whatever was typed), or the screenshot's pixels when the env
    gives no elements. No Python hash seed involved."""
    h = hashlib.blake2b(digest_size=4)
    if obs.elements is not None:
        h.update(repr([(e.kind, tuple(round(b, 3) for b in e.bounds)) for e in obs.elements]).encode())
    else:
        h.update(repr(obs.screenshot.shape).encode())
        h.update(np.ascontiguousarray(obs.screenshot).tobytes())
    return int.from_bytes(h.digest(), "little")


def env_factory(env_id: str, **kwargs: Any) -> EnvFn:
    """A picklable ``env_fn`` that builds ``make(env_id, **kwargs)`` (checks the id now)."""
    from digirl.envs.registry import make, spec

    spec(env_id)  # unknown ids fail here, in the caller, not in every worker
    return functools.partial(make, env_id, **kwargs)


@dataclass(frozen=True)
class EpisodeJob:
    """One episode to run: the task (``None``: the env samples one) and the reset seed.

    ``gate`` (optional) holds the episode back until it returns True: jobs start in order, so a
    closed gate also holds back the jobs after it (the asynchronous learner's staleness bound).
    """

    task: TaskSpec | str | None
    seed: int
    job_id: int = field(default_factory=lambda: next(_job_ids))
    gate: Callable[[], bool] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise ValueError(f"EpisodeJob.seed must be a non-negative int, got {self.seed!r}")
        if self.task is not None and not isinstance(self.task, (TaskSpec, str)):
            raise TypeError(f"EpisodeJob.task must be a TaskSpec, str or None, got {type(self.task).__name__}")


@dataclass
class RunnerStats:
    """Counters since the runner was built.

    ``episodes`` counts yielded trajectories (env failures included), ``steps`` every env step
    executed (those of failed attempts too), ``restarts`` workers replaced after a fault,
    ``retries`` episodes started again; ``policy_s``/``env_wait_s`` split the wall time.
    """

    episodes: int = 0
    steps: int = 0
    restarts: int = 0
    retries: int = 0
    env_failures: int = 0
    crashes: int = 0
    hangs: int = 0
    errors: int = 0
    policy_calls: int = 0
    policy_s: float = 0.0
    env_wait_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# --------------------------------------------------------------------------- episodes
@dataclass(eq=False)  # identity semantics: episodes are compared and hashed as objects
class _Episode:
    job: EpisodeJob
    slot: int
    attempt: int = 0
    task: TaskSpec | None = None
    obs: Observation | None = None
    steps: list[Step] = field(default_factory=list)
    pending: ActOutput | None = None
    expert_action: Action | None = None
    action_space: ActionSpace | None = None
    action_codec: str = "json"
    rng: np.random.Generator | None = None
    noisy_steps: list[int] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    worker_pid: int | None = None
    worker_node: str | None = None
    steps_per_call: int = 0  # > 0: the worker plays this many steps per call with its own acting
    t0: float = field(default_factory=time.monotonic)


class _AheadHandle(Protocol):
    """A handle whose worker takes the next episode's start while it plays one (see ``_can_send_ahead``)."""

    def request_next(self, cmd: str, payload: Any, timeout: float) -> None: ...

    def promote(self) -> None: ...


@dataclass
class _RunSpec:
    act_fn: ActFn | None
    on_trajectory: Callable[[Trajectory], None] | None
    expert: bool
    expert_eps: float
    expert_seed: int
    expert_text: Callable[[Action], str] | None
    expert_sticky: bool = False


class VectorRunner:
    """A pool of ``num_envs`` envs that runs :class:`EpisodeJob` s to completion. See the module docs."""

    #: Transports this class builds handles for (a subclass adds its own, e.g. ``"ray"``).
    MODES: tuple[str, ...] = ("process", "inline")

    def __init__(
        self,
        env_fn: EnvFn,
        num_envs: int,
        *,
        mode: str = "process",
        step_timeout_s: float = 30.0,
        reset_timeout_s: float = 60.0,
        max_episode_retries: int = 2,
        start_method: str | None = None,
        reset_batch_wait_s: float = 1.0,
    ) -> None:
        if not callable(env_fn):
            raise TypeError(f"env_fn must be a callable returning an env, got {type(env_fn).__name__}")
        if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
        if mode not in self.MODES:
            raise ValueError(f"mode must be one of {', '.join(map(repr, self.MODES))}, got {mode!r}")
        if not (step_timeout_s > 0 and reset_timeout_s > 0):
            raise ValueError("step_timeout_s and reset_timeout_s must be > 0")
        if max_episode_retries < 0:
            raise ValueError(f"max_episode_retries must be >= 0, got {max_episode_retries}")
        self.num_envs = num_envs
        self.mode = mode
        self.step_timeout_s = float(step_timeout_s)
        self.reset_timeout_s = float(reset_timeout_s)
        self.max_episode_retries = int(max_episode_retries)
        self.reset_batch_wait_s = max(0.0, float(reset_batch_wait_s))
        self.stats = RunnerStats()
        self._env_built = False
        self._running = False
        self._closed = False
        self._handles = self._make_handles(env_fn, start_method)
        self._queue: deque[EpisodeJob] = deque()  # the running run's jobs not started yet
        self._ahead: dict[int, _Episode] = {}  # slot -> the episode sent ahead to its worker
        self._finalizer = weakref.finalize(self, shutdown, self._handles)

    def _make_handles(self, env_fn: EnvFn, start_method: str | None) -> list[Handle]:
        """One handle per env slot (subclasses carry the commands some other way, e.g. Ray actors)."""
        if self.mode == "process":
            if start_method is None:
                start_method = "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"
            ctx = mp.get_context(start_method)
            if start_method == "forkserver":
                preload_forkserver(ctx)
            if start_method != "fork":
                try:
                    pickle.dumps(env_fn)
                except Exception as e:
                    raise TypeError(
                        f"mode='process' sends env_fn to worker processes, so it must be picklable ({e}); "
                        "use env_factory(env_id, ...) or functools.partial of a module-level function"
                    ) from e
            return [ProcessHandle(i, env_fn, ctx) for i in range(self.num_envs)]
        return [InlineHandle(i, env_fn) for i in range(self.num_envs)]

    @staticmethod
    def _wait(waitables: list[Any], timeout: float) -> list[Any]:
        """The waitables whose reply has arrived, waiting up to ``timeout`` s for the first one."""
        return list(mp_wait(waitables, timeout))

    # ------------------------------------------------------------------ lifecycle
    @property
    def spawned_pids(self) -> list[int]:
        """Pids of every worker process this runner started (for diagnostics and leak tests)."""
        return [p for h in self._handles for p in h.pids]

    def close(self) -> None:
        """Stop every worker (asks politely, then SIGTERM/SIGKILL). Safe to call twice."""
        self._closed = True
        self._finalizer()

    def __enter__(self) -> VectorRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ running
    def run(
        self,
        act_fn: ActFn | None,
        jobs: Sequence[EpisodeJob],
        *,
        on_trajectory: Callable[[Trajectory], None] | None = None,
        expert: bool = False,
        expert_eps: float = 0.0,
        expert_seed: int = 0,
        expert_text: Callable[[Action], str] | None = None,
        expert_sticky: bool = False,
    ) -> Iterator[Trajectory]:
        """Run every job; yield each Trajectory when it completes (completion order).

        ``act_fn`` maps a batch of observations to one :class:`ActOutput` (or plain ``Action``) each;
        if it has a method ``act_for(jobs, observations)``, that is called instead, with each
        observation's :class:`EpisodeJob` (one policy per episode, for instance).
        With ``expert=True`` (and ``act_fn=None``) the env's ``cheat()`` acts instead; with probability
        ``expert_eps`` a step takes ``env.action_space.sample(rng)`` instead, ``rng`` seeded by
        ``(expert_seed, job.seed)``; ``expert_text`` renders ``Step.action_text`` (default: the env's own
        codec, ``format_action(action, env.action_codec)``). ``expert_sticky=True`` draws that random
        action from an ``rng`` seeded by ``(expert_seed, the screen's layout)`` instead, so the noisy
        expert makes the same mistake on the same kind of screen, whatever the task (whether a step is
        noisy stays random). ``on_trajectory`` is
        called on each trajectory just before it is yielded. Arguments are checked on the call.
        """
        if self._closed:
            raise RuntimeError("this VectorRunner is closed")
        if expert == (act_fn is not None):
            raise ValueError("pass either an act_fn or expert=True (not both, not neither)")
        if not 0.0 <= expert_eps <= 1.0:
            raise ValueError(f"expert_eps must be in [0, 1], got {expert_eps}")
        jobs = list(jobs)
        for j in jobs:
            if not isinstance(j, EpisodeJob):
                raise TypeError(f"jobs must be EpisodeJob instances, got {type(j).__name__}")
        if len({j.job_id for j in jobs}) != len(jobs):
            raise ValueError("job_ids must be unique within one run")
        spec = _RunSpec(act_fn, on_trajectory, expert, float(expert_eps), int(expert_seed), expert_text, bool(expert_sticky))
        return self._run(spec, jobs)

    def _run(self, spec: _RunSpec, jobs: list[EpisodeJob]) -> Iterator[Trajectory]:
        if self._running:
            raise RuntimeError("this VectorRunner is already running; finish or close the other run() first")
        self._running = True
        queue = self._queue = deque(jobs)
        active: dict[int, _Episode] = {}
        done: deque[Trajectory] = deque()
        ahead = self._ahead = {}
        try:
            while queue or active:
                for slot in range(self.num_envs):
                    if slot not in active and queue and (queue[0].gate is None or queue[0].gate()):
                        ep = _Episode(queue.popleft(), slot)
                        active[slot] = ep
                        self._begin(ep, spec)
                # Near the end of the jobs, binding one to a busy worker could leave it the last to finish
                # while others idle: send ahead only while there are more jobs than workers.
                if self._can_send_ahead() and len(queue) >= self.num_envs:
                    for slot, cur in list(active.items()):
                        if cur.steps_per_call and slot not in ahead and queue and (queue[0].gate is None or queue[0].gate()):
                            nxt = _Episode(queue.popleft(), slot)
                            if self._begin(nxt, spec, ahead=True):
                                ahead[slot] = nxt
                            else:
                                queue.appendleft(nxt.job)
                if not active:  # the next job's gate is closed and nothing runs: wait for it
                    time.sleep(0.05)
                    continue
                self._collect(active, done, spec)
                while done:
                    traj = done.popleft()
                    if spec.on_trajectory is not None:
                        spec.on_trajectory(traj)
                    yield traj
                ready = [ep for ep in active.values() if self._handles[ep.slot].cmd is None]
                if ready:
                    self._act(ready, active, done, spec)
        finally:
            self._running = False
            for slot in list(ahead):  # an abandoned run: the actor holds a start nobody waits for
                self._handles[slot].kill()
            ahead.clear()

    def _can_send_ahead(self) -> bool:
        """Whether a worker that plays episodes itself can take the next episode's start while it plays one."""
        return False

    def _begin(self, ep: _Episode, spec: _RunSpec, *, ahead: bool = False) -> bool:
        """(Re)start the episode from scratch: same seed, next attempt. ``ahead``: send its start to a worker
        that still plays the slot's running episode, if the worker plays episodes itself (returns whether)."""
        h = self._handles[ep.slot]
        remote = self._worker_acting(ep, spec)
        if ahead:
            if remote is None:
                return False
            ep.attempt += 1
            key, acting, ep.steps_per_call = remote
            start = (int(ep.job.seed), ep.job.task, ep.attempt, key, acting)
            timeout = self.reset_timeout_s + ep.steps_per_call * self.step_timeout_s
            cast(_AheadHandle, h).request_next("play", (start, ep.steps_per_call), timeout)
            ep.worker_pid = h.pid
            return True
        ep.attempt += 1
        ep.task, ep.obs, ep.steps, ep.pending, ep.expert_action = None, None, [], None, None
        ep.noisy_steps = []
        if spec.expert:
            ep.rng = np.random.default_rng([spec.expert_seed, int(ep.job.seed)])
        if remote is not None:  # the worker plays the episode itself, a chunk of steps per call
            key, acting, ep.steps_per_call = remote
            start = (int(ep.job.seed), ep.job.task, ep.attempt, key, acting)
            timeout = self.reset_timeout_s + ep.steps_per_call * self.step_timeout_s
            started = h.request("play", (start, ep.steps_per_call), timeout)
        else:
            payload = (int(ep.job.seed), ep.job.task, ep.attempt, spec.expert)
            started = h.request("reset", payload, self.reset_timeout_s)
        if started and h.starts > 1:
            self.stats.restarts += 1
        ep.worker_pid = h.pid
        return True

    def _worker_acting(self, ep: _Episode, spec: _RunSpec) -> tuple[str, Any, int] | None:
        """``(key, acting, steps per call)`` when the episode's worker should act itself; ``None``: the
        policy acts here, batched over the envs (the only way for worker processes)."""
        return None

    def _collect(self, active: dict[int, _Episode], done: deque[Trajectory], spec: _RunSpec) -> None:
        """Receive replies until no step is outstanding and no reset is worth waiting for.

        Steps are always waited for (up to their timeout). A reset is waited for only while nothing
        can act, or for ``reset_batch_wait_s`` after it was sent: quick resets join the next policy
        batch, slow ones (an emulator reload) do not stall the other envs.
        """
        t_start = time.monotonic()
        try:
            while True:
                waiting = [ep for ep in active.values() if self._handles[ep.slot].cmd is not None]
                if not waiting:
                    return
                now = time.monotonic()
                some_ready = len(waiting) < len(active)
                wake, blocked = math.inf, False
                for ep in waiting:
                    h = self._handles[ep.slot]
                    if h.cmd != "reset" or not some_ready:
                        wake, blocked = min(wake, h.deadline), True
                    elif now < h.sent + self.reset_batch_wait_s:
                        wake, blocked = min(wake, h.sent + self.reset_batch_wait_s, h.deadline), True
                if not blocked:
                    return
                by_conn: dict[Any, _Episode] = {}
                ready: list[_Episode] = []
                for ep in waiting:
                    w = self._handles[ep.slot].waitable()
                    if w is None:
                        ready.append(ep)
                    else:
                        by_conn[w] = ep
                if by_conn:
                    timeout = 0.0 if ready else max(0.0, wake - now)
                    ready += [by_conn[c] for c in self._wait(list(by_conn), timeout)]
                # Workers playing episodes themselves need no batch: go back and start the next episodes
                # as soon as any reply is in (waiting for all of them was a barrier across the envs).
                played = any(self._handles[ep.slot].cmd in ("play", "play_more") for ep in ready)
                for ep in ready:
                    self._on_reply(ep, active, done, spec)
                now = time.monotonic()
                for ep in waiting:
                    h = self._handles[ep.slot]
                    if ep not in ready and h.cmd is not None and now >= h.deadline:
                        self._fail(ep, "hang", f"{h.cmd} exceeded {h.timeout}s", active, done, spec)
                if played:
                    return
        finally:
            self.stats.env_wait_s += time.monotonic() - t_start

    def _on_reply(self, ep: _Episode, active: dict[int, _Episode], done: deque[Trajectory], spec: _RunSpec) -> None:
        h = self._handles[ep.slot]
        cmd = h.cmd
        status, out = h.receive()
        if status == "crash":
            self._fail(ep, "crash", str(out), active, done, spec)
            return
        if status == "err":
            f: Fault = out
            where = f"job {ep.job.job_id} (seed {ep.job.seed}, task {ep.job.task!r})"
            if f.kind == "task":
                raise UnsupportedInstructionError(f"{where}: {f.message}")
            if f.kind == "build" and not self._env_built:
                raise EnvFailure(f"env_fn could not build an env: {f.type_name}: {f.message}\n{f.traceback}")
            logger.warning("env error in %s during %s:\n%s", where, cmd, f.traceback)
            self._fail(ep, "error", f"{cmd} raised {f.type_name}: {f.message}", active, done, spec)
            return
        self._env_built = True
        if cmd in ("play", "play_more"):
            self._on_played(ep, out, active, done, spec)
            return
        shipped, dedup = out[0], out[1]
        if dedup and ep.obs is not None:
            shipped.previous_screenshot = ep.obs.screenshot
        if cmd == "reset":
            _, _, _info, task, cheat, expert_ctx = out
            ep.task, ep.obs, ep.expert_action = task, shipped, cheat
            ep.worker_pid, ep.worker_node = h.pid, getattr(h, "node", None)
            if expert_ctx is not None:
                ep.action_space, ep.action_codec = expert_ctx
            return
        _, _, reward, terminated, truncated, info, cheat = out
        assert ep.obs is not None and ep.pending is not None
        act = ep.pending
        ep.steps.append(Step(ep.obs, act.action, act.text, reward, terminated, truncated, info, act.log_prob))
        ep.obs, ep.pending, ep.expert_action = shipped, None, cheat
        self.stats.steps += 1
        if terminated or truncated:
            self._finish(ep, active, done, spec, failure="")

    def _on_played(self, ep: _Episode, out: Any, active: dict[int, _Episode], done: deque[Trajectory], spec: _RunSpec) -> None:
        """Record the steps a worker played itself, then finish the episode or ask for the next chunk."""
        h = self._handles[ep.slot]
        first, shipped_as, task, steps, end, meta = out
        if first is not None:
            ep.task, ep.obs = task, unpack_elements(first, shipped_as[1])
            ep.worker_pid, ep.worker_node = h.pid, getattr(h, "node", None)
        for act, reward, terminated, truncated, info, shipped, (dedup, packed) in steps:
            assert ep.obs is not None
            unpack_elements(shipped, packed)
            if dedup:
                shipped.previous_screenshot = ep.obs.screenshot
            ep.steps.append(Step(ep.obs, act.action, act.text, reward, terminated, truncated, info, act.log_prob))
            ep.obs = shipped
            self.stats.steps += 1
        if "noisy_steps" in meta:
            ep.noisy_steps = list(meta["noisy_steps"])
        if end == "done":
            self._finish(ep, active, done, spec, failure="")
        elif end == "no_action":  # only the expert has nothing to say; as the central expert
            if not ep.steps:
                raise ValueError(
                    f"the env has no scripted expert for job {ep.job.job_id} (task {ep.job.task!r}): "
                    "cheat() returned None right after reset"
                )
            self._finish(ep, active, done, spec, failure=f"expert: cheat() returned None at step {len(ep.steps)}")
        else:
            h.request("play_more", (None, ep.steps_per_call), ep.steps_per_call * self.step_timeout_s)

    def _fail(
        self, ep: _Episode, kind: str, detail: str, active: dict[int, _Episode], done: deque[Trajectory], spec: _RunSpec
    ) -> None:
        """A fault on this episode's worker: replace the worker, then retry or give up."""
        counter = {"crash": "crashes", "hang": "hangs", "error": "errors"}[kind]
        setattr(self.stats, counter, getattr(self.stats, counter) + 1)
        nxt = self._ahead.pop(ep.slot, None)
        if nxt is not None:  # its start dies with the worker before it began: it goes back, not retried
            self._queue.appendleft(nxt.job)
        self._handles[ep.slot].kill()
        ep.failures.append(f"{kind}: {detail}")
        logger.warning("env %s on worker %d (job %d, attempt %d): %s", kind, ep.slot, ep.job.job_id, ep.attempt, detail)
        if ep.attempt <= self.max_episode_retries:
            self.stats.retries += 1
            self._begin(ep, spec)
        else:
            n = ep.attempt
            self._finish(ep, active, done, spec, failure=f"{kind}: {detail} ({n} attempt{'s' if n > 1 else ''})")

    def _finish(
        self, ep: _Episode, active: dict[int, _Episode], done: deque[Trajectory], spec: _RunSpec, *, failure: str
    ) -> None:
        job = ep.job
        task = ep.task
        if task is None:
            task = job.task if isinstance(job.task, TaskSpec) else TaskSpec(instruction=job.task or "")
        meta: dict[str, Any] = {
            "job_id": job.job_id,
            "attempts": ep.attempt,
            "worker": ep.slot,
            "worker_pid": ep.worker_pid,
            "wall_time_s": round(time.monotonic() - ep.t0, 6),
            "failures": list(ep.failures),
        }
        if ep.worker_node is not None:  # runners spread over machines say which one ran it
            meta["worker_node"] = ep.worker_node
        if spec.expert:
            meta.update(expert=True, expert_eps=spec.expert_eps, noisy_steps=list(ep.noisy_steps))
            if spec.expert_sticky:
                meta["expert_sticky"] = True
        traj = Trajectory(
            task=task,
            steps=ep.steps,
            final_observation=ep.obs,
            env_failure=bool(failure),
            failure_reason=failure,
            seed=int(job.seed),
            metadata=meta,
        )
        self.stats.episodes += 1
        self.stats.env_failures += int(bool(failure))
        del active[ep.slot]
        done.append(traj)
        nxt = self._ahead.pop(ep.slot, None)
        if nxt is not None:  # the episode sent ahead is the slot's running one now (its clock starts)
            nxt.t0 = time.monotonic()
            active[ep.slot] = nxt
            cast(_AheadHandle, self._handles[ep.slot]).promote()

    def _act(self, ready: list[_Episode], active: dict[int, _Episode], done: deque[Trajectory], spec: _RunSpec) -> None:
        """One batched policy call over every env waiting for an action, then send all actions."""
        if spec.expert:
            outs: list[ActOutput | None] = [self._expert_output(ep, spec) for ep in ready]
        else:
            assert spec.act_fn is not None
            t0 = time.monotonic()
            obs = [ep.obs for ep in ready if ep.obs is not None]
            act_for = getattr(spec.act_fn, "act_for", None)  # an act function that wants the episodes' jobs
            raw = list(act_for([ep.job for ep in ready], obs) if act_for is not None else spec.act_fn(obs))
            self.stats.policy_calls += 1
            self.stats.policy_s += time.monotonic() - t0
            if len(raw) != len(ready):
                raise ValueError(f"act_fn returned {len(raw)} outputs for {len(ready)} observations")
            outs = [as_act_output(o) for o in raw]
        for ep, out in zip(ready, outs):
            if out is None:  # the expert had nothing to say mid-episode
                self._finish(ep, active, done, spec, failure=f"expert: cheat() returned None at step {len(ep.steps)}")
                continue
            ep.pending = out
            self._handles[ep.slot].request("step", (out.action, spec.expert), self.step_timeout_s)

    def _expert_output(self, ep: _Episode, spec: _RunSpec) -> ActOutput | None:
        action = ep.expert_action
        if action is None:
            if not ep.steps:
                raise ValueError(
                    f"the env has no scripted expert for job {ep.job.job_id} (task {ep.job.task!r}): "
                    "cheat() returned None right after reset"
                )
            return None
        if spec.expert_eps > 0:
            assert ep.rng is not None and ep.action_space is not None
            if ep.rng.random() < spec.expert_eps:
                rng = ep.rng
                if spec.expert_sticky and ep.obs is not None:
                    rng = np.random.default_rng([spec.expert_seed, screen_seed(ep.obs)])
                action = ep.action_space.sample(rng)
                ep.noisy_steps.append(len(ep.steps))
        if spec.expert_text is not None:
            return ActOutput(action, spec.expert_text(action), None)
        try:
            text = format_action(action, ep.action_codec)
        except (ValueError, KeyError):  # an unknown codec name: keep a readable form
            text = str(action)
        return ActOutput(action, text, None)


def run_expert(
    env_fn: EnvFn,
    jobs: Sequence[EpisodeJob],
    num_envs: int = 1,
    *,
    eps: float = 0.0,
    seed: int = 0,
    action_text: Callable[[Action], str] | None = None,
    sticky: bool = False,
    **runner_kwargs: Any,
) -> list[Trajectory]:
    """Demonstrations: run every job with the env's ``cheat()`` as the policy; returns them in job order.

    With ``eps > 0`` each step is replaced by a random ``env.action_space.sample`` action with that
    probability (seeded by ``seed`` and the job's seed; with ``sticky``, by ``seed`` and the screen's layout,
    so the same kind of screen always gets the same wrong action); the expert then recovers from the new state.
    ``action_text`` renders ``Step.action_text`` (default: the env's codec).
    ``runner_kwargs`` go to :class:`VectorRunner` (``mode``, timeouts, ``max_episode_retries``).
    """
    jobs = list(jobs)
    order = {j.job_id: i for i, j in enumerate(jobs)}
    with VectorRunner(env_fn, num_envs, **runner_kwargs) as runner:
        trajs = list(
            runner.run(None, jobs, expert=True, expert_eps=eps, expert_seed=seed, expert_text=action_text, expert_sticky=sticky)
        )
    return sorted(trajs, key=lambda t: order[t.metadata["job_id"]])
