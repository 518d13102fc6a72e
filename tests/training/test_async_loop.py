"""The asynchronous online phase: staleness bound, off-policy weights, determinism, and kill -9 resume."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from digirl.config.core import load_config
from digirl.core.types import Trajectory
from digirl.data.store import TrajectoryStore
from digirl.policies.config import EncoderConfig
from digirl.policies.default import DefaultPolicy
from digirl.testing.tiny_runs import TINY_ONLINE_DIGIRL
from digirl.training.async_loop import SharedCollector, _Weights, off_policy_weights, split_stale
from digirl.training.checkpoint import latest_checkpoint, load_checkpoint
from digirl.training.config import TrainConfig
from digirl.training.loop import train

TINY = [*TINY_ONLINE_DIGIRL]


def _traj(version: int | None, tid: str) -> Trajectory:
    from trajfactory import build_traj  # tests/data helper

    t = build_traj(2, traj_id=tid)
    t.policy_version = version
    return t


@pytest.fixture(autouse=True)
def _trajfactory_path(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "data"))


def test_split_stale_drops_only_what_is_older_than_k():
    trajs = [_traj(5, "a"), _traj(3, "b"), _traj(2, "c"), _traj(None, "d")]
    keep, drop = split_stale(trajs, version=5, k=2)
    assert [t.traj_id for t in keep] == ["a", "b", "d"] and [t.traj_id for t in drop] == ["c"]


def test_off_policy_weights_are_one_for_the_behaviour_policy_itself_and_skip_on_policy_data():
    policy = DefaultPolicy(EncoderConfig(dim=32, layers=1, heads=2), seed=0)
    t = _traj(3, "old")
    # The actor found each action e^0.5 times less likely than the learner does now: ρ = e^0.5, truncated at ρ̄.
    lp = policy.log_prob([s.observation for s in t.steps], [s.action for s in t.steps]).detach().numpy()
    for s, v in zip(t.steps, lp):
        s.log_prob = None if np.isnan(v) else float(v) - 0.5
    w = off_policy_weights(policy, [t, _traj(7, "now"), _traj(None, "unknown")], version=7, rho_bar=1.0)
    assert list(w) == ["old"]
    assert w["old"] == pytest.approx([1.0 for _ in lp])  # truncated at 1 (unknown behaviour: 1 too)
    w = off_policy_weights(policy, [t], version=7, rho_bar=2.0)
    assert w["old"] == pytest.approx([1.0 if np.isnan(v) else np.exp(0.5) for v in lp])


def test_published_weights_by_version_and_the_learners_progress():
    policy = DefaultPolicy(EncoderConfig(dim=32, layers=1, heads=2), seed=0)
    w = _Weights(0, 0, policy)
    for v in (1, 2, 3):
        w.publish(v, policy)
    assert w.version == 3 and w.params(1)[0].shape == next(policy.parameters()).shape
    w.forget_below(2)  # no episode acts with 0 or 1 any more
    with pytest.raises(KeyError):
        w.params(1)
    w.forget_below(99)  # never the newest
    assert w.params(3)
    stop = threading.Event()
    w.finish(2)
    assert w.wait_finished(2, stop)
    stop.set()
    assert not w.wait_finished(5, stop)


def test_shared_collector_runs_one_at_a_time():
    from digirl.envs.collector import make_collector
    from digirl.envs.vector import EpisodeJob

    inner = make_collector("digirl/toy-tap-v0", runner="inline")
    shared = SharedCollector(inner)
    first = shared.run(None, [EpisodeJob(None, 0), EpisodeJob(None, 1)], expert=True)
    next(first)  # holds the collector
    got: list[int] = []
    other = threading.Thread(target=lambda: got.extend(t.seed for t in shared.run(None, [EpisodeJob(None, 2)], expert=True)))
    other.start()
    time.sleep(0.2)
    assert got == []  # waits for the first run to finish
    list(first)
    other.join(5)
    assert got == [2] and shared.num_envs == 1 and shared.stats.episodes == 3
    shared.close()


def test_async_run_bounds_staleness_and_corrects(tmp_path):
    # eval.every=2: collection pauses after iterations 2 and 4 for the learner's evaluations
    args = [*TINY, "iterations=5", "asynchronous.max_staleness=2", "asynchronous.replay_sample=8", "eval.every=2"]
    res = train(load_config(TrainConfig, overrides=args), tmp_path / "a")
    assert res["iterations"] == 5 and [h["iteration"] for h in res["history"]] == [0, 2, 4, 5]
    trajs = TrajectoryStore(tmp_path / "a" / "data", create=False).load(load_images=False)
    assert Counter(int(t.metadata["iteration"]) for t in trajs) == {i: 6 for i in range(5)}
    assert len({t.traj_id for t in trajs}) == 30
    # iteration j is learned from at version U(j) = j: every trajectory acted with a version >= j - k
    assert all(int(t.metadata["iteration"]) - 2 <= t.policy_version <= int(t.metadata["iteration"]) for t in trajs)
    import json

    rows = [json.loads(x) for x in (tmp_path / "a" / "metrics.jsonl").read_text().splitlines()]
    stale = [r["data/staleness"] for r in rows if "data/staleness" in r]
    assert len(stale) == 5 and all(0.0 <= x <= 2.0 for x in stale) and stale[0] == 0.0
    assert all(r["data/dropped_stale"] == 0 for r in rows if "data/dropped_stale" in r)
    assert any(r.get("train/off_policy_steps", 0) > 0 for r in rows)


def test_correction_needs_an_algorithm_that_weights_steps(tmp_path, monkeypatch):
    from digirl.algorithms.filtered_bc import FilteredBC

    def update(self, trajectories, phase):  # an algorithm without step_weights
        return {}

    monkeypatch.setattr(FilteredBC, "update", update)
    cfg = load_config(TrainConfig, overrides=[*TINY, "iterations=1", "algo.name=filtered_bc", "asynchronous.max_staleness=1"])
    with pytest.raises(ValueError, match=r"asynchronous\.correction=none"):
        train(cfg, tmp_path / "run")


def _train(run: Path) -> subprocess.Popen:
    env = dict(os.environ, DIGIRL_NO_PROGRESS="1")
    args = [*TINY, "iterations=6", "asynchronous.max_staleness=1", "env.latency_s=[0.01,0.03]"]
    return subprocess.Popen(
        [sys.executable, "-m", "digirl", "train", str(run), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )


@pytest.mark.slow
def test_async_learner_killed_with_sigkill_resumes_without_losing_or_duplicating(tmp_path):
    run = tmp_path / "run"
    proc = _train(run)
    deadline = time.time() + 600
    while time.time() < deadline and proc.poll() is None:
        ck = latest_checkpoint(run) if (run / "checkpoints" / "LATEST").exists() else None
        if ck is not None and load_checkpoint(ck)[0].iteration >= 2:
            break
        time.sleep(0.05)
    assert proc.poll() is None, proc.stdout.read().decode()[-2000:] if proc.stdout else "finished too early"
    os.kill(proc.pid, signal.SIGKILL)  # the collector thread may be an iteration ahead: that shard is reused
    proc.wait()
    killed_at = load_checkpoint(latest_checkpoint(run))[0].iteration
    assert 2 <= killed_at < 6

    proc = _train(run)
    out = proc.communicate(timeout=600)[0].decode()
    assert proc.returncode == 0, out[-3000:]
    assert load_checkpoint(latest_checkpoint(run))[0].iteration == 6
    trajs = TrajectoryStore(run / "data", create=False).load(load_images=False)
    assert len({t.traj_id for t in trajs}) == len(trajs)
    assert Counter(int(t.metadata["iteration"]) for t in trajs) == {i: 6 for i in range(6)}
    # the staleness bound held across the crash: iteration j was collected by a version >= U(j) - 1 = j - 1
    assert all(t.policy_version >= int(t.metadata["iteration"]) - 1 for t in trajs)
