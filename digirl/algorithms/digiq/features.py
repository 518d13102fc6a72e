"""The feature backend seam of Digi-Q: f(s, a) and φ(s) from a (fine-tuned) screen model.

f(s, a) is the hidden state a model computes for the screen *with the action drawn on it* (a cursor
for a tap, an arrow for a swipe) together with the action's text; φ(s) is its state for the plain
screen. Representation fine-tuning teaches the model the Yes/No question "does this action change the
screen?" before features are extracted once into a float16 sidecar.

A backend implements :class:`FeatureBackend` and is registered by name
(``register_feature_backend("name", "module:Class")``); the class has ``build(cfg, policy, seed=)``
and ``load(path, cfg, policy)``. Built in: ``encoder`` (the default policy's screen encoder, CPU) and
``hf`` (any local Hugging Face VLM through ``AutoModelForImageTextToText``).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from digirl.core.actions import Action, ActionType
from digirl.core.errors import ConfigError
from digirl.core.types import Observation

if TYPE_CHECKING:
    from digirl.algorithms.digiq.config import DigiQConfig
    from digirl.policies.base import Policy

__all__ = [
    "FeatureBackend",
    "action_text",
    "draw_action",
    "feature_backend_names",
    "load_feature_backend",
    "make_feature_backend",
    "question",
    "register_feature_backend",
]


@runtime_checkable
class FeatureBackend(Protocol):
    """What Digi-Q's stages need from a screen model."""

    #: The registered name (``encoder``, ``hf``, ...).
    name: str

    def action_features(self, observations: Sequence[Observation], actions: Sequence[Action]) -> np.ndarray:
        """f(s, a) [B, D_a] float32, without gradients."""
        ...

    def state_features(self, observations: Sequence[Observation]) -> np.ndarray:
        """φ(s) [B, D_s] float32, without gradients."""
        ...

    def finetune(
        self,
        observations: Sequence[Observation],
        actions: Sequence[Action],
        labels: Sequence[bool],
        *,
        steps: int,
        lr: float | None,
        batch_size: int,
        seed: int,
    ) -> dict[str, float]:
        """Representation fine-tuning on the Yes/No labels; returns metrics (``critic/repft_…``)."""
        ...

    def identity(self) -> dict[str, Any]:
        """What determines the features (model, layer, weights' origin): stage options of ``featurize``."""
        ...

    def save(self, path: str | Path) -> None:
        """Write the backend (weights without pickle + a JSON config) into the folder ``path``."""
        ...


_BACKENDS: dict[str, str] = {
    "encoder": "digirl.algorithms.digiq.features_encoder:EncoderBackend",
    "hf": "digirl.algorithms.digiq.features_hf:HFBackend",
}


def register_feature_backend(name: str, entry_point: str) -> None:
    """Register (or replace) a feature backend; ``entry_point`` is ``"module:Class"``."""
    if ":" not in entry_point:
        raise ValueError(f"entry_point must be 'module:Class', got {entry_point!r}")
    _BACKENDS[name] = entry_point


def feature_backend_names() -> list[str]:
    return sorted(_BACKENDS)


def _backend_class(name: str) -> Any:
    if name not in _BACKENDS:
        raise ConfigError(f"unknown algo.digiq.features {name!r}; known: {', '.join(feature_backend_names())}")
    mod, _, attr = _BACKENDS[name].partition(":")
    return getattr(importlib.import_module(mod), attr)


def make_feature_backend(cfg: DigiQConfig, policy: Policy | None, *, seed: int) -> FeatureBackend:
    """A fresh (not fine-tuned) backend ``cfg.features``."""
    backend: FeatureBackend = _backend_class(cfg.features).build(cfg, policy, seed=seed)
    return backend


def load_feature_backend(path: str | Path, cfg: DigiQConfig, policy: Policy | None) -> FeatureBackend:
    """A backend saved by ``save`` (its ``backend.json`` names the kind)."""
    import json

    from digirl.core.errors import DataError

    meta_path = Path(path) / "backend.json"
    try:
        meta = json.loads(meta_path.read_text())
        name = str(meta["name"])
    except (OSError, ValueError, KeyError) as e:
        raise DataError(f"{meta_path}: not a saved feature backend ({e})") from e
    backend: FeatureBackend = _backend_class(name).load(path, cfg, policy)
    return backend


# ---------------------------------------------------------------------- what the model is shown
def action_text(action: Action) -> str:
    """A short description of an action, as the model reads it next to the drawing."""
    t = action.type
    if t is ActionType.DUAL_POINT:
        assert action.touch is not None
        if action.is_swipe:
            d = action.swipe_direction
            return f"swipe {d.value if d is not None else ''}".strip()
        return f"tap at ({action.touch[0]:.2f}, {action.touch[1]:.2f})"
    return untouched_action_words(
        action, complete="report the task complete", impossible="report the task impossible", other="an unreadable action"
    )


def untouched_action_words(action: Action, *, complete: str, impossible: str, other: str) -> str:
    """The words of an action that touches nothing: the typed text, a key, or the status (worded by the
    caller); ``other`` for any other action."""
    t = action.type
    if t is ActionType.TYPE:
        return f"type {action.text}"
    return {
        ActionType.PRESS_BACK: "press back",
        ActionType.PRESS_HOME: "press home",
        ActionType.PRESS_ENTER: "press enter",
        ActionType.STATUS_TASK_COMPLETE: complete,
        ActionType.STATUS_TASK_IMPOSSIBLE: impossible,
    }.get(t, other)


def question(action: Action, goal: str) -> str:
    """The Yes/No question of representation fine-tuning (one wording per action type)."""
    t = action.type
    if t is ActionType.DUAL_POINT and action.is_tap:
        assert action.touch is not None
        ask = (
            f"The red cursor on the screenshot marks a tap at ({action.touch[0]:.2f}, {action.touch[1]:.2f}). "
            "Does this tap land on something that reacts, so that the screen changes?"
        )
    elif t is ActionType.DUAL_POINT:
        ask = f"The red arrow on the screenshot marks a {action_text(action)}. Does this swipe move or change what is shown?"
    elif t is ActionType.TYPE:
        ask = f'If the user types "{action.text}" now, does the text go into a field on the screen?'
    elif t in (ActionType.PRESS_BACK, ActionType.PRESS_HOME, ActionType.PRESS_ENTER):
        ask = f"Does it change the screen to {action_text(action)} now?"
    else:
        ask = f"The agent chooses to {action_text(action)}. Does the screen change?"
    return f"Task: {goal}\n{ask} Answer with Yes or No only."


def draw_action(screenshot: np.ndarray, action: Action) -> np.ndarray:
    """The screenshot with the action drawn: a red cursor ring for a tap, a red arrow for a swipe
    (other actions are left undrawn; their text says what they are). Returns a new array."""
    if action.type is not ActionType.DUAL_POINT:
        same: np.ndarray = screenshot.copy()
        return same
    from PIL import Image, ImageDraw

    img = Image.fromarray(screenshot)
    draw = ImageDraw.Draw(img)
    w, h = img.size
    assert action.touch is not None and action.lift is not None
    x0, y0 = action.touch[0] * (w - 1), action.touch[1] * (h - 1)
    r = max(4.0, 0.04 * w)
    red, white = (230, 20, 20), (255, 255, 255)
    if action.is_tap:
        draw.ellipse((x0 - r - 1, y0 - r - 1, x0 + r + 1, y0 + r + 1), outline=white, width=2)
        draw.ellipse((x0 - r, y0 - r, x0 + r, y0 + r), outline=red, width=max(2, int(r / 3)))
        dot = max(2.0, r / 2.5)
        draw.ellipse((x0 - dot, y0 - dot, x0 + dot, y0 + dot), fill=red)
    else:
        x1, y1 = action.lift[0] * (w - 1), action.lift[1] * (h - 1)
        width = max(2, int(0.015 * w))
        draw.line((x0, y0, x1, y1), fill=red, width=width)
        dx, dy = x1 - x0, y1 - y0
        n = max(1e-6, float(np.hypot(dx, dy)))
        ux, uy = dx / n, dy / n
        head = 2.5 * r
        left = (x1 - head * ux + head * 0.6 * uy, y1 - head * uy - head * 0.6 * ux)
        right = (x1 - head * ux - head * 0.6 * uy, y1 - head * uy + head * 0.6 * ux)
        draw.polygon([(x1, y1), left, right], fill=red)
        draw.ellipse((x0 - r / 2, y0 - r / 2, x0 + r / 2, y0 + r / 2), fill=red)
    out: np.ndarray = np.asarray(img, dtype=np.uint8).copy()
    return out
