"""bc_update: the loss it reports and its refusal to step on a non-finite loss; how many steps an update takes."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pytest
import torch

from digirl.algorithms.base import AlgoConfig, NonFiniteLoss, Sample, actor_step_count, bc_update
from digirl.algorithms.digiq.config import DigiQConfig
from digirl.config.core import load_config
from digirl.core.actions import Action
from digirl.core.errors import ConfigError
from digirl.core.types import Observation
from digirl.policies.config import EncoderConfig
from digirl.training.config import TrainConfig


class _ScalarPolicy:
    """log π(a|s) = θ · touch x for every valid action; NaN for taps at x = 0.9 (a poisoned sample)."""

    def __init__(self) -> None:
        self.theta = torch.nn.Parameter(torch.tensor(1.0))

    def parameters(self) -> Iterator[torch.nn.Parameter]:
        yield self.theta

    def train(self, mode: bool = True) -> None:
        pass

    def log_prob_with_mask(
        self, observations: Sequence[Observation], actions: Sequence[Action]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        x = torch.tensor([a.touch[0] if a.touch is not None else 0.0 for a in actions], dtype=torch.float64)
        lp = self.theta.double() * x
        lp = torch.where(x == 0.9, torch.full_like(lp, float("nan")), lp)
        return lp, torch.tensor([a.is_valid for a in actions])


def _samples(xs: Sequence[float]) -> list[Sample]:
    obs = Observation(screenshot=np.zeros((4, 4, 3), np.uint8), instruction="t")
    return [Sample(obs, Action.tap(x, 0.5)) for x in xs]


def test_reported_loss_is_the_weighted_mean_negative_log_prob():
    pol = _ScalarPolicy()
    opt = torch.optim.SGD(list(pol.parameters()), lr=0.0)
    # one sample drawn per micro-batch, two micro-batches per step: the loss of each is -θ·x = -0.5
    out = bc_update(
        pol, opt, _samples([0.5]), steps=3, batch_size=1, grad_accum=2, max_grad_norm=1.0, rng=np.random.default_rng(0)
    )
    assert out["train/actor_loss"] == pytest.approx(-0.5)
    assert out["train/actor_unexpressible"] == 0.0


def test_non_finite_loss_raises_before_the_optimizer_steps():
    pol = _ScalarPolicy()
    opt = torch.optim.SGD(list(pol.parameters()), lr=1.0)
    with pytest.raises(NonFiniteLoss, match="actor loss is nan"):
        bc_update(pol, opt, _samples([0.9]), steps=2, batch_size=1, grad_accum=2, max_grad_norm=1.0, rng=np.random.default_rng(0))
    assert float(pol.theta) == 1.0  # no step was taken


class _PoisonedAt(_ScalarPolicy):
    """log π = θ · x, NaN on the ``bad``-th call (1-based)."""

    def __init__(self, bad: int, device: str) -> None:
        self.theta = torch.nn.Parameter(torch.tensor(1.0, device=device))
        self.calls = 0
        self.bad = bad

    def log_prob_with_mask(
        self, observations: Sequence[Observation], actions: Sequence[Action]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        self.calls += 1
        x = torch.tensor([a.touch[0] if a.touch is not None else 0.0 for a in actions], dtype=torch.float64)
        lp = self.theta.double() * x.to(self.theta.device)
        if self.calls == self.bad:
            lp = lp * float("nan")
        return lp, torch.tensor([a.is_valid for a in actions], device=self.theta.device)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_gpu_fused_path_reads_losses_a_step_late_but_never_steps_on_a_non_finite_one():
    def run(device: str, fused: bool, steps: int, bad: int = 0) -> tuple[_PoisonedAt, dict[str, float]]:
        pol = _PoisonedAt(bad, device)
        opt = torch.optim.AdamW(list(pol.parameters()), lr=0.1, fused=fused or None)
        rng = np.random.default_rng(0)
        out = bc_update(pol, opt, _samples([0.2, 0.5, 0.7]), steps=steps, batch_size=2, grad_accum=1, max_grad_norm=10.0, rng=rng)
        return pol, out

    ref, ref_out = run("cpu", False, 4)
    gpu, gpu_out = run("cuda", True, 4)
    assert gpu_out == pytest.approx(ref_out) and float(gpu.theta) == pytest.approx(float(ref.theta), abs=1e-6)
    one, _ = run("cpu", False, 1)
    poisoned = _PoisonedAt(2, "cuda")
    opt = torch.optim.AdamW(list(poisoned.parameters()), lr=0.1, fused=True)
    with pytest.raises(NonFiniteLoss):
        bc_update(
            poisoned,
            opt,
            _samples([0.2, 0.5, 0.7]),
            steps=4,
            batch_size=2,
            grad_accum=1,
            max_grad_norm=10.0,
            rng=np.random.default_rng(0),
        )
    # step 1 applied, step 2 (non-finite) skipped on the device, step 3 computed but never applied
    assert poisoned.calls == 3 and float(poisoned.theta) == pytest.approx(float(one.theta), abs=1e-6)
    assert not hasattr(opt, "found_inf")


def test_actor_steps_are_fixed_unless_epochs_are_set():
    cfg = AlgoConfig(actor_steps=40, offline_actor_steps=200, batch_size=64)
    assert actor_step_count(cfg, "online", _samples([0.5] * 10)) == 40
    assert actor_step_count(cfg, "offline", _samples([0.5] * 10)) == 200


@pytest.mark.parametrize(
    ("n", "epochs", "grad_accum", "phase", "want"),
    [
        (49, 20.0, 1, "offline", 20),  # fewer samples than a batch: one step sees them all
        (640, 20.0, 1, "offline", 200),  # 10 batches × 20 passes
        (650, 20.0, 1, "offline", 200),  # ceil(203.1) capped at offline_actor_steps
        (640, 2.0, 1, "online", 20),
        (640, 20.0, 1, "online", 40),  # capped at actor_steps
        (640, 2.0, 2, "online", 10),  # a step takes two micro-batches
        (650, 0.5, 1, "online", 6),  # ceil(5.08)
        (1, 0.01, 1, "online", 1),  # at least one step
    ],
)
def test_actor_epochs_scale_steps_with_the_valid_samples_up_to_the_fixed_count(n, epochs, grad_accum, phase, want):
    cfg = AlgoConfig(actor_steps=40, offline_actor_steps=200, batch_size=64, grad_accum=grad_accum, actor_epochs=epochs)
    assert actor_step_count(cfg, phase, _samples([0.5] * n)) == want


def test_actor_epochs_count_only_valid_samples():
    cfg = AlgoConfig(actor_steps=40, batch_size=64, actor_epochs=1.0)
    obs = _samples([0.5])[0].observation
    invalid = [Sample(obs, Action.invalid("bad")) for _ in range(200)]
    assert actor_step_count(cfg, "online", _samples([0.5] * 128) + invalid) == 2
    assert actor_step_count(cfg, "online", invalid) == 40  # nothing to clone: bc_update returns at once


@pytest.mark.parametrize("bad", [0.0, -1.0])
def test_actor_epochs_must_be_positive(bad):
    with pytest.raises(ValueError, match="actor_epochs"):
        AlgoConfig(actor_epochs=bad)


def test_critic_encoders_reject_the_policy_only_screen_match():
    # the critic's encoder has keys of its own: the policy-only option is not one of them
    with pytest.raises(ConfigError, match=r"unknown config key 'algo\.critic\.screen_match'"):
        load_config(TrainConfig, overrides=["algo.critic.screen_match=true"])
    with pytest.raises(ValueError, match=r"algo\.critic must be a CriticEncoderConfig"):
        AlgoConfig(critic=EncoderConfig(screen_match=True))  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"unknown config key 'algo\.digiq\.encoder\.screen_match'"):
        load_config(TrainConfig, overrides=["algo.digiq.encoder.screen_match=true"])
    with pytest.raises(ValueError, match=r"algo\.digiq\.encoder must be a CriticEncoderConfig"):
        DigiQConfig(encoder=EncoderConfig(screen_match=True))  # type: ignore[arg-type]


def test_bc_update_reports_its_step_count():
    pol = _ScalarPolicy()
    opt = torch.optim.SGD(list(pol.parameters()), lr=0.0)
    out = bc_update(
        pol, opt, _samples([0.5]), steps=3, batch_size=1, grad_accum=1, max_grad_norm=1.0, rng=np.random.default_rng(0)
    )
    assert out["train/actor_steps"] == 3.0
