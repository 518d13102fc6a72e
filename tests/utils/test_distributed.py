"""Two CPU processes (gloo) make the same update as one process on the same global minibatch."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.multiprocessing as mp

from digirl.algorithms.base import AlgoConfig, Sample, bc_update
from digirl.algorithms.encoder_config import CriticEncoderConfig
from digirl.core.actions import Action
from digirl.core.types import Step, Trajectory
from digirl.envs.toy import ToyEnv
from digirl.policies.config import EncoderConfig
from digirl.policies.default import DefaultPolicy
from digirl.utils import distributed as dist

pytestmark = pytest.mark.usefixtures("one_thread")

SMALL = EncoderConfig(dim=32, layers=1, heads=2)


def _trajectories() -> list[Trajectory]:
    """Deterministic toy episodes: the scripted solution or a wrong tap, so some succeed."""
    env = ToyEnv(mode="mixed")
    rng = np.random.default_rng(0)
    out = []
    for i in range(10):
        obs, _ = env.reset(seed=i)
        t = Trajectory(task=env.task, traj_id=f"t{i}", seed=i)
        for _ in range(3):
            a = env.cheat() if rng.random() < 0.6 else Action.tap(0.05, 0.05)
            assert a is not None
            nxt, reward, terminated, truncated, _ = env.step(a)
            t.steps.append(Step(obs, a, str(a), reward, terminated, truncated))
            if terminated or truncated:
                break
            obs = nxt
        out.append(t)
    return out


def _run(out: Path | None) -> dict[str, torch.Tensor]:
    """The updates under test; returns every trained tensor (policy, critics) after them."""
    from digirl.algorithms.digirl import DigiRL

    torch.manual_seed(0)
    trajs = _trajectories()
    policy = DefaultPolicy(SMALL, seed=0)
    samples = [Sample(s.observation, s.action, 1.0 + 0.5 * (i % 3)) for i, s in enumerate(st for t in trajs for st in t.steps)]
    # SGD: Adam turns the float noise of gradients that are exactly zero in theory (e.g. attention
    # key biases) into steps of ±lr, so parameters after Adam are no test of the gradient sums.
    opt = torch.optim.SGD(policy.parameters(), lr=0.05)
    m = bc_update(policy, opt, samples, steps=3, batch_size=7, grad_accum=2, max_grad_norm=0.5, rng=np.random.default_rng(1))
    cfg = AlgoConfig(
        name="digirl",
        batch_size=5,
        offline_actor_steps=2,
        offline_critic_steps=3,
        instruct_critic_steps=2,
        critic_batch_size=9,
        critic=CriticEncoderConfig(dim=32, layers=1, heads=2),
    )
    algo = DigiRL(policy, cfg, seed=0)
    algo.optimizer = torch.optim.SGD(policy.parameters(), lr=0.05)
    algo.critic_opts = [torch.optim.SGD(c.parameters(), lr=0.05) for c in algo.critics]
    algo.instruct_opts = [torch.optim.SGD(c.parameters(), lr=0.05) for c in algo.instruct_critics]
    m2 = algo.update(trajs, "offline")
    state = {f"policy.{k}": v for k, v in policy.state_dict().items()}
    for i, c in enumerate(algo.critics):
        state |= {f"critic{i}.{k}": v.detach().cpu() for k, v in c.state_dict().items()}
    for i, c in enumerate(algo.instruct_critics):
        state |= {f"instruct{i}.{k}": v.detach().cpu() for k, v in c.state_dict().items()}
    state["metrics.bc_loss"] = torch.tensor(m["train/actor_loss"])
    state["metrics.critic_loss"] = torch.tensor(m2["critic/step_loss"])
    if out is not None and dist.is_main():
        from safetensors.torch import save_file

        save_file({k: v.contiguous() for k, v in state.items()}, str(out))
    return state


def _run_clipped(out: Path | None) -> dict[str, torch.Tensor]:
    """The on-policy (GRPO/PPO) clipped update, also with a minibatch of one sample (a rank with an
    empty slice) over three micro-batches; returns the policy's tensors and the update's metrics."""
    from digirl.algorithms.onpolicy import ClipOptions, PGSample, clipped_policy_update, prepare_samples

    torch.manual_seed(0)
    policy = DefaultPolicy(SMALL, seed=0)
    steps = [st for t in _trajectories() for st in t.steps]
    samples = [PGSample(s.observation, s.action, (i % 5) - 2.0, 1.0 + 0.5 * (i % 3)) for i, s in enumerate(steps)]
    samples = prepare_samples(policy, None, samples)
    opt = torch.optim.SGD(policy.parameters(), lr=0.05)
    state: dict[str, torch.Tensor] = {}
    for name, batch, accum in (("mb7", 7, 2), ("mb1", 1, 3)):
        opts = ClipOptions(0.2, 0.0, 0.01, steps=2, batch_size=batch, grad_accum=accum, max_grad_norm=0.5)
        m = clipped_policy_update(policy, opt, samples, opts, np.random.default_rng(3))
        state |= {f"{name}.{k}": torch.tensor(v) for k, v in m.items()}
    state |= {f"policy.{k}": v for k, v in policy.state_dict().items()}
    if out is not None and dist.is_main():
        from safetensors.torch import save_file

        save_file({k: v.contiguous() for k, v in state.items()}, str(out))
    return state


RUNS = {"bc_digirl": _run, "clipped": _run_clipped}


def _worker(rank: int, world: int, port: int, out: str, which: str) -> None:
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    os.environ["DIGIRL_DIST_BACKEND"] = "gloo"
    torch.set_num_threads(1)
    assert dist.init()
    assert dist.world_size() == world and dist.rank() == rank
    RUNS[which](Path(out))
    dist.barrier()
    torch.distributed.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _two_ranks_and_one(tmp_path: Path, which: str, rtol: float = 0.0) -> dict[str, torch.Tensor]:
    """``RUNS[which]`` on 2 gloo ranks and in this process: every tensor equal to 1e-6; the latter's."""
    from safetensors.torch import load_file

    out = tmp_path / "two.safetensors"
    mp.spawn(_worker, args=(2, _free_port(), str(out), which), nprocs=2, join=True)
    two = load_file(str(out))
    one = RUNS[which](None)
    assert set(one) == set(two)
    for k, v in one.items():
        torch.testing.assert_close(two[k], v, atol=1e-6, rtol=rtol, msg=lambda m, k=k: f"{k}: {m}")
    return one


@pytest.mark.slow
def test_two_ranks_equal_one_process(tmp_path):
    one = _two_ranks_and_one(tmp_path, "bc_digirl")
    torch.manual_seed(0)
    start = DefaultPolicy(SMALL, seed=0).state_dict()
    moved = max(float((one[f"policy.{k}"] - v).abs().max()) for k, v in start.items())
    assert moved > 1e-3  # the updates did something


@pytest.mark.slow
def test_two_ranks_clipped_update_equals_one_process(tmp_path):
    # the metrics are float32 sums split over ranks: a few ulps apart
    one = _two_ranks_and_one(tmp_path, "clipped", rtol=1e-6)
    assert float(one["mb1.train/actor_samples"]) > 0 and float(one["mb7.train/clip_fraction"]) >= 0


def test_single_process_helpers_are_no_ops():
    assert dist.world_size() == 1 and dist.rank() == 0 and dist.is_main()
    assert dist.shard([1, 2, 3]) == [1, 2, 3]
    t = torch.ones(2)
    assert dist.all_sum(t) is t
    dist.barrier()
    p = torch.nn.Parameter(torch.ones(2))
    p.grad = torch.full((2,), 3.0)
    dist.sum_grads([p])
    assert p.grad.tolist() == [3.0, 3.0]


@pytest.mark.parametrize(("n", "world"), [(7, 2), (3, 4), (8, 3)])
def test_shards_partition_the_batch(monkeypatch, n, world):
    items = list(range(n))
    parts = []
    for r in range(world):
        monkeypatch.setattr(dist, "rank", lambda r=r: r)
        monkeypatch.setattr(dist, "world_size", lambda: world)
        parts.append(dist.shard(items))
    assert [x for p in parts for x in p] == items
