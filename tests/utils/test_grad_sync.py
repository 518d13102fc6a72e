"""GradSync (gradients all-reduced during the last backward pass) sums exactly as ``sum_grads`` does,
on two gloo ranks: micro-batches, an unused parameter, a rank with an empty slice, ranks that produce
their gradients in different orders; buckets start in one order everywhere and the hooks go away."""

from __future__ import annotations

import os
import socket

import pytest
import torch
import torch.multiprocessing as mp
from torch import nn

from digirl.utils import distributed as dist

pytestmark = pytest.mark.usefixtures("one_thread")


class Net(nn.Module):
    """Two branches (their order in the forward pass is an argument), mixed shapes, an unused
    parameter and a frozen one."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.a = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 8))
        self.b = nn.Sequential(nn.Conv1d(1, 4, 3), nn.Tanh(), nn.Flatten(), nn.Linear(16, 8))
        self.head = nn.Linear(8, 3)
        self.scale = nn.Parameter(torch.tensor(1.5))
        self.unused = nn.Parameter(torch.ones(5, 2))
        self.frozen = nn.Parameter(torch.ones(3), requires_grad=False)

    def forward(self, x: torch.Tensor, b_first: bool) -> torch.Tensor:
        if b_first:
            hb = self.b(x.unsqueeze(1))
            ha = self.a(x)
        else:
            ha = self.a(x)
            hb = self.b(x.unsqueeze(1))
        return self.head(torch.tanh(ha + hb)) * self.scale


def _backward(net: Net, rank: int, step: int, grad_accum: int, empty: bool, sync: dist.GradSync | None) -> None:
    """One optimizer step's micro-batches on this rank (rank 1 runs the branches the other way round)."""
    for k in range(grad_accum):
        if sync is not None and k == grad_accum - 1:
            sync.arm()
        if empty:
            continue  # more ranks than samples: no backward at all
        g = torch.Generator().manual_seed(100 * step + 10 * k + rank)
        x = torch.randn(4 + rank, 6, generator=g)
        (net(x, b_first=rank == 1).square().mean() / grad_accum).backward()


def _grads(net: Net) -> dict[str, torch.Tensor]:
    return {n: p.grad.clone() for n, p in net.named_parameters() if p.grad is not None}


def _case(rank: int, grad_accum: int, empty_rank: int | None) -> None:
    empty = rank == empty_rank
    net = Net()
    for step in range(2):  # the same GradSync over two optimizer steps
        net.zero_grad(set_to_none=True)
        _backward(net, rank, step, grad_accum, empty, None)
        dist.sum_grads(net.parameters())
        want = _grads(net)
        net.zero_grad(set_to_none=True)
        if step == 0:
            sync = dist.GradSync(net.parameters(), bucket_mb=300 / 2**20).__enter__()  # ~300-byte buckets
            assert len(sync.buckets) >= 4
        _backward(net, rank, step, grad_accum, empty, sync)
        sync.finish()
        got = _grads(net)
        assert set(got) == set(want) and "unused" in got and "frozen" not in got
        for n, v in want.items():
            assert torch.equal(got[n], v), n
    sync.__exit__(None, None, None)
    assert all(not p._post_accumulate_grad_hooks for p in net.parameters()), "hooks removed"
    order = [i for i, _ in sync.history]
    assert order == list(range(len(sync.buckets))) * 2
    early = [during for _, during in sync.history]
    if empty:
        assert not any(early)  # nothing to wait for: everything starts in finish()
    else:
        assert any(early)  # some all-reduces overlapped the backward pass
    histories: list[object] = [None, None]
    torch.distributed.all_gather_object(histories, order)
    assert histories[0] == histories[1]


def _worker(rank: int, world: int, port: int) -> None:
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    os.environ["DIGIRL_DIST_BACKEND"] = "gloo"
    torch.set_num_threads(1)
    assert dist.init()
    for grad_accum in (1, 3):
        for empty_rank in (None, 0, 1):
            _case(rank, grad_accum, empty_rank)
    _case_raise(rank)
    os.environ["DIGIRL_GRAD_SYNC"] = "flat"  # the benchmarks' comparison path: sum_grads itself
    _case_flat(rank)
    dist.barrier()
    torch.distributed.destroy_process_group()


def _case_raise(rank: int) -> None:
    """Every rank raises after a backward pass that started some buckets (rank 1 none: empty slice);
    the context's exit finishes what began, so the next collective still matches."""
    net = Net()
    with pytest.raises(ArithmeticError):
        with dist.GradSync(net.parameters(), bucket_mb=300 / 2**20) as sync:
            _backward(net, rank, 0, 1, rank == 1, sync)
            assert (sync._next > 0) == (rank == 0)
            raise ArithmeticError("a non-finite loss, seen by every rank")
    assert all(not p._post_accumulate_grad_hooks for p in net.parameters())
    assert float(dist.all_sum(torch.tensor(float(rank + 1)))) == 3.0


def _case_flat(rank: int) -> None:
    net = Net()
    _backward(net, rank, 0, 2, False, None)
    dist.sum_grads(net.parameters())
    want = _grads(net)
    net.zero_grad(set_to_none=True)
    with dist.GradSync(net.parameters()) as sync:
        assert sync.buckets == []
        _backward(net, rank, 0, 2, False, sync)
        sync.finish()
    got = _grads(net)
    assert all(torch.equal(got[n], v) for n, v in want.items()) and set(got) == set(want)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_two_ranks_overlapped_sums_equal_sum_grads():
    mp.spawn(_worker, args=(2, _free_port()), nprocs=2, join=True)


def test_one_process_is_a_no_op():
    net = Net()
    net(torch.randn(2, 6), b_first=False).sum().backward()
    before = _grads(net)
    with dist.GradSync(net.parameters()) as sync:
        assert not sync.active and sync.buckets == []
        assert all(not p._post_accumulate_grad_hooks for p in net.parameters())
        sync.arm()
        sync.finish()
    got = _grads(net)
    assert set(got) == set(before) and all(torch.equal(got[n], v) for n, v in before.items())
    assert "unused" not in got  # one process leaves a missing gradient missing, as sum_grads does
