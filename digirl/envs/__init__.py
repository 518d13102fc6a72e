"""Environment API (Gymnasium-shaped), the registry, wrappers and the vector runner."""

from digirl.envs.base import DeviceEnv, StepResult
from digirl.envs.registry import list_envs, make, register

__all__ = ["DeviceEnv", "StepResult", "list_envs", "make", "register"]
