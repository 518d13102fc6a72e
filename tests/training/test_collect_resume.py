"""`digirl collect` resumes to the count asked, whatever runner, however often killed; bad input leaves nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from digirl.cli.main import main
from digirl.config.core import load_config
from digirl.data.store import TrajectoryStore
from digirl.training.config import CollectConfig
from digirl.training.sft import collect, collection_key

TOY = ["expert=true", "env.id=digirl/toy-mixed-v0", "shard_size=3"]


def _ids(out: Path) -> list[str]:
    return TrajectoryStore(out, create=False).trajectory_ids()


def test_bad_config_or_env_id_leaves_no_output_folder(tmp_path, capsys):
    out = tmp_path / "data"
    assert main(["collect", str(out), "expert=true", "env.id=digirl/nope-v0"]) != 0
    assert "unknown env id" in capsys.readouterr().err and not out.exists()
    assert main(["collect", str(out), "policy.init=/no/such/policy", "env.id=digirl/toy-tap-v0"]) != 0
    assert not out.exists()
    assert main(["collect", str(out), "expert=true", "env.ray.address=auto"]) != 0  # Ray options without env.runner=ray
    assert not out.exists()
    assert main(["collect", str(out), "expert=true", "env.runner=warp"]) != 0
    assert not out.exists()


def test_rerun_collects_only_what_is_missing_and_a_larger_count_extends(tmp_path):
    out = tmp_path / "data"
    cfg = load_config(CollectConfig, overrides=[*TOY, "env.runner=inline", "trajectories=5"])
    collect(cfg, out)
    first = _ids(out)
    key = collection_key(cfg)
    assert sorted(first) == [f"{key}-{i:07d}" for i in range(5)]
    assert collect(cfg, out)["trajectories"] == 5  # the same command again: nothing to do
    # more of the same collection, on another runner: the first five stay, three are added
    more = load_config(CollectConfig, overrides=[*TOY, "env.runner=process", "env.num_envs=2", "trajectories=8"])
    assert collection_key(more) == key
    assert collect(more, out)["trajectories"] == 8
    assert _ids(out)[:5] == first and sorted(_ids(out)) == [f"{key}-{i:07d}" for i in range(8)]
    # a different collection (another seed) is a different key and adds its own
    other = load_config(CollectConfig, overrides=[*TOY, "env.runner=inline", "trajectories=2", "seed=1"])
    assert collection_key(other) != key and collect(other, out)["trajectories"] == 10


def test_sticky_noise_is_its_own_collection(tmp_path):
    noisy = [*TOY, "env.runner=inline", "trajectories=4", "expert_noise=0.5"]
    plain = load_config(CollectConfig, overrides=noisy)
    sticky = load_config(CollectConfig, overrides=[*noisy, "expert_noise_sticky=true"])
    assert collection_key(sticky) != collection_key(plain)
    # the key of every other collection is what it was before the option existed
    assert collection_key(plain) == collection_key(load_config(CollectConfig, overrides=[*noisy, "expert_noise_sticky=false"]))
    collect(sticky, tmp_path / "data")
    trajs = TrajectoryStore(tmp_path / "data", create=False).load(load_images=False)
    assert len(trajs) == 4 and all(t.metadata["expert_sticky"] for t in trajs)


def _collect(out: Path, runner: str) -> subprocess.Popen:
    env = dict(os.environ, DIGIRL_NO_PROGRESS="1")
    args = [*TOY, "trajectories=40", f"env.runner={runner}", "env.num_envs=2", "env.latency_s=[0.03,0.06]"]
    return subprocess.Popen(
        [sys.executable, "-m", "digirl", "collect", str(out), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )


@pytest.mark.slow
def test_killed_with_sigkill_then_the_same_command_ends_with_exactly_the_count(tmp_path):
    out = tmp_path / "data"
    for attempt in range(2):  # killed twice, at different points
        proc = _collect(out, "process")
        deadline = time.time() + 300
        want = 2 + 4 * attempt
        while time.time() < deadline and proc.poll() is None:
            shards = out / "shards"
            if shards.is_dir() and sum(1 for p in shards.iterdir() if p.name.isdigit()) >= want:
                break
            time.sleep(0.02)
        assert proc.poll() is None, proc.stdout.read().decode()[-2000:] if proc.stdout else "finished too early"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert 0 < len(_ids(out)) < 40
    proc = _collect(out, "inline")  # whatever runner finishes it
    log = proc.communicate(timeout=300)[0].decode()
    assert proc.returncode == 0, log[-3000:]
    ids = _ids(out)
    assert len(ids) == 40 and len(set(ids)) == 40
    assert TrajectoryStore(out, create=False).check() == []


TINY_POLICY = ["policy.default.dim=32", "policy.default.layers=1", "policy.default.heads=2"]


def _saved_policy(tmp_path: Path) -> str:
    from digirl.policies.registry import build_policy

    cfg = load_config(CollectConfig, overrides=[*TINY_POLICY, "env.id=digirl/toy-mixed-v0"])
    path = tmp_path / "policy"
    build_policy(cfg.policy, seed=3).save(path)
    return str(path)


def _episodes(out: Path) -> dict[str, list[tuple[str, float | None]]]:
    trajs = TrajectoryStore(out, create=False).load(load_images=False)
    return {t.traj_id: [(s.action_text, s.log_prob) for s in t.steps] for t in trajs}


def test_a_killed_then_resumed_policy_collection_equals_an_uninterrupted_one(tmp_path, monkeypatch):
    """The policy samples its actions: a resumed collect must restart sampling where the
    uninterrupted one was at that shard, not from the seed, or the rest of the dataset differs."""
    overrides = [
        "env.id=digirl/toy-mixed-v0",
        "env.runner=inline",
        "env.num_envs=2",
        "trajectories=6",
        "shard_size=2",
        f"policy.init={_saved_policy(tmp_path)}",
        *TINY_POLICY,
    ]
    cfg = load_config(CollectConfig, overrides=overrides)
    collect(cfg, tmp_path / "whole")
    whole = _episodes(tmp_path / "whole")
    assert len(whole) == 6 and any(lp is not None for steps in whole.values() for _, lp in steps)

    real = TrajectoryStore.append
    calls = []

    def killed_after_the_second_shard(self, trajs):
        calls.append(len(trajs))
        if len(calls) == 3:
            raise KeyboardInterrupt  # the third shard is never written
        return real(self, trajs)

    monkeypatch.setattr(TrajectoryStore, "append", killed_after_the_second_shard)
    with pytest.raises(KeyboardInterrupt):
        collect(cfg, tmp_path / "resumed")
    monkeypatch.undo()
    assert len(_ids(tmp_path / "resumed")) == 4
    collect(cfg, tmp_path / "resumed")  # the same command again
    assert _episodes(tmp_path / "resumed") == whole


def test_a_collection_that_fails_before_its_first_shard_leaves_no_folder(tmp_path, monkeypatch):
    out = tmp_path / "data"
    cfg = load_config(CollectConfig, overrides=[*TOY, "env.runner=inline", "trajectories=4"])

    def broken(*_a, **_k):
        raise RuntimeError("the env died")

    monkeypatch.setattr("digirl.training.sft._run_block", broken)
    with pytest.raises(RuntimeError, match="the env died"):
        collect(cfg, out)
    assert not out.exists()
    monkeypatch.undo()
    collect(cfg, out)  # a folder that existed (with shards) is never removed, even when a rerun fails
    monkeypatch.setattr("digirl.training.sft._run_block", broken)
    with pytest.raises(RuntimeError):
        collect(load_config(CollectConfig, overrides=[*TOY, "env.runner=inline", "trajectories=8"]), out)
    assert len(_ids(out)) == 4
