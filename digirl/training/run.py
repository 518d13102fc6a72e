"""A training run and its phases: what the synchronous and asynchronous online drivers share.

:class:`Run` holds everything one ``digirl train`` run works with (config, counters, policy,
algorithm, trajectory store, replay buffer, envs, metrics) and offers the phases the loop is made of:

    collect (one online iteration's episodes, stored as one shard)  ·  update (one learner update)
    evaluate (the eval tasks; reports and the learning curve)  ·  checkpoint  ·  log

plus the two that combine them: :meth:`Run.offline_phase` (once) and :meth:`Run.end_iteration`
(count, log, evaluate when due, checkpoint). The drivers, :class:`digirl.training.loop.SynchronousDriver`
and :class:`digirl.training.async_loop.AsynchronousDriver`, decide only *when* each phase runs; both
import this module, and it imports neither.

Several processes (``accelerate launch`` / ``torchrun``): rank 0 collects, appends the shard,
evaluates, logs and writes checkpoints; every other rank reads each new shard back from the store.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

import numpy as np

from digirl.algorithms.base import Algorithm, Phase
from digirl.algorithms.registry import make_algorithm
from digirl.core.errors import DataError
from digirl.core.types import TaskSpec, Trajectory
from digirl.envs.collector import Collector
from digirl.envs.vector import EpisodeJob
from digirl.policies.base import ActingPolicy, Policy
from digirl.policies.registry import load_policy
from digirl.training.branching import brancher_for
from digirl.training.checkpoint import LoopState, latest_checkpoint, load_checkpoint, save_checkpoint, set_rng_state
from digirl.training.common import (
    PolicyActFn,
    build_policy,
    in_job_order,
    jobs_for,
    make_runner,
    policy_act_fn,
    preserved_sampling,
    require_trainable,
    sample_tasks,
    task_pool,
)
from digirl.training.config import EvalRunConfig, TrainConfig
from digirl.training.evaluate import EvalReport, eval_task_sets, summarize, write_reports
from digirl.training.task_sampling import family_outcomes, family_weights
from digirl.utils import distributed as dist

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from digirl.data.replay import ReplayBuffer
    from digirl.data.store import TrajectoryStore

__all__ = [
    "OnlineDriver",
    "Run",
    "evaluate_as_configured",
    "evaluate_policy",
    "evaluate_sampled",
    "iteration_jobs",
    "play_evaluation",
    "rollout_metrics",
    "store_iteration",
]

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- pure pieces
def rollout_metrics(trajs: list[Trajectory], prefix: str = "rollout") -> dict[str, float]:
    """Success, length, failures and invalid actions of a batch of episodes; with the behaviour
    policy's log-probabilities, also ``action_nll``: the mean −log π(a|s) of the sampled actions, an
    unbiased estimate of the per-step policy entropy (nats) on the states visited. A policy whose
    rollouts repeat themselves shows it falling towards 0 (exploration collapse)."""
    scored = [t for t in trajs if not t.env_failure]
    n = max(1, len(scored))
    out = {
        f"{prefix}/success_rate": sum(t.success for t in scored) / n,
        f"{prefix}/episode_length": float(np.mean([t.length for t in scored])) if scored else 0.0,
        f"{prefix}/env_failures": float(len(trajs) - len(scored)),
        f"{prefix}/invalid_action_rate": sum(1 for t in scored for s in t.steps if not s.action.is_valid)
        / max(1, sum(t.length for t in scored)),
        f"{prefix}/trajectories": float(len(trajs)),
    }
    branch_steps = sum(int(t.metadata.get("branch_env_steps", 0)) for t in scored)
    if branch_steps:  # algo.name=branch: what the branches cost, so methods compare at equal env steps
        out[f"{prefix}/branch_env_steps"] = float(branch_steps)
    out[f"{prefix}/env_steps"] = float(sum(t.length for t in scored) + branch_steps)
    nll = [-s.log_prob for t in scored for s in t.steps if s.log_prob is not None]
    if nll:
        out[f"{prefix}/action_nll"] = float(np.mean(nll))
    return out


def iteration_jobs(
    cfg: TrainConfig, train_pool: Sequence[TaskSpec | None], it: int, weights: dict[str, float] | None = None
) -> list[EpisodeJob]:
    """The episodes of online iteration ``it``: a pure function of the seed, ``it`` and the family
    ``weights`` (``task_sampling``; None = uniform over tasks), so a resumed run collects the same.
    With ``group_size`` G > 1, rollout_size/G tasks are drawn and each is played G times from one
    env seed, the copies next to each other (a group; G = 1 draws exactly as before)."""
    rng = np.random.default_rng([cfg.seed, it])
    g = cfg.group_size
    tasks = sample_tasks(train_pool, cfg.rollout_size // g, rng, weights)
    seeds = rng.integers(0, 2**31 - 1, size=len(tasks))
    return jobs_for([t for t in tasks for _ in range(g)], np.repeat(seeds, g))


def store_iteration(store: TrajectoryStore, trajs: list[Trajectory], it: int, policy_version: int | None) -> list[Trajectory]:
    """Tag an iteration's trajectories (iteration, the policy version that acted: ``None`` keeps each
    trajectory's own) and store them as one shard."""
    for t in trajs:
        t.metadata["iteration"] = it
        if policy_version is not None:
            t.policy_version = policy_version
    store.append(trajs)
    return trajs


class _PlayRequired(TypedDict):
    greedy: bool
    temperature: float
    seed: int


class PlayOptions(_PlayRequired, total=False):
    """The keywords of :func:`play_evaluation`, which :func:`evaluate_policy` passes on."""

    loop_escape: bool


def play_evaluation(
    policy: ActingPolicy,
    runner: Collector,
    tasks: dict[str, list[TaskSpec | None]],
    *,
    greedy: bool,
    temperature: float,
    seed: int,
    loop_escape: bool = False,
) -> dict[str, list[Trajectory]]:
    """Play every split's tasks once, task ``i`` of a split with env seed ``seed + i``: the episodes
    :func:`evaluate_policy` reports on, for callers that compare them one by one (paired studies).
    With ``loop_escape`` (greedy only), actions that would go round a cycle again are sampled, with
    the random streams put back afterwards (training's draws stay where they were)."""
    played: dict[str, list[Trajectory]] = {}
    escape = greedy and loop_escape
    act = policy_act_fn(policy, greedy=greedy, temperature=temperature, loop_escape=escape)
    with preserved_sampling(policy) if escape else nullcontext():
        for split, ts in tasks.items():
            seeds = [seed + i for i in range(len(ts))]
            played[split] = list(runner.run(act, jobs_for(ts, seeds)))
    return played


def evaluate_policy(
    policy: ActingPolicy, runner: Collector, tasks: dict[str, list[TaskSpec | None]], **play: Unpack[PlayOptions]
) -> list[EvalReport]:
    """Play every split's tasks once (:func:`play_evaluation`, which takes ``play``) and report."""
    played = play_evaluation(policy, runner, tasks, **play)
    return [summarize(trajs, split) for split, trajs in played.items()]


def evaluate_sampled(
    policy: ActingPolicy, runner: Collector, tasks: dict[str, list[TaskSpec | None]], cfg: TrainConfig | EvalRunConfig
) -> list[EvalReport]:
    """``eval.sampled``: the same tasks again with sampled actions (none when off, or when the main
    evaluation already samples), leaving every random stream where it was."""
    if not (cfg.eval.sampled and cfg.eval.greedy):
        return []
    with preserved_sampling(policy):
        return evaluate_policy(policy, runner, tasks, greedy=False, temperature=cfg.policy.temperature, seed=cfg.eval.seed)


def evaluate_as_configured(
    policy: ActingPolicy, runner: Collector, tasks: dict[str, list[TaskSpec | None]], cfg: TrainConfig | EvalRunConfig
) -> tuple[list[EvalReport], list[EvalReport]]:
    """What ``cfg.eval`` asks for: the main evaluation (``eval.greedy``, ``eval.loop_escape``) and,
    with ``eval.sampled``, the sampled one beside it (empty otherwise)."""
    reports = evaluate_policy(
        policy,
        runner,
        tasks,
        greedy=cfg.eval.greedy,
        temperature=cfg.policy.temperature,
        seed=cfg.eval.seed,
        loop_escape=cfg.eval.loop_escape,
    )
    return reports, evaluate_sampled(policy, runner, tasks, cfg)


def _eval_metrics(reports: list[EvalReport]) -> dict[str, float]:
    out: dict[str, float] = {}
    for r in reports:
        out[f"eval/{r.split}_success_rate"] = r.success_rate
        out[f"eval/{r.split}_episode_length"] = r.mean_length
        out[f"eval/{r.split}_env_failures"] = float(r.env_failures)
    return out


class _MetricsSink(Protocol):
    def log(self, metrics: dict[str, float], step: int) -> None: ...

    def close(self) -> None: ...


class _Quiet:
    """The metrics logger of ranks other than 0: they log nothing."""

    def log(self, metrics: dict[str, float], step: int) -> None:
        pass

    def close(self) -> None:
        pass


# --------------------------------------------------------------------------- opening a run
def _open_learner(cfg: TrainConfig, run_dir: Path) -> tuple[LoopState, Policy, Algorithm]:
    """The counters, policy and algorithm: from the latest checkpoint in ``run_dir``, else fresh."""
    ckpt = latest_checkpoint(run_dir)
    if ckpt is None:
        policy = require_trainable(build_policy(cfg.policy, seed=cfg.seed), "digirl train")
        return LoopState(), policy, make_algorithm(policy, cfg.algo, seed=cfg.seed)
    state, policy_dir, train_state = load_checkpoint(ckpt)
    policy = require_trainable(load_policy(policy_dir, device=cfg.policy.device, cfg=cfg.policy), "digirl train")
    algo = make_algorithm(policy, cfg.algo, seed=cfg.seed)
    algo.load_state_dict(train_state["algo"])
    set_rng_state(train_state["rng"])
    log.info("resuming %s from %s (online iteration %d)", run_dir, ckpt.name, state.iteration)
    return state, policy, algo


def _open_data(
    cfg: TrainConfig, run_dir: Path, main: bool, state: LoopState
) -> tuple[TrajectoryStore, dict[int, list[Trajectory]], ReplayBuffer]:
    """This run's trajectory store (rank 0 creates it), the online iterations on disk that the
    checkpoint does not cover yet (by iteration: reused, not collected again), and the replay buffer
    filled with the offline dataset and the checkpointed iterations, as the uninterrupted run had it
    (:func:`~digirl.training.resume.stored_iterations`: no shard enters it twice)."""
    from digirl.data.replay import ReplayBuffer
    from digirl.data.store import TrajectoryStore
    from digirl.training.resume import stored_iterations

    info = {"env_id": cfg.env.id, "producer": "digirl train"}
    created = TrajectoryStore(run_dir / "data", info=info) if main else None
    dist.barrier()  # rank 0 created the store; the others open it
    store = created or TrajectoryStore(run_dir / "data", create=False)
    online = store.load()  # this run's online trajectories so far (complete shards only)
    staleness = cfg.asynchronous.max_staleness if cfg.mode != "offline" else 0
    replay, pending = stored_iterations(
        online, state.iteration, updates=state.updates, max_staleness=staleness, warmup_iterations=cfg.warmup_iterations
    )
    offline: list[Trajectory] = []
    if cfg.mode in ("offline", "off2on"):
        assert cfg.offline_dataset is not None
        offline = TrajectoryStore(cfg.offline_dataset, create=False).load()
        log.info("offline dataset: %d trajectories from %s", len(offline), cfg.offline_dataset)
    buffer = ReplayBuffer(cfg.replay_capacity)
    buffer.add([t for t in offline if not t.env_failure])
    buffer.add(replay)
    return store, pending, buffer


def _open_metrics(cfg: TrainConfig, run_dir: Path, main: bool) -> _MetricsSink:
    from digirl.config.core import config_to_dict
    from digirl.utils.metrics import MetricsLogger

    if not main:
        return _Quiet()
    return MetricsLogger(
        run_dir,
        tensorboard=cfg.log.tensorboard,
        wandb=cfg.log.wandb,
        wandb_project=cfg.log.wandb_project,
        config=config_to_dict(cfg, for_save=True),
    )


# --------------------------------------------------------------------------- the run
class Run:
    """One training run: its state and its phases. Open one with :meth:`open`; :meth:`close` it."""

    def __init__(self, cfg: TrainConfig, run_dir: Path) -> None:
        """Open ``run_dir``: save the config, seed, resume or initialise the learner, load the data,
        start the metrics and (rank 0, when anything needs them) the envs."""
        from digirl.config.core import save_config
        from digirl.training.settle import settle_run_config
        from digirl.utils.rng import seed_everything

        self.cfg = cfg = settle_run_config(cfg, run_dir=run_dir, follow_policy=False)  # config.yaml: the policy as loaded
        self.run_dir = run_dir
        self.distributed = dist.init()
        self.main = dist.is_main()
        run_dir.mkdir(parents=True, exist_ok=True)
        if self.main:
            save_config(cfg, run_dir / "config.yaml")
        seed_everything(cfg.seed, deterministic=cfg.deterministic)
        self.state, self.policy, self.algo = _open_learner(cfg, run_dir)
        self.store, self.on_disk, self.buffer = _open_data(cfg, run_dir, self.main, self.state)
        self.metrics = _open_metrics(cfg, run_dir, self.main)
        needs_env = cfg.mode != "offline" or cfg.eval.test_tasks > 0 or cfg.eval.train_tasks > 0 or cfg.eval.val_tasks > 0
        self.runner: Collector | None = make_runner(cfg.env, deterministic=cfg.deterministic) if needs_env and self.main else None
        # algo.name=branch: K actions per visited state, executed on copies of the env (rank 0 collects)
        self.brancher = brancher_for(self.algo, cfg.env, seed=cfg.seed) if self.main and cfg.mode != "offline" else None
        self.train_pool = task_pool(cfg.env, cfg.env.train_split) if needs_env else []
        test_pool = task_pool(cfg.env, cfg.env.test_split) if needs_env else []
        self.eval_tasks = eval_task_sets(cfg.env, cfg.eval, train_pool=self.train_pool, test_pool=test_pool) if needs_env else {}
        self.family_sizes = Counter(t.family for t in self.train_pool if t is not None)
        self.history: list[dict[str, Any]] = []  # one entry per evaluation: the learning curve
        self._start = time.perf_counter()  # this session's wall-clock ...
        self._eval_s = 0.0  # ... and the part of it spent evaluating

    @classmethod
    def open(cls, cfg: TrainConfig, run_dir: str | Path) -> Run:
        return cls(cfg, Path(run_dir))

    def close(self) -> None:
        self.metrics.close()
        if self.runner is not None:
            self.runner.close()
        if self.brancher is not None:
            self.brancher.close()

    # ------------------------------------------------------------------ phases
    def collect(self, it: int, act: PolicyActFn) -> list[Trajectory]:
        """Online iteration ``it``'s trajectories, stored as one shard; an iteration already on disk
        (a crash before its checkpoint) is reused. Under several processes every rank gets the
        shard rank 0 stored."""
        new = self.on_disk.get(it)
        if new is not None:
            return new
        if self.main:
            assert self.runner is not None
            cfg = self.cfg
            outcomes = family_outcomes(self.buffer.trajectories())
            families = sorted(self.family_sizes)
            weights = family_weights(cfg.task_sampling, families, outcomes, sizes=self.family_sizes, power=cfg.task_family_power)
            jobs = iteration_jobs(cfg, self.train_pool, it, weights)
            act.version = self.state.updates  # actors acting themselves fetch these weights once
            trajs = in_job_order(self.runner.run(act, jobs), jobs)
            if self.brancher is not None:  # before storing: the branches are stored with their episodes
                log.info("iteration %d branches: %s", it, self.brancher.expand(trajs, act, it))
            new = store_iteration(self.store, trajs, it, self.state.updates)
        if self.distributed:  # every rank learns from the same stored shard
            dist.barrier()
            new = self._read_iteration(it)
        assert new is not None
        return new

    def _read_iteration(self, it: int) -> list[Trajectory]:
        """The shard rank 0 just appended for online iteration ``it``, as read back from the store."""
        shard = self.store.shard_ids()[-1]
        trajs: list[Trajectory] = self.store.load(shards=[shard])
        if any(int(t.metadata.get("iteration", -1)) != it for t in trajs):
            raise DataError(f"{self.store.path}: shard {shard} is not online iteration {it} (another process writes this run?)")
        return trajs

    def update(self, trajectories: list[Trajectory], phase: Phase, step: int, **kw: Any) -> dict[str, float]:
        """One learner update; the policy's version counts updates, and the update's annotations are kept.
        ``kw`` goes to the algorithm (the asynchronous driver's ``step_weights``)."""
        from digirl.data.annotations import ANNOTATIONS_DIR, write_annotations

        t0 = time.perf_counter()
        m = self.algo.update(trajectories, phase, **kw)
        self.state.updates += 1
        notes = self.algo.annotations()
        if notes and self.main:
            write_annotations(self.run_dir / ANNOTATIONS_DIR, step, notes)
        return m | {f"timing_s/{phase}_update": time.perf_counter() - t0}

    @property
    def can_evaluate(self) -> bool:
        """Whether this process evaluates: there are eval tasks and it holds the envs (rank 0)."""
        return bool(self.eval_tasks) and self.runner is not None

    def evaluates_at(self, step: int) -> bool:
        """Whether :meth:`end_iteration` evaluates after online iteration ``step`` (the final one is :meth:`finish`'s)."""
        every = self.cfg.eval.every
        return bool(self.eval_tasks and every and (step % every == 0) and step != self.cfg.iterations)

    def evaluate(self, step: int) -> list[EvalReport]:
        """Evaluate the policy as ``cfg.eval`` asks; log it, write its reports and add it to the learning curve."""
        assert self.runner is not None
        t0 = time.perf_counter()
        reports, sampled = evaluate_as_configured(self.policy, self.runner, self.eval_tasks, self.cfg)
        m = _eval_metrics(reports)
        if sampled:
            m |= {f"eval/{r.split}_sampled_success_rate": r.success_rate for r in sampled}
            write_reports(sampled, self.run_dir / "eval", name=f"eval-iter{step:04d}-sampled")
        m["timing_s/eval"] = time.perf_counter() - t0
        self.log(m, step)
        self.history.append(
            {
                "iteration": step,
                "online_trajectories": self.state.trajectories_seen,
                "online_env_steps": self.state.env_steps_seen,
                # time to reach this policy: wall-clock so far, and the same without earlier evaluations
                "wall_s": t0 - self._start,
                "train_wall_s": t0 - self._start - self._eval_s,
                **{k: v for k, v in m.items() if k.startswith("eval/")},
                "families": {r.split: {f: d["success_rate"] for f, d in r.per_family.items()} for r in reports},
            }
        )
        self._eval_s += time.perf_counter() - t0
        write_reports(reports, self.run_dir / "eval", name=f"eval-iter{step:04d}")
        for r in reports:
            log.info("eval %s @ iter %d: %.1f%% (%d/%d)", r.split, step, 100 * r.success_rate, r.successes, r.episodes)
        return reports

    def checkpoint(self) -> None:
        """Rank 0 writes a checkpoint of the run as it stands; every rank waits for it."""
        if self.main:
            save_checkpoint(self.run_dir, self.state, self.policy, self.algo.state_dict(), keep=self.cfg.checkpoint_keep)
        dist.barrier()

    def log(self, metrics: dict[str, float], step: int) -> None:
        self.metrics.log(metrics, step)

    # ------------------------------------------------------------------ phases combined
    def offline_phase(self) -> None:
        """The offline update (once, in modes offline and off2on), then the starting evaluation and a
        checkpoint. An online run starting from scratch evaluates its starting policy instead (the
        learning curve's first point)."""
        cfg, state = self.cfg, self.state
        if cfg.mode in ("offline", "off2on") and not state.offline_done:
            self.log(self.update(self.buffer.trajectories(), "offline", 0), 0)
            state.offline_done = True
            if self.can_evaluate:
                self.evaluate(0)
            self.checkpoint()
        elif not state.offline_done and state.iteration == 0 and self.can_evaluate and cfg.eval.every and self.main:
            self.evaluate(0)

    def end_iteration(self, step: int, m: dict[str, float], collected: int) -> None:
        """Count, log, evaluate (every eval.every iterations) and checkpoint a finished online iteration
        (rank 0 evaluates and writes; every rank waits for it)."""
        self.state.iteration = step
        self.state.trajectories_seen += collected
        self.state.env_steps_seen += int(m.get("rollout/env_steps", 0))
        m["data/online_trajectories"] = float(self.state.trajectories_seen)
        m["data/online_env_steps"] = float(self.state.env_steps_seen)
        m["data/replay_trajectories"] = float(len(self.buffer))
        self.log(m, step)
        if self.main and self.evaluates_at(step):
            self.evaluate(step)
        self.checkpoint()

    def finish(self) -> dict[str, Any]:
        """The final evaluation and the trained policy (``run_dir/policy``); the run's summary. The
        rerun of a finished run does not evaluate (nor log) again: it reports the evaluation on disk
        (:func:`~digirl.training.resume.final_eval_done`)."""
        from digirl.training.resume import final_eval_done, mark_final_eval

        done = final_eval_done(self.run_dir, self.state.iteration) if self.can_evaluate else None
        if done is not None:
            log.info(
                "%s: iteration %d's final evaluation is done (eval.json); not evaluating again",
                self.run_dir,
                self.state.iteration,
            )
            final_dicts = done
        else:
            final = self.evaluate(self.state.iteration) if self.can_evaluate else []
            final_dicts = [r.to_dict() for r in final]
            if final:
                write_reports(final, self.run_dir, name="eval")
                if self.main:
                    mark_final_eval(self.run_dir, self.state.iteration, final_dicts)
        if self.main:
            self.policy.save(self.run_dir / "policy")
        dist.barrier()
        return {
            "run_dir": str(self.run_dir),
            "iterations": self.state.iteration,
            "final": final_dicts,
            "history": self.history,
        }


class OnlineDriver(Protocol):
    """A strategy for the online phase: when :class:`Run`'s phases run, iteration after iteration."""

    def run(self, run: Run) -> None:
        """Run online iterations ``run.state.iteration`` … ``run.cfg.iterations − 1``, each ended by
        :meth:`Run.end_iteration`."""
        ...
