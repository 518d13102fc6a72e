"""Digi-Q beats Filtered BC on a noisy expert with habits (marker ``learning``; a few minutes on CPU).

Every stage runs as a `digirl` command in its own process (pinned hash seed, one torch thread).

The data: the scripted expert on eight simulator web searches, each step replaced with probability 0.5
by the behaviour's *habitual* mistake on that kind of screen (`digirl collect ... expert=true
expert_noise=0.5 expert_noise_sticky=true`: the wrong action is a fixed function of the screen's layout,
as a policy's systematic errors are), so we know which dataset actions were the expert's. About 36% of
the successful trajectories' steps are mistakes that Filtered BC clones; Digi-Q's critic tells them
apart. With uniformly random noise (fresh at every step) the greedy mode of Filtered BC's clone averages
the noise out and Filtered BC matches or beats Digi-Q (docs/digiq.md, "Measured").

The checks:

- the cross-fitted critic (every advantage from a critic that never saw the trajectory) tells the
  expert's actions from the mistakes that change the screen: their advantages Q − V are positive far
  more often (the no-op mistakes are dropped by the exact labels, not by the critic);
- the Digi-Q policy (from a weak SFT start) solves the tasks far more often than its start, and more
  often than offline Filtered BC from the same start, with the same actor budget, on the same data.

Digi-Q extracts from the dataset actions only (``extract_candidates=1``, the N = 1 ablation, δ = 0):
with N = 5 proposals from the weak start, best-of-N as released picked worse actions than the data
did and did not beat Filtered BC (docs/digiq.md, "Measured", three data seeds).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from digirl.data.annotations import read_annotations
from digirl.data.store import TrajectoryStore

COMMON = ["env.runner=inline", "env.num_envs=1", "env.perturbation=0", "seed=0"]
POLICY = ["policy.default.dim=48", "policy.default.layers=1", "policy.default.heads=2"]
EVAL = ["eval.test_tasks=0", "eval.train_tasks=16", "eval.seed=7", "log.tensorboard=false"]
ACTOR = ["mode=offline", "algo.offline_actor_steps=150", "algo.lr=2e-3", "algo.batch_size=32"]
# Every stage runs as its own `digirl` process with a pinned hash seed and one torch thread: run in
# the test process, after the rest of the suite, the outcome changed with state earlier tests left
# behind (CI once gave Digi-Q 2/16 where a lone run gave 16/16); pinned, the rest of the suite cannot move it.
PINNED = {"PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _digirl(*args: str) -> dict:
    """``digirl ARGS --json`` in a fresh process; its JSON result."""
    out = subprocess.run(
        [sys.executable, "-m", "digirl", *args, "--json"],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, **PINNED},
    )
    assert out.returncode == 0, (args[:2], out.stderr[-3000:])
    result: dict = json.loads(out.stdout)
    return result


def _success(res: dict) -> float:
    return float(res["final"][0]["success_rate"])


@pytest.mark.learning
@pytest.mark.slow
@pytest.mark.timeout(1500)  # ~5 min alone; more on a shared 2-core machine
def test_digiq_beats_filtered_bc_on_a_habitual_noisy_expert(tmp_path: Path, record_property):
    from digirl.sim.tasks.tasksets import load_taskset

    searches = [t.instruction for t in load_taskset("general", "train") if t.family == "web_search"][:8]
    tasks = tmp_path / "tasks.txt"
    tasks.write_text("\n".join(searches * 2) + "\n")  # each task twice: 16 evaluation episodes
    env = [f"env.task_file={tasks}", *COMMON]
    data = tmp_path / "data"
    noisy = ["expert=true", "expert_noise=0.5", "expert_noise_sticky=true", "trajectories=64"]
    _digirl("collect", str(data), *env, *noisy)
    _digirl("sft", str(tmp_path / "sft"), *env, *POLICY, f"sft.dataset={data}", "sft.steps=40")
    init = f"policy.init={tmp_path / 'sft' / 'policy'}"
    offline = [*env, *EVAL, *ACTOR, init, "algo.name=filtered_bc", f"offline_dataset={data}"]
    before = _success(_digirl("train", str(tmp_path / "start"), *offline, "algo.offline_actor_steps=0"))
    fbc = _success(_digirl("train", str(tmp_path / "fbc"), *offline))
    dq_args = [*env, *EVAL, *ACTOR, init, "algo.name=digiq", f"offline_dataset={data}", "algo.digiq.candidates=5",
               "algo.digiq.repft_steps=80", "algo.digiq.critic_steps=300", "algo.digiq.critic_hidden=128",
               "algo.digiq.folds=3", "algo.digiq.extract_candidates=1", "algo.digiq.delta=0"]  # fmt: skip
    digiq = _success(_digirl("digiq", "train", str(tmp_path / "digiq"), *dq_args))
    record_property("success_start", before)
    record_property("success_filtered_bc", fbc)
    record_property("success_digiq", digiq)

    # the critic separates the expert's actions from the mistakes (all advantages out of fold). Only
    # dataset actions that change the screen count: the exact labels already drop the no-ops (about
    # 40% of the mistakes here), whose advantage best-of-N sets to 0 whatever the critic says.
    trajs = {t.traj_id: t for t in TrajectoryStore(data, create=False).load(load_images=False)}
    adv: dict[bool, list[float]] = {True: [], False: []}
    for a in read_annotations(tmp_path / "digiq" / "annotations"):
        if a.step >= 0:
            assert a.extra["heldout"] and a.value is not None
            c = a.extra["candidates"][0]
            if c["label"] is not False:
                adv[a.step not in trajs[a.traj_id].metadata["noisy_steps"]].append(c["q"] - a.value)
    expert, mistakes = np.array(adv[True]), np.array(adv[False])
    assert len(mistakes) >= 20, len(mistakes)
    record_property("adv_positive_expert", float((expert > 0).mean()))
    record_property("adv_positive_mistakes", float((mistakes > 0).mean()))
    assert (expert > 0).mean() >= (mistakes > 0).mean() + 0.3, ((expert > 0).mean(), (mistakes > 0).mean())
    assert expert.mean() > mistakes.mean() + 0.05
    # the policy learns, and beats Filtered BC on the same data by at least 4 of 16 episodes
    assert digiq >= before + 0.25, (before, digiq, fbc)
    assert digiq >= fbc + 0.25, (before, digiq, fbc)
