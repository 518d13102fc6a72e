"""Gymnasium adapter: any digirl env as a real ``gymnasium.Env`` with ``gymnasium.spaces``.

``import digirl`` registers every digirl id with Gymnasium (see :mod:`digirl._gymnasium_hook`), so::

    import digirl, gymnasium
    env = gymnasium.make("digirl/sim-general-v0", render_mode="rgb_array")

builds ``GymnasiumEnv(env_id="digirl/sim-general-v0")``, which wraps :func:`digirl.make`. Extra
keywords go to the digirl env (``perturbation=0``, ``split="test"``, ``latency_s=...``).

Observation (a ``Dict``; every value is a fresh object on each call):

- ``screenshot``: ``Box(0, 255, (H, W, 3), uint8)``
- ``instruction``: ``Text`` (the task, in words)
- ``step``: ``Box`` int64 scalar, the step number within the episode (0 after reset)
- ``history``: ``Sequence(Text)``, the actions taken so far, each in the env's action codec (JSON by
  default; an invalid one as ``"INVALID"``)
- ``elements``: ``Sequence(Dict(bounds, text, kind, clickable, focused))``, the visible UI elements
  (empty when the backend does not report them); ``bounds`` are normalized ``(x0, y0, x1, y1)``.

Action (``action_format``):

- ``"dict"`` (default): ``Dict(type=Discrete(7), touch=Box(0, 1, (2,)), lift=Box(0, 1, (2,)), text=Text)``.
  ``type`` indexes :data:`ACTION_TYPES`; ``touch``/``lift`` (normalized ``(x, y)``) are read only for
  ``DUAL_POINT`` (equal points tap, distant points swipe), ``text`` only for ``TYPE``.
- ``"text"``: ``Text``, the model's raw output in the env's codec, e.g.
  ``'{"type": "DUAL_POINT", "touch": [0.5, 0.3], "lift": [0.5, 0.3]}'`` (a tap).

In both modes ``step`` also takes a :class:`~digirl.core.actions.Action` or codec text. A value that
is not a valid action (bad numbers, unparseable text) is an INVALID action: the step is spent,
nothing happens on the device and ``info["invalid_action"]`` is true. It never raises.
"""

from __future__ import annotations

import copy
import math
import operator
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from digirl.core.actions import MAX_TEXT_LEN, Action, ActionType
from digirl.core.codecs import format_action
from digirl.core.types import Observation
from digirl.envs.base import DeviceEnv

__all__ = ["ACTION_TYPES", "MAX_INSTRUCTION_LEN", "GymnasiumEnv", "action_from_space", "text_charset"]

#: The ``type`` of a dict action indexes this tuple (AitW's action types, without INVALID).
ACTION_TYPES: tuple[ActionType, ...] = tuple(t for t in ActionType if t is not ActionType.INVALID)
#: Longest instruction / element text the ``Text`` spaces admit.
MAX_INSTRUCTION_LEN = 1024
_MAX_ELEMENT_TEXT = 1024
_MAX_KIND = 64
# A typed text of MAX_TEXT_LEN characters, JSON-escaped, inside the codec's braces.
_MAX_HISTORY_ENTRY = 2 * MAX_TEXT_LEN + 128

# Unicode blocks the on-screen texts use beyond ASCII (accents, currency, arrows, stars, ticks,
# punctuation, one emoji block). Text outside these still reaches the agent unchanged; Gymnasium's
# passive checker then warns that the observation left the declared space.
_BLOCKS = (
    (0x20, 0x7E),
    (0xA0, 0x24F),
    (0x2010, 0x205E),
    (0x20A0, 0x20BF),
    (0x2100, 0x23FF),
    (0x25A0, 0x27BF),
    (0x1F300, 0x1F64F),
)


@lru_cache(maxsize=1)
def text_charset() -> str:
    """The characters of every ``Text`` space here: printable ASCII, Latin, punctuation and symbols."""
    return "".join(chr(c) for lo, hi in _BLOCKS for c in range(lo, hi + 1) if chr(c).isprintable()) + "\n\t"


class _Text(spaces.Text):
    """Gymnasium's ``Text`` over :func:`text_charset`, with a repr that does not print its ~1,900 characters."""

    def __repr__(self) -> str:
        return f"Text({self.min_length}, {self.max_length}, charset=digirl.envs.gym.text_charset())"


def _text(max_length: int, min_length: int = 0) -> spaces.Text:
    return _Text(max_length=max_length, min_length=min_length, charset=text_charset())


def action_from_space(value: Any, codec: str = "json") -> Action:
    """An :class:`Action` from a value of either action space (dict or codec text); never raises.

    ``Action`` objects pass through. Anything that does not make a valid action is ``Action.invalid``.
    """
    if isinstance(value, Action):
        return value
    if isinstance(value, str):
        from digirl.core.codecs import parse_action

        return parse_action(value, codec)
    if not isinstance(value, Mapping):
        return Action.invalid(repr(value)[:200], f"expected a dict, text or Action, got {type(value).__name__}")
    try:
        idx = operator.index(value["type"])  # an int or a numpy integer; 1.5 or "2" is not a type
        if not 0 <= idx < len(ACTION_TYPES):
            raise ValueError(f"type {idx} is outside 0..{len(ACTION_TYPES) - 1}")
        kind = ACTION_TYPES[idx]
        if kind is ActionType.DUAL_POINT:
            touch, lift = (_point(value[k], k) for k in ("touch", "lift"))
            return Action.dual_point(touch, lift)
        if kind is ActionType.TYPE:
            return Action.type_text(str(value["text"]))
        return Action(kind)
    except (KeyError, TypeError, ValueError, IndexError) as e:
        return Action.invalid(repr(dict(value))[:200], f"bad dict action: {e}")


def _point(v: Any, name: str) -> tuple[float, float]:
    arr = np.asarray(v, dtype=np.float64).reshape(-1)
    if arr.shape != (2,) or not all(math.isfinite(float(x)) for x in arr):
        raise ValueError(f"{name} must be two finite numbers, got {v!r}")
    return (float(arr[0]), float(arr[1]))


class GymnasiumEnv(gymnasium.Env[dict[str, Any], Any]):
    """A digirl :class:`~digirl.envs.base.DeviceEnv` behind Gymnasium's API and spaces.

    Give either ``env`` (an env already built) or ``env_id`` (plus keywords for :func:`digirl.make`).
    ``render_mode="rgb_array"`` makes :meth:`render` return the current screenshot.
    """

    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 2}

    def __init__(
        self,
        env: DeviceEnv | None = None,
        *,
        env_id: str | None = None,
        render_mode: str | None = None,
        action_format: str = "dict",
        **kwargs: Any,
    ) -> None:
        if (env is None) == (env_id is None):
            raise ValueError("give exactly one of env (a digirl env) or env_id (a registered id)")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        if action_format not in ("dict", "text"):
            raise ValueError(f"action_format must be 'dict' or 'text', got {action_format!r}")
        if env is None:
            from digirl.envs.registry import make

            assert env_id is not None
            env = make(env_id, **kwargs)
        elif kwargs:
            raise TypeError(f"keywords {sorted(kwargs)} only apply with env_id (the env is already built)")
        self.env: DeviceEnv = env
        self.render_mode = render_mode
        self.action_format = action_format
        h, w, _ = env.observation_space.screenshot.shape
        element = spaces.Dict(
            {
                "bounds": spaces.Box(0.0, 1.0, shape=(4,), dtype=np.float32),
                "text": _text(_MAX_ELEMENT_TEXT),
                "kind": _text(_MAX_KIND),
                "clickable": spaces.Discrete(2),
                "focused": spaces.Discrete(2),
            }
        )
        self.observation_space = spaces.Dict(
            {
                "screenshot": spaces.Box(0, 255, shape=(h, w, 3), dtype=np.uint8),
                "instruction": _text(MAX_INSTRUCTION_LEN),
                "step": spaces.Box(0, np.iinfo(np.int64).max, shape=(), dtype=np.int64),
                "history": spaces.Sequence(_text(_MAX_HISTORY_ENTRY)),
                "elements": spaces.Sequence(element),
            }
        )
        self.action_space: spaces.Space[Any]
        if action_format == "dict":
            self.action_space = spaces.Dict(
                {
                    "type": spaces.Discrete(len(ACTION_TYPES)),
                    "touch": spaces.Box(0.0, 1.0, shape=(2,), dtype=np.float32),
                    "lift": spaces.Box(0.0, 1.0, shape=(2,), dtype=np.float32),
                    "text": _text(MAX_TEXT_LEN, min_length=1),
                }
            )
        else:
            self.action_space = _text(MAX_TEXT_LEN + 64, min_length=1)
        self.last_observation: Observation | None = None

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        obs, info = self.env.reset(seed=seed, options=options)
        # One generator for both: seeding either seeds the episode's task and dynamics.
        self._np_random = self.env.np_random
        return self._convert(obs), copy.deepcopy(info)

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        act = action_from_space(action, self.env.action_codec)
        obs, reward, terminated, truncated, info = self.env.step(act)
        return self._convert(obs), float(reward), bool(terminated), bool(truncated), copy.deepcopy(info)

    def render(self) -> np.ndarray | None:
        if self.render_mode != "rgb_array":
            return None
        return np.array(self.env.render(), dtype=np.uint8, copy=True)

    def close(self) -> None:
        self.env.close()

    # ------------------------------------------------------------------ helpers
    def action_of(self, action: Any) -> Action:
        """The :class:`Action` a value of this env's action space stands for (INVALID if none)."""
        return action_from_space(action, self.env.action_codec)

    def to_space(self, action: Action) -> Any:
        """An :class:`Action` as a value of this env's action space (inverse of :meth:`action_of`)."""
        if self.action_format == "text":
            return format_action(action, self.env.action_codec)
        if action.type is ActionType.INVALID:
            raise ValueError("an INVALID action has no value in the dict action space")
        zero = np.zeros(2, dtype=np.float32)
        return {
            "type": ACTION_TYPES.index(action.type),
            "touch": np.asarray(action.touch, dtype=np.float32) if action.touch is not None else zero,
            "lift": np.asarray(action.lift, dtype=np.float32) if action.lift is not None else zero.copy(),
            "text": action.text or " ",
        }

    def _convert(self, obs: Observation) -> dict[str, Any]:
        self.last_observation = obs
        codec = self.env.action_codec
        return {
            # Copies: the simulator hands out cached frames, and callers keep what they are given.
            "screenshot": np.array(obs.screenshot, dtype=np.uint8, copy=True),
            "instruction": obs.instruction,
            "step": np.array(obs.step, dtype=np.int64),
            "history": tuple(format_action(a, codec) if a.is_valid else "INVALID" for a in obs.history),
            "elements": tuple(
                {
                    "bounds": np.clip(np.asarray(e.bounds, dtype=np.float32), 0.0, 1.0),
                    "text": e.text,
                    "kind": e.kind,
                    "clickable": int(e.clickable),
                    "focused": int(e.focused),
                }
                for e in (obs.elements or ())
            ),
        }

    def __repr__(self) -> str:
        return f"GymnasiumEnv({type(self.env).__name__}, action_format={self.action_format!r})"
