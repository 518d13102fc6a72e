"""``algo.name=digiq`` end to end in memory on a few simulator episodes: metrics, annotations, checkpoints."""

import pytest

from digirl.algorithms.base import AlgoConfig
from digirl.algorithms.digiq.algorithm import critic_trains_on, fold_of, is_heldout
from digirl.algorithms.digiq.config import DigiQConfig
from digirl.algorithms.registry import make_algorithm
from digirl.core.errors import DataError
from digirl.envs.vector import EpisodeJob, env_factory, run_expert
from digirl.policies.config import EncoderConfig
from digirl.policies.default import DefaultPolicy

TASKS = ["Open the clock app", "Open the camera", "Open YouTube", "Open the settings app"]


@pytest.fixture(scope="module")
def trajs():
    fn = env_factory("digirl/sim-general-v0", perturbation=0)
    return run_expert(fn, [EpisodeJob(t, seed=i) for i, t in enumerate(TASKS * 2)], eps=0.3, seed=0, mode="inline")


def _algo(**digiq):
    cfg = AlgoConfig(name="digiq", offline_actor_steps=3, batch_size=8)
    cfg.digiq = DigiQConfig(candidates=3, repft_steps=3, critic_steps=5, critic_hidden=16, folds=2, **digiq)
    policy = DefaultPolicy(EncoderConfig(dim=16, layers=1, heads=2), seed=0)
    return make_algorithm(policy, cfg, seed=0)


def test_update_reports_candidates_and_keeps_states(trajs):
    algo = _algo(delta=0.0)
    m = algo.update(trajs, "offline")
    for k in ("critic/q_loss", "critic/v_loss", "critic/repft_examples", "train/digiq_kept_states", "train/actor_samples"):
        assert k in m, k
    assert 1 <= m["train/digiq_candidates_per_state"] <= 3
    assert m["train/actor_samples"] == m["train/digiq_kept_states"]
    notes = algo.annotations()
    steps = [a for a in notes if a.step >= 0]
    assert len(steps) == sum(t.length for t in trajs)
    assert len([a for a in notes if a.step == -1]) == len(trajs)  # V of each final observation
    for a in steps:
        cands = a.extra["candidates"]
        assert 1 <= len(cands) <= 3 and {"action", "q", "advantage", "valid", "label"} <= set(cands[0])
        assert cands[a.extra["chosen"]]["advantage"] == pytest.approx(a.advantage)
        assert a.q == pytest.approx(cands[0]["q"]) and a.extra["heldout"]  # with folds > 1 every state is out of fold
        assert cands[0]["label"] in (True, False, None) and all(c["label"] is None for c in cands[1:])  # pixel: a_data only
    assert sum(a.kept for a in steps) == m["train/digiq_kept_states"]


def test_checkpoint_round_trip(trajs):
    a = _algo()
    a.update(trajs[:4], "offline")
    b = _algo()
    b.load_state_dict(a.state_dict())
    assert len(b.critics) == 2
    x = a.critics[0].net.state_dict()
    assert all(v.equal(b.critics[0].net.state_dict()[k]) for k, v in x.items())


def test_exact_labels_need_the_stage_command(trajs):
    with pytest.raises(DataError, match="digirl digiq label"):
        _algo(label="exact").update(trajs[:2], "offline")


def test_folds_and_holdout_are_stable_partitions():
    ids = [f"t{i}" for i in range(400)]
    folds = [fold_of(i, 5) for i in ids]
    assert set(folds) == {0, 1, 2, 3, 4} and all(fold_of(i, 5) == f for i, f in zip(ids, folds))
    cfg = DigiQConfig(folds=5)
    assert all(critic_trains_on(i, f, cfg) != (fold_of(i, 5) == f) for i in ids for f in range(5))
    held = sum(is_heldout(i, 0.2) for i in ids) / len(ids)
    assert 0.12 < held < 0.28
    one = DigiQConfig(folds=1, holdout=0.2)
    assert all(critic_trains_on(i, 0, one) == (not is_heldout(i, 0.2)) for i in ids)


def test_a_second_update_scores_new_trajectories_with_the_same_backend(trajs):
    algo = _algo()
    algo.update(trajs[:4], "offline")
    backend = algo.backend
    m = algo.update(trajs, "online")  # new trajectories: proposed, labelled and featurized on the fly
    assert algo.backend is backend  # representation fine-tuning happens once
    assert m["train/digiq_proposals_sampled"] > 0
    assert len([a for a in algo.annotations() if a.step >= 0]) == sum(t.length for t in trajs)
