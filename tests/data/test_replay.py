"""ReplayBuffer: FIFO by trajectory, step flattening and uniform step sampling."""

from __future__ import annotations

import numpy as np
import pytest
from trajfactory import build_traj

from digirl.data.replay import ReplayBuffer


def test_fifo_capacity_and_env_failures() -> None:
    buf = ReplayBuffer(3)
    trajs = [build_traj(i + 1, seed=i, traj_id=f"t{i}") for i in range(5)]
    assert buf.add(trajs[:2]) == 2 and len(buf) == 2
    assert buf.add([build_traj(2, seed=9, env_failure=True)]) == 0  # dropped by default
    buf.add(trajs[2:])
    assert [t.traj_id for t in buf.trajectories()] == ["t2", "t3", "t4"]  # oldest evicted first
    assert buf.num_steps == 3 + 4 + 5
    assert buf.steps()[:4] == [(trajs[2], 0), (trajs[2], 1), (trajs[2], 2), (trajs[3], 0)]
    keep = ReplayBuffer(2, keep_env_failures=True)
    assert keep.add([build_traj(1, env_failure=True)]) == 1
    with pytest.raises(ValueError, match="capacity"):
        ReplayBuffer(0)
    with pytest.raises(TypeError):
        buf.add(["not a trajectory"])  # type: ignore[list-item]
    buf.clear()
    assert len(buf) == 0 and buf.num_steps == 0 and buf.sample_steps(0, np.random.default_rng(0)) == []


def test_sample_steps_is_uniform_over_steps() -> None:
    buf = ReplayBuffer(10)
    short, long_ = build_traj(1, seed=0, traj_id="short"), build_traj(9, seed=1, traj_id="long")
    buf.add([short, build_traj(0, seed=2, traj_id="empty"), long_])
    rng = np.random.default_rng(0)
    draws = buf.sample_steps(5000, rng)
    assert all(0 <= i < len(t.steps) for t, i in draws)
    counts = {(t.traj_id, i): 0 for t, i in buf.steps()}
    for t, i in draws:
        counts[(t.traj_id, i)] += 1
    assert len(counts) == 10 and min(counts.values()) > 350 and max(counts.values()) < 650
    # 500 draws expected per step; the same seed gives the same sample
    a = [(t.traj_id, i) for t, i in buf.sample_steps(20, np.random.default_rng(7))]
    b = [(t.traj_id, i) for t, i in buf.sample_steps(20, np.random.default_rng(7))]
    assert a == b
    assert {t.traj_id for t in buf.sample_trajectories(50, rng)} == {"short", "empty", "long"}
    with pytest.raises(ValueError, match="empty"):
        ReplayBuffer(2).sample_steps(1, rng)


def test_prioritized_sampling_follows_priorities_and_new_ones_get_the_max() -> None:
    buf = ReplayBuffer(3)
    a, b, c, d = (build_traj(1, seed=i, traj_id=t) for i, t in enumerate("abcd"))
    buf.add([a, b])
    assert buf.priority("a") == buf.priority("b") == 1.0  # default when nothing is known yet
    buf.set_priorities({"a": 3.0, "b": 1.0, "gone": 5.0})  # unknown ids are ignored
    buf.add([c])
    assert buf.priority("c") == 3.0  # the highest so far: replayed soon
    rng = np.random.default_rng(0)
    # alpha = 1, eps tiny: P(a drawn alone from {a: 3, b: 1, c: 3}) = 3/7
    draws = [buf.sample_prioritized(1, rng, alpha=1.0, eps=1e-9)[0].traj_id for _ in range(7000)]
    assert abs(draws.count("a") / 7000 - 3 / 7) < 0.02 and abs(draws.count("b") / 7000 - 1 / 7) < 0.02
    # alpha = 0 is uniform
    draws = [buf.sample_prioritized(1, rng, alpha=0.0)[0].traj_id for _ in range(6000)]
    assert abs(draws.count("b") / 6000 - 1 / 3) < 0.02
    two = buf.sample_prioritized(2, rng)
    assert len({t.traj_id for t in two}) == 2 and [t.traj_id for t in two] == sorted(t.traj_id for t in two)
    assert [t.traj_id for t in buf.sample_prioritized(5, rng)] == ["a", "b", "c"]  # n >= len: everything
    buf.set_priorities({"b": 0.0})
    assert all(buf.sample_prioritized(1, rng, alpha=1.0, eps=1e-12)[0].traj_id != "b" for _ in range(200))
    buf.add([d])  # evicts a, and its priority
    with pytest.raises(KeyError):
        buf.priority("a")
    with pytest.raises(ValueError, match="finite"):
        buf.set_priorities({"b": float("nan")})
