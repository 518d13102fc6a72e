"""Digi-Q on a noisy expert with habits: its critic tells the expert from the mistakes, its policy learns,
and it does not fall below Filtered BC (marker ``learning``; about five minutes on CPU).

Every stage runs as a `digirl` command in its own process (pinned hash seed, one torch thread).

The data: the scripted expert on eight simulator web searches, each step replaced with probability 0.5
by the behaviour's *habitual* mistake on that kind of screen (`digirl collect ... expert=true
expert_noise=0.5 expert_noise_sticky=true`: the wrong action is a fixed function of the screen's layout,
as a policy's systematic errors are), so we know which dataset actions were the expert's. Filtered BC
clones the mistakes in the successful trajectories; Digi-Q's critic tells them apart. With uniformly
random noise (fresh at every step) the greedy mode of Filtered BC's clone averages the noise out and
Filtered BC matches or beats Digi-Q (docs/digiq.md, "Measured").

The checks, on two data seeds:

- on each, the cross-fitted critic (every advantage from a critic that never saw the trajectory) tells
  the expert's actions from the mistakes that change the screen: their advantages Q − V are positive
  far more often (the no-op mistakes are dropped by the exact labels, not by the critic);
- over both (32 greedy episodes a method), the Digi-Q policy solves the tasks far more often than its
  weak SFT start, and at least as often as offline Filtered BC from the same start, with the same
  actor budget, on the same data.

Why two seeds and "at least as often": on this 2-core machine data seed 0 gives Digi-Q 16/16 and
Filtered BC 0/16, seed 2 both 16/16; the project's CI host once gave Digi-Q 1/16 on seed 0 where this
machine gives 16/16 (issue 40's notes): one seed's margin over Filtered BC is not a property of Digi-Q.

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

COMMON = ["env.runner=inline", "env.num_envs=1", "env.perturbation=0"]
POLICY = ["policy.default.dim=48", "policy.default.layers=1", "policy.default.heads=2"]
EVAL = ["eval.test_tasks=0", "eval.train_tasks=16", "eval.seed=7", "log.tensorboard=false"]
ACTOR = ["mode=offline", "algo.offline_actor_steps=150", "algo.lr=2e-3", "algo.batch_size=32"]
# Every stage runs as its own `digirl` process with a pinned hash seed and one torch thread: run in
# the test process, after the rest of the suite, the outcome changed with state earlier tests left
# behind (CI once gave Digi-Q 2/16 where a lone run gave 16/16); pinned, the rest of the suite cannot move it.
PINNED = {"PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
#: Data seeds (the habits come from the seed). Seed 1's habits are all no-op taps (no mistake changes
#: the screen), so it cannot test the critic; 0 and 2 can.
DATA_SEEDS = (0, 2)


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


def _final(res: dict) -> str:
    """What the final evaluation shows besides the rate (for an assertion's message)."""
    f = res["final"][0]
    return f"{f['successes']}/{f['episodes']} {f.get('failure_modes')}"


def _one_data_seed(root: Path, seed: int) -> dict[str, float | str | np.ndarray]:
    """Every stage on data seed ``seed``: success of the start, of Filtered BC and of Digi-Q; the
    out-of-fold advantages of the expert's actions and of the mistakes that change the screen."""
    from digirl.sim.tasks.tasksets import load_taskset

    root.mkdir()
    searches = [t.instruction for t in load_taskset("general", "train") if t.family == "web_search"][:8]
    tasks = root / "tasks.txt"
    tasks.write_text("\n".join(searches * 2) + "\n")  # each task twice: 16 evaluation episodes
    env = [f"env.task_file={tasks}", *COMMON, f"seed={seed}"]
    data = root / "data"
    noisy = ["expert=true", "expert_noise=0.5", "expert_noise_sticky=true", "trajectories=64"]
    _digirl("collect", str(data), *env, *noisy)
    _digirl("sft", str(root / "sft"), *env, *POLICY, f"sft.dataset={data}", "sft.steps=40")
    init = f"policy.init={root / 'sft' / 'policy'}"
    offline = [*env, *EVAL, *ACTOR, init, "algo.name=filtered_bc", f"offline_dataset={data}"]
    start = _digirl("train", str(root / "start"), *offline, "algo.offline_actor_steps=0")
    fbc = _digirl("train", str(root / "fbc"), *offline)
    dq_args = [*env, *EVAL, *ACTOR, init, "algo.name=digiq", f"offline_dataset={data}", "algo.digiq.candidates=5",
               "algo.digiq.repft_steps=80", "algo.digiq.critic_steps=300", "algo.digiq.critic_hidden=128",
               "algo.digiq.folds=3", "algo.digiq.extract_candidates=1", "algo.digiq.delta=0"]  # fmt: skip
    digiq = _digirl("digiq", "train", str(root / "digiq"), *dq_args)

    # Only dataset actions that change the screen count: the exact labels already drop the no-ops,
    # whose advantage best-of-N sets to 0 whatever the critic says.
    trajs = {t.traj_id: t for t in TrajectoryStore(data, create=False).load(load_images=False)}
    adv: dict[bool, list[float]] = {True: [], False: []}
    for a in read_annotations(root / "digiq" / "annotations"):
        if a.step >= 0:
            assert a.extra["heldout"] and a.value is not None
            c = a.extra["candidates"][0]
            if c["label"] is not False:
                adv[a.step not in trajs[a.traj_id].metadata["noisy_steps"]].append(c["q"] - a.value)
    return {
        "start": _success(start),
        "filtered_bc": _success(fbc),
        "digiq": _success(digiq),
        "seen": f"start {_final(start)}; Filtered BC {_final(fbc)}; Digi-Q {_final(digiq)}",
        "expert": np.array(adv[True]),
        "mistakes": np.array(adv[False]),
    }


@pytest.mark.learning
@pytest.mark.slow
@pytest.mark.timeout(2400)  # ~5 min alone (two data seeds); more on a shared 2-core machine
def test_digiq_learns_and_is_not_below_filtered_bc_on_a_habitual_noisy_expert(tmp_path: Path, record_property):
    runs = {seed: _one_data_seed(tmp_path / f"seed{seed}", seed) for seed in DATA_SEEDS}
    for seed, r in runs.items():
        for k in ("start", "filtered_bc", "digiq", "seen"):
            record_property(f"s{seed}_{k}", r[k])
        expert, mistakes = r["expert"], r["mistakes"]
        assert isinstance(expert, np.ndarray) and isinstance(mistakes, np.ndarray)
        # the critic separates the expert's actions from the mistakes (all advantages out of fold)
        assert len(mistakes) >= 20, (seed, len(mistakes))
        record_property(f"s{seed}_adv_positive_expert", float((expert > 0).mean()))
        record_property(f"s{seed}_adv_positive_mistakes", float((mistakes > 0).mean()))
        assert (expert > 0).mean() >= (mistakes > 0).mean() + 0.3, (seed, (expert > 0).mean(), (mistakes > 0).mean())
        assert expert.mean() > mistakes.mean() + 0.05, seed
    # Over both seeds (32 greedy episodes a method): the Digi-Q policy learns from its weak start, and
    # does not fall below Filtered BC on the same data with the same actor budget.
    total = {k: sum(float(r[k]) for r in runs.values()) * 16 for k in ("start", "filtered_bc", "digiq")}
    seen = {seed: r["seen"] for seed, r in runs.items()}
    assert total["digiq"] >= total["start"] + 8, (total, seen)
    assert total["digiq"] >= total["filtered_bc"], (total, seen)
