"""Digi-Q's critic: in-sample TD recovers the discounted values of a small chain; Polyak targets; checkpoints."""

import numpy as np
import pytest
import torch

from digirl.algorithms.critics import ActionCritic
from digirl.algorithms.digiq.config import DigiQConfig
from digirl.algorithms.digiq.critic import CriticInputs, DigiQCritic, TDBatch


def _chain(n_states: int = 4) -> TDBatch:
    """A chain s0 → s1 → s2 → s3 with reward 1 on the last transition (done). One-hot φ and f."""
    eye = torch.eye(n_states)
    states = CriticInputs(
        goal=torch.zeros(n_states, 24, dtype=torch.long),
        prev_kind=torch.zeros(n_states, dtype=torch.long),
        prev_text=torch.zeros(n_states, 8, dtype=torch.long),
        time=torch.zeros(n_states),
        phi=eye,
    )
    t = n_states - 1
    return TDBatch(
        states=states,
        s=torch.arange(t),
        s_next=torch.arange(1, n_states),
        kind=torch.ones(t, dtype=torch.long),
        text=torch.zeros(t, 8, dtype=torch.long),
        f=eye[:t],
        reward=torch.tensor([0.0] * (t - 1) + [1.0]),
        done=torch.tensor([0.0] * (t - 1) + [1.0]),
    )


@pytest.mark.slow
def test_td_recovers_discounted_values_of_a_chain():
    torch.manual_seed(0)
    cfg = DigiQConfig(
        critic_steps=0, critic_batch=3, critic_hidden=32, critic_lr=1e-2, tau=0.2, polyak_every=1, time_feature=False
    )
    critic = DigiQCritic(4, 4, cfg, gamma=0.5, device=torch.device("cpu"))
    data = _chain()
    m = critic.fit(data, 1500, np.random.default_rng(0))
    assert m["critic/polyak_every"] == 1.0
    q = critic.q_of(data.states.index(data.s).with_action(data.kind, data.text, data.f))
    v = critic.v_of(data.states.index(data.s))
    # Q(s2) = 1, Q(s1) = γ·V(s2) = .5, Q(s0) = .25; V = Q in-sample
    np.testing.assert_allclose(q, [0.25, 0.5, 1.0], atol=0.05)
    np.testing.assert_allclose(v, [0.25, 0.5, 1.0], atol=0.05)
    # the target networks followed the online ones
    for a, b in zip(critic.target.parameters(), critic.net.parameters()):
        assert torch.allclose(a, b, atol=0.05)


def test_state_dict_round_trip_and_protocol():
    cfg = DigiQConfig(critic_hidden=16)
    a = DigiQCritic(4, 4, cfg, gamma=0.9, device=torch.device("cpu"))
    a.fit(_chain(), 5, np.random.default_rng(0))
    b = DigiQCritic(4, 4, cfg, gamma=0.9, device=torch.device("cpu"))
    b.load_state_dict(a.state_dict())
    x = _chain().states
    assert np.array_equal(a.v_of(x), b.v_of(x))
    assert isinstance(a, ActionCritic)
    with pytest.raises(RuntimeError, match="no feature backend"):
        a.value([])


@pytest.mark.slow
def test_conservative_penalty_pushes_down_untried_candidates():
    torch.manual_seed(0)
    data = _chain()
    # every state also has an untried candidate (a fresh one-hot) whose Q the penalty should lower
    eye = torch.eye(8)
    pairs = data.states.index(torch.tensor([0, 1, 2, 0, 1, 2])).with_action(
        torch.ones(6, dtype=torch.long), torch.zeros(6, 8, dtype=torch.long), torch.cat([eye[:3, :4], eye[3:6, :4] * 0 + 0.5])
    )
    data.pairs, data.cands = pairs, torch.tensor([[0, 3], [1, 4], [2, 5]])
    out = {}
    for w in (0.0, 1.0):
        torch.manual_seed(0)
        c = DigiQCritic(
            4,
            4,
            DigiQConfig(critic_hidden=32, critic_lr=1e-2, conservative=w, time_feature=False),
            gamma=0.5,
            device=torch.device("cpu"),
        )
        m = c.fit(data, 400, np.random.default_rng(0))
        out[w] = c.q_of(pairs.index(torch.tensor([3, 4, 5]))).mean()
        assert ("critic/conservative_gap" in m) == (w > 0)
    assert out[1.0] < out[0.0]


def _noop_chain() -> TDBatch:
    """s0 → s1 → s2 (reward 1 on the last, done); at s0 and s1 a second candidate is a labelled no-op."""
    data = _chain(3)
    eye = torch.eye(3)
    pairs = data.states.index(torch.tensor([0, 0, 1, 1])).with_action(
        torch.tensor([1, 2, 1, 2]), torch.zeros(4, 8, dtype=torch.long), torch.cat([eye[:1], eye[2:], eye[1:2], eye[2:]])
    )
    data.pairs = pairs
    data.cands = torch.tensor([[0, 1], [2, 3]])
    data.noop = torch.tensor([[False, True], [False, True]])
    return data


def test_noop_loss_is_td_to_gamma_v_on_live_states_only():
    cfg = DigiQConfig(critic_hidden=8, noop_td=1.0)
    critic = DigiQCritic(3, 3, cfg, gamma=0.5, device=torch.device("cpu"))
    data = _noop_chain()
    got = critic._noop_loss(data, torch.tensor([0, 1]))
    # only s0's no-op: s1's dataset step ended the episode; target γ·max-twin σ(V̄(s0))
    with torch.no_grad():
        y = 0.5 * torch.sigmoid(critic.target.v(data.states.index(torch.tensor([0])))).max(0).values
        q = torch.sigmoid(critic.net.q(data.pairs.index(torch.tensor([1]))))
        want = ((q - y) ** 2).mean(-1).sum()
    assert got is not None and float(got) == pytest.approx(float(want), rel=1e-6)
    assert critic._noop_loss(data, torch.tensor([1])) is None  # s1 is terminal: nothing to ground


@pytest.mark.slow
def test_noop_td_grounds_an_untried_action_at_gamma_v():
    torch.manual_seed(0)
    cfg = DigiQConfig(critic_hidden=32, critic_lr=1e-2, tau=0.2, polyak_every=1, time_feature=False, noop_td=1.0)
    critic = DigiQCritic(3, 3, cfg, gamma=0.5, device=torch.device("cpu"))
    data = _noop_chain()
    m = critic.fit(data, 1500, np.random.default_rng(0))
    assert "critic/noop_td_loss" in m
    q = critic.q_of(data.pairs)
    # Q(s0, a) = γ·V(s1) = .5; Q(s0, no-op) = γ·V(s0) = .25; Q(s1, a) = 1
    np.testing.assert_allclose(q[[0, 1, 2]], [0.5, 0.25, 1.0], atol=0.05)
