"""Host-to-device copies that do not make the host wait for the device.

A plain ``tensor.to("cuda")`` from ordinary (pageable) host memory synchronises the stream: the
host waits until every kernel queued before it has run. In a training step that happens at each
small input (ids, masks, targets), so the device drains and then idles while the host prepares and
launches the next kernels. Copies from page-locked memory with ``non_blocking=True`` are queued in
order like kernels instead; the caching host allocator keeps the pinned block alive until the copy
has completed.
"""

from __future__ import annotations

import torch

__all__ = ["to_device"]


def to_device(t: torch.Tensor, device: torch.device) -> torch.Tensor:
    """``t`` on ``device``; an asynchronous copy through pinned memory for a host tensor bound to a GPU."""
    if device.type != "cuda" or t.device.type != "cpu":
        return t.to(device)
    return t.pin_memory().to(device, non_blocking=True)
