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


def _outcome_chain() -> TDBatch:
    """s0 → s1 → s2 (reward 1 on the last, done). Each state has one executed proposal: at s0 a shortcut that
    succeeds at once (reward 1, done), at s1 a wrong turn that ends the episode without reward; at s0 a second
    proposal that was never executed (invalid, say)."""
    data = _chain(3)
    eye = torch.eye(3)
    f = torch.cat([eye[:1], eye[1:2] * 0.5, eye[2:] * 0.5 + eye[:1] * 0.5, eye[1:2], eye[2:]])
    pairs = data.states.index(torch.tensor([0, 0, 0, 1, 1])).with_action(
        torch.tensor([1, 2, 3, 1, 2]), torch.zeros(5, 8, dtype=torch.long), f
    )
    data.pairs = pairs
    data.cands = torch.tensor([[0, 1, 2], [3, 4, -1]])
    data.outcome = torch.tensor([[-1, 0, -1], [-1, 1, -1]])  # rows of next_states; a_data and unexecuted: -1
    data.next_states = data.states.index(torch.tensor([2, 0]))  # where they led (ended: the state is not read)
    data.outcome_reward = torch.tensor([1.0, 0.0])
    data.outcome_done = torch.tensor([1.0, 1.0])
    return data


def test_outcome_loss_is_td_on_the_executed_proposals():
    cfg = DigiQConfig(critic_hidden=8, outcome_td=1.0)
    critic = DigiQCritic(3, 3, cfg, gamma=0.5, device=torch.device("cpu"))
    data = _outcome_chain()
    data.outcome_done = torch.tensor([1.0, 0.0])  # let the second bootstrap, to check γ·V̄(s′)
    got = critic._outcome_loss(data, torch.tensor([0, 1]))
    with torch.no_grad():
        v_next = torch.sigmoid(critic.target.v(data.next_states.index(torch.tensor([1])))).max(0).values
        y = torch.cat([torch.tensor([1.0]), 0.5 * v_next])
        q = torch.sigmoid(critic.net.q(data.pairs.index(torch.tensor([1, 4]))))
        want = ((q - y) ** 2).mean(-1).sum()
    assert got is not None and float(got.detach()) == pytest.approx(float(want), rel=1e-6)
    data.outcome = torch.full_like(data.outcome, -1)
    assert critic._outcome_loss(data, torch.tensor([0, 1])) is None  # nothing executed: no term


@pytest.mark.slow
def test_outcome_td_ranks_the_proposals_of_a_state_by_what_they_did():
    torch.manual_seed(0)
    # cross-entropy: with squared error a twin head pushed into the sigmoid's flat end recovers only slowly
    cfg = DigiQConfig(critic_hidden=32, critic_lr=1e-2, tau=0.2, polyak_every=1, time_feature=False, outcome_td=1.0, loss="ce")
    critic = DigiQCritic(3, 3, cfg, gamma=0.5, device=torch.device("cpu"))
    data = _outcome_chain()
    m = critic.fit(data, 1500, np.random.default_rng(0))
    assert "critic/outcome_td_loss" in m
    q = critic.q_of(data.pairs)
    # s0: the shortcut (1) above the dataset action (γ·V(s1) = .5); s1: the dataset action (1) above the wrong turn (0)
    np.testing.assert_allclose(q[[0, 1, 3, 4]], [0.5, 1.0, 1.0, 0.0], atol=0.05)


def test_max_backup_takes_the_best_executed_candidate():
    cfg = DigiQConfig(critic_hidden=8, outcome_td=1.0, outcome_backup="max")
    critic = DigiQCritic(3, 3, cfg, gamma=0.5, device=torch.device("cpu"))
    data = _outcome_chain()
    y_data = torch.tensor([0.2, 0.99])
    got = critic._max_over_executed(data, torch.tensor([0, 1]), y_data)
    with torch.no_grad():
        q = torch.sigmoid(critic.target.q(data.pairs.index(torch.tensor([1, 4])))).max(0).values
    # s0: its one executed proposal (pair 1) against a_data's 0.2; s1: a_data's 0.99 stays unless the proposal beats it
    assert got.tolist() == pytest.approx([max(0.2, float(q[0])), max(0.99, float(q[1]))])


@pytest.mark.slow
def test_max_backup_values_a_state_by_its_best_executed_action():
    out = {}
    for backup in ("data", "max"):
        torch.manual_seed(0)
        cfg = DigiQConfig(critic_hidden=32, critic_lr=1e-2, tau=0.2, polyak_every=1, time_feature=False, outcome_td=1.0,
                          outcome_backup=backup, loss="ce")  # fmt: skip
        critic = DigiQCritic(3, 3, cfg, gamma=0.5, device=torch.device("cpu"))
        data = _outcome_chain()
        critic.fit(data, 1500, np.random.default_rng(0))
        out[backup] = critic.v_of(data.states.index(torch.tensor([0, 1])))
    # V(s0): the dataset action's γ·V(s1) = .5 as released; the shortcut's 1 with the max backup
    np.testing.assert_allclose(out["data"], [0.5, 1.0], atol=0.05)
    np.testing.assert_allclose(out["max"], [1.0, 1.0], atol=0.05)


def test_a_max_backup_without_executed_proposals_is_an_error():
    with pytest.raises(ValueError, match="outcome_td > 0"):
        DigiQConfig(outcome_backup="max")
    with pytest.raises(ValueError, match="outcome_td"):
        DigiQConfig(outcome_td=-1.0)
    assert DigiQConfig(outcome_backup="max", outcome_td=1.0).outcome_backup == "max"
