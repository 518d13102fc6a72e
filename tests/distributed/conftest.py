"""Ray tests share one local Ray per module (starting one takes seconds); modules that need Ray skip without it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

# Ray reads this when imported: keep every Ray process of the tests on 127.0.0.1.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")


@pytest.fixture(scope="module")
def ray_session() -> Iterator[Any]:
    """A private local Ray for the module: 2 logical CPUs, actors at 0.25 CPU each; stopped afterwards."""
    ray = pytest.importorskip("ray")
    from digirl.distributed.config import RayConfig
    from digirl.distributed.session import RaySession

    if ray.is_initialized():  # another module's cluster was left behind by a failed test
        ray.shutdown()
    session = RaySession(RayConfig(num_cpus_per_actor=0.25, local_num_cpus=2, object_store_mb=128), 4)
    try:
        yield session
    finally:
        session.close()
    assert not ray.is_initialized()
