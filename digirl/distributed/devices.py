"""Give each env actor a device of its own, on whichever machine Ray placed it.

An emulator host lists its devices in an environment variable (``DIGIRL_DEVICES=emulator-5554,emulator-5556``,
exported before ``ray start``, so every Ray worker on that host inherits it). An actor claims the first
free entry by taking an exclusive ``flock`` on a per-device lock file: two actors never share a device,
and a claim disappears with the process that held it (even after ``kill -9``), so a restarted actor
finds the device free again.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path
from typing import IO

__all__ = ["claim_device", "lock_dir"]


def lock_dir() -> Path:
    """Where the per-device lock files live (one folder per machine; ``$DIGIRL_DEVICE_LOCK_DIR`` overrides)."""
    return Path(os.environ.get("DIGIRL_DEVICE_LOCK_DIR") or Path(tempfile.gettempdir()) / "digirl-devices")


def _lock_name(device: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", device)[:60]
    return f"{safe}-{hashlib.sha1(device.encode()).hexdigest()[:8]}.lock"


def claim_device(var: str) -> tuple[str, IO[bytes]]:
    """Claim a free device listed in ``$var`` on this machine: ``(device, open lock file)``.

    Keep the returned file open for as long as the device is used; closing it (or the process ending)
    releases the claim. Raises ``RuntimeError`` when the variable is unset or every device is taken.
    """
    import fcntl

    listed = [d.strip() for d in os.environ.get(var, "").split(",") if d.strip()]
    host = os.uname().nodename
    if not listed:
        raise RuntimeError(f"${var} is not set on host {host}: export it (comma-separated device ids) before `ray start`")
    folder = lock_dir()
    folder.mkdir(parents=True, exist_ok=True)
    for device in listed:
        f = open(folder / _lock_name(device), "ab")  # the open file is the claim: keep it open
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.close()
            continue
        return device, f
    raise RuntimeError(f"all {len(listed)} devices in ${var} on host {host} are claimed by other actors: {', '.join(listed)}")
