"""One config class per algorithm, registered with it; the ``algo`` section built from them; every preset still loads."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from digirl.algorithms.configs import (
    ActorConfig,
    AlgoConfig,
    BranchConfig,
    CriticEncoderConfig,
    DigiQAlgoConfig,
    DigiRLConfig,
    FilteredBCConfig,
    GRPOConfig,
    PolicyGradientConfig,
    PPOConfig,
)
from digirl.algorithms.digirl import DigiRL
from digirl.algorithms.filtered_bc import FilteredBC
from digirl.algorithms.registry import algorithm_config_class, make_algorithm
from digirl.config.core import load_config
from digirl.config.sources import list_presets
from digirl.core.errors import ConfigError
from digirl.experiments.digiq_bench import DigiQBenchConfig
from digirl.experiments.table1 import Table1Config
from digirl.policies.config import EncoderConfig
from digirl.policies.default import DefaultPolicy, PolicyNetConfig
from digirl.training.config import SFTRunConfig, TrainConfig

OWN = {
    "filtered_bc": FilteredBCConfig,
    "digirl": DigiRLConfig,
    "digiq": DigiQAlgoConfig,
    "grpo": GRPOConfig,
    "ppo": PPOConfig,
}


def _names(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def test_each_algorithm_is_registered_with_its_own_config_class():
    for name, cls in OWN.items():
        assert algorithm_config_class(name) is cls
        assert issubclass(cls, ActorConfig)
    assert "lam" not in _names(FilteredBCConfig) and "fbc_quantile" not in _names(DigiRLConfig)
    assert "critic" not in _names(DigiQAlgoConfig) and "digiq" not in _names(DigiRLConfig)


def test_the_algo_section_is_every_algorithms_options_in_the_order_they_always_had():
    keys = _names(AlgoConfig)
    actor = _names(ActorConfig)
    fbc = [k for k in _names(FilteredBCConfig) if k not in actor]
    digirl = [k for k in _names(DigiRLConfig) if k not in actor]
    pg = [k for k in _names(PolicyGradientConfig) if k not in actor]
    grpo = [k for k in _names(GRPOConfig) if k not in actor + pg]
    ppo = [k for k in _names(PPOConfig) if k not in actor + pg + digirl]  # ``critic`` is DigiRL's and PPO's
    branch = [k for k in _names(BranchConfig) if k not in actor + digirl]  # its Q critic's encoder is ``critic`` too
    # saved config.yaml files keep their key order; issue 45's algorithms' keys come after the older ones
    assert keys == ["name", *actor, *fbc, *digirl, "digiq", *pg, *grpo, *ppo, *branch]
    assert keys[:10] == ["name", "lr", "batch_size", "grad_accum", "max_grad_norm", "actor_steps", "offline_actor_steps",
                         "actor_epochs", "gamma", "fbc_quantile"]  # fmt: skip
    section = AlgoConfig()
    for cls in OWN.values():  # same defaults in the section as in each algorithm's class
        own = cls()
        for k in _names(cls):
            assert getattr(section, k) == getattr(own, k), (cls.__name__, k)


def test_an_algorithm_gets_only_its_own_options():
    pol = DefaultPolicy(PolicyNetConfig(dim=32, layers=1))
    section = load_config(
        TrainConfig, overrides=["algo.name=filtered_bc", "algo.fbc_quantile=0.5", "algo.lr=0.01", "algo.lam=0.25"]
    ).algo
    algo = make_algorithm(pol, section)
    assert isinstance(algo, FilteredBC) and type(algo.cfg) is FilteredBCConfig
    assert (algo.cfg.fbc_quantile, algo.cfg.lr) == (0.5, 0.01) and not hasattr(algo.cfg, "lam")
    cfg = DigiRLConfig(critic=CriticEncoderConfig(dim=32, layers=1), lam=0.25)
    algo = make_algorithm(pol, cfg)  # dispatch by the config's type
    assert isinstance(algo, DigiRL) and algo.cfg is cfg
    with pytest.raises(ConfigError, match="ActorConfig is the config of no algorithm"):
        make_algorithm(pol, ActorConfig())


def test_overrides_parse_as_before_and_bad_values_name_the_key():
    cfg = load_config(TrainConfig, overrides=["algo.advantage=released", "algo.value_loss=mse", "algo.critic.dim=32"])
    assert (cfg.algo.advantage, cfg.algo.value_loss, cfg.algo.critic.dim) == ("released", "mse", 32)
    assert isinstance(cfg.algo.critic, CriticEncoderConfig)
    with pytest.raises(ConfigError, match=r"algo\.advantage must be one of dr, mc, released, got 'gae'"):
        load_config(TrainConfig, overrides=["algo.advantage=gae"])
    with pytest.raises(ConfigError, match=r"algo\.value_loss must be one of bce, mse"):
        load_config(TrainConfig, overrides=["algo.value_loss=huber"])
    with pytest.raises(ConfigError, match=r"algo\.lam must be in \[0, 1\]"):
        load_config(TrainConfig, overrides=["algo.lam=2"])
    with pytest.raises(ConfigError, match=r"algo\.name 'sac' is not registered"):
        load_config(TrainConfig, overrides=["algo.name=sac"])


def test_the_critic_encoder_builds_the_policy_encoders_architecture():
    c = CriticEncoderConfig(dim=32, layers=1, frame_stack=2)
    enc = c.encoder()
    assert isinstance(enc, EncoderConfig) and not enc.screen_match
    assert (enc.dim, enc.layers, enc.frame_stack) == (32, 1, 2)
    assert c.features == enc.features
    # Pixel regions are a policy option only: critics keep their screenshot CNN.
    assert set(_names(CriticEncoderConfig)) == set(_names(EncoderConfig)) - {"screen_match", "pixel_regions"}
    with pytest.raises(ValueError, match="multiple of heads"):
        CriticEncoderConfig(dim=30, heads=4)


def _preset_class(name: str) -> type:
    if name.startswith(("table1-", "bench-online")):  # digirl bench online runs the Table 1 driver
        return Table1Config
    if name.startswith("digiq-"):
        return DigiQBenchConfig
    if name.startswith("sft-"):
        return SFTRunConfig
    return TrainConfig


def test_every_preset_still_loads_and_its_train_overrides_apply_to_every_algorithm():
    presets = [p.name for p in list_presets()]
    assert {"digirl-general", "fbc-general", "table1-smoke", "digiq-smoke"} <= set(presets)
    for name in presets:
        cls = _preset_class(name)
        extra = ["offline_dataset=data"] if cls is TrainConfig else []
        cfg = load_config(cls, preset=name, overrides=extra)
        if cls is TrainConfig:
            assert cfg.algo.name == ("filtered_bc" if name.startswith("fbc") else "digirl")
        lists = [getattr(cfg, k) for k in ("extra", "digiq_extra") if hasattr(cfg, k)]
        for algo in OWN:  # a bench hands its `extra` overrides to every method's train run
            for overrides in lists:
                own = ["group_size=2"] if algo == "grpo" else []  # GRPO's groups: the run's option, an error unset
                train = load_config(TrainConfig, overrides=[*overrides, f"algo.name={algo}", "mode=online", *own])
                make = algorithm_config_class(algo).of(train.algo)
                assert type(make) is OWN[algo]


def test_the_section_converts_to_each_algorithms_config_without_losing_a_value():
    section = load_config(TrainConfig, overrides=["algo.critic.layers=1", "algo.digiq.candidates=5", "algo.gamma=0.9"]).algo
    dq = DigiQAlgoConfig.of(section)
    assert (dq.digiq.candidates, dq.gamma) == (5, 0.9)
    dr = DigiRLConfig.of(section)
    assert dr.critic.layers == 1 and dr.critic is section.critic and dr.gamma == 0.9


def test_value_losses_come_from_the_registry():
    from digirl.algorithms.estimators import register_value_loss, value_loss, value_loss_names
    from digirl.algorithms.functional import bce_value_loss, mse_value_loss

    assert value_loss("bce") is bce_value_loss and value_loss("mse") is mse_value_loss
    logits, y = torch.tensor([0.0, 2.0]), torch.tensor([1.0, 0.0])
    register_value_loss("test_l1", lambda z, t: (torch.sigmoid(z) - t).abs().mean())
    try:
        assert "test_l1" in value_loss_names()
        assert float(value_loss("test_l1")(logits, y)) == pytest.approx((0.5 + float(torch.sigmoid(torch.tensor(2.0)))) / 2)
        assert load_config(TrainConfig, overrides=["algo.value_loss=test_l1"]).algo.value_loss == "test_l1"
    finally:
        from digirl.algorithms import estimators

        estimators._VALUE_LOSSES.pop("test_l1")
    with pytest.raises(KeyError, match="unknown value loss 'nope'"):
        value_loss("nope")
    assert np.isfinite(float(value_loss("bce")(logits, y)))
