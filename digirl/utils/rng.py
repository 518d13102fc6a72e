"""Seeding and RNG state capture for reproducible runs and exact resumes.

:func:`get_rng_state` returns only JSON types (ints, lists, strings): Python's and NumPy's
Mersenne-Twister states as integer lists, torch's CPU/CUDA generator states as base64 strings of
their uint8 bytes. So a checkpoint can keep it in a JSON sidecar, in safetensors metadata
(``json.dumps`` it) or in a ``torch.save`` file that loads with ``weights_only=True``; no pickle
is involved. Environments own their ``np.random.Generator`` (seeded by ``reset(seed=...)``);
these are the *global* generators only.
"""

from __future__ import annotations

import base64
import os
import random
import sys
from typing import Any

import numpy as np

__all__ = ["get_rng_state", "seed_everything", "set_rng_state"]

_FORMAT = 1


def seed_everything(seed: int, *, deterministic: bool = False) -> None:
    """Seed Python's ``random``, NumPy's global RNG and, if torch is already imported, torch (all devices).

    ``deterministic=True`` also asks torch for deterministic kernels (slower on GPU; an op without one
    warns instead of failing) and configures cuBLAS for reproducible reductions (effective when CUDA is
    first used after this call). Torch is not imported here: a process that never imports it pays nothing.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    random.seed(seed)
    np.random.seed(seed % 2**32)
    os.environ.setdefault("PYTHONHASHSEED", str(seed))  # only affects child processes
    if deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)  # seeds CUDA generators too
        torch.use_deterministic_algorithms(deterministic, warn_only=True)
        torch.backends.cudnn.benchmark = not deterministic
        torch.backends.cudnn.deterministic = deterministic


def _b64(t: Any) -> str:
    return base64.b64encode(t.cpu().numpy().tobytes()).decode("ascii")


def _unb64(s: str) -> Any:
    import torch

    return torch.frombuffer(bytearray(base64.b64decode(s)), dtype=torch.uint8).clone()


def get_rng_state() -> dict[str, Any]:
    """The state of every global generator, as JSON-safe data (see the module docstring)."""
    version, mt, gauss = random.getstate()
    name, keys, pos, has_gauss, cached = np.random.get_state(legacy=True)
    state: dict[str, Any] = {
        "format": _FORMAT,
        "python": {"version": version, "state": list(mt), "gauss": gauss},
        "numpy": {
            "name": str(name),
            "keys": [int(k) for k in keys],
            "pos": int(pos),
            "has_gauss": int(has_gauss),
            "cached_gaussian": float(cached),
        },
    }
    torch = sys.modules.get("torch")
    if torch is not None:
        state["torch"] = _b64(torch.get_rng_state())
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            state["torch_cuda"] = [_b64(s) for s in torch.cuda.get_rng_state_all()]
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    """Restore what :func:`get_rng_state` captured. Parts that are absent are left alone."""
    if state.get("format") != _FORMAT:
        raise ValueError(f"unknown RNG state format {state.get('format')!r} (expected {_FORMAT})")
    if "python" in state:
        py = state["python"]
        random.setstate((int(py["version"]), tuple(int(x) for x in py["state"]), py["gauss"]))
    if "numpy" in state:
        n = state["numpy"]
        keys = np.asarray(n["keys"], dtype=np.uint32)
        np.random.set_state(
            (n["name"], keys, int(n["pos"]), int(n["has_gauss"]), float(n["cached_gaussian"])),
        )
    if "torch" in state or "torch_cuda" in state:
        import torch

        if "torch" in state:
            torch.set_rng_state(_unb64(state["torch"]))
        cuda = state.get("torch_cuda")
        if cuda and torch.cuda.is_available():
            if len(cuda) != torch.cuda.device_count():
                raise ValueError(f"RNG state has {len(cuda)} CUDA generators but {torch.cuda.device_count()} devices are visible")
            torch.cuda.set_rng_state_all([_unb64(s) for s in cuda])
