"""``benchmarks/throughput/bench_sim.py``: warm-up steps are untimed and the timed episodes come after them."""

from __future__ import annotations

import pytest

from benchmarks.throughput.bench_sim import single
from digirl.sim.env import SimEnv


@pytest.fixture
def seeds(monkeypatch):
    """The seed of every episode reset, in order."""
    seen: list[int | None] = []
    reset = SimEnv.reset

    def spy(self, *, seed=None, options=None):
        seen.append(seed)
        return reset(self, seed=seed, options=options)

    monkeypatch.setattr(SimEnv, "reset", spy)
    return seen


def test_warmup_runs_earlier_episodes_and_times_later_ones(seeds):
    r = single("general", "expert", 12, 135, 300, 1, warmup=10)
    assert r["warmup_steps"] == 10 and r["steps"] >= 12
    assert seeds == list(range(len(seeds)))  # one run of seeds: the timed episodes replay none
    assert r["episodes"] < len(seeds)  # some episodes were the untimed warm-up
    assert r["success_rate"] == 1.0  # the expert succeeds on every timed episode
    assert 0.0 <= r["frame_cache_hit_rate"] <= 1.0


def test_no_warmup_times_from_the_first_episode(seeds):
    r = single("webshop", "random", 8, 135, 300, 1)
    assert r["warmup_steps"] == 0 and r["episodes"] == len(seeds) and seeds[0] == 0
