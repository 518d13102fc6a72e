"""SFT, Filtered BC and DigiRL run unchanged on kind=autoui (a tiny Auto-UI T5 on the toy env, CPU)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
pytest.importorskip("transformers")

from digirl.cli.main import main
from digirl.envs.toy import ToyEnv
from digirl.policies.autoui import AutoUIPolicy
from digirl.policies.registry import load_policy
from digirl.testing.tiny_autoui import build_tiny_autoui, build_tiny_blip2

pytestmark = pytest.mark.slow  # ~50 s on 2 shared cores: 150 SFT steps, then two short training runs

TOY = ["env.id=digirl/toy-mixed-v0", "env.runner=inline", "env.num_envs=2", "policy.device=cpu"]


def _json(capsys: Any) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    return out


@pytest.fixture(scope="module")
def sft_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str], dict[str, Any]]:
    root = tmp_path_factory.mktemp("autoui-train")
    model = build_tiny_autoui(root / "tiny", image_dim=24)
    blip = build_tiny_blip2(root / "blip2", hidden=24)
    pol = ["policy.kind=autoui", f"policy.init={model}", f"policy.autoui.vision_encoder={blip}"]
    sft = ["sft.demos=16", "sft.steps=150", "sft.batch_size=16", "sft.lr=3e-3"]
    # module fixtures cannot take capsys; the result is read back from the saved policy instead
    assert main(["sft", str(root / "sft"), *TOY, *pol, *sft]) == 0
    return root, [f"policy.autoui.vision_encoder={blip}"], {"policy": root / "sft" / "policy"}


@pytest.mark.learning
def test_sft_teaches_the_auto_ui_action_format(sft_run: Any) -> None:
    _, _, out = sft_run
    policy = load_policy(out["policy"])
    assert isinstance(policy, AutoUIPolicy)
    env = ToyEnv(mode="mixed")
    obs = [env.reset(seed=1000 + i)[0] for i in range(24)]
    acts = policy.act(obs, greedy=True)
    valid = sum(a.action.is_valid for a in acts) / len(acts)
    assert valid >= 0.9, [a.text for a in acts if not a.action.is_valid][:3]  # measured 1.0 (random init: 0.0)


def test_filtered_bc_and_digirl_run_unchanged(sft_run: Any, capsys: Any) -> None:
    root, vision, out = sft_run
    pol = f"policy.init={out['policy']}"
    assert main(["collect", str(root / "offline"), *TOY, pol, "trajectories=4", "--json"]) == 0
    assert _json(capsys)["trajectories"] == 4
    short = [
        "mode=off2on",
        f"offline_dataset={root / 'offline'}",
        "iterations=1",
        "rollout_size=2",
        "eval.test_tasks=0",
        "eval.train_tasks=2",
        "algo.batch_size=8",
        "algo.offline_actor_steps=2",
        "algo.actor_steps=2",
        "algo.offline_critic_steps=2",
        "algo.critic_steps=2",
        "algo.instruct_critic_steps=2",
        "log.tensorboard=false",
        "--json",
    ]
    for algo in ("filtered_bc", "digirl"):
        run = root / algo
        assert main(["train", str(run), *TOY, pol, f"algo.name={algo}", *short]) == 0
        res = _json(capsys)
        assert res["iterations"] == 1 and res["final"][0]["episodes"] == 2
        saved = load_policy(run / "policy")
        assert isinstance(saved, AutoUIPolicy) and (run / "policy" / "model.safetensors").is_file()
    # the trained policy evaluates from its folder (the vision encoder path travels in policy.json)
    assert (
        main(["eval", str(root / "digirl" / "policy"), *TOY, *vision, "eval.test_tasks=0", "eval.train_tasks=2", "--json"]) == 0
    )
    assert _json(capsys)["train"]["episodes"] == 2
