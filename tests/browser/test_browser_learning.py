"""The default policy learns a MiniWoB++ task in a real Chromium: SFT from solver demos, then
online Filtered BC through ``BrowserVectorEnv`` (the README's recipe, shortened).

click-link ("Click on the link X." among a paragraph's links): 4 demos give a policy that picks
the right link about half the time; 256 online episodes must raise held-out success clearly
(measured with seed 0 after 256 episodes: +28, +28 and +38 points in three runs; pages run
asynchronously, so a run is not bit-reproducible, and the assertion asks for +15).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from digirl.config.core import load_config
from digirl.training.config import SFTRunConfig, TrainConfig
from tests.browser.conftest import require_miniwob

ENV = ["env.id=digirl/miniwob.click-link-v0", "env.num_envs=4"]


@pytest.mark.browser
@pytest.mark.learning
@pytest.mark.slow
def test_filtered_bc_learns_click_link_from_demos_and_online_rl(tmp_path: Path) -> None:
    require_miniwob()
    from digirl.training.loop import train
    from digirl.training.sft import sft

    sft_cfg = load_config(SFTRunConfig, overrides=[*ENV, "sft.demos=4", "sft.steps=30", "seed=0"])
    sft(sft_cfg, tmp_path / "sft")
    cfg = load_config(
        TrainConfig,
        overrides=[
            *ENV,
            "mode=online",
            f"policy.init={tmp_path / 'sft' / 'policy'}",
            "algo.name=filtered_bc",
            "iterations=8",
            "rollout_size=32",
            "eval.test_tasks=50",
            "eval.train_tasks=0",
            "eval.every=8",
            "log.tensorboard=false",
            "seed=0",
        ],
    )
    history = train(cfg, tmp_path / "run")["history"]
    evals = [h for h in history if "eval/test_success_rate" in h]
    before, after = evals[0]["eval/test_success_rate"], evals[-1]["eval/test_success_rate"]
    assert evals[0]["online_trajectories"] == 0 and evals[-1]["online_trajectories"] == 256
    assert after >= before + 0.15, f"Filtered BC did not learn click-link: {before:.2f} -> {after:.2f}"
