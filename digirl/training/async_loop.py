"""Asynchronous learning: the envs keep collecting while the learner updates (``asynchronous.max_staleness`` = k ≥ 1).

A collector thread runs the online iterations' episodes one iteration after another with a copy of
the policy (the *behaviour* policy), while the learner (the calling thread) updates on what is
already in. The learner publishes its weights after every update; the collector takes the newest
weights before each iteration and tags the iteration's trajectories with their version. Reading
top to bottom, per online iteration ``it``:

    the learner takes iteration it's trajectories (from disk after a crash, else from the collector)
    → drops any older than k updates → adds them to the replay buffer → weights off-policy steps
    by truncated importance weights → updates → publishes the new weights → logs, evaluates, checkpoints

The staleness bound. When the learner consumes iteration ``j`` it holds version ``U(j)`` (its update
count by then: a pure function of the iteration, the warm-up and the offline phase). The collector
starts iteration ``j`` only with weights of version ≥ ``U(j) − k``, waiting for the learner otherwise,
so every trajectory is at most k updates stale when it is learned from, and at most k iterations are
collected ahead. With ``deterministic=true`` (the default) it takes exactly version ``U(j) − k``, so a
run repeats whatever the timing; otherwise the newest weights there are (staleness ≤ k, often 1).
k = 0 is the synchronous loop of :mod:`digirl.training.loop` (not this module).

Off-policy correction (``asynchronous.correction=is``). Every step collected by an older version is
weighted in the actor's loss by ρ̂ = min(ρ̄, π(a|s)/μ(a|s)) (V-trace's ρ), with μ the log-probability
the acting policy recorded (``Step.log_prob``) and π the learner's now; the algorithm multiplies its
own step weights by it (``step_weights``). With ``replay_sample`` > 0 each update draws that many
trajectories from the buffer by priority (DistRL's DPER without its entropy term): mean |V-trace TD
error| under the algorithm's step critic (when it has one: DigiRL's ``step_values``) plus mean ρ̂.

Resilience is the synchronous loop's: every iteration is one atomic shard on disk before the learner
sees it, so a learner killed at any moment resumes from its last checkpoint and reuses the iterations
already collected (their stored version keeps the staleness bound). Evaluation shares the collector
(:class:`SharedCollector`): it waits for the iteration being collected to finish.
"""

from __future__ import annotations

import copy
import inspect
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import torch

from digirl.algorithms.functional import replay_priority, truncated_importance_weights, vtrace
from digirl.core.actions import Action
from digirl.core.types import Observation, TaskSpec, Trajectory
from digirl.envs.collector import Collector
from digirl.policies.base import ActOutput, Policy
from digirl.training.checkpoint import LoopState
from digirl.training.common import in_job_order, policy_act_fn
from digirl.training.config import TrainConfig

if TYPE_CHECKING:
    from digirl.algorithms.base import Algorithm
    from digirl.data.replay import ReplayBuffer
    from digirl.data.store import TrajectoryStore
    from digirl.envs.vector import EpisodeJob, RunnerStats
    from digirl.policies.base import ActFn

__all__ = ["OnlinePhase", "SharedCollector", "off_policy_weights", "run_online_async", "split_stale"]

log = logging.getLogger(__name__)


@dataclass
class OnlinePhase:
    """What :func:`digirl.training.loop.train` hands to the asynchronous online phase."""

    cfg: TrainConfig
    state: LoopState
    policy: Policy
    algo: Algorithm
    runner: Collector
    store: TrajectoryStore
    buffer: ReplayBuffer
    on_disk: dict[int, list[Trajectory]]  # iterations already collected (a resumed run)
    train_pool: list[TaskSpec | None]
    update: Callable[..., dict[str, float]]  # loop.train's update(trajectories, phase, step, **kw)
    end_iteration: Callable[[int, dict[str, float], int], None]


class SharedCollector:
    """A collector two threads take turns on: one ``run`` at a time, the other waits for it to finish."""

    def __init__(self, inner: Collector) -> None:
        self.inner = inner
        self._lock = threading.Lock()

    @property
    def num_envs(self) -> int:
        return self.inner.num_envs

    @property
    def stats(self) -> RunnerStats:
        return self.inner.stats

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
        with self._lock:
            yield from self.inner.run(
                act_fn, jobs, expert=expert, expert_eps=expert_eps, expert_seed=expert_seed, expert_text=expert_text
            )

    def close(self) -> None:
        self.inner.close()


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
    """Raised inside the collector thread's act function to end a run early."""


class _Weights:
    """The learner's published weights by version (the last few), handed to the collector thread."""

    def __init__(self, version: int, policy: Policy) -> None:
        self._cond = threading.Condition()
        self.version = version
        self._history = {version: [p.detach().clone() for p in policy.parameters()]}

    def publish(self, version: int, policy: Policy) -> None:
        params = [p.detach().clone() for p in policy.parameters()]
        with self._cond:
            self.version = version
            self._history[version] = params
            self._cond.notify_all()

    def wait_for(self, version: int, *, exact: bool, stop: threading.Event) -> tuple[int, list[torch.Tensor]] | None:
        """Weights of version ``version`` (``exact``) or the newest, once the learner has reached ``version``.

        ``None`` when asked to stop first. Versions older than the one returned are forgotten: the
        collector's requests only grow.
        """
        with self._cond:
            while self.version < version:
                if stop.is_set():
                    return None
                self._cond.wait(0.2)
            oldest = min(self._history)
            v = max(version, oldest) if exact else self.version
            for old in [u for u in self._history if u < v]:
                del self._history[old]
            return v, self._history[v]


@dataclass
class _Chunk:
    iteration: int
    trajectories: list[Trajectory]
    version: int
    collect_s: float


class _Collector(threading.Thread):
    """Collects online iterations ahead of the learner, within the staleness bound (see the module docs)."""

    def __init__(self, p: OnlinePhase, weights: _Weights, expected_version: Callable[[int], int]) -> None:
        super().__init__(name="digirl-async-collector", daemon=True)
        self.p = p
        self.weights = weights
        self.expected_version = expected_version
        self.stop = threading.Event()
        self.out: queue.Queue[_Chunk | BaseException] = queue.Queue()
        self.behaviour = copy.deepcopy(p.policy)  # acts while the learner's copy trains
        self.behaviour_version = weights.version

    def _act(self, observations: Sequence[Observation]) -> list[ActOutput]:
        if self.stop.is_set():
            raise _Stopped
        return self._behaviour_act(observations)

    def run(self) -> None:
        from digirl.training.loop import iteration_jobs, store_iteration

        p, cfg = self.p, self.p.cfg
        self._behaviour_act = policy_act_fn(self.behaviour, greedy=False, temperature=cfg.policy.temperature)
        try:
            for j in range(p.state.iteration, cfg.iterations):
                if j in p.on_disk:
                    continue
                # Deterministic runs take exactly the oldest version allowed, so they repeat; otherwise the newest.
                need = self.expected_version(j) - cfg.asynchronous.max_staleness
                got = self.weights.wait_for(need, exact=cfg.deterministic, stop=self.stop)
                if got is None:
                    return
                version, params = got
                if version != self.behaviour_version:
                    with torch.no_grad():
                        for b, w in zip(self.behaviour.parameters(), params):
                            b.copy_(w)
                    self.behaviour_version = version
                jobs = iteration_jobs(cfg, p.train_pool, j)
                t0 = time.perf_counter()
                trajs = in_job_order(p.runner.run(self._act, jobs), jobs)
                self.out.put(_Chunk(j, store_iteration(p.store, trajs, j, version), version, time.perf_counter() - t0))
        except _Stopped:
            return
        except BaseException as e:  # handed to the learner, which raises it
            self.out.put(e)

    def next_chunk(self) -> _Chunk:
        """The next iteration the collector finished (waits); re-raises the collector's error."""
        while True:
            try:
                item = self.out.get(timeout=1.0)
            except queue.Empty:
                if not self.is_alive():
                    raise RuntimeError("the collector thread ended without collecting the next iteration") from None
                continue
            if isinstance(item, BaseException):
                raise item
            return item


# --------------------------------------------------------------------------- the learner
def run_online_async(p: OnlinePhase) -> None:
    """The online phase with collection running ahead of learning (see the module docs)."""
    cfg, state, a = p.cfg, p.state, p.cfg.asynchronous
    k = a.max_staleness
    if a.correction == "is" and not _accepts_step_weights(p.algo):
        raise ValueError(
            f"algo.name={cfg.algo.name} cannot weight steps (its update takes no step_weights); use asynchronous.correction=none"
        )
    start_iter, start_version = state.iteration, state.updates

    def expected_version(j: int) -> int:
        """The learner's version when it consumes iteration j: one update per iteration after the warm-up."""
        return start_version + sum(1 for i in range(start_iter, j) if i >= cfg.warmup_iterations)

    weights = _Weights(state.updates, p.policy)
    collector = _Collector(p, weights, expected_version)
    collector.start()
    try:
        for it in range(state.iteration, cfg.iterations):
            step = it + 1
            m: dict[str, float] = {}
            t0 = time.perf_counter()
            chunk = p.on_disk.get(it)
            if chunk is None:
                got = collector.next_chunk()
                assert got.iteration == it, (got.iteration, it)
                chunk = got.trajectories
                m["timing_s/collect"] = got.collect_s
            m["timing_s/learner_wait"] = time.perf_counter() - t0
            usable, dropped = split_stale(chunk, state.updates, k)
            versions = [state.updates - t.policy_version for t in chunk if t.policy_version is not None]
            m["data/staleness"] = float(np.mean(versions)) if versions else 0.0
            m["data/dropped_stale"] = float(len(dropped))
            p.buffer.add([t for t in usable if not t.env_failure])
            from digirl.training.loop import rollout_metrics

            m |= rollout_metrics(chunk)
            if it >= cfg.warmup_iterations:
                m |= _learn(p, step)
                weights.publish(state.updates, p.policy)
            p.end_iteration(step, m, len(chunk))
    finally:
        collector.stop.set()
        collector.join(timeout=cfg.env.step_timeout_s + 30.0)
        if collector.is_alive():
            log.warning("the collector thread did not stop in time; closing the envs under it")


def _learn(p: OnlinePhase, step: int) -> dict[str, float]:
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
