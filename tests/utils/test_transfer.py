"""to_device: the same values wherever they go; asynchronous only where it is safe."""

from __future__ import annotations

import pytest
import torch

from digirl.utils.transfer import HostCopy, to_device


def test_host_target_returns_the_same_values():
    t = torch.arange(6).reshape(2, 3)
    out = to_device(t, torch.device("cpu"))
    assert torch.equal(out, t)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_gpu_copy_is_exact_and_leaves_the_source_untouched():
    t = torch.randn(1024, 257)
    src = t.clone()
    out = to_device(t, torch.device("cuda"))
    assert out.is_cuda and torch.equal(out.cpu(), src) and torch.equal(t, src)
    assert to_device(out, torch.device("cuda")) is out  # already there: no copy


def test_host_copy_of_a_host_tensor_is_a_snapshot():
    t = torch.arange(4.0)
    c = HostCopy(t)
    t += 1  # later writes do not change what was copied
    assert c.get().tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_gpu_host_copy_waits_for_its_own_values_only():
    x = torch.randn(512, 512, device="cuda")
    want = (x @ x).sum()
    c = HostCopy(want.reshape(1))
    for _ in range(20):  # queued after the copy: get() need not wait for these
        x = x @ x / 512
    assert c.get().item() == pytest.approx(want.item())
