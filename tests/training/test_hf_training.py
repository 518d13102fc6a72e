"""The training spine on a tiny Hugging Face VLM (CPU, offline): sft, train, eval, resume, merge."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("transformers")
pytest.importorskip("peft")

from digirl.cli.main import main
from digirl.data.store import TrajectoryStore
from digirl.training.checkpoint import latest_checkpoint, load_checkpoint

EASY = ["Check my email inbox", "Open the Chrome app", "Open the calculator app", "Open the clock"]
SHORT_PROMPT = 'policy.hf.prompt="Task: {instruction}\\nHistory: {history}"'


def _hf(init: Path, *extra: str) -> list[str]:
    return ["policy.kind=hf", f"policy.init={init}", "policy.device=cpu", SHORT_PROMPT, "policy.hf.max_new_tokens=40", *extra]


def _task_file(tmp_path: Path, repeat: int) -> Path:
    f = tmp_path / "easy.txt"
    f.write_text("\n".join(EASY * repeat) + "\n")
    return f


def _sim(task_file: Path) -> list[str]:
    return [f"env.task_file={task_file}", "env.num_envs=2", "env.runner=inline"]


@pytest.mark.slow
@pytest.mark.learning
def test_sft_teaches_a_tiny_vlm_a_small_simulator_task_set(tiny_vlm, tmp_path, capsys):
    """Random init: every output is garbage. After SFT on 32 expert demos: valid actions, tasks solved."""
    base = tiny_vlm("qwen2_vl")
    tasks = _task_file(tmp_path, 6)  # 24 evaluation episodes, each with its own seed
    ev = ["eval.test_tasks=0", "eval.train_tasks=24", "--json"]
    assert main(["eval", str(base), *_hf(base), *_sim(tasks), *ev, "--out", str(tmp_path / "before")]) == 0
    before = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["train"]
    sft = ["sft.demos=32", "sft.steps=100", "sft.batch_size=16", "sft.lr=3e-3"]
    assert main(["sft", str(tmp_path / "sft"), *_hf(base), *_sim(tasks), *sft, "--json"]) == 0
    capsys.readouterr()
    policy = tmp_path / "sft" / "policy"
    assert main(["eval", str(policy), "policy.kind=hf", "policy.device=cpu", *_sim(tasks), *ev]) == 0
    after = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["train"]
    steps = after["mean_length"] * after["episodes"]
    assert before["success_rate"] == 0.0
    assert after["invalid_actions"] <= 0.05 * steps, after
    assert after["success_rate"] >= 0.75, after


@pytest.mark.slow
@pytest.mark.parametrize("algo", ["filtered_bc", "digirl"])
def test_train_runs_unchanged_on_a_hf_policy(tiny_vlm, tmp_path, algo):
    base = tiny_vlm("qwen2_vl")
    run = tmp_path / "run"
    args = [
        "train",
        str(run),
        *_hf(base),
        *_sim(_task_file(tmp_path, 1)),
        "mode=online",
        "iterations=2",
        "rollout_size=4",
        f"algo.name={algo}",
        "algo.actor_steps=2",
        "algo.batch_size=4",
        "algo.critic_steps=2",
        "algo.instruct_critic_steps=2",
        "algo.critic.dim=32",
        "algo.critic.layers=1",
        "algo.critic.heads=2",
        "eval.every=0",
        "eval.test_tasks=0",
        "eval.train_tasks=2",
        "log.tensorboard=false",
        "--json",
    ]
    assert main(args) == 0
    assert json.loads((run / "policy" / "policy.json").read_text())["kind"] == "hf"
    assert load_checkpoint(latest_checkpoint(run))[0].iteration == 2
    assert len(TrajectoryStore(run / "data", create=False)) == 8
    assert any((run / "annotations").iterdir())


def test_a_users_own_checkpoint_folder_evaluates(tiny_vlm, tmp_path, capsys):
    """A folder written by save_pretrained in someone else's code: `digirl eval DIR policy.kind=hf`."""
    from transformers import AutoModelForImageTextToText

    from digirl.policies.hf.loading import load_processor

    src = tiny_vlm("qwen2_5_vl")
    model = AutoModelForImageTextToText.from_pretrained(src, local_files_only=True)  # "their" code
    mine = tmp_path / "my-qwen"
    model.save_pretrained(mine)
    load_processor(src).save_pretrained(mine)
    args = [
        "eval",
        str(mine),
        "policy.kind=hf",
        "policy.device=cpu",
        "policy.hf.max_new_tokens=16",
        "--out",
        str(tmp_path / "ev"),
    ]
    args += ["env.id=digirl/toy-mixed-v0", "env.runner=inline", "eval.test_tasks=0", "eval.train_tasks=3", "--json"]
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["train"]
    assert report["episodes"] == 3 and (tmp_path / "ev" / "eval.json").is_file()


def test_merge_cli(tiny_vlm, tmp_path, capsys):
    from digirl.config.core import load_config
    from digirl.policies.config import PolicyConfig
    from digirl.policies.registry import build_policy

    base = tiny_vlm("qwen2_vl")
    cfg = load_config(PolicyConfig, overrides=["kind=hf", f"init={base}", "device=cpu", "hf.lora_r=4"])
    build_policy(cfg, seed=0).save(tmp_path / "lora")
    assert main(["policy", "merge", str(tmp_path / "lora"), str(tmp_path / "merged"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["merged_lora"] is True
    meta = json.loads((tmp_path / "merged" / "policy.json").read_text())
    assert meta["lora"] is False and (tmp_path / "merged" / "model.safetensors").is_file()
    assert main(["policy", "info", str(tmp_path / "merged"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["kind"] == "hf"


RESUME_ARGS = [
    "mode=online",
    "env.id=digirl/toy-mixed-v0",
    "env.runner=inline",
    "env.num_envs=2",
    "iterations=5",
    "rollout_size=4",
    "eval.every=0",
    "eval.test_tasks=0",
    "eval.train_tasks=0",
    "algo.name=digirl",
    "algo.actor_steps=2",
    "algo.critic_steps=2",
    "algo.instruct_critic_steps=2",
    "algo.batch_size=4",
    "algo.critic.dim=32",
    "algo.critic.layers=1",
    "algo.critic.heads=2",
    "log.tensorboard=false",
    "policy.hf.lora_r=4",
    "policy.hf.max_new_tokens=12",
]


@pytest.mark.slow
def test_kill9_during_a_lora_run_resumes(tiny_vlm, tmp_path):
    base = tiny_vlm("qwen2_vl")
    run = tmp_path / "run"
    env = dict(os.environ, DIGIRL_NO_PROGRESS="1", HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "digirl", "train", str(run), *_hf(base), *RESUME_ARGS]

    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.time() + 600
    while time.time() < deadline and proc.poll() is None:
        ck = latest_checkpoint(run) if (run / "checkpoints" / "LATEST").exists() else None
        if ck is not None and load_checkpoint(ck)[0].iteration >= 2:
            time.sleep(0.5)
            break
        time.sleep(0.1)
    assert proc.poll() is None, proc.stdout.read().decode()[-2000:] if proc.stdout else "finished too early"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    killed_at = load_checkpoint(latest_checkpoint(run))[0].iteration
    assert 2 <= killed_at < 5
    ck = latest_checkpoint(run)
    assert (ck / "policy" / "adapter_model.safetensors").is_file() and not (ck / "policy" / "model.safetensors").exists()

    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # same command: resumes
    out = proc.communicate(timeout=600)[0].decode()
    assert proc.returncode == 0, out[-3000:]
    assert f"online iteration {killed_at}" in out  # it resumed, it did not start over
    state = load_checkpoint(latest_checkpoint(run))[0]
    assert state.iteration == 5
    trajs = TrajectoryStore(run / "data", create=False).load(load_images=False)
    ids = [t.traj_id for t in trajs]
    assert len(ids) == len(set(ids))
    assert Counter(int(t.metadata["iteration"]) for t in trajs) == {i: 4 for i in range(5)}
    assert json.loads((run / "policy" / "policy.json").read_text())["lora"] is True
