"""The policy registry: one build/load path for every kind; saved folders say their kind."""

from __future__ import annotations

import json

import pytest
import torch

from digirl.config.core import load_config
from digirl.core.errors import ConfigError, DataError
from digirl.envs.toy import ToyEnv
from digirl.policies.base import ActingPolicy, Policy, is_trainable
from digirl.policies.config import PolicyConfig
from digirl.policies.default import DefaultPolicy
from digirl.policies.registry import build_policy, load_policy, policy_kinds, register_policy_kind, saved_policy_kind

SMALL = ["kind=default", "device=cpu", "default.dim=32", "default.layers=1", "default.heads=2"]


def _cfg(*overrides: str) -> PolicyConfig:
    return load_config(PolicyConfig, overrides=[*SMALL, *overrides])


def test_build_fresh_then_load_saved_folder_by_its_kind(tmp_path):
    p = build_policy(_cfg(), seed=0)
    assert isinstance(p, DefaultPolicy) and isinstance(p, Policy) and is_trainable(p)
    assert p.cfg.dim == 32
    p.save(tmp_path / "pol")
    assert saved_policy_kind(tmp_path / "pol") == "default"
    q = build_policy(_cfg(f"init={tmp_path / 'pol'}", "default.dim=64"), seed=1)  # the saved config wins
    assert isinstance(q, DefaultPolicy) and q.cfg.dim == 32
    env = ToyEnv(mode="mixed")
    obs = [env.reset(seed=i)[0] for i in range(3)]
    acts = [o.action for o in p.act(obs, greedy=True)]
    torch.testing.assert_close(p.log_prob(obs, acts), q.log_prob(obs, acts))
    assert isinstance(load_policy(tmp_path / "pol"), DefaultPolicy)


def test_clear_errors(tmp_path):
    with pytest.raises(ConfigError, match=r"policy\.kind 'nope' is not registered"):
        _cfg("kind=nope")
    with pytest.raises(DataError, match="no such folder"):
        build_policy(_cfg(f"init={tmp_path / 'missing'}"), seed=0)
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="not a saved policy folder"):
        build_policy(_cfg(f"init={tmp_path / 'empty'}"), seed=0)
    with pytest.raises(DataError, match="missing"):
        load_policy(tmp_path / "empty")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "policy.json").write_text("{nope")
    with pytest.raises(DataError, match="not valid JSON"):
        load_policy(tmp_path / "bad")


def test_a_saved_kind_must_agree_with_an_explicit_kind(tmp_path):
    register_policy_kind("echo", "tests_policies_echo:Echo")
    try:
        assert "echo" in policy_kinds()
        build_policy(_cfg(), seed=0).save(tmp_path / "pol")
        with pytest.raises(ConfigError, match="holds a saved 'default' policy"):
            build_policy(_cfg("kind=echo", f"init={tmp_path / 'pol'}"), seed=0)
    finally:
        from digirl.policies import registry

        registry._KINDS.pop("echo")


def test_an_act_only_kind_is_an_acting_policy_but_not_trainable(tmp_path):
    class ActOnly:
        kind = "act-only"

        def act(self, observations, *, greedy=False, temperature=1.0):
            return []

        def save(self, path):
            (tmp_path / "x.json").write_text(json.dumps({"kind": self.kind}))

    a = ActOnly()
    assert isinstance(a, ActingPolicy) and not is_trainable(a)
