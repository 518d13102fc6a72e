"""DigiRL's critics (cross-fitting keeps a trajectory's own outcome out of the values that score it) and its update."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from digirl.algorithms.base import AlgoConfig
from digirl.algorithms.configs import CriticEncoderConfig
from digirl.algorithms.digirl import DigiRL
from digirl.algorithms.filtered_bc import FilteredBC
from digirl.core.types import Trajectory
from digirl.envs.vector import EpisodeJob, VectorRunner, env_factory
from digirl.policies.default import DefaultPolicy, PolicyNetConfig

SMALL = dict(critic_steps=15, instruct_critic_steps=15, critic_batch_size=32)


@pytest.fixture(scope="module")
def rollouts() -> tuple[DefaultPolicy, list[Trajectory]]:
    torch.manual_seed(0)
    pol = DefaultPolicy(PolicyNetConfig(dim=32, layers=1))
    with VectorRunner(env_factory("digirl/toy-tap-v0"), 1, mode="inline") as runner:
        trajs = list(runner.run(lambda obs: pol.act(obs), [EpisodeJob(None, i) for i in range(24)]))
    assert 0 < sum(t.success for t in trajs) < len(trajs)  # both outcomes present
    return pol, trajs


def _algo(pol: DefaultPolicy, folds: int) -> DigiRL:
    torch.manual_seed(1)  # identical critic initialisation in every call
    return DigiRL(pol, AlgoConfig(critic_folds=folds, critic=CriticEncoderConfig(dim=32, layers=1), **SMALL), seed=3)  # type: ignore[arg-type]


def _flip(t: Trajectory) -> Trajectory:
    """The same trajectory (same id and observations) with the opposite outcome."""
    last = dataclasses.replace(t.steps[-1], reward=0.0 if t.success else 1.0)
    return dataclasses.replace(t, steps=[*t.steps[:-1], last])


def test_folds_are_stable_and_critics_never_train_on_their_own_fold(rollouts):
    pol, trajs = rollouts
    algo = _algo(pol, 2)
    folds = [algo.fold(t) for t in trajs]
    assert set(folds) == {0, 1}
    assert folds == [algo.fold(dataclasses.replace(t)) for t in trajs]  # a function of traj_id only
    for f in (0, 1):
        assert all(algo.fold(t) != f for t in algo._training_set(trajs, f))
    assert _algo(pol, 1)._training_set(trajs, 0) == trajs


@pytest.mark.parametrize("folds", [1, 2])
def test_values_ignore_the_trajectorys_own_outcome_only_when_cross_fitted(rollouts, folds):
    pol, trajs = rollouts
    i = 0
    flipped = [*trajs]
    flipped[i] = _flip(trajs[i])
    assert flipped[i].success != trajs[i].success and flipped[i].traj_id == trajs[i].traj_id

    a, b = _algo(pol, folds), _algo(pol, folds)
    a._fit_critics(trajs, offline=False)
    b._fit_critics(flipped, offline=False)
    va, vb = a.step_values([trajs[i]])[0], b.step_values([flipped[i]])[0]
    ia, ib = a.instruction_values([trajs[i]]), b.instruction_values([flipped[i]])
    if folds == 2:  # the critics that score trajectory i never saw it: bit-identical values
        np.testing.assert_array_equal(va, vb)
        np.testing.assert_array_equal(ia, ib)
    else:  # in-sample (the paper): its own label moved its values
        assert not np.array_equal(va, vb)


def test_cross_fitted_update_logs_heldout_accuracy_and_round_trips(rollouts):
    pol, trajs = rollouts
    algo = _algo(pol, 2)
    m = algo.update(trajs, "online")
    for k in ("critic/step_acc_heldout", "critic/instruct_acc_heldout", "critic/step_acc", "train/kept_step_fraction"):
        assert 0.0 <= m[k] <= 1.0, k
    other = _algo(pol, 2)
    other.load_state_dict(algo.state_dict())
    np.testing.assert_array_equal(other.step_values(trajs[:3])[1], algo.step_values(trajs[:3])[1])
    with pytest.raises(ValueError, match="critic fold"):
        _algo(pol, 1).load_state_dict(algo.state_dict())


def test_loads_a_checkpoint_from_before_cross_fitting(rollouts):
    pol, trajs = rollouts
    old = _algo(pol, 1)
    new_format = old.state_dict()
    legacy = {
        "optimizer": new_format["optimizer"],
        "critic": new_format["critics"][0],
        "critic_opt": new_format["critic_opts"][0],
        "instruct_critic": new_format["instruct_critics"][0],
        "instruct_opt": new_format["instruct_opts"][0],
        "rng": new_format["rng"],
    }
    fresh = _algo(pol, 1)
    fresh.load_state_dict(legacy)
    np.testing.assert_array_equal(fresh.step_values(trajs[:2])[0], old.step_values(trajs[:2])[0])


def test_update_annotates_every_step_with_what_the_actor_filter_used(rollouts):
    pol, trajs = rollouts
    algo = _algo(pol, 1)
    assert algo.annotations() == []
    algo.update(trajs, "online")
    notes = algo.annotations()
    per_traj = {t.traj_id: [n for n in notes if n.traj_id == t.traj_id] for t in trajs}
    for t in trajs:
        rows = sorted(per_traj[t.traj_id], key=lambda n: n.step)
        assert [n.step for n in rows] == [-1, *range(t.length)]
        assert rows[0].value is not None and 0.0 <= rows[0].value <= 1.0  # V_instruct(c)
        if rows[0].extra["curriculum_kept"]:
            adv = algo.advantages([t])[0]
            np.testing.assert_allclose([n.advantage for n in rows[1:]], adv, atol=1e-6)  # batch composition moves the last bits
            assert [n.kept for n in rows[1:]] == [a > 1.0 / t.task.horizon for a in (n.advantage for n in rows[1:])]
            assert all(n.value is not None for n in rows[1:])
        else:
            assert all(n.kept is False for n in rows[1:])


def test_step_values_featurize_each_observation_once_and_forget_evicted_trajectories(rollouts):
    pol, trajs = rollouts
    algo = _algo(pol, 1)
    algo.update(trajs[:16], "online")
    cache = algo._features
    assert 0 < len(cache) == cache.stats["misses"]  # what the critic fit and the kept share touched, once each
    n_obs = sum(t.length + 1 for t in trajs[:16])  # every step and the final observation
    obs = [o for t in trajs[:16] for o in (*(s.observation for s in t.steps), t.final_observation or t.steps[-1].observation)]
    uncached = algo.critics[0].value(obs).numpy()  # the critic featurizing afresh
    np.testing.assert_array_equal(np.concatenate(algo.step_values(trajs[:16])), uncached)
    assert len(cache) == cache.stats["misses"] == n_obs
    np.testing.assert_array_equal(np.concatenate(algo.step_values(trajs[:16])), uncached)
    assert cache.stats["misses"] == n_obs  # the second time, every row came from memory

    algo.update(trajs[8:], "online")  # the buffer moved on: trajectories 0-7 left it
    assert {k[0] for k in cache._rows} <= {t.traj_id for t in trajs[8:]}
    assert {t.traj_id for t in trajs[8:16]} <= {k[0] for k in cache._rows}


@pytest.mark.parametrize("keep_successes", [False, True])
def test_curriculum_drops_successes_once_most_succeed_unless_told_to_keep_them(rollouts, keep_successes):
    pol, trajs = rollouts
    won = [t for t in trajs if t.success]
    lost = [t for t in trajs if not t.success]
    mostly_won = [*won, *won, *won, *lost[:2]]  # far more than curriculum_top = 0.5 succeed
    mostly_won = [dataclasses.replace(t, traj_id=f"{t.traj_id}-{i}") for i, t in enumerate(mostly_won)]
    torch.manual_seed(1)
    cfg = AlgoConfig(
        critic=CriticEncoderConfig(dim=32, layers=1), actor_steps=1, curriculum_keep_successes=keep_successes, **SMALL
    )  # type: ignore[arg-type]
    algo = DigiRL(pol, cfg, seed=3)
    m = algo.update(mostly_won, "online")
    kept = {n.traj_id for n in algo.annotations() if n.step == -1 and n.extra["curriculum_kept"]}
    kept_won = [t.traj_id in kept for t in mostly_won if t.success]
    assert m["train/curriculum_kept_success_fraction"] == pytest.approx(np.mean(kept_won))
    if keep_successes:
        assert all(kept_won)
        assert not any(t.traj_id in kept for t in mostly_won if not t.success)  # the cut still drops failures
    else:  # the paper's top half (plus ties: each success is here three times) cannot hold every success
        assert m["train/curriculum_kept_fraction"] < len(kept_won) / len(mostly_won) and not all(kept_won)


def test_step_weights_scale_the_actor_loss_of_each_step(rollouts):
    """The asynchronous driver's importance weights: ones change nothing; others scale each kept step."""
    pol, trajs = rollouts
    cfg = AlgoConfig(critic=CriticEncoderConfig(dim=32, layers=1), actor_steps=2, curriculum=False, **SMALL)  # type: ignore[arg-type]

    def run(weights):
        p = DefaultPolicy(PolicyNetConfig(dim=32, layers=1))
        p.load_state_dict(pol.state_dict())
        torch.manual_seed(1)
        algo = DigiRL(p, cfg, seed=3)
        algo.update(trajs, "online", **({} if weights is None else {"step_weights": weights}))
        return p.state_dict(), [n for n in algo.annotations() if n.step >= 0]

    base_sd, base_notes = run(None)
    ones_sd, _ = run({t.traj_id: np.ones(t.length) for t in trajs})
    assert all(base_sd[k].equal(ones_sd[k]) for k in base_sd)
    half = {t.traj_id: np.full(t.length, 0.5) for t in trajs if t.success}  # successes have kept steps
    _, notes = run(half)
    for n, b in zip(notes, base_notes):
        assert n.kept == b.kept
        assert n.weight == pytest.approx(b.weight * (0.5 if n.traj_id in half else 1.0))
    assert any(n.kept and n.traj_id in half for n in notes)


@pytest.mark.parametrize("name", ["digirl", "filtered_bc"])
def test_actor_epochs_set_the_update_steps_from_what_is_cloned(rollouts, name):
    """``actor_epochs=2``: two passes over the cloned steps (fewer than a batch here, so two steps), not actor_steps."""
    pol, trajs = rollouts
    make = DigiRL if name == "digirl" else FilteredBC
    p = DefaultPolicy(PolicyNetConfig(dim=32, layers=1))
    p.load_state_dict(pol.state_dict())
    cfg = AlgoConfig(
        name=name,
        critic=CriticEncoderConfig(dim=32, layers=1),
        actor_steps=6,
        actor_epochs=2.0,
        curriculum=False,
        **SMALL,  # type: ignore[arg-type]
    )
    m = make(p, cfg, seed=3).update(trajs, "online")
    cloned = m["train/actor_samples"]
    assert 0 < cloned <= cfg.batch_size
    assert m["train/actor_steps"] == 2.0
    fixed = make(p, dataclasses.replace(cfg, actor_epochs=None), seed=3)
    assert fixed.update(trajs, "online")["train/actor_steps"] == 6.0
