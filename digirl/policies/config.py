"""Configuration of policies: the options every kind shares, and one config class per kind.

``policy.kind`` picks the implementation (see :mod:`digirl.policies.registry`); its options live
under ``policy.<kind>.*`` (``policy.default.dim=128``). ``policy.init`` is a saved policy folder
(any kind: its ``policy.json`` says which) or, for kinds built on a pretrained model, that model's
local folder. This module imports nothing heavy, so configs load without torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from digirl.core.errors import DataError

__all__ = ["EncoderConfig", "PolicyConfig", "PolicyNetConfig"]


def _f(default: Any, help: str) -> Any:
    return field(default=default, metadata={"help": help})


def _sub(cls: type, help: str) -> Any:
    return field(default_factory=cls, metadata={"help": help})


@dataclass(frozen=True)
class EncoderConfig:
    """The from-scratch screen encoder (CNN + hashed words + UI elements + a small transformer).

    The default policy is this encoder with action heads; DigiRL's critics have an encoder of their
    own, configured separately (``algo.critic.*``).
    """

    dim: int = _f(96, "transformer width")
    layers: int = _f(2, "transformer layers")
    heads: int = _f(4, "attention heads")
    dropout: float = _f(0.0, "dropout in the transformer")
    image_width: int = _f(48, "screenshot width fed to the CNN")
    image_height: int = _f(104, "screenshot height fed to the CNN")
    frame_stack: int = _f(1, "screenshots stacked as input (DigiRL stacks 2: the current and the previous)")
    max_instruction_words: int = _f(24, "instruction words kept")
    max_elements: int = _f(40, "UI elements kept per screen")
    history_len: int = _f(4, "previous action kinds shown")
    buckets: int = _f(4096, "hash buckets of the word embedding")

    def __post_init__(self) -> None:
        if self.dim % self.heads:
            raise ValueError(f"dim ({self.dim}) must be a multiple of heads ({self.heads})")
        if min(self.dim, self.layers, self.heads, self.frame_stack, self.buckets) < 1:
            raise ValueError("dim, layers, heads, frame_stack and buckets must be >= 1")

    @property
    def features(self) -> Any:
        """The featurization this encoder expects (:class:`digirl.policies.features.FeatureSpec`)."""
        from digirl.policies.features import FeatureSpec

        return FeatureSpec(
            image_width=self.image_width,
            image_height=self.image_height,
            frame_stack=self.frame_stack,
            max_instruction_words=self.max_instruction_words,
            max_elements=self.max_elements,
            history_len=self.history_len,
            buckets=self.buckets,
        )

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EncoderConfig:
        """From a saved ``policy.json`` config; unknown keys are a :class:`DataError`."""
        known = set(cls.__dataclass_fields__)
        unknown = set(d) - known
        if unknown:
            raise DataError(f"policy config has unknown keys {sorted(unknown)}")
        return cls(**d)


#: The default policy's network config (the same fields as its encoder).
PolicyNetConfig = EncoderConfig


@dataclass
class PolicyConfig:
    """Which policy, where it starts from, and how it acts."""

    kind: str = _f("default", "policy kind: default (from-scratch CPU policy), or another registered kind (hf, autoui, api)")
    init: str | None = _f(
        None,
        "start from this folder: a saved digirl policy of any kind (its policy.json names the kind), "
        "or a pretrained model folder for kinds built on one; null = a fresh policy",
    )
    temperature: float = _f(1.0, "sampling temperature during collection (paper: 1.0)")
    device: str = _f("auto", "cpu, cuda, cuda:N, or auto (cuda when available)")
    default: EncoderConfig = _sub(EncoderConfig, "the default policy's network (kind=default)")

    def __post_init__(self) -> None:
        from digirl.policies.registry import policy_kinds

        if self.kind not in policy_kinds():
            raise ValueError(f"policy.kind {self.kind!r} is not registered; known kinds: {', '.join(policy_kinds())}")
        if not self.temperature > 0:
            raise ValueError(f"policy.temperature must be > 0, got {self.temperature}")
