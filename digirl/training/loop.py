"""The training loop of DigiRL's three modes: offline, online, and offline-to-online.

``train(cfg, run_dir)`` reads top to bottom:

    resume or initialise  →  offline phase (once)  →  for each online iteration:
        collect rollout_size trajectories → store them → update → evaluate → checkpoint

Resume: everything a run needs is in ``run_dir``: ``config.yaml``, ``data/`` (the online
trajectories, one atomic shard per iteration, tagged with their iteration and the version of the
policy that collected them) and ``checkpoints/`` (policy, optimizer/critic states, RNG states,
counters). If the process dies after an iteration's shard was written but before its checkpoint,
the resumed run finds that shard and does not collect the iteration again, so nothing is lost or
duplicated. After each update the algorithm's per-step numbers (values, advantages, kept) go to
``annotations/iter-NNNNNN.parquet`` for the viewer.

Several processes (``accelerate launch`` / ``torchrun``): rank 0 collects, appends the shard,
evaluates, logs and writes checkpoints; after a barrier every rank reads the new shard back from
the store and the update is data parallel (:mod:`digirl.utils.distributed`), so every rank holds
the same weights.

With ``asynchronous.max_staleness`` = k ≥ 1 the online phase is :mod:`digirl.training.async_loop`
instead (the envs keep collecting while the learner updates); it shares this module's pieces: the
iteration's jobs, how an iteration's trajectories are stored, the update and the end of an iteration.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from digirl.algorithms.base import Algorithm, Phase
from digirl.algorithms.registry import make_algorithm
from digirl.core.errors import ConfigError
from digirl.core.types import TaskSpec, Trajectory
from digirl.envs.collector import Collector
from digirl.envs.vector import EpisodeJob
from digirl.policies.base import ActingPolicy
from digirl.policies.registry import load_policy
from digirl.training.checkpoint import LoopState, latest_checkpoint, load_checkpoint, save_checkpoint, set_rng_state
from digirl.training.common import (
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
    from digirl.data.store import TrajectoryStore

log = logging.getLogger(__name__)


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
    nll = [-s.log_prob for t in scored for s in t.steps if s.log_prob is not None]
    if nll:
        out[f"{prefix}/action_nll"] = float(np.mean(nll))
    return out


def iteration_jobs(
    cfg: TrainConfig, train_pool: Sequence[TaskSpec | None], it: int, weights: dict[str, float] | None = None
) -> list[EpisodeJob]:
    """The episodes of online iteration ``it``: a pure function of the seed, ``it`` and the family
    ``weights`` (``task_sampling``; None = uniform over tasks), so a resumed run collects the same."""
    rng = np.random.default_rng([cfg.seed, it])
    tasks = sample_tasks(train_pool, cfg.rollout_size, rng, weights)
    seeds = rng.integers(0, 2**31 - 1, size=len(tasks))
    return jobs_for(tasks, seeds)


def store_iteration(store: TrajectoryStore, trajs: list[Trajectory], it: int, policy_version: int | None) -> list[Trajectory]:
    """Tag an iteration's trajectories (iteration, the policy version that acted: ``None`` keeps each
    trajectory's own) and store them as one shard."""
    for t in trajs:
        t.metadata["iteration"] = it
        if policy_version is not None:
            t.policy_version = policy_version
    store.append(trajs)
    return trajs


def evaluate_policy(
    policy: ActingPolicy,
    runner: Collector,
    tasks: dict[str, list[TaskSpec | None]],
    *,
    greedy: bool,
    temperature: float,
    seed: int,
    loop_escape: bool = False,
) -> list[EvalReport]:
    """Play every split's tasks once and report. With ``loop_escape`` (greedy only), actions that would
    go round a cycle again are sampled, with the random streams put back afterwards (training's draws
    stay where they were)."""
    reports = []
    escape = greedy and loop_escape
    act = policy_act_fn(policy, greedy=greedy, temperature=temperature, loop_escape=escape)
    with preserved_sampling(policy) if escape else nullcontext():
        for split, ts in tasks.items():
            seeds = [seed + i for i in range(len(ts))]
            trajs = list(runner.run(act, jobs_for(ts, seeds)))
            reports.append(summarize(trajs, split))
    return reports


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


class _Quiet:
    """The metrics logger of ranks other than 0: they log nothing."""

    def log(self, metrics: dict[str, float], step: int) -> None:
        pass

    def close(self) -> None:
        pass


def _read_iteration(store: Any, it: int) -> list[Trajectory]:
    """The shard rank 0 just appended for online iteration ``it``, as read back from the store."""
    from digirl.core.errors import DataError

    shard = store.shard_ids()[-1]
    trajs: list[Trajectory] = store.load(shards=[shard])
    if any(int(t.metadata.get("iteration", -1)) != it for t in trajs):
        raise DataError(f"{store.path}: shard {shard} is not online iteration {it} (another process writes this run?)")
    return trajs


def train(cfg: TrainConfig, run_dir: str | Path) -> dict[str, Any]:
    from digirl.config.core import config_to_dict, save_config
    from digirl.data.annotations import ANNOTATIONS_DIR, write_annotations
    from digirl.data.replay import ReplayBuffer
    from digirl.data.store import TrajectoryStore
    from digirl.training.settle import settle_run_config
    from digirl.utils.metrics import MetricsLogger
    from digirl.utils.rng import seed_everything

    distributed = dist.init()
    main = dist.is_main()
    run_dir = Path(run_dir)
    cfg = settle_run_config(cfg, run_dir=run_dir, follow_policy=False)  # config.yaml: the policy as loaded
    run_dir.mkdir(parents=True, exist_ok=True)
    if main:
        save_config(cfg, run_dir / "config.yaml")
    seed_everything(cfg.seed, deterministic=cfg.deterministic)

    # ---------------------------------------------------------------- resume or initialise
    ckpt = latest_checkpoint(run_dir)
    if ckpt is not None:
        state, policy_dir, train_state = load_checkpoint(ckpt)
        policy = require_trainable(load_policy(policy_dir, device=cfg.policy.device, cfg=cfg.policy), "digirl train")
        algo: Algorithm = make_algorithm(policy, cfg.algo, seed=cfg.seed)
        algo.load_state_dict(train_state["algo"])
        set_rng_state(train_state["rng"])
        log.info("resuming %s from %s (online iteration %d)", run_dir, ckpt.name, state.iteration)
    else:
        state = LoopState()
        policy = require_trainable(build_policy(cfg.policy, seed=cfg.seed), "digirl train")
        algo = make_algorithm(policy, cfg.algo, seed=cfg.seed)

    def update(trajectories: list[Trajectory], phase: Phase, step: int, **kw: Any) -> dict[str, float]:
        """One learner update; the policy's version counts updates, and the update's annotations are kept."""
        t0 = time.perf_counter()
        m = algo.update(trajectories, phase, **kw)  # kw: the async driver's step_weights
        state.updates += 1
        notes = algo.annotations()
        if notes and main:
            write_annotations(run_dir / ANNOTATIONS_DIR, step, notes)
        return m | {f"timing_s/{phase}_update": time.perf_counter() - t0}

    info = {"env_id": cfg.env.id, "producer": "digirl train"}
    store = TrajectoryStore(run_dir / "data", info=info) if main else None
    dist.barrier()  # rank 0 created the store; the others open it
    store = store or TrajectoryStore(run_dir / "data", create=False)
    online = store.load()  # this run's online trajectories so far (complete shards only)
    by_iter: dict[int, list[Trajectory]] = {}
    for t in online:
        by_iter.setdefault(int(t.metadata.get("iteration", -1)), []).append(t)
    offline: list[Trajectory] = []
    if cfg.mode in ("offline", "off2on"):
        assert cfg.offline_dataset is not None
        offline = TrajectoryStore(cfg.offline_dataset, create=False).load()
        log.info("offline dataset: %d trajectories from %s", len(offline), cfg.offline_dataset)
    buffer = ReplayBuffer(cfg.replay_capacity)
    buffer.add([t for t in offline if not t.env_failure])
    buffer.add([t for t in online if not t.env_failure])

    metrics: MetricsLogger | _Quiet = (
        MetricsLogger(
            run_dir,
            tensorboard=cfg.log.tensorboard,
            wandb=cfg.log.wandb,
            wandb_project=cfg.log.wandb_project,
            config=config_to_dict(cfg, for_save=True),
        )
        if main
        else _Quiet()
    )
    needs_env = cfg.mode != "offline" or cfg.eval.test_tasks > 0 or cfg.eval.train_tasks > 0 or cfg.eval.val_tasks > 0
    runner = make_runner(cfg.env, deterministic=cfg.deterministic) if needs_env and main else None
    asynchronous = cfg.mode != "offline" and cfg.asynchronous.max_staleness > 0
    if asynchronous and distributed:
        raise ConfigError("asynchronous.max_staleness > 0 runs in one process (not under accelerate/torchrun)")
    if asynchronous and cfg.task_sampling != "uniform":
        raise ConfigError("task_sampling=family|uncertainty needs the synchronous loop (asynchronous.max_staleness=0)")
    if asynchronous and runner is not None:
        from digirl.training.async_loop import SharedCollector

        runner = SharedCollector(runner)  # the collector thread and evaluation take turns
    train_pool = task_pool(cfg.env, cfg.env.train_split) if needs_env else []
    test_pool = task_pool(cfg.env, cfg.env.test_split) if needs_env else []
    etasks = eval_task_sets(cfg.env, cfg.eval, train_pool=train_pool, test_pool=test_pool) if needs_env else {}
    family_sizes = Counter(t.family for t in train_pool if t is not None)
    families = sorted(family_sizes)
    history: list[dict[str, Any]] = []
    clock = {"start": time.perf_counter(), "eval_s": 0.0}  # this session's wall-clock, and the part spent evaluating

    def do_eval(step: int, trajectories_seen: int) -> list[EvalReport]:
        assert runner is not None
        t0 = time.perf_counter()
        reports, sampled = evaluate_as_configured(policy, runner, etasks, cfg)
        m = _eval_metrics(reports)
        if sampled:
            m |= {f"eval/{r.split}_sampled_success_rate": r.success_rate for r in sampled}
            write_reports(sampled, run_dir / "eval", name=f"eval-iter{step:04d}-sampled")
        m["timing_s/eval"] = time.perf_counter() - t0
        metrics.log(m, step)
        history.append(
            {
                "iteration": step,
                "online_trajectories": trajectories_seen,
                # time to reach this policy: wall-clock so far, and the same without earlier evaluations
                "wall_s": t0 - clock["start"],
                "train_wall_s": t0 - clock["start"] - clock["eval_s"],
                **{k: v for k, v in m.items() if k.startswith("eval/")},
                "families": {r.split: {f: d["success_rate"] for f, d in r.per_family.items()} for r in reports},
            }
        )
        clock["eval_s"] += time.perf_counter() - t0
        write_reports(reports, run_dir / "eval", name=f"eval-iter{step:04d}")
        for r in reports:
            log.info("eval %s @ iter %d: %.1f%% (%d/%d)", r.split, step, 100 * r.success_rate, r.successes, r.episodes)
        return reports

    def evaluates_at(step: int) -> bool:
        return bool(etasks and cfg.eval.every and (step % cfg.eval.every == 0) and step != cfg.iterations)

    def end_iteration(step: int, m: dict[str, float], collected: int) -> None:
        """Count, log, evaluate (every eval.every iterations) and checkpoint a finished online iteration
        (rank 0 evaluates and writes; every rank waits for it)."""
        state.iteration = step
        state.trajectories_seen += collected
        m["data/online_trajectories"] = float(state.trajectories_seen)
        m["data/replay_trajectories"] = float(len(buffer))
        metrics.log(m, step)
        if main and evaluates_at(step):
            do_eval(step, state.trajectories_seen)
        if main:
            save_checkpoint(run_dir, state, policy, algo.state_dict(), keep=cfg.checkpoint_keep)
        dist.barrier()

    try:
        # ------------------------------------------------------------ offline phase (once)
        if cfg.mode in ("offline", "off2on") and not state.offline_done:
            metrics.log(update(buffer.trajectories(), "offline", 0), 0)
            state.offline_done = True
            if etasks and runner is not None:
                do_eval(0, 0)
            if main:
                save_checkpoint(run_dir, state, policy, algo.state_dict(), keep=cfg.checkpoint_keep)
            dist.barrier()
        elif not state.offline_done and state.iteration == 0 and etasks and runner is not None and cfg.eval.every and main:
            do_eval(0, 0)  # the starting policy's score, for the learning curve

        # ------------------------------------------------------------ online phase
        if cfg.mode in ("online", "off2on") and asynchronous:
            from digirl.training.async_loop import OnlinePhase, run_online_async

            assert runner is not None
            shared = (update, end_iteration, evaluates_at)
            run_online_async(OnlinePhase(cfg, state, policy, algo, runner, store, buffer, by_iter, train_pool, *shared))
        elif cfg.mode in ("online", "off2on"):
            assert runner is not None or not main
            act = policy_act_fn(policy, greedy=False, temperature=cfg.policy.temperature)
            for it in range(state.iteration, cfg.iterations):
                step = it + 1
                m: dict[str, float] = {}
                t0 = time.perf_counter()
                new = by_iter.get(it)
                if new is None:  # collect; an iteration already on disk (crash before checkpoint) is reused
                    if main:
                        assert runner is not None
                        weights = family_weights(
                            cfg.task_sampling,
                            families,
                            family_outcomes(buffer.trajectories()),
                            sizes=family_sizes,
                            power=cfg.task_family_power,
                        )
                        jobs = iteration_jobs(cfg, train_pool, it, weights)
                        act.version = state.updates  # actors acting themselves fetch these weights once
                        new = store_iteration(store, in_job_order(runner.run(act, jobs), jobs), it, state.updates)
                    if distributed:  # every rank learns from the same stored shard
                        dist.barrier()
                        new = _read_iteration(store, it)
                assert new is not None
                m["timing_s/collect"] = time.perf_counter() - t0
                buffer.add([t for t in new if not t.env_failure])
                m |= rollout_metrics(new)
                if it >= cfg.warmup_iterations:
                    m |= update(buffer.trajectories(), "online", step)
                end_iteration(step, m, len(new))

        final = do_eval(state.iteration, state.trajectories_seen) if etasks and runner is not None else []
        if final:
            write_reports(final, run_dir, name="eval")
        if main:
            policy.save(run_dir / "policy")
        dist.barrier()
        return {"run_dir": str(run_dir), "iterations": state.iteration, "final": [r.to_dict() for r in final], "history": history}
    finally:
        metrics.close()
        if runner is not None:
            runner.close()
