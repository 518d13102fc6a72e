"""The Ray session a collector uses: a private local Ray it starts itself, or a cluster it joins.

A private local Ray (``env.ray.address=''``) is bound to 127.0.0.1 (Ray otherwise listens on the
machine's network address, which a one-laptop run does not need), sized so that every actor fits,
and stopped when the last collector using it closes. Its worker processes import digirl from the
same place as this process (a source checkout included). A session this process had already opened
(``ray.init`` in a script or a test) is used as it is and left running.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from digirl.distributed.config import RayConfig

__all__ = ["RaySession", "import_ray"]

log = logging.getLogger(__name__)

#: Ray reads this when it is imported: off, a node advertises and binds 127.0.0.1 only.
LOOPBACK_VAR = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"

_lock = threading.Lock()
_users = 0  # open sessions of this process
_owned = False  # whether this process started the Ray it uses (and so stops it)


def import_ray(*, loopback: bool = False) -> Any:
    """``import ray`` with a clear message when it is missing; ``loopback`` pins a first import to 127.0.0.1."""
    with _env(LOOPBACK_VAR, "0") if loopback and "ray" not in sys.modules else contextlib.nullcontext():
        try:
            import ray
        except ModuleNotFoundError as e:
            raise ModuleNotFoundError("env.runner=ray needs Ray: pip install 'digirl[distributed]' (or pip install ray)") from e
    return ray


@contextlib.contextmanager
def _env(name: str, value: str) -> Iterator[None]:
    """Set an environment variable for what starts inside the block (Ray's own processes inherit it)."""
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


@contextlib.contextmanager
def _loopback_only(ray: Any) -> Iterator[None]:
    """Make a local Ray started inside the block advertise and bind 127.0.0.1 only."""
    consts = getattr(getattr(ray, "_private", None), "ray_constants", None)
    before = getattr(consts, "ENABLE_RAY_CLUSTER", None)
    if consts is not None and before is not None:
        consts.ENABLE_RAY_CLUSTER = False  # read by the driver when it picks the node's address
    else:
        log.warning("this Ray version cannot be pinned to 127.0.0.1; the local Ray listens on the machine's address")
    try:
        with _env(LOOPBACK_VAR, "0"):  # and by the Ray processes it starts
            yield
    finally:
        if consts is not None and before is not None:
            consts.ENABLE_RAY_CLUSTER = before


def _source_root() -> str | None:
    """The folder to put on the workers' PYTHONPATH when digirl is imported from a source tree."""
    import digirl

    root = Path(digirl.__file__).resolve().parents[1]
    return None if "site-packages" in root.parts or "dist-packages" in root.parts else str(root)


class RaySession:
    """One collector's use of Ray; :meth:`close` stops a private local Ray when its last user closes."""

    def __init__(self, cfg: RayConfig, num_actors: int) -> None:
        global _users, _owned
        self.cfg = cfg
        self._open = True
        with _lock:
            ray = import_ray(loopback=not cfg.address)
            if ray.is_initialized():
                if cfg.address and _users == 0 and not _owned:
                    log.info("env.ray.address=%s ignored: this process already has a Ray session", cfg.address)
            elif cfg.address:
                runtime_env = {"py_modules": [str(Path(_package_dir()))]} if cfg.ship_code else None
                ray.init(address=cfg.address, namespace=cfg.namespace, runtime_env=runtime_env, log_to_driver=True)
                _owned = True  # a connection we opened; ray.shutdown() disconnects (the cluster keeps running)
            else:
                self._start_local(ray, num_actors)
                _owned = True
            _users += 1
        try:
            self.check_resources(num_actors)
        except BaseException:
            self.close()
            raise

    def _start_local(self, ray: Any, num_actors: int) -> None:
        cfg = self.cfg
        need = math.ceil(num_actors * cfg.num_cpus_per_actor)
        cpus = cfg.local_num_cpus or max(os.cpu_count() or 1, need)
        resources = {k: math.ceil(v * num_actors) for k, v in cfg.resources.items()} or None
        root = _source_root()
        paths = [p for p in (root, os.environ.get("PYTHONPATH")) if p]
        with _loopback_only(ray), _env("PYTHONPATH", os.pathsep.join(paths)) if root else contextlib.nullcontext():
            ray.init(
                num_cpus=cpus,
                resources=resources,
                include_dashboard=False,
                object_store_memory=cfg.object_store_mb * 2**20,
                namespace=cfg.namespace,
                log_to_driver=True,
                # Ray starts its workers at niceness 15: on a busy machine the env actors (collection's critical
                # path) then starve next to the learner (measured on a loaded 2-core machine: one actor at
                # niceness 15 did 15 env steps/s where a worker process did 134).
                _system_config={"worker_niceness": 0},
            )
        log.info("started a local Ray (%d logical CPUs, 127.0.0.1) for %d env actors", cpus, num_actors)

    def check_resources(self, num_actors: int) -> None:
        """Fail now, with the numbers, when the cluster can never hold every actor (they would wait forever)."""
        import ray

        cfg = self.cfg
        need = {"CPU": cfg.num_cpus_per_actor, **cfg.resources}
        nodes = [n.get("Resources", {}) for n in ray.nodes() if n.get("Alive")]  # type: ignore[no-untyped-call]
        total = {k: sum(float(n.get(k, 0.0)) for n in nodes) for k in need}
        for k, per in need.items():
            if per <= 0:
                continue
            if not any(float(n.get(k, 0.0)) >= per for n in nodes):
                raise ValueError(
                    f"no Ray node has {per:g} {k} for one env actor (env.ray.num_cpus_per_actor / env.ray.resources); "
                    f"nodes offer {[float(n.get(k, 0.0)) for n in nodes]}"
                )
            fits = sum(math.floor(float(n.get(k, 0.0)) / per + 1e-9) for n in nodes)
            if fits < num_actors:
                raise ValueError(
                    f"{num_actors} env actors x {per:g} {k} do not fit the Ray cluster ({total[k]:g} {k} in total, room "
                    f"for {fits}): lower env.num_envs or env.ray.num_cpus_per_actor, or add nodes"
                )

    def close(self) -> None:
        """Release this session; the last one out stops the Ray this process started. Safe to call twice."""
        global _users, _owned
        if not self._open:
            return
        self._open = False
        with _lock:
            _users -= 1
            if _users == 0 and _owned:
                import ray

                ray.shutdown()
                _owned = False


def _package_dir() -> str:
    import digirl

    return str(Path(digirl.__file__).resolve().parent)
