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

__all__ = ["HostCopy", "to_device"]


def to_device(t: torch.Tensor, device: torch.device) -> torch.Tensor:
    """``t`` on ``device``; an asynchronous copy through pinned memory for a host tensor bound to a GPU."""
    if device.type != "cuda" or t.device.type != "cpu":
        return t.to(device)
    return t.pin_memory().to(device, non_blocking=True)


class HostCopy:
    """A device tensor's values copied to the host without draining the stream.

    ``torch.Tensor.cpu()`` on a CUDA tensor waits for *everything* queued on the stream so far. This
    queues the copy into pinned memory and records an event after it; :meth:`get` then waits only
    for that point, so work queued later (the next step's forward and backward) keeps running.
    """

    def __init__(self, t: torch.Tensor) -> None:
        self._event: torch.cuda.Event | None = None
        if t.device.type == "cuda":
            self._host = torch.empty(t.shape, dtype=t.dtype, pin_memory=True)
            self._host.copy_(t, non_blocking=True)
            self._event = torch.cuda.Event()  # type: ignore[no-untyped-call]
            self._event.record()
        else:
            self._host = t.detach().clone()

    def get(self) -> torch.Tensor:
        if self._event is not None:
            self._event.synchronize()
        return self._host
