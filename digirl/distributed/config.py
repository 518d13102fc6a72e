"""``env.ray.*``: where the Ray runner's env actors run and what each one needs (plain data, no Ray import)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = ["RayConfig"]


def _f(default: Any, help: str) -> Any:
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata={"help": help})
    return field(default=default, metadata={"help": help})


_ENV_VAR = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class RayConfig:
    """Options of ``env.runner=ray`` (``docs/distributed.md`` walks through them)."""

    address: str = _f(
        "",
        "Ray to use: '' starts a private local Ray bound to 127.0.0.1 (no setup); 'auto' joins the cluster this "
        "machine was added to with `ray start`; 'HOST:6379' joins that head node; 'ray://HOST:10001' uses Ray Client",
    )
    num_cpus_per_actor: float = _f(
        1.0, "logical CPUs each env actor reserves (fractions allowed: 0.25 for light envs; an emulator wants 2)"
    )
    resources: dict[str, float] = _f(
        {},
        "custom Ray resources each actor needs, e.g. {emulator: 1}: actors then only land on hosts started with "
        "`ray start --resources='{\"emulator\": 4}'`",
    )
    spread: bool = _f(True, "spread actors over as many nodes as possible (false: pack them, Ray's default)")
    devices: list[str] = _f(
        [], "one device per actor slot (slot i gets devices[i], passed to the env as device_kwarg); [] = none"
    )
    device_pool_var: str = _f(
        "",
        "each actor claims a free device from this environment variable on the host it lands on "
        "(comma-separated, e.g. DIGIRL_DEVICES=emulator-5554,emulator-5556); '' = off",
    )
    device_kwarg: str = _f("serial", "env keyword argument that receives the actor's device (AndroidEnv: serial)")
    local_num_cpus: int = _f(
        0, "logical CPUs of a private local Ray (0: enough for every actor, and at least this machine's cores)"
    )
    object_store_mb: int = _f(256, "object store of a private local Ray, in MiB (observations pass through it)")
    ship_code: bool = _f(
        False,
        "send this machine's digirl package to the cluster's workers (Ray runtime_env py_modules) instead of "
        "using the digirl installed there; its dependencies must still be installed on every worker",
    )
    namespace: str = _f("digirl", "Ray namespace of the actors")
    prestart: bool = _f(
        True,
        "start every env actor when the collector is built, so that actors (and their devices) boot while the "
        "learner runs its offline phase; false: each starts on its first episode",
    )
    inference: Literal["learner", "actor"] = _f(
        "learner",
        "where the policy acts: 'learner' batches every waiting env's observation into one policy call in the "
        "training process (one Ray round trip per env step; the mode for large GPU policies); 'actor' has each "
        "actor play up to steps_per_call steps per Ray call itself, with the scripted expert or with the policy's "
        "weights fetched once per version from the object store (on the actor's CPU)",
    )
    steps_per_call: int = _f(
        16,
        "inference=actor: env steps an actor plays per Ray call (a hung step is noticed after at most "
        "steps_per_call x env.step_timeout_s)",
    )

    def __post_init__(self) -> None:
        if not self.num_cpus_per_actor >= 0:
            raise ValueError(f"env.ray.num_cpus_per_actor must be >= 0, got {self.num_cpus_per_actor}")
        bad = {k: v for k, v in self.resources.items() if not v > 0}
        if bad:
            raise ValueError(f"env.ray.resources must be positive amounts, got {bad}")
        if self.devices and self.device_pool_var:
            raise ValueError("set env.ray.devices or env.ray.device_pool_var, not both")
        if self.device_pool_var and not _ENV_VAR.match(self.device_pool_var):
            raise ValueError(f"env.ray.device_pool_var must be an environment variable name, got {self.device_pool_var!r}")
        if (self.devices or self.device_pool_var) and not self.device_kwarg.isidentifier():
            raise ValueError(f"env.ray.device_kwarg must be a keyword argument name, got {self.device_kwarg!r}")
        if self.inference not in ("learner", "actor"):
            raise ValueError(f"env.ray.inference must be 'learner' or 'actor', got {self.inference!r}")
        if self.steps_per_call < 1:
            raise ValueError(f"env.ray.steps_per_call must be >= 1, got {self.steps_per_call}")
        if self.local_num_cpus < 0 or self.object_store_mb < 64:
            raise ValueError("env.ray.local_num_cpus must be >= 0 and env.ray.object_store_mb >= 64")

    def to_options(self) -> dict[str, Any]:
        """What ``make_collector(..., options=...)`` passes to the Ray backend."""
        return asdict(self)
