"""Supervised fine-tuning from demonstrations, and collection of offline datasets.

``sft``: expert demos (or a stored dataset) → behaviour cloning → a saved policy. This plays the
role of Auto-UI's SFT checkpoint in DigiRL: the starting point of RL. ``collect``: rollouts of a
policy (or the expert) on the train split, stored as a dataset (DigiRL's pre-collected data).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np

from digirl.algorithms.base import Sample, bc_update, make_optimizer
from digirl.core.types import Trajectory
from digirl.training.common import (
    build_policy,
    jobs_for,
    make_runner,
    policy_act_fn,
    require_trainable,
    sample_tasks,
    task_pool,
)
from digirl.training.config import CollectConfig, SFTRunConfig

log = logging.getLogger(__name__)


def collect(cfg: CollectConfig, out_dir: str | Path) -> dict[str, Any]:
    """Roll out a policy (or the expert) on the train split into a dataset at ``out_dir``."""
    from digirl.config.core import save_config
    from digirl.data.store import TrajectoryStore
    from digirl.utils.progress import progress

    out = Path(out_dir)
    store = TrajectoryStore(out, info={"env_id": cfg.env.id, "producer": "digirl collect", "expert": cfg.expert})
    save_config(cfg, out / "collect-config.yaml")
    rng = np.random.default_rng(cfg.seed)
    pool = task_pool(cfg.env, cfg.env.train_split)
    tasks = sample_tasks(pool, cfg.trajectories, rng)
    seeds = rng.integers(0, 2**31 - 1, size=len(tasks))
    policy = None if cfg.expert else build_policy(cfg.policy, seed=cfg.seed)
    act = None if policy is None else policy_act_fn(policy, greedy=False, temperature=cfg.policy.temperature)
    runner = make_runner(cfg.env)
    batch: list[Trajectory] = []
    n_ok = 0
    try:
        with progress(len(tasks), "collect") as bar:
            it = (
                runner.run(
                    None,
                    jobs_for(tasks, seeds),
                    expert=True,
                    expert_eps=cfg.expert_noise,
                    expert_seed=cfg.seed,
                    expert_text=_json_text,
                )
                if cfg.expert
                else runner.run(act, jobs_for(tasks, seeds))
            )
            for traj in it:
                batch.append(traj)
                n_ok += traj.success
                bar.advance()
                if len(batch) >= 64:  # one atomic shard per 64 trajectories
                    store.append(batch)
                    batch = []
        if batch:
            store.append(batch)
    finally:
        runner.close()
    summary: dict[str, Any] = store.summary()
    log.info("collected %d trajectories into %s (success %.1f%%)", len(tasks), out, 100 * n_ok / max(1, len(tasks)))
    return summary


def demos(cfg: SFTRunConfig) -> list[Trajectory]:
    """Expert demonstrations on the train split (successful ones only are used for SFT)."""
    rng = np.random.default_rng(cfg.seed)
    pool = task_pool(cfg.env, cfg.env.train_split)
    tasks = sample_tasks(pool, cfg.sft.demos, rng)
    seeds = rng.integers(0, 2**31 - 1, size=len(tasks))
    runner = make_runner(cfg.env)
    try:
        return list(
            runner.run(
                None,
                jobs_for(tasks, seeds),
                expert=True,
                expert_eps=cfg.sft.expert_noise,
                expert_seed=cfg.seed,
                expert_text=_json_text,
            )
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
    seed_everything(cfg.seed)
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
