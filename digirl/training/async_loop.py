"""Asynchronous learning: the envs keep collecting while the learner updates (``asynchronous.max_staleness`` = k ≥ 1).

A collector thread streams the online iterations' episodes through the collector with a copy of the
policy (the *behaviour* policy), while the learner (the calling thread) updates on what is already
in. There is no barrier between iterations: an env that finishes an episode starts the next one,
whichever iteration it belongs to, so one slow episode never idles the others. Reading top to
bottom, per online iteration ``it``:

    the learner takes iteration it's trajectories (from disk after a crash, else from the collector)
    → drops any older than k updates → adds them to the replay buffer → weights off-policy steps
    by truncated importance weights → updates → publishes the new weights → logs, evaluates, checkpoints

Versions and the staleness bound. The policy's version is the learner's update count; when the
learner consumes iteration ``j`` it holds version ``U(j)`` (a pure function of the iteration, the
warm-up and the offline phase). An episode of iteration ``j`` starts only once the learner has
published version ``U(j) − k`` (its job's gate, :class:`~digirl.envs.vector.EpisodeJob`), and then
acts with the newest weights of that moment for its whole length; its trajectory is tagged with that
version (``Trajectory.policy_version``). So every trajectory is at most k updates stale when it is
learned from, and the envs wait rather than run further ahead. Which version an episode gets
depends on timing: asynchronous runs do not repeat bit for bit (the synchronous loop does).
k = 0 is the synchronous loop of :mod:`digirl.training.loop` (not this module).

Off-policy correction (``asynchronous.correction=is``). Every step collected by an older version is
weighted in the actor's loss by ρ̂ = min(ρ̄, π(a|s)/μ(a|s)) (V-trace's ρ), with μ the log-probability
the acting policy recorded (``Step.log_prob``) and π the learner's now; the algorithm multiplies its
own step weights by it (``step_weights``). With ``replay_sample`` > 0 each update draws that many
trajectories from the buffer by priority (DistRL's DPER without its entropy term): mean |V-trace TD
error| under the algorithm's step critic (when it has one: DigiRL's ``step_values``) plus mean ρ̂.

Resilience is the synchronous loop's: every iteration is one atomic shard on disk before the learner
sees it, so a learner killed at any moment resumes from its last checkpoint and reuses the iterations
already collected (their stored versions keep the staleness bound); episodes of iterations not yet
complete are collected again. Evaluation needs the envs: collection pauses after the iterations the
learner evaluates at, until it has (:class:`SharedCollector` serialises the two).
"""

from __future__ import annotations

import copy
import functools
import inspect
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import torch

from digirl.algorithms.functional import replay_priority, truncated_importance_weights, vtrace
from digirl.core.actions import Action
from digirl.core.types import Observation, Trajectory
from digirl.envs.collector import Collector, CollectorWrapper
from digirl.policies.base import ActOutput, Policy
from digirl.training.config import TrainConfig
from digirl.training.run import Run, iteration_jobs, rollout_metrics, store_iteration

if TYPE_CHECKING:
    from digirl.distributed.acting import PolicyActing
    from digirl.envs.vector import EpisodeJob

__all__ = ["AsynchronousDriver", "SharedCollector", "off_policy_weights", "split_stale"]

log = logging.getLogger(__name__)


class SharedCollector(CollectorWrapper):
    """A collector two threads take turns on: one ``run`` at a time, the other waits for it to finish."""

    def __init__(self, inner: Collector) -> None:
        super().__init__(inner)
        self._lock = threading.Lock()

    def _running(self) -> threading.Lock:
        return self._lock


# --------------------------------------------------------------------------- pure pieces
def split_stale(trajs: Sequence[Trajectory], version: int, k: int) -> tuple[list[Trajectory], list[Trajectory]]:
    """(usable, dropped): trajectories more than ``k`` updates older than ``version`` are dropped.

    A trajectory without a version (``None``: collected by an older digirl) is kept.
    """
    keep = [t for t in trajs if t.policy_version is None or version - t.policy_version <= k]
    ids = {id(t) for t in keep}
    return keep, [t for t in trajs if id(t) not in ids]


@torch.no_grad()
def off_policy_weights(
    policy: Policy, trajs: Sequence[Trajectory], version: int, *, rho_bar: float, chunk: int = 256
) -> dict[str, np.ndarray]:
    """Truncated importance weights of every step collected by another policy version than ``version``.

    traj_id → ρ̂ per step (see :func:`~digirl.algorithms.functional.truncated_importance_weights`);
    trajectories of the current version (or of no known version) are on-policy and left out.
    """
    off = [t for t in trajs if t.steps and t.policy_version is not None and t.policy_version != version]
    obs: list[Observation] = [s.observation for t in off for s in t.steps]
    acts: list[Action] = [s.action for t in off for s in t.steps]
    if not obs:
        return {}
    parts = [policy.log_prob(obs[i : i + chunk], acts[i : i + chunk]).float().cpu() for i in range(0, len(obs), chunk)]
    target = torch.cat(parts)
    behaviour = np.array([np.nan if s.log_prob is None else s.log_prob for t in off for s in t.steps], dtype=np.float64)
    rho = truncated_importance_weights(target.numpy().astype(np.float64), behaviour, rho_bar)
    out: dict[str, np.ndarray] = {}
    pos = 0
    for t in off:
        out[t.traj_id] = rho[pos : pos + t.length]
        pos += t.length
    return out


@runtime_checkable
class _HasStepValues(Protocol):
    """Algorithms with a step critic (DigiRL): V(s_1..s_H, s_{H+1}) per trajectory."""

    def step_values(self, trajs: Sequence[Trajectory]) -> list[np.ndarray]: ...


def _priorities(
    algo: object, trajs: Sequence[Trajectory], weights: Mapping[str, np.ndarray], cfg: TrainConfig
) -> dict[str, float]:
    """DistRL-style priority of each trajectory: w_td·mean|V-trace TD error| + w_rho·mean ρ̂."""
    a = cfg.asynchronous
    scored = [t for t in trajs if t.steps]
    values = algo.step_values(scored) if a.priority_td > 0 and isinstance(algo, _HasStepValues) else None
    out: dict[str, float] = {}
    for i, t in enumerate(scored):
        rho_t = weights.get(t.traj_id, np.ones(t.length))
        td: np.ndarray = np.zeros(0)
        if values is not None:
            v = values[i]
            boot = 0.0 if t.terminated else float(v[-1])
            # DigiRL's values are success probabilities: undiscounted (γ = 1) V-trace on the step rewards.
            vt = vtrace([s.reward for s in t.steps], v[:-1], boot, rho_t, gamma=1.0, rho_bar=a.rho_bar, c_bar=a.c_bar)
            td = vt.vs - v[:-1]
        out[t.traj_id] = replay_priority(td, rho_t, w_td=a.priority_td, w_rho=a.priority_rho)
    return out


def _accepts_step_weights(algo: object) -> bool:
    update = getattr(algo, "update", None)
    return update is not None and "step_weights" in inspect.signature(update).parameters


# --------------------------------------------------------------------------- the collector thread
class _Stopped(Exception):
    """Raised inside the collector's run (by a gate or the act function) to end it early."""


class _Weights:
    """What the learner publishes for the collector: weights by version, and the iterations it finished."""

    def __init__(self, version: int, iteration: int, policy: Policy) -> None:
        self._cond = threading.Condition()
        self.version = version
        self.finished = iteration  # online iterations the learner has ended (evaluation included)
        self._history = {version: [p.detach().clone() for p in policy.parameters()]}

    def publish(self, version: int, policy: Policy) -> None:
        params = [p.detach().clone() for p in policy.parameters()]
        with self._cond:
            self.version = version
            self._history[version] = params
            self._cond.notify_all()

    def finish(self, iteration: int) -> None:
        with self._cond:
            self.finished = iteration
            self._cond.notify_all()

    def params(self, version: int) -> list[torch.Tensor]:
        with self._cond:
            return self._history[version]

    def forget_below(self, version: int) -> None:
        """Drop the weights of versions no episode acts with any more (never the newest)."""
        with self._cond:
            for v in [v for v in self._history if v < min(version, self.version)]:
                del self._history[v]

    def wait_finished(self, iteration: int, stop: threading.Event) -> bool:
        """Wait until the learner ended ``iteration`` iterations; False when asked to stop first."""
        with self._cond:
            while self.finished < iteration:
                if stop.is_set():
                    return False
                self._cond.wait(0.2)
            return True


@dataclass
class _Chunk:
    iteration: int
    trajectories: list[Trajectory]
    collect_s: float


class _Collector(threading.Thread):
    """Streams the online iterations' episodes through the collector, within the staleness bound.

    Every job of iteration ``j`` carries a gate that stays closed until the learner's version is at
    least ``U(j) − k``; an episode acts with the newest weights at the moment it starts, for its whole
    length (:meth:`act_for` batches episodes of the same version together). Iterations are stored
    and handed to the learner as they complete, in whatever order.
    """

    def __init__(self, p: Run, runner: Collector, weights: _Weights, expected_version: Callable[[int], int]) -> None:
        super().__init__(name="digirl-async-collector", daemon=True)
        self.p = p
        self.runner = runner
        self.weights = weights
        self.expected_version = expected_version
        self.stop = threading.Event()
        self.behaviour = copy.deepcopy(p.policy)  # acts while the learner's copy trains
        self.loaded = weights.version
        self.bound: dict[int, int] = {}  # job_id -> version its episode acts with
        self._actings: dict[int, PolicyActing] = {}  # version -> its snapshot (inference on the actors)
        self._ready: dict[int, _Chunk | BaseException] = {}
        self._cond = threading.Condition()

    # -- called by the runner, in this thread
    def _open(self, iteration: int, job_id: int) -> bool:
        if self.stop.is_set():
            raise _Stopped
        if self.weights.version < self.expected_version(iteration) - self.p.cfg.asynchronous.max_staleness:
            return False
        self.bound[job_id] = self.weights.version
        return True

    def __call__(self, observations: Sequence[Observation]) -> list[ActOutput]:
        raise TypeError("the asynchronous collector acts per episode: the runner must call act_for(jobs, observations)")

    def act_for(self, jobs: Sequence[EpisodeJob], observations: Sequence[Observation]) -> list[ActOutput]:
        if self.stop.is_set():
            raise _Stopped
        cfg = self.p.cfg
        out: list[ActOutput | None] = [None] * len(observations)
        versions = [self.bound[j.job_id] for j in jobs]
        for v in sorted(set(versions)):
            idx = [i for i, u in enumerate(versions) if u == v]
            if v != self.loaded:
                with torch.no_grad():
                    for b, w in zip(self.behaviour.parameters(), self.weights.params(v)):
                        b.copy_(w)
                self.loaded = v
            acts = self.behaviour.act([observations[i] for i in idx], greedy=False, temperature=cfg.policy.temperature)
            for i, a in zip(idx, acts):
                out[i] = a
        return [a for a in out if a is not None]

    def actor_acting(self, job: EpisodeJob) -> PolicyActing:
        """``env.ray.inference=actor``: a snapshot of the version the job's episode acts with (one per version)."""
        from digirl.distributed.acting import PolicyActing, PolicySnapshot

        v = self.bound[job.job_id]
        got = self._actings.get(v)
        if got is None:
            with torch.no_grad():
                for b, w in zip(self.behaviour.parameters(), self.weights.params(v)):
                    b.copy_(w)
            self.loaded = v
            got = PolicyActing(PolicySnapshot.of(self.behaviour), False, self.p.cfg.policy.temperature)
            oldest = min(self.bound.values(), default=v)
            self._actings = {u: a for u, a in self._actings.items() if u >= oldest}
            self._actings[v] = got
        return got

    # -- the thread
    def run(self) -> None:
        from digirl.envs.vector import EpisodeJob

        p, cfg = self.p, self.p.cfg
        todo = [j for j in range(p.state.iteration, cfg.iterations) if j not in p.on_disk]
        # Evaluation needs the envs: a run ends after each iteration the learner evaluates at.
        segments: list[list[int]] = [[]]
        for j in todo:
            segments[-1].append(j)
            if p.evaluates_at(j + 1):
                segments.append([])
        try:
            for seg in (s for s in segments if s):
                if not self.weights.wait_finished(seg[0], self.stop):
                    return
                jobs: list[EpisodeJob] = []
                iteration: dict[int, int] = {}
                for j in seg:
                    for b in iteration_jobs(cfg, p.train_pool, j):
                        jobs.append(EpisodeJob(b.task, b.seed, job_id=b.job_id, gate=functools.partial(self._open, j, b.job_id)))
                        iteration[b.job_id] = j
                pending: dict[int, list[Trajectory]] = {j: [] for j in seg}
                started: dict[int, float] = {}
                order = {job.job_id: i for i, job in enumerate(jobs)}
                for t in self.runner.run(self, jobs):
                    jid = int(t.metadata["job_id"])
                    j = iteration[jid]
                    started.setdefault(j, time.perf_counter() - float(t.metadata.get("wall_time_s", 0.0)))
                    t.policy_version = self.bound.pop(jid, self.weights.version)
                    self.weights.forget_below(min(self.bound.values(), default=self.weights.version))
                    pending[j].append(t)
                    if len(pending[j]) == cfg.rollout_size:
                        trajs = sorted(pending.pop(j), key=lambda x: order[x.metadata["job_id"]])
                        store_iteration(p.store, trajs, j, None)
                        self._hand_over(j, _Chunk(j, trajs, time.perf_counter() - started[j]))
        except _Stopped:
            return
        except BaseException as e:  # handed to the learner, which raises it
            self._hand_over(-1, e)

    def _hand_over(self, iteration: int, item: _Chunk | BaseException) -> None:
        with self._cond:
            self._ready[iteration] = item
            self._cond.notify_all()

    def chunk(self, iteration: int) -> _Chunk:
        """Iteration ``iteration``'s trajectories once collected (waits); re-raises the collector's error."""
        with self._cond:
            while iteration not in self._ready:
                if -1 in self._ready:
                    raise self._ready[-1]  # type: ignore[misc]
                if not self.is_alive():
                    raise RuntimeError(f"the collector thread ended without collecting iteration {iteration}")
                self._cond.wait(0.5)
            item = self._ready.pop(iteration)
        assert isinstance(item, _Chunk)
        return item


# --------------------------------------------------------------------------- the learner
class AsynchronousDriver:
    """The online phase with collection running ahead of learning (see the module docs).

    Built before the offline phase, so a run it cannot drive fails before any work: it needs
    episodes started one by one (a :class:`~digirl.envs.vector.VectorRunner`) and, with
    ``asynchronous.correction=is``, an algorithm whose update takes ``step_weights``. It makes the
    run's collector a :class:`SharedCollector`, which the collector thread and evaluation take turns on.
    """

    def __init__(self, run: Run) -> None:
        from digirl.envs.vector import VectorRunner

        cfg = run.cfg
        if not isinstance(run.runner, VectorRunner):
            raise ValueError("asynchronous learning needs env.runner=process, inline or ray (episodes started one by one)")
        if cfg.asynchronous.correction == "is" and not _accepts_step_weights(run.algo):
            raise ValueError(
                f"algo.name={cfg.algo.name} cannot weight steps (its update takes no step_weights); "
                "use asynchronous.correction=none"
            )
        self.runner = SharedCollector(run.runner)
        run.runner = self.runner

    def run(self, run: Run) -> None:
        cfg, state = run.cfg, run.state
        start_iter, start_version = state.iteration, state.updates

        def expected_version(j: int) -> int:
            """The learner's version when it consumes iteration j: one update per iteration after the warm-up."""
            return start_version + sum(1 for i in range(start_iter, j) if i >= cfg.warmup_iterations)

        weights = _Weights(state.updates, state.iteration, run.policy)
        collector = _Collector(run, self.runner, weights, expected_version)
        collector.start()
        try:
            for it in range(state.iteration, cfg.iterations):
                step = it + 1
                chunk, m = self._take(run, collector, it)
                m |= rollout_metrics(chunk)
                if it >= cfg.warmup_iterations:
                    m |= _learn(run, step)
                    weights.publish(state.updates, run.policy)
                run.end_iteration(step, m, len(chunk))
                weights.finish(step)
        finally:
            collector.stop.set()
            collector.join(timeout=cfg.env.step_timeout_s + 30.0)
            if collector.is_alive():
                log.warning("the collector thread did not stop in time; closing the envs under it")

    @staticmethod
    def _take(run: Run, collector: _Collector, it: int) -> tuple[list[Trajectory], dict[str, float]]:
        """Iteration ``it``'s trajectories (from disk after a crash, else from the collector, waiting),
        the usable ones added to the replay buffer; and its metrics so far (waiting, staleness)."""
        m: dict[str, float] = {}
        t0 = time.perf_counter()
        chunk = run.on_disk.get(it)
        if chunk is None:
            got = collector.chunk(it)
            chunk = got.trajectories
            m["timing_s/collect"] = got.collect_s
        m["timing_s/learner_wait"] = time.perf_counter() - t0
        version = run.state.updates
        usable, dropped = split_stale(chunk, version, run.cfg.asynchronous.max_staleness)
        versions = [version - t.policy_version for t in chunk if t.policy_version is not None]
        m["data/staleness"] = float(np.mean(versions)) if versions else 0.0
        m["data/dropped_stale"] = float(len(dropped))
        run.buffer.add([t for t in usable if not t.env_failure])
        return chunk, m


def _learn(p: Run, step: int) -> dict[str, float]:
    """One update on the replay data, off-policy steps weighted, drawn by priority when asked."""
    a, version = p.cfg.asynchronous, p.state.updates
    m: dict[str, float] = {}
    t0 = time.perf_counter()
    if a.replay_sample:
        rng = np.random.default_rng([p.cfg.seed, 0xA5, step])  # a function of the step: resume draws the same
        batch = p.buffer.sample_prioritized(a.replay_sample, rng, alpha=a.priority_alpha)
    else:
        batch = p.buffer.trajectories()
    weights = off_policy_weights(p.policy, batch, version, rho_bar=a.rho_bar) if a.correction == "is" else {}
    if a.replay_sample:
        p.buffer.set_priorities(_priorities(p.algo, batch, weights, p.cfg))
    if weights:
        flat = np.concatenate(list(weights.values()))
        m["train/off_policy_steps"] = float(flat.size)
        m["train/is_weight_mean"] = float(flat.mean())
        m["train/is_weight_truncated"] = float((flat >= a.rho_bar).mean())
    m["timing_s/correction"] = time.perf_counter() - t0
    kw: dict[str, Any] = {"step_weights": weights} if a.correction == "is" else {}
    return m | p.update(batch, "online", step, **kw)
