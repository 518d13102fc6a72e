"""The training loop of DigiRL's three modes: offline, online, and offline-to-online.

``train(cfg, run_dir)`` reads top to bottom:

    open the run (resume or initialise)  →  offline phase (once)  →  online phase (a driver)  →  final evaluation

The run and its phases (collect, update, evaluate, checkpoint, log) are :class:`~digirl.training.run.Run`;
the online phase is one of two drivers over it: :class:`SynchronousDriver` below (each iteration
collects ``rollout_size`` trajectories → stores them → updates → evaluates when due → checkpoints) or,
with ``asynchronous.max_staleness`` = k ≥ 1, :class:`~digirl.training.async_loop.AsynchronousDriver`
(the envs keep collecting while the learner updates).

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
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from digirl.core.errors import ConfigError
from digirl.training.async_loop import AsynchronousDriver
from digirl.training.common import policy_act_fn
from digirl.training.config import TrainConfig

# The pieces other modules import from here (the loop's public names before it was split in phases).
from digirl.training.run import (
    OnlineDriver,
    Run,
    evaluate_as_configured,
    evaluate_policy,
    evaluate_sampled,
    iteration_jobs,
    rollout_metrics,
    store_iteration,
)

__all__ = [
    "OnlineDriver",
    "Run",
    "SynchronousDriver",
    "evaluate_as_configured",
    "evaluate_policy",
    "evaluate_sampled",
    "iteration_jobs",
    "online_driver",
    "rollout_metrics",
    "store_iteration",
    "train",
]


class SynchronousDriver:
    """The online phase one iteration after another: collect → store → update → end the iteration.

    Repeats bit for bit in deterministic mode; the only driver under several processes."""

    def run(self, run: Run) -> None:
        cfg = run.cfg
        assert run.runner is not None or not run.main
        act = policy_act_fn(run.policy, greedy=False, temperature=cfg.policy.temperature)
        for it in range(run.state.iteration, cfg.iterations):
            step = it + 1
            t0 = time.perf_counter()
            new = run.collect(it, act)
            m: dict[str, float] = {"timing_s/collect": time.perf_counter() - t0}
            run.buffer.add([t for t in new if not t.env_failure])
            m |= rollout_metrics(new)
            if it >= cfg.warmup_iterations:
                m |= run.update(run.buffer.trajectories(), "online", step)
            run.end_iteration(step, m, len(new))


def online_driver(run: Run) -> OnlineDriver:
    """The driver ``asynchronous.max_staleness`` asks for, checked against the run before any work is done."""
    cfg = run.cfg
    if cfg.asynchronous.max_staleness == 0:
        return SynchronousDriver()
    if callable(getattr(run.algo, "branch_plan", None)):
        raise ConfigError(
            "algo.name=branch branches each iteration before storing it: use the synchronous loop (asynchronous.max_staleness=0)"
        )
    if run.distributed:
        raise ConfigError("asynchronous.max_staleness > 0 runs in one process (not under accelerate/torchrun)")
    if cfg.task_sampling != "uniform":
        raise ConfigError("task_sampling=family|uncertainty needs the synchronous loop (asynchronous.max_staleness=0)")
    return AsynchronousDriver(run)


def train(cfg: TrainConfig, run_dir: str | Path) -> dict[str, Any]:
    """Train as ``cfg`` says in ``run_dir`` (resuming what is there); returns the final evaluation and the learning curve."""
    run = Run.open(cfg, run_dir)
    try:
        driver = online_driver(run) if cfg.mode in ("online", "off2on") else None
        run.offline_phase()
        if driver is not None:
            driver.run(run)
        return run.finish()
    finally:
        run.close()
