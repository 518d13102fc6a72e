"""Digi-Q learns from a noisy-expert dataset on CPU (marker ``learning``; about two minutes).

The data: the scripted expert on eight simulator web searches, each step replaced by a random action
with probability 0.5 (`digirl collect ... expert=true expert_noise=0.5`), so we know which dataset
actions were the expert's. The checks:

- the cross-fitted critic (every advantage from a critic that never saw the trajectory) tells the
  expert's actions from the random ones: their advantages are positive far more often;
- the Digi-Q policy (from a weak SFT start) solves the tasks far more often than its start.

Offline Filtered BC on the same data is trained and evaluated alongside and its success recorded
(``record_property``), not asserted: here both reach 16/16 from a start at 0/16. On uniformly noisy
expert data the successful trajectories are the lucky, nearly clean ones; in our measurements
Filtered BC matched or beat Digi-Q in harder settings, even when the best candidate was chosen by
ground-truth values (docs/digiq.md, "Measured").
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from digirl.config.core import load_config
from digirl.data.annotations import read_annotations
from digirl.data.store import TrajectoryStore
from digirl.training.config import CollectConfig, SFTRunConfig, TrainConfig
from digirl.training.loop import train
from digirl.training.sft import collect, sft

COMMON = ["env.runner=inline", "env.num_envs=1", "env.perturbation=0", "seed=0"]
POLICY = ["policy.default.dim=48", "policy.default.layers=1", "policy.default.heads=2"]
EVAL = ["eval.test_tasks=0", "eval.train_tasks=16", "eval.seed=7", "log.tensorboard=false"]
ACTOR = ["mode=offline", "algo.offline_actor_steps=150", "algo.lr=2e-3", "algo.batch_size=32"]


def _success(res: dict) -> float:
    return float(res["final"][0]["success_rate"])


@pytest.mark.learning
@pytest.mark.slow
def test_digiq_learns_from_a_noisy_expert(tmp_path: Path, record_property):
    from digirl.sim.tasks.tasksets import load_taskset

    searches = [t.instruction for t in load_taskset("general", "train") if t.family == "web_search"][:8]
    tasks = tmp_path / "tasks.txt"
    tasks.write_text("\n".join(searches * 2) + "\n")  # each task twice: 16 evaluation episodes
    env = [f"env.task_file={tasks}", *COMMON]
    data = tmp_path / "data"
    collect(load_config(CollectConfig, overrides=[*env, "expert=true", "expert_noise=0.5", "trajectories=48"]), data)
    start = sft(load_config(SFTRunConfig, overrides=[*env, *POLICY, f"sft.dataset={data}", "sft.steps=40"]), tmp_path / "sft")
    init = f"policy.init={start['policy']}"
    offline = [*env, *EVAL, *ACTOR, init, "algo.name=filtered_bc", f"offline_dataset={data}"]
    before = _success(train(load_config(TrainConfig, overrides=[*offline, "algo.offline_actor_steps=0"]), tmp_path / "start"))
    fbc = _success(train(load_config(TrainConfig, overrides=offline), tmp_path / "fbc"))
    dq_args = [*env, *EVAL, *ACTOR, init, "algo.name=digiq", f"offline_dataset={data}", "algo.digiq.candidates=4",
               "algo.digiq.repft_steps=60", "algo.digiq.critic_steps=300", "algo.digiq.critic_hidden=128",
               "algo.digiq.folds=3", "algo.digiq.delta=0.02"]  # fmt: skip
    # Digi-Q runs in its own process, as `digirl digiq train` does: run in this one after the other
    # runs, its result varied with state they left behind (docs/digiq.md, "Measured").
    out = subprocess.run(
        [sys.executable, "-m", "digirl", "digiq", "train", str(tmp_path / "digiq"), *dq_args, "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    digiq = _success(json.loads(out.stdout))
    record_property("success_start", before)
    record_property("success_filtered_bc", fbc)
    record_property("success_digiq", digiq)

    # the critic separates the expert's actions from the random ones (all advantages out of fold)
    trajs = {t.traj_id: t for t in TrajectoryStore(data, create=False).load(load_images=False)}
    adv: dict[bool, list[float]] = {True: [], False: []}
    for a in read_annotations(tmp_path / "digiq" / "annotations"):
        if a.step >= 0:
            noisy = a.step in trajs[a.traj_id].metadata["noisy_steps"]
            adv[not noisy].append(a.extra["candidates"][0]["advantage"])
            assert a.extra["heldout"]
    expert, noise = np.array(adv[True]), np.array(adv[False])
    record_property("adv_positive_expert", float((expert > 0).mean()))
    record_property("adv_positive_noise", float((noise > 0).mean()))
    assert (expert > 0).mean() >= (noise > 0).mean() + 0.3, ((expert > 0).mean(), (noise > 0).mean())
    assert expert.mean() > noise.mean() + 0.05
    # and the policy learns
    assert digiq >= before + 0.25, (before, digiq, fbc)
