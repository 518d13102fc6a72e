"""``benchmarks/studies/loop_escape.py`` on a tiny fresh policy: three decodings, counted outcomes, seeded."""

from __future__ import annotations

import json

from benchmarks.studies.loop_escape import DECODINGS, main
from digirl.policies.config import EncoderConfig
from digirl.policies.default import DefaultPolicy


def test_three_decodings_per_policy_and_the_same_numbers_twice(tmp_path):
    DefaultPolicy(EncoderConfig(dim=16, layers=1, heads=2), seed=0).save(tmp_path / "policy")
    outs = []
    for name in ("a.json", "b.json"):
        args = [str(tmp_path / "policy"), "--env", "digirl/sim-webshop-v0", "--test-tasks", "3", "--runner", "inline"]
        assert main([*args, "--num-envs", "1", "--out", str(tmp_path / name)]) == 0
        outs.append(json.loads((tmp_path / name).read_text()))
    (row,) = outs[0]["rows"]
    for d in DECODINGS:
        assert 0.0 <= row[d]["success_rate"] <= 1.0
        assert sum(row[d]["failure_modes"].values()) == 3  # every episode has one outcome
    assert outs[0]["rows"] == outs[1]["rows"]  # seeded: the sampled decodings draw the same twice
    assert outs[0]["command"].startswith("loop_escape.py ") and outs[0]["test_tasks"] == 3
