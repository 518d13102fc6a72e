"""``benchmarks/gpu/bench_vlm_ddp.py`` on CPU (gloo): 1 and 2 torchrun ranks of the real actor update
on the tiny VLM, the same global batch, the JSON's fields, and 2 ranks updating exactly as 1 does,
with the gradients summed during the backward pass (overlap) and after it (flat)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_two_ranks_update_as_one_and_the_json_says_so(tmp_path):
    out = tmp_path / "ddp.json"
    cmd = [sys.executable, "benchmarks/gpu/bench_vlm_ddp.py", "--model", "tiny", "--device", "cpu", "--ranks", "1", "2"]
    cmd += ["--variants", "full", "--grad-sync", "overlap", "flat"]
    cmd += ["--steps", "2", "--warmup", "1", "--batch", "4", "--pool", "12", "--screen", "224x476"]
    # clipping would make every norm 1.0: unclipped, the norms are the gradients' own
    cmd += ["--max-grad-norm", "1e6", "--act-envs", "1", "--budget-s", "500", "--out", str(out)]
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=280, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "speed-up 2_vs_1" in proc.stdout  # progress lines reach the console
    r = json.loads(out.read_text())
    assert r["errors"] == []
    assert r["command"].startswith("python benchmarks/gpu/bench_vlm_ddp.py --model tiny")
    assert r["machine"]["cpus"] == os.cpu_count() and r["machine"]["hostname"]
    assert r["torch"] and r["transformers"] and isinstance(r["gpu"], str) and r["gpu"]  # on CPU: the processor
    assert r["model"] == "tiny" and r["model_class"] == "Qwen2_5_VLForConditionalGeneration" and r["params"] > 100_000
    one, two, flat = r["runs"]
    assert (one["variant"], one["ranks"], two["ranks"], flat["ranks"]) == ("full", 1, 2, 2)
    assert (one["grad_sync"], two["grad_sync"], flat["grad_sync"]) == (None, "overlap", "flat")
    for run in (one, two, flat):
        assert run["complete"] and run["global_batch"] == 4 and run["timed_steps"] == 2
        assert run["per_rank_batch"] == 4 / run["ranks"]
        assert len(run["step_s_all"]) == 2 and all(s > 0 for s in run["step_s_all"])
        assert run["samples_per_s"] == pytest.approx(4 / run["step_s_mean"])
        assert run["step_s_p50"] <= run["step_s_p95"] <= max(run["step_s_all"])
        assert len(run["peak_rss_gib_per_rank"]) == run["ranks"] and run["peak_mem_gib_per_rank"] == [None] * run["ranks"]
        assert run["trainable_params"] == r["params"]  # full fine-tuning
    # the update is exact: the sharded step is the one-process step on the same global minibatch
    assert two["loss"] == pytest.approx(one["loss"], rel=1e-5)
    assert two["grad_norm"] == pytest.approx(one["grad_norm"], rel=1e-4)
    assert flat["loss"] == pytest.approx(two["loss"], rel=1e-6) and flat["grad_norm"] == pytest.approx(two["grad_norm"], rel=1e-6)
    assert one["loss"][0] != one["loss"][1]  # the second step saw other samples, from updated weights
    s = r["speedup"]["full"]["2_vs_1"]
    assert s["speedup"] == pytest.approx(two["samples_per_s"] / one["samples_per_s"])
    assert s["loss_max_rel_diff"] < 1e-5 and s["grad_norm_max_rel_diff"] < 1e-4
    assert set(r["speedup"]["full"]) == {"2_vs_1", "2_vs_1_flat", "2_overlap_vs_flat"}
    assert r["speedup"]["full"]["2_overlap_vs_flat"]["speedup"] == pytest.approx(two["samples_per_s"] / flat["samples_per_s"])
    (act,) = r["acting"]
    assert act["envs"] == 1 and act["decoding"] == "greedy" and act["env_steps"] > 0
    assert act["env_steps_per_s"] == pytest.approx(act["env_steps"] / act["seconds"])
    assert act["act_calls"] == act["env_steps"] and act["act_latency_s_median"] > 0
