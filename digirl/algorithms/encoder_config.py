"""The screen encoder of a value network (DigiRL's step critic, Digi-Q's encoder backend): its own keys.

Light to import (the config classes of :mod:`digirl.algorithms.configs` and
:mod:`digirl.algorithms.digiq.config` use it).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from digirl.policies.config import EncoderConfig

__all__ = ["CriticEncoderConfig"]


def _f(default: Any, help: str) -> Any:
    return field(default=default, metadata={"help": help})


@dataclass
class CriticEncoderConfig:
    """A critic's own screen encoder: the policy encoder's architecture, without the policy's action heads.

    Holds only what a value network uses; options that feed a policy's heads (``screen_match``) are
    not keys here, so ``algo.critic.screen_match=…`` is an unknown key, not an option ignored at run time.
    """

    dim: int = _f(96, "transformer width")
    layers: int = _f(2, "transformer layers")
    heads: int = _f(4, "attention heads")
    dropout: float = _f(0.0, "transformer dropout")
    word_dropout: float = _f(0.0, "in training, hide each distinct word of a sample with this probability")
    image_width: int = _f(48, "width of the screenshot the CNN sees")
    image_height: int = _f(104, "height of the screenshot the CNN sees")
    frame_stack: int = _f(1, "screenshots stacked as input (the current one and earlier ones)")
    max_instruction_words: int = _f(24, "instruction words read")
    max_elements: int = _f(40, "UI elements read per screen")
    history_len: int = _f(4, "previous action kinds seen")
    buckets: int = _f(4096, "hash buckets of the word embedding")
    use_elements: bool = _f(True, "read the UI element list (false: screenshot and instruction only)")
    label_rows: bool = _f(False, "a clickable element without text reads as the labels centred inside it")
    grid_cols: int = _f(6, "columns of the tap grid")
    grid_rows: int = _f(12, "rows of the tap grid")

    def __post_init__(self) -> None:
        self.encoder()  # the architecture's own checks (dim a multiple of heads, ...)

    def encoder(self) -> EncoderConfig:
        """The screen encoder this builds (:class:`~digirl.policies.default.ScreenEncoder` takes an EncoderConfig)."""
        return EncoderConfig(**asdict(self))

    @property
    def features(self) -> Any:
        """The featurization the encoder expects (:class:`digirl.policies.features.FeatureSpec`)."""
        return self.encoder().features
