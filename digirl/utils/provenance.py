"""What every result JSON records about how it was made: the one home of that metadata.

A result is only as honest as what it says about itself: what the agent saw (``observation``:
``screenshot`` or ``screenshot+elements``), which split its recipe or checkpoint was chosen on
(``selection_split``: ``validation``, ``test``, ``none`` or ``unspecified``), the GPU model and the
machine, the exact command and the source revision. Writers call :func:`result_metadata` and merge it into their JSON;
the command line sets the run's part once (:func:`set_run_context`) after its config is settled, so
writers deep in a run (periodic evaluations) need no extra arguments.
"""

from __future__ import annotations

import functools
import os
import platform
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "SELECTION_SPLITS",
    "git_revision",
    "gpu_name",
    "machine_info",
    "result_metadata",
    "run_context",
    "saved_observation",
    "set_run_context",
]

#: What ``selection_split`` may say.
SELECTION_SPLITS = ("validation", "test", "none", "unspecified")

_CONTEXT: dict[str, str] = {"observation": "unrecorded", "selection_split": "unspecified"}


def set_run_context(*, observation: str | None = None, selection_split: str | None = None) -> None:
    """This process's run: what its agent sees and the split its choices were made on."""
    if selection_split is not None and selection_split not in SELECTION_SPLITS:
        raise ValueError(f"selection_split must be one of {', '.join(SELECTION_SPLITS)}, got {selection_split!r}")
    if observation is not None:
        _CONTEXT["observation"] = observation
    if selection_split is not None:
        _CONTEXT["selection_split"] = selection_split


def run_context() -> dict[str, str]:
    return dict(_CONTEXT)


def gpu_name() -> str:
    """The first CUDA device's model (``torch.cuda.get_device_name``), ``none`` without one."""
    try:
        import torch

        return str(torch.cuda.get_device_name(0)) if torch.cuda.is_available() else "none"
    except Exception:  # no torch, or a broken driver: the result still gets written
        return "unknown"


def _cpu_model() -> str:
    """The first CPU's model name with its family / model / stepping (VMs often show a generic name)."""
    try:
        lines = Path("/proc/cpuinfo").read_text().split("\n\n", 1)[0].splitlines()
    except OSError:
        return platform.processor() or "unknown"
    info = {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    ids = "/".join(info.get(k, "?") for k in ("cpu family", "model", "stepping"))
    return f"{info.get('model name', 'unknown')} ({ids})"


def machine_info() -> dict[str, Any]:
    """What a result was measured on, with what a bit-for-bit repeat depends on besides the command:
    the CPU, the torch build, the CPU kernels torch picked, the thread setting and the GPU."""
    out: dict[str, Any] = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS", ""),
        "gpu": gpu_name(),
    }
    try:
        import torch

        out["torch"] = torch.__version__
        out["torch_cpu_capability"] = torch.backends.cpu.get_cpu_capability()
    except Exception:
        out["torch"] = "unavailable"
    return out


#: Set this where the source tree is a copy without ``.git`` (a GPU machine's copy of the working tree):
#: its value is recorded as the result's ``git_revision``.
REVISION_ENV = "DIGIRL_GIT_REVISION"


@functools.cache
def git_revision() -> str | None:
    """The commit the running ``digirl`` was imported from: ``$DIGIRL_GIT_REVISION`` when set, else
    ``git rev-parse HEAD`` of its source tree, with ``+uncommitted`` when tracked files differ from it;
    ``None`` for an installed copy outside any git checkout."""
    if os.environ.get(REVISION_ENV):
        return os.environ[REVISION_ENV]
    root = Path(__file__).resolve().parents[2]
    try:
        run = functools.partial(subprocess.run, cwd=root, capture_output=True, text=True, check=True, timeout=10)
        rev = run(["git", "rev-parse", "HEAD"]).stdout.strip()
        dirty = run(["git", "status", "--porcelain", "--untracked-files=no"]).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return rev + ("+uncommitted" if dirty else "") if rev else None


def result_metadata(
    *, observation: str | None = None, selection_split: str | None = None, command: Sequence[str] | None = None
) -> dict[str, Any]:
    """The fields every result JSON carries: ``observation``, ``selection_split``, ``gpu``, ``machine``,
    ``command`` (the exact argv, a list), ``git_revision`` and ``date``; arguments override the run's
    context."""
    from digirl import __version__

    if selection_split is not None and selection_split not in SELECTION_SPLITS:
        raise ValueError(f"selection_split must be one of {', '.join(SELECTION_SPLITS)}, got {selection_split!r}")
    machine = machine_info()
    return {
        "observation": observation or _CONTEXT["observation"],
        "selection_split": selection_split or _CONTEXT["selection_split"],
        "gpu": machine["gpu"],
        "machine": machine,
        "command": list(command if command is not None else sys.argv),
        "digirl_version": __version__,
        "git_revision": git_revision(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }


def saved_observation(configs: Iterable[Path]) -> str:
    """What the runs whose saved ``config.yaml`` files are ``configs`` saw, as their settled configs say
    (for a writer that ran them as child processes): one value, ``a | b`` when they differ, ``mixed``
    for a run whose policy and critics saw different things, ``unrecorded`` without any."""
    seen: set[str] = set()
    for path in configs:
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("observation:"):
                seen.add(line.partition(":")[2].split("#")[0].strip().strip("'\""))
    if "auto" in seen:  # settled to auto only where the policy and critics see different things
        seen = (seen - {"auto"}) | {"mixed (see the runs' use_elements flags)"}
    return " | ".join(sorted(seen)) or "unrecorded"
