"""The scripted expert: the next action for any task family, from privileged state, closed-loop.

Each call looks at what is on screen now (pop-up? loading? keyboard over the target? wrong
app?) and returns one action, so it recovers from perturbations and from noisy actions taken
in between. It never changes state: it reads the phone's (cached) view tree and app state only.
Taps go to element centres, optionally jittered by a hash of (salt, step, element) — pure too.
:class:`ExpertStep` and the AitW plans live in :mod:`digirl.sim.plans`, below the families.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from digirl.core.actions import Action
from digirl.sim.families import get_family
from digirl.sim.goals import TaskContext, check
from digirl.sim.plans import PLANS, ExpertStep, in_app, to_site

if TYPE_CHECKING:
    from digirl.sim.phone import Phone

__all__ = ["PLANS", "ExpertStep", "expert_action", "in_app", "to_site"]


def expert_action(phone: Phone, ctx: TaskContext, *, jitter: float = 0.0, salt: int = 0) -> Action:
    """The expert's next action for the task ``ctx`` on ``phone`` (STATUS_TASK_COMPLETE when done)."""
    if check(phone, ctx):
        return Action.complete()
    e = ExpertStep(phone, ctx, jitter, salt)
    return e.obstacle() or get_family(ctx.intent.family).plan(e)
