"""The quick start: expert demos → SFT → DigiRL off-to-online on the simulator, on a laptop CPU.

Ends with a table (SFT vs DigiRL on held-out test tasks) and a learning-curve PNG. Every stage is
the same code as ``digirl sft | collect | train | eval``; the budgets below are what fits in
about ten minutes on two CPU cores.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from digirl.config.core import load_config
from digirl.training.config import CollectConfig, EvalRunConfig, SFTRunConfig, TrainConfig
from digirl.utils.provenance import result_metadata

log = logging.getLogger(__name__)

#: budget name → (sft demos, sft steps, offline trajectories, online iterations, rollout size, eval test tasks)
BUDGETS: dict[str, tuple[int, int, int, int, int, int]] = {
    # Under half a minute on 2 cores: every stage at toy size, one torch thread (on 2 busy cores a
    # second thread only spins: measured 19 s vs 35 s wall). It shows learning from demonstrations
    # (an untrained policy of the same network vs SFT on the same test tasks); one online iteration
    # of 4 trajectories is a smoke test of the RL stage, too short to move the success rate.
    "tiny": (16, 40, 8, 1, 4, 8),
    "default": (16, 60, 64, 12, 32, 48),  # about 3 minutes on 2 CPU cores
    "long": (16, 60, 64, 12, 32, 96),  # for a GPU or a patient laptop
}


@dataclass(frozen=True)
class _Plan:
    """What one budget runs: the sizes of :data:`BUDGETS` and the overrides of each stage."""

    budget: str
    demos: int
    sft_steps: int
    n_off: int
    iters: int
    rollout: int
    n_test: int
    env: tuple[str, ...]
    algo_steps: tuple[str, ...]
    sft_extra: tuple[str, ...] = ()
    torch_threads: int | None = None


def _plan(budget: str, env_id: str, num_envs: int) -> _Plan:
    if budget not in BUDGETS:
        raise ValueError(f"budget must be one of {sorted(BUDGETS)}, got {budget!r}")
    env = (f"env.id={env_id}", f"env.num_envs={num_envs}", "policy.device=cpu")
    if budget != "tiny":
        steps = (120, 80, 30, 20, 20)
        return _Plan(budget, *BUDGETS[budget], env=env, algo_steps=_algo_steps(*steps))
    return _Plan(
        budget,
        *BUDGETS[budget],
        env=(*env, "env.runner=inline"),
        algo_steps=_algo_steps(5, 5, 3, 3, 3),
        sft_extra=("sft.batch_size=32",),  # 16 demos make ~50 samples: a batch of 64 repeats them
        torch_threads=1,
    )


def _algo_steps(offline_actor: int, offline_critic: int, actor: int, critic: int, instruct_critic: int) -> tuple[str, ...]:
    return (
        f"algo.offline_actor_steps={offline_actor}",
        f"algo.offline_critic_steps={offline_critic}",
        f"algo.actor_steps={actor}",
        f"algo.critic_steps={critic}",
        f"algo.instruct_critic_steps={instruct_critic}",
    )


def quickstart(
    out: str | Path,
    *,
    budget: str = "default",
    env_id: str = "digirl/sim-general-v0",
    seed: int = 0,
    num_envs: int = 2,
    algo: str = "digirl",
) -> dict[str, Any]:
    plan = _plan(budget, env_id, num_envs)
    with _torch_threads(plan.torch_threads):
        return _run(Path(out), plan, seed=seed, algo=algo)


@contextmanager
def _torch_threads(n: int | None) -> Iterator[None]:
    """Run with ``n`` torch threads (``None``: as is), restored afterwards (the caller may be a test)."""
    import torch

    before = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _evaluate_sft(plan: _Plan, sft_cfg: SFTRunConfig, sft_policy: str, seed: int) -> tuple[Any, Any]:
    """Test success of the SFT policy and, with the tiny budget, of the same network before SFT (what the
    demonstrations taught); the second is None otherwise."""
    from digirl.policies.registry import build_policy, load_policy
    from digirl.training.common import make_runner, task_pool
    from digirl.training.evaluate import eval_tasks
    from digirl.training.loop import evaluate_policy

    ecfg = load_config(EvalRunConfig, overrides=[*plan.env, f"eval.test_tasks={plan.n_test}", "eval.train_tasks=0"])
    tasks = eval_tasks(task_pool(ecfg.env, "test"), [], plan.n_test, 0, ecfg.eval.seed)
    runner = make_runner(ecfg.env, deterministic=ecfg.deterministic)
    untrained = None
    try:
        sft_report = evaluate_policy(load_policy(sft_policy), runner, tasks, greedy=True, temperature=1.0, seed=ecfg.eval.seed)[0]
        if plan.budget == "tiny":  # built after the SFT evaluation, as always: the random streams stay where they were
            fresh = build_policy(sft_cfg.policy, seed=seed)
            untrained = evaluate_policy(fresh, runner, tasks, greedy=True, temperature=1.0, seed=ecfg.eval.seed)[0]
    finally:
        runner.close()
    return sft_report, untrained


def _run(out: Path, plan: _Plan, *, seed: int, algo: str) -> dict[str, Any]:
    from digirl.training.loop import train
    from digirl.training.plot import line_chart
    from digirl.training.sft import collect, sft

    t0 = time.time()
    env, n_test = list(plan.env), plan.n_test
    log.info("1/4 expert demos + SFT (%d demos, %d steps)", plan.demos, plan.sft_steps)
    sft_cfg = load_config(
        SFTRunConfig, overrides=[*env, f"seed={seed}", f"sft.demos={plan.demos}", f"sft.steps={plan.sft_steps}", *plan.sft_extra]
    )
    sft_policy = sft(sft_cfg, out / "sft")["policy"]

    log.info("2/4 offline data: %d rollouts of the SFT policy", plan.n_off)
    collect(
        load_config(CollectConfig, overrides=[*env, f"seed={seed}", f"policy.init={sft_policy}", f"trajectories={plan.n_off}"]),
        out / "offline",
    )

    log.info("3/4 evaluating the SFT policy on %d held-out test tasks", n_test)
    sft_report, untrained_report = _evaluate_sft(plan, sft_cfg, sft_policy, seed)

    log.info("4/4 %s off-to-online: %d iterations × %d trajectories", algo, plan.iters, plan.rollout)
    tcfg = load_config(
        TrainConfig,
        overrides=[
            *env,
            "mode=off2on",
            f"algo.name={algo}",
            f"seed={seed}",
            f"offline_dataset={out / 'offline'}",
            f"policy.init={sft_policy}",
            f"iterations={plan.iters}",
            f"rollout_size={plan.rollout}",
            f"eval.every={max(1, plan.iters // 3)}",
            f"eval.test_tasks={n_test}",
            "eval.train_tasks=0",
            *plan.algo_steps,
        ],
    )
    result = train(tcfg, out / algo)
    final = result["final"][0]
    curve = [(0.0, sft_report.success_rate)] + [
        (float(h["online_trajectories"]), float(h["eval/test_success_rate"]))
        for h in result["history"]
        if h["iteration"] > 0 or h["online_trajectories"] > 0
    ]
    line_chart(
        {"DigiRL (test success)": curve}, out / "learning_curve.png", x_label="online trajectories", title="digirl quickstart"
    )
    summary = {
        **result_metadata(selection_split="none"),  # the observation: as train() settled it
        "sft_test_success": sft_report.success_rate,
        "algo": algo,
        "final_test_success": final["success_rate"],
        "test_tasks": n_test,
        "sft": sft_report.to_dict(),
        **({"untrained": untrained_report.to_dict()} if untrained_report is not None else {}),
        "budget": plan.budget,
        "final": final,
        "curve": curve,
        "wall_s": time.time() - t0,
        "out": str(out),
    }
    (out / "quickstart.json").write_text(json.dumps(summary, indent=2, default=str))
    return summary
