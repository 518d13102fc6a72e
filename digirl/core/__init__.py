"""Core records and the action space. Imports no torch and no optional dependency."""

from digirl.core.actions import Action, ActionType, SwipeDirection
from digirl.core.types import SCHEMA_VERSION, Observation, Step, TaskSpec, Trajectory, UIElement, mc_returns

__all__ = [
    "SCHEMA_VERSION",
    "Action",
    "ActionType",
    "Observation",
    "Step",
    "SwipeDirection",
    "TaskSpec",
    "Trajectory",
    "UIElement",
    "mc_returns",
]
