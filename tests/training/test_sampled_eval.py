"""``eval.sampled``: a sampled evaluation beside the greedy one that leaves training exactly as it was."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file

from digirl.config.core import load_config
from digirl.core.actions import Action
from digirl.data.store import TrajectoryStore
from digirl.envs.toy import ToyEnv
from digirl.policies.base import ActOutput, OwnSampler
from digirl.policies.default import DefaultPolicy
from digirl.testing.tiny_runs import TINY_ONLINE_DIGIRL
from digirl.training.common import make_runner, preserved_sampling, task_pool
from digirl.training.config import TrainConfig
from digirl.training.evaluate import eval_tasks
from digirl.training.loop import evaluate_policy, train

ARGS = [
    *TINY_ONLINE_DIGIRL,
    "env.id=digirl/sim-general-v0",
    "iterations=2",
    "rollout_size=4",
    "eval.every=1",
    "eval.test_tasks=3",
    "eval.train_tasks=2",
    "policy.device=cpu",
    "seed=5",
]


def test_preserved_sampling_leaves_every_random_stream_where_it_was():
    obs = [ToyEnv(mode="mixed").reset(seed=i)[0] for i in range(6)]
    a, b = DefaultPolicy(seed=0), DefaultPolicy(seed=0)
    assert isinstance(a, OwnSampler)
    torch.manual_seed(1)
    np.random.seed(1)
    expected = (a.act(obs), torch.rand(3), np.random.rand(3))
    torch.manual_seed(1)
    np.random.seed(1)
    with preserved_sampling(b):
        b.act(obs)  # draws from the policy's generator ...
        torch.rand(5), np.random.rand(5)  # ... and from the global ones
    after = (b.act(obs), torch.rand(3), np.random.rand(3))
    assert [o.action for o in after[0]] == [o.action for o in expected[0]]
    assert torch.equal(after[1], expected[1])
    np.testing.assert_array_equal(after[2], expected[2])


def _metrics(path: Path) -> list[dict]:
    return [json.loads(line) for line in (path / "metrics.jsonl").read_text().splitlines()]


def test_sampled_evaluation_is_logged_and_changes_nothing_else(tmp_path):
    runs = {}
    for sampled in (False, True):
        out = tmp_path / str(sampled)
        train(load_config(TrainConfig, overrides=[*ARGS, f"eval.sampled={str(sampled).lower()}"]), out)
        runs[sampled] = out
    plain, diag = runs[False], runs[True]

    # the trajectories collected, the weights learned and every non-sampled number are the same
    ta, tb = TrajectoryStore(plain / "data", create=False).load(), TrajectoryStore(diag / "data", create=False).load()
    assert len(ta) == len(tb) == 8
    for x, y in zip(ta, tb):
        assert (x.task, x.seed, x.reward) == (y.task, y.seed, y.reward)
        assert [s.action for s in x.steps] == [s.action for s in y.steps]
        assert [s.log_prob for s in x.steps] == [s.log_prob for s in y.steps]
    wa, wb = load_file(str(plain / "policy" / "model.safetensors")), load_file(str(diag / "policy" / "model.safetensors"))
    assert all(wa[k].equal(wb[k]) for k in wa)

    def training_numbers(rows: list[dict]) -> list[dict]:
        return [{k: v for k, v in r.items() if k != "time" and not k.startswith(("timing_s/", "eval/"))} for r in rows]

    def greedy_evals(rows: list[dict]) -> list[dict]:
        return [{k: v for k, v in r.items() if k.startswith("eval/") and "sampled" not in k} for r in rows]

    ma, mb = _metrics(plain), _metrics(diag)
    assert training_numbers(ma) == training_numbers(mb)
    assert greedy_evals(ma) == greedy_evals(mb)

    # the sampled rates are logged at every evaluation (3 of them: iterations 0, 1 and the end), per split
    evals = [r for r in mb if "eval/test_success_rate" in r]
    assert len(evals) == 3
    for r in evals:
        assert 0.0 <= r["eval/test_sampled_success_rate"] <= 1.0
        assert 0.0 <= r["eval/train_sampled_success_rate"] <= 1.0
    assert not any("sampled" in k for r in ma for k in r)
    assert sorted(p.name for p in (diag / "eval").glob("eval-iter0001-sampled*"))


class _Inert:
    """Greedy: the same tap on an empty corner, whatever the screen; sampled: the default policy's draws
    (from its own generator, which it exposes like the default policy)."""

    kind = "inert"

    def __init__(self) -> None:
        self.inner = DefaultPolicy(seed=0)
        self.sampled_calls = 0

    def act(self, observations, *, greedy=False, temperature=1.0):
        if greedy:
            return [ActOutput(Action.tap(0.99, 0.99), "tap", 0.0) for _ in observations]
        self.sampled_calls += 1
        return self.inner.act(observations, greedy=False, temperature=temperature)

    def save(self, path):
        raise NotImplementedError

    def sampling_state(self):
        return self.inner.sampling_state()

    def set_sampling_state(self, state):
        self.inner.set_sampling_state(state)


def test_loop_escape_samples_where_greedy_cycles_and_puts_the_random_streams_back():
    """``eval.loop_escape``: a greedy evaluation that samples where it would go round a cycle again, and
    leaves training's random streams (torch's, numpy's, the policy's own) where they were."""
    cfg = load_config(TrainConfig, overrides=["env.id=digirl/toy-tap-v0", "env.runner=inline", "env.num_envs=2"])
    tasks = eval_tasks(task_pool(cfg.env, "test"), [], 4, 0, cfg.eval.seed)
    runner = make_runner(cfg.env, deterministic=True)
    policy, twin = _Inert(), DefaultPolicy(seed=0)
    try:
        torch.manual_seed(3)
        np.random.seed(3)
        plain = evaluate_policy(policy, runner, tasks, greedy=True, temperature=1.0, seed=0)
        assert policy.sampled_calls == 0 and plain[0].success_rate == 0.0  # the same inert tap until out of steps
        escaped = evaluate_policy(policy, runner, tasks, greedy=True, temperature=1.0, seed=0, loop_escape=True)
    finally:
        runner.close()
    assert policy.sampled_calls > 0 and escaped[0].episodes == 4  # the third inert tap in a row is sampled instead
    after = (policy.inner.act([ToyEnv(mode="tap").reset(seed=1)[0]]), torch.rand(2), np.random.rand(2))
    torch.manual_seed(3)
    np.random.seed(3)
    expected = (twin.act([ToyEnv(mode="tap").reset(seed=1)[0]]), torch.rand(2), np.random.rand(2))
    assert after[0][0].action == expected[0][0].action and after[0][0].log_prob == expected[0][0].log_prob
    assert torch.equal(after[1], expected[1])
    np.testing.assert_array_equal(after[2], expected[2])
