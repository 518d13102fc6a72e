"""Which parameters of a vision-language model train: LoRA adapters (peft) or full fine-tuning.

Vision modules are recognised by name across families (Qwen's ``visual``, LLaVA's
``vision_tower`` + ``multi_modal_projector``, Idefics3/SmolVLM's ``vision_model`` + ``connector``,
PaliGemma's ``vision_tower``), so "the language model only" means every other module.
"""

from __future__ import annotations

import re
from typing import Any

from digirl.policies.config import HFPolicyConfig

__all__ = ["VISION_MODULES", "apply_lora", "is_vision_param", "lora_target_regex", "set_trainable", "vision_frozen"]

#: Name fragments of the vision tower and the projector into the language model.
VISION_MODULES = ("visual", "vision_tower", "vision_model", "multi_modal_projector", "connector")
_VISION_RE = re.compile(r"(^|\.)(" + "|".join(VISION_MODULES) + r")(\.|$)")


def is_vision_param(name: str) -> bool:
    """Whether the parameter (or module) ``name`` belongs to the vision tower or its projector."""
    return _VISION_RE.search(name) is not None


def lora_target_regex(cfg: HFPolicyConfig) -> str:
    """A peft ``target_modules`` regex: the named linear layers, outside the vision tower unless ``lora_vision``."""
    names = "|".join(re.escape(t.strip()) for t in cfg.lora_targets.split(",") if t.strip())
    if cfg.lora_vision:
        return rf".*\.({names})"
    return rf"(?!.*(^|\.)({'|'.join(VISION_MODULES)})\.).*\.({names})"


def apply_lora(model: Any, cfg: HFPolicyConfig) -> Any:
    """``model`` wrapped with fresh LoRA adapters (only they train)."""
    from peft import LoraConfig, get_peft_model

    lc = LoraConfig(
        r=cfg.lora_r,
        lora_alpha=cfg.lora_alpha,  # type: ignore[arg-type]  # peft types it int; floats work
        lora_dropout=cfg.lora_dropout,
        target_modules=lora_target_regex(cfg),
        bias="none",
    )
    try:
        return get_peft_model(model, lc)
    except ValueError as e:
        raise ValueError(f"policy.hf.lora_targets={cfg.lora_targets!r} matches no layer of this model ({e})") from e


def vision_frozen(cfg: HFPolicyConfig) -> bool:
    """Whether the vision tower's output is fixed during updates (its features can be cached)."""
    return (cfg.lora_r > 0 and not cfg.lora_vision) or (cfg.lora_r == 0 and cfg.freeze_vision)


def set_trainable(model: Any, cfg: HFPolicyConfig) -> None:
    """Full fine-tuning: everything trains except, with ``freeze_vision``, the vision tower and projector.

    (With LoRA, peft has already frozen everything but the adapters.)
    """
    if cfg.lora_r > 0:
        return
    for name, p in model.named_parameters():
        p.requires_grad_(not (cfg.freeze_vision and is_vision_param(name)))
