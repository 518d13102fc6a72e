"""digirl: train device-control agents with autonomous reinforcement learning.

Importing ``digirl`` is cheap: torch and optional backends load only when used. The public API::

    import digirl
    env = digirl.make("digirl/sim-general-v0")          # any id of `digirl envs list`
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(digirl.Action.tap(0.5, 0.3))
    policy = digirl.load_policy("runs/my-run/policy")    # a saved policy folder (imports torch)
    store = digirl.TrajectoryStore("runs/my-run/data")   # stored trajectories

With Gymnasium installed, every id also works with ``gymnasium.make`` (see ``digirl.envs.gym``).
"""

from __future__ import annotations

from digirl.utils.lazy import lazy_attributes

__version__ = "0.1.0"

_LAZY = {
    "Action": "digirl.core.actions",
    "ActionType": "digirl.core.actions",
    "Observation": "digirl.core.types",
    "Step": "digirl.core.types",
    "Trajectory": "digirl.core.types",
    "TaskSpec": "digirl.core.types",
    "UIElement": "digirl.core.types",
    "make": "digirl.envs.registry",
    "register": "digirl.envs.registry",
    "list_envs": "digirl.envs.registry",
    "load_policy": "digirl.policies.registry",
    "TrajectoryStore": "digirl.data.store",
}


__getattr__ = lazy_attributes(__name__, _LAZY)


def __dir__() -> list[str]:  # the lazy names too, for completion in a REPL
    return sorted({*globals(), *_LAZY})


__all__ = ["__version__", *sorted(_LAZY)]

from digirl import _gymnasium_hook  # noqa: E402 (after the names above: the hook may import digirl.envs)

_gymnasium_hook.install()
