"""Digi-Q's stages on a stored simulator dataset: exact labels by replay, forks that never leak,
resuming after kill -9, the commands, the oracle and the report."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from digirl.algorithms.digiq.sidecar import Sidecar
from digirl.algorithms.digiq.stages import load_candidates, load_labels
from digirl.cli.main import main
from digirl.config.core import load_config
from digirl.core.actions import Action
from digirl.data.store import TrajectoryStore
from digirl.envs.registry import make
from digirl.training.config import CollectConfig, TrainConfig
from digirl.training.digiq import _exact_labels_job, _payload, fork_env, run_stages
from digirl.training.sft import collect

ROOT = Path(__file__).resolve().parents[2]
TASKS = ["Open the clock app", "Open the camera", "What's the news in Albania?"]
SMALL = [
    "policy.default.dim=16",
    "policy.default.layers=1",
    "policy.default.heads=2",
    "algo.digiq.candidates=3",
    "algo.digiq.repft_steps=3",
    "algo.digiq.critic_steps=5",
    "algo.digiq.critic_hidden=16",
    "algo.digiq.folds=2",
    "algo.offline_actor_steps=3",
    "env.runner=inline",
    "env.num_envs=1",
    "env.perturbation=0",
    "log.tensorboard=false",
]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("digiq")
    (d / "tasks.txt").write_text("\n".join(TASKS) + "\n")
    cfg = load_config(
        CollectConfig,
        overrides=["expert=true", "expert_noise=0.3", "trajectories=6", f"env.task_file={d / 'tasks.txt'}",
                   "env.runner=inline", "env.num_envs=1", "env.perturbation=0"],
    )  # fmt: skip
    collect(cfg, d / "data")
    return d / "data"


def test_a_fork_never_changes_the_original():
    env = make("digirl/sim-general-v0", perturbation=2)
    rng = np.random.default_rng(0)
    ref = make("digirl/sim-general-v0", perturbation=2)
    for ep in range(3):
        obs, _ = env.reset(seed=ep, options={"task": TASKS[ep]})
        ref.reset(seed=ep, options={"task": TASKS[ep]})
        for _ in range(8):
            for _ in range(6):  # anything done to copies (popups, keyboards, typing, navigation) ...
                f = fork_env(env)
                f.step(env.action_space.sample(rng))
            a = env.cheat() or Action.back()
            obs, _, term, trunc, _ = env.step(a)
            robs, *_ = ref.step(a)
            assert np.array_equal(obs.screenshot, robs.screenshot)  # ... leaves the original as a fresh replay
            assert env.phone.summary() == ref.phone.summary()
            if term or trunc:
                break


def test_exact_labels_compare_with_a_noop():
    from digirl.envs.vector import EpisodeJob, env_factory, run_expert

    fn = env_factory("digirl/sim-general-v0", perturbation=0)
    t = run_expert(fn, [EpisodeJob("What's the news in Albania?", seed=0)], mode="inline")[0]
    assert t.steps[0].action.is_tap and t.length >= 3  # tap the search box, type, enter
    obs = t.steps[0].observation
    clock = next(e for e in obs.elements or () if e.ref == "status.clock")
    cands = {(t.traj_id, h): [s.action] for h, s in enumerate(t.steps)}
    cands[(t.traj_id, 0)] = [t.steps[0].action, Action.tap(*clock.center), Action.home(), Action.complete(), Action.invalid("?")]
    cands[(t.traj_id, 1)] = [t.steps[1].action, Action.enter()]  # typing changes the field; ENTER on an empty query does not
    rows = _exact_labels_job("digirl/sim-general-v0", {"perturbation": 0}, [_payload(t, cands)])
    by_step = {h: [r["label"] for r in rows if r["step"] == h] for h in range(t.length)}
    # the expert's tap opens the search box; the clock tap and HOME on the home screen change nothing;
    # ending the episode has no label; an unreadable action changes nothing
    assert by_step[0] == [True, False, False, None, False]
    assert by_step[1][0] is True
    # a replay that does not reproduce the stored screens is reported, not labelled
    bad = _payload(t, cands)
    bad["hashes"][1] = "0" * 24
    assert _exact_labels_job("digirl/sim-general-v0", {"perturbation": 0}, [bad]) == [
        {"traj_id": t.traj_id, "failed": f"trajectory {t.traj_id}: replayed screen 1 differs from the stored one"}
    ]


def test_stages_label_every_candidate_exactly(dataset, tmp_path):
    cfg = load_config(TrainConfig, overrides=["mode=offline", f"offline_dataset={dataset}", "algo.name=digiq", *SMALL])
    m = run_stages(cfg, tmp_path / "run", upto="featurize")
    sc = Sidecar(tmp_path / "run" / "digiq")
    cands, labels = load_candidates(sc), load_labels(sc)
    trajs = TrajectoryStore(dataset, create=False).load()
    assert set(cands) == {(t.traj_id, h) for t in trajs for h in range(t.length)}
    assert all(c[0] == trajs_by_id(trajs)[k[0]].steps[k[1]].action for k, c in cands.items())  # candidate 0 = a_data
    assert m["train/digiq_replay_failures"] == 0 and m["train/digiq_pixel_labels"] == 0
    n_status = sum(a.ends_episode for c in cands.values() for a in c)
    assert len(labels) == sum(len(c) for c in cands.values()) - n_status
    assert m["train/digiq_feature_dim_action"] == 32 and m["train/digiq_feature_dim_state"] == 16
    again = run_stages(cfg, tmp_path / "run", upto="featurize")  # everything is done: nothing recomputed
    assert again["train/digiq_proposals_sampled"] == 0


def trajs_by_id(trajs):
    return {t.traj_id: t for t in trajs}


@pytest.mark.slow
def test_kill9_during_the_stages_then_resume(dataset, tmp_path):
    run = tmp_path / "run"
    cmd = [sys.executable, "-m", "digirl", "digiq", "featurize", str(run), f"offline_dataset={dataset}", *SMALL,
           "algo.digiq.candidates=6", "algo.digiq.repft_steps=400"]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(ROOT), DIGIRL_NO_PROGRESS="1", OMP_NUM_THREADS="1")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    labels = run / "digiq" / "labels"
    deadline = time.time() + 120
    while time.time() < deadline and not list(labels.glob("part-*.parquet")):
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)  # during labelling or representation fine-tuning
    proc.wait()
    assert list((run / "digiq" / "candidates").glob("part-*.parquet")), "the candidates stage had finished"
    assert not (run / "digiq" / "repft" / "backend").exists()
    out = subprocess.run([*cmd[:6], "--json"], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    sc = Sidecar(run / "digiq")
    rows = sc.stage("candidates").rows()
    keys = [(r["traj_id"], r["step"], r["cand"]) for r in rows]
    assert len(keys) == len(set(keys))
    trajs = TrajectoryStore(dataset, create=False).load()
    assert {(k[0], k[1]) for k in keys} == {(t.traj_id, h) for t in trajs for h in range(t.length)}
    assert (run / "digiq" / "repft" / "backend" / "backend.json").is_file()
    assert not list((run / "digiq").rglob(".tmp-*"))


def test_train_oracle_and_report_commands(dataset, tmp_path, capsys):
    run = tmp_path / "run"
    args = [f"offline_dataset={dataset}", *SMALL, "eval.test_tasks=2", "eval.train_tasks=0", "algo.digiq.delta=0.0"]
    assert main(["digiq", "train", str(run), *args, "--json"]) == 0
    res = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert res["final"][0]["episodes"] == 2 and "train/digiq_exact_labels" in res["stages"]
    assert (run / "policy" / "policy.json").is_file() and list((run / "annotations").glob("iter-*.parquet"))
    assert main(["digiq", "oracle", str(run), "--states", "6", "--json"]) == 0
    o = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert o["oracle/states"] == 6 and -1 <= o["oracle/spearman"] <= 1
    assert (run / "digiq-oracle-expert.json").is_file()
    assert main(["digiq", "report", str(run), "--trajectories", "2", "--json"]) == 0
    html = (run / "digiq-report" / "index.html").read_text()
    assert "Q − V" in html and html.count("<img") >= 3
    assert len(list((run / "digiq-report" / "img").glob("*.png"))) >= 3


def test_outcomes_job_executes_each_valid_proposal_once():
    from digirl.envs.vector import EpisodeJob, env_factory, run_expert
    from digirl.training.digiq import _outcomes_job

    fn = env_factory("digirl/sim-general-v0", perturbation=0)
    t = run_expert(fn, [EpisodeJob("Open the clock app", seed=0)], mode="inline")[0]
    obs = t.steps[0].observation
    clock = next(e for e in obs.elements or () if e.ref == "status.clock")
    cands = {(t.traj_id, h): [s.action] for h, s in enumerate(t.steps)}
    cands[(t.traj_id, 0)] = [t.steps[0].action, Action.tap(*clock.center), Action.complete(), Action.invalid("?")]
    rows = _outcomes_job("digirl/sim-general-v0", {"perturbation": 0}, [_payload(t, cands)])
    ran = {(r["step"], r["cand"]): r for r in rows if r["cand"] >= 0}
    # the dataset action (cand 0) has its own transition and the invalid one is never executed
    assert set(ran) == {(0, 1), (0, 2)}
    assert rows[-1]["cand"] == -1 and rows[-1]["obs"] is None  # the trajectory's done-marker
    noop, done = ran[(0, 1)], ran[(0, 2)]
    assert noop["obs"].step == 1 and noop["obs"].history[-1] == Action.tap(*clock.center)
    assert not noop["terminated"] and noop["reward"] == 0.0
    assert done["terminated"] and done["reward"] == 0.0  # "done" on the home screen: the task is not solved
    # exactly what the env does from a fresh replay of the same state
    env = make("digirl/sim-general-v0", perturbation=0)
    env.reset(seed=t.seed, options={"task": t.task})
    o2, r2, term2, *_ = env.step(Action.tap(*clock.center))
    assert np.array_equal(o2.screenshot, noop["obs"].screenshot) and (r2, term2) == (0.0, False)


def test_outcome_stage_feeds_the_critic_and_resumes(dataset, tmp_path, capsys):
    run = tmp_path / "run"
    args = [f"offline_dataset={dataset}", *SMALL, "eval.test_tasks=0", "eval.train_tasks=0"]
    # the critic asks for executed proposals that were never computed: a clear error, not a silent no-op
    cfg = load_config(TrainConfig, overrides=["mode=offline", "algo.name=digiq", *args])
    run_stages(cfg, run, upto="featurize")
    from digirl.algorithms.registry import make_algorithm
    from digirl.training.common import build_policy
    from digirl.training.digiq import sidecar_of

    with_td = sidecar_of(
        load_config(TrainConfig, overrides=["mode=offline", "algo.name=digiq", *args, "algo.digiq.outcome_td=1.0"]), run
    )
    algo = make_algorithm(build_policy(with_td.policy, seed=0), with_td.algo, seed=0)
    with pytest.raises(ValueError, match="digirl digiq outcomes"):
        algo.update(TrajectoryStore(dataset, create=False).load(), "offline")
    # the stage executes every valid proposal once; a rerun executes nothing
    m = run_stages(with_td, run)
    cands = load_candidates(Sidecar(run / "digiq"))
    valid = sum(a.is_valid for c in cands.values() for a in c[1:])
    assert m["train/digiq_outcome_env_steps"] == valid == m["train/digiq_outcomes_executed_now"] > 0
    assert m["train/digiq_outcome_replay_failures"] == 0
    assert run_stages(with_td, run)["train/digiq_outcomes_executed_now"] == 0
    out = algo.update(TrajectoryStore(dataset, create=False).load(), "offline")
    assert out["train/digiq_outcome_pairs"] == valid and "critic/outcome_td_loss" in out
