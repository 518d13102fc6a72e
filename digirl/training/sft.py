"""Supervised fine-tuning from demonstrations, and collection of offline datasets.

``sft``: expert demos (or a stored dataset) → behaviour cloning → a saved policy. This plays the
role of Auto-UI's SFT checkpoint in DigiRL: the starting point of RL. ``collect``: rollouts of a
policy (or the expert) on the train split, stored as a dataset (DigiRL's pre-collected data); a
re-run of the same command resumes it to the count asked.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from digirl.algorithms.base import Sample, bc_update, make_optimizer
from digirl.core.types import TaskSpec, Trajectory
from digirl.envs.vector import EpisodeJob, VectorRunner
from digirl.training.common import (
    build_policy,
    in_job_order,
    jobs_for,
    make_runner,
    policy_act_fn,
    require_trainable,
    sample_tasks,
    task_pool,
)
from digirl.training.config import CollectConfig, SFTRunConfig
from digirl.training.task_sampling import family_weights, stratified_tasks

if TYPE_CHECKING:
    from digirl.data.store import TrajectoryStore

log = logging.getLogger(__name__)


def collection_key(cfg: CollectConfig) -> str:
    """What defines a collection's episodes (not how many, nor how they are run): 8 hex digits.

    Trajectory ids are ``KEY-INDEX``, so a re-run of the same command finds the episodes it already
    stored, whatever runner or number of envs collects them.
    """
    ident = {
        "env": cfg.env.id,
        "env_kwargs": {k: v for k, v in cfg.env.env_kwargs().items() if k != "latency_s"},
        "split": cfg.env.train_split,
        "task_file": cfg.env.task_file,
        "seed": cfg.seed,
        "expert": cfg.expert,
        "expert_noise": cfg.expert_noise if cfg.expert else None,
        **({"expert_noise_sticky": True} if cfg.expert and cfg.expert_noise_sticky else {}),
        "policy": None if cfg.expert else [cfg.policy.kind, cfg.policy.init, cfg.policy.temperature],
    }
    return hashlib.sha1(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[:8]


def collection_jobs(cfg: CollectConfig, pool: Sequence[TaskSpec | None]) -> list[EpisodeJob]:
    """Episode ``i``'s task and seed come from ``(seed, i)`` alone: asking for more extends the same list."""
    jobs = []
    for i in range(cfg.trajectories):
        rng = np.random.default_rng([cfg.seed, i])
        task = pool[int(rng.integers(0, len(pool)))]
        jobs.append(EpisodeJob(task=task, seed=int(rng.integers(0, 2**31 - 1))))
    return jobs


def collect(cfg: CollectConfig, out_dir: str | Path) -> dict[str, Any]:
    """Roll out a policy (or the expert) on the train split into a dataset at ``out_dir``.

    Resumable: episode ``i`` of this command is stored as ``KEY-i`` (:func:`collection_key`), and a
    re-run collects only the episodes not stored yet, so the same command ends with exactly
    ``cfg.trajectories`` of them however often it was killed (a shard of up to ``shard_size``
    trajectories is written atomically; a kill loses at most the one being filled). With
    ``deterministic=true`` a resumed collection is bit-identical to an uninterrupted one: episodes
    run in blocks of ``shard_size`` (a block is a shard); the first block samples from the policy's
    seeded start (as an unblocked collection does), every later one restarts from ``(seed, block)``
    (:func:`seed_block_sampling`), so a block re-run after a kill samples what it sampled the first time.
    Everything is checked (env id, tasks, policy, runner) before the output folder is created.
    """
    from digirl.config.core import save_config
    from digirl.data.store import TrajectoryStore
    from digirl.utils.progress import progress

    out = Path(out_dir)
    pool = task_pool(cfg.env, cfg.env.train_split)  # an unknown env id fails here
    if not pool:
        raise ValueError(f"{cfg.env.id}: the {cfg.env.train_split!r} split has no tasks")
    jobs = collection_jobs(cfg, pool)
    key = collection_key(cfg)
    policy = None if cfg.expert else build_policy(cfg.policy, seed=cfg.seed)
    act = None if policy is None else policy_act_fn(policy, greedy=False, temperature=cfg.policy.temperature)
    runner = make_runner(cfg.env, deterministic=cfg.deterministic)
    fresh = not out.exists()  # a collection that fails before its first shard leaves no folder
    try:
        if cfg.expert and cfg.expert_noise_sticky and not isinstance(runner, VectorRunner):
            raise ValueError("expert_noise_sticky=true needs env.runner=process, inline or ray")  # no sticky noise there
        store = TrajectoryStore(out, info={"env_id": cfg.env.id, "producer": "digirl collect", "expert": cfg.expert})
        save_config(cfg, out / "collect-config.yaml")
        index = {j.job_id: i for i, j in enumerate(jobs)}
        todo = _not_stored(store, jobs, key)
        todo_ids = {j.job_id for j in todo}
        batch: list[Trajectory] = []
        n_ok = 0

        def flush() -> None:
            store.append(in_job_order(batch, todo))
            batch.clear()

        # Deterministic policy sampling: one run per block of shard_size jobs, sampling reseeded per
        # block. Otherwise (and for the expert, whose noise is seeded per episode) one run for all.
        blocked = cfg.deterministic and policy is not None
        size = cfg.shard_size if blocked else max(1, len(jobs))
        blocks = [[j for j in jobs[b : b + size] if j.job_id in todo_ids] for b in range(0, len(jobs), size)]
        with progress(len(todo), "collect") as bar:
            for b, block in enumerate(blocks):
                if not block:
                    continue
                if blocked and b > 0:
                    # Block 0 samples from the policy's seeded start, as an unblocked collection does (a
                    # block is stored whole, so a rerun of block 0 starts from that same state); later
                    # blocks restart from (seed, block) so that a resume reaches them in the same state.
                    assert policy is not None
                    seed_block_sampling(policy, cfg.seed, b)
                for traj in _run_block(runner, act, block, cfg):
                    traj.traj_id = f"{key}-{index[traj.metadata['job_id']]:07d}"
                    batch.append(traj)
                    n_ok += traj.success
                    bar.advance()
                    if len(batch) >= cfg.shard_size:  # one atomic shard at a time
                        flush()
                if blocked and batch:  # a block is a shard
                    flush()
        if batch:
            flush()
    except BaseException:
        if fresh:
            _remove_if_nothing_stored(out)
        raise
    finally:
        runner.close()
    summary: dict[str, Any] = store.summary()
    log.info("collected %d trajectories into %s (success %.1f%%)", len(todo), out, 100 * n_ok / max(1, len(todo)))
    return summary


def _not_stored(store: TrajectoryStore, jobs: list[EpisodeJob], key: str) -> list[EpisodeJob]:
    """The jobs whose trajectory (``KEY-i``) the store does not hold yet, in job order."""
    stored = set(store.trajectory_ids())
    todo = [j for i, j in enumerate(jobs) if f"{key}-{i:07d}" not in stored]
    if len(todo) < len(jobs):
        done = len(jobs) - len(todo)
        log.info("%s already holds %d of these %d trajectories; collecting the other %d", store.path, done, len(jobs), len(todo))
    return todo


def _remove_if_nothing_stored(out: Path) -> None:
    """Remove the dataset folder a failed collection created, if it holds no shard (only the files
    the collection itself writes; anything else keeps the folder)."""
    import contextlib

    shards = out / "shards"
    if shards.is_dir() and any(p.name.isdigit() for p in shards.iterdir()):
        return
    with contextlib.suppress(OSError):
        for name in ("collect-config.yaml", "meta.json", ".lock"):
            (out / name).unlink(missing_ok=True)
        if shards.is_dir():
            shards.rmdir()
        out.rmdir()


def seed_block_sampling(policy: Any, seed: int, block: int) -> None:
    """Restart a policy's sampling for block ``block`` of a collection: torch's global generators
    (CPU and CUDA) and the policy's own (``reseed``), from ``(seed, block)`` alone."""
    import torch

    s = int(np.random.SeedSequence([int(seed), int(block), 0xC011EC7]).generate_state(1)[0])
    torch.manual_seed(s)
    reseed = getattr(policy, "reseed", None)
    if callable(reseed):
        reseed(s)


def _run_block(runner: Any, act: Any, block: list[EpisodeJob], cfg: CollectConfig) -> Any:
    if not cfg.expert:
        return runner.run(act, block)
    sticky = {"expert_sticky": True} if cfg.expert_noise_sticky else {}
    return runner.run(
        None, block, expert=True, expert_eps=cfg.expert_noise, expert_seed=cfg.seed, expert_text=_json_text, **sticky
    )


def demos(cfg: SFTRunConfig) -> list[Trajectory]:
    """Expert demonstrations on the train split (successful ones only are used for SFT)."""
    rng = np.random.default_rng(cfg.seed)
    pool = task_pool(cfg.env, cfg.env.train_split)
    if cfg.sft.demo_sampling == "stratified":
        tasks = stratified_tasks(pool, cfg.sft.demos, rng)
    else:
        families = sorted({t.family for t in pool if t is not None})
        weights = family_weights("family", families) if cfg.sft.demo_sampling == "family" else None
        tasks = sample_tasks(pool, cfg.sft.demos, rng, weights)
    seeds = rng.integers(0, 2**31 - 1, size=len(tasks))
    jobs = jobs_for(tasks, seeds)
    runner = make_runner(cfg.env, deterministic=cfg.deterministic)
    try:
        return in_job_order(
            runner.run(None, jobs, expert=True, expert_eps=cfg.sft.expert_noise, expert_seed=cfg.seed, expert_text=_json_text),
            jobs,
        )
    finally:
        runner.close()


def sft(cfg: SFTRunConfig, out_dir: str | Path, *, trajectories: list[Trajectory] | None = None) -> dict[str, Any]:
    """Behaviour-clone demonstrations into a policy saved at ``out_dir/policy``."""
    from digirl.config.core import save_config
    from digirl.data.store import TrajectoryStore
    from digirl.utils import distributed as dist
    from digirl.utils.progress import progress
    from digirl.utils.rng import seed_everything

    distributed = dist.init()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if dist.is_main():
        save_config(cfg, out / "config.yaml")
    seed_everything(cfg.seed, deterministic=cfg.deterministic)
    if trajectories is None:
        if cfg.sft.dataset:
            trajectories = TrajectoryStore(cfg.sft.dataset, create=False).load()
        else:
            # Rank 0 collects the demos; every rank learns from them as stored.
            if dist.is_main():
                trajectories = demos(cfg)
                TrajectoryStore(out / "demos", info={"env_id": cfg.env.id, "producer": "digirl sft"}).append(trajectories)
            if distributed:
                dist.barrier()
                store = TrajectoryStore(out / "demos", create=False)
                trajectories = store.load(shards=store.shard_ids()[-1:])
    assert trajectories is not None
    good = [t for t in trajectories if t.success]
    samples = [Sample(s.observation, s.action) for t in good for s in t.steps]
    policy = require_trainable(build_policy(cfg.policy, seed=cfg.seed), "digirl sft")
    dist.broadcast_parameters(policy.parameters())  # identical start on every rank
    opt = make_optimizer(policy.parameters(), cfg.sft.lr)
    rng = np.random.default_rng(cfg.seed)
    losses: list[float] = []
    chunk = max(1, cfg.sft.steps // 10)
    with progress(cfg.sft.steps, "sft") as bar:
        done = 0
        while done < cfg.sft.steps:
            n = min(chunk, cfg.sft.steps - done)
            m = bc_update(
                policy,
                opt,
                samples,
                steps=n,
                batch_size=cfg.sft.batch_size,
                grad_accum=1,
                max_grad_norm=cfg.sft.max_grad_norm,
                rng=rng,
            )
            losses.append(m["train/actor_loss"])
            done += n
            bar.advance(n)
    if dist.is_main():
        policy.save(out / "policy")
    dist.barrier()
    result = {
        "policy": str(out / "policy"),
        "demos": len(trajectories),
        "successful_demos": len(good),
        "samples": len(samples),
        "final_loss": losses[-1] if losses else float("nan"),
    }
    log.info(
        "SFT: %d samples from %d successful demos, final loss %.3f -> %s",
        len(samples),
        len(good),
        result["final_loss"],
        result["policy"],
    )
    return result


def _json_text(action: Any) -> str:
    from digirl.core.codecs import format_action

    return format_action(action, "json")
