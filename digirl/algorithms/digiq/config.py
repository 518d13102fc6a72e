"""Configuration of Digi-Q (``algo.name=digiq``): ``algo.digiq.*``. Imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from digirl.algorithms.encoder_config import CriticEncoderConfig

__all__ = ["DigiQConfig", "HFFeatureConfig"]


def _f(default: Any, help: str) -> Any:
    return field(default=default, metadata={"help": help})


def _sub(cls: type, help: str) -> Any:
    return field(default_factory=cls, metadata={"help": help})


@dataclass
class HFFeatureConfig:
    """A local Hugging Face VLM as the feature backend (``algo.digiq.features=hf``)."""

    model: str | None = _f(None, "local folder of the VLM (AutoModelForImageTextToText + AutoProcessor); never downloaded")
    layer: int = _f(
        -1,
        "hidden-state layer whose states are pooled (negative: from the end; released code: last, paper: an intermediate one)",
    )
    pool: Literal["mean", "last"] = _f("mean", "mean over the prompt's tokens, or the last token's state")
    dtype: Literal["auto", "bfloat16", "float16", "float32"] = _f(
        "auto", "weights dtype (auto: bfloat16 on CUDA, float32 on CPU)"
    )
    device: str = _f("auto", "cpu, cuda, cuda:N or auto")
    image_scale: float = _f(0.5, "screenshots are resized by this factor before the processor (released code: 0.25)")
    lora_r: int = _f(0, "representation fine-tuning with LoRA adapters of this rank (0: full fine-tuning; needs peft)")

    def __post_init__(self) -> None:
        if not 0.0 < self.image_scale <= 1.0:
            raise ValueError(f"algo.digiq.hf.image_scale must be in (0, 1], got {self.image_scale}")
        if self.lora_r < 0:
            raise ValueError(f"algo.digiq.hf.lora_r must be >= 0, got {self.lora_r}")


@dataclass
class DigiQConfig:
    """Digi-Q: candidates, labels, representation fine-tuning, features, TD critic, best-of-N actor.

    Defaults follow the released code where it applies to our scale (N = 16, temperature 1.2,
    τ = 0.1, γ from ``algo.gamma``, δ = 0.10 General / 0.05 Web Shopping, 80/20 trajectory split).
    """

    data: str | None = _f(
        None,
        "folder of the stage sidecars (candidates, labels, fine-tuned backend, features); `digirl digiq` sets RUN/digiq. "
        "null: computed in memory by the update (not resumable)",
    )
    candidates: int = _f(16, "N: candidate actions per state, the dataset action included (released: 16)")
    temperature: float = _f(1.2, "sampling temperature of the proposals (released: 1.2)")
    resample: int = _f(3, "extra sampling rounds for invalid or duplicate proposals (released: 3 for invalid ones)")
    label: Literal["auto", "exact", "pixel"] = _f(
        "auto",
        "Yes/No labels: exact (replay the simulator to the state and apply each candidate), pixel (released heuristic "
        "on s and s′ of the dataset action), auto (exact on the simulator, else pixel)",
    )
    pixel_threshold: float = _f(30.0, "pixel label: Yes when the mean squared difference of ×0.25 screenshots exceeds this")
    features: str = _f("encoder", "feature backend: encoder (the default policy's screen encoder, CPU), hf (a local VLM)")
    encoder: CriticEncoderConfig = _sub(
        CriticEncoderConfig, "the encoder backend's network when the policy is not the default kind (a critic's encoder keys)"
    )
    encoder_init: Literal["policy", "random"] = _f(
        "policy",
        "encoder backend: start from the behaviour policy's encoder weights, or random ones (same architecture)",
    )
    hf: HFFeatureConfig = _sub(HFFeatureConfig, "the hf backend (algo.digiq.hf.*)")
    repft: bool = _f(True, "representation fine-tuning on the Yes/No labels (false: the ablation)")
    repft_steps: int = _f(300, "representation fine-tuning optimizer steps")
    repft_lr: float | None = _f(None, "its learning rate (null: 1e-3 for the encoder, 2e-5 for a VLM)")
    repft_batch: int = _f(32, "its minibatch size")
    feature_batch: int = _f(64, "batch size of feature extraction")
    critic_hidden: int = _f(256, "width of the Q and V MLP heads")
    text_dim: int = _f(32, "embedding width of goal, action type and typed text inputs")
    critic_lr: float = _f(1e-3, "critic learning rate (released: 1e-5 on VLM-sized heads)")
    critic_steps: int = _f(2000, "critic optimizer steps per update (released: 800)")
    critic_batch: int = _f(256, "critic minibatch size in transitions")
    tau: float = _f(0.1, "Polyak rate of the target networks (released: 0.1)")
    polyak_every: int = _f(0, "optimizer steps between target updates (0: once per pass over the transitions, as released)")
    loss: Literal["mse", "ce"] = _f("mse", "TD loss: squared error (released) or cross-entropy with the soft TD target")
    twin: Literal["max", "min", "mean"] = _f("max", "how twin heads combine (released: max for both Q and V)")
    action_features: Literal["off", "action", "element"] = _f(
        "off",
        "action-aware inputs of the Q head (ablation): action = tap position, swipe/type flags, typed text vs the "
        "instruction's words (no element list); element = also the target element's position, size, text, its overlap "
        "with the instruction and whether it overlaps most (reads the element list); off = as released",
    )
    conservative: float = _f(
        0.0,
        "weight of a CQL penalty over each state's candidates (logsumexp_j Q(s, a_j) − Q(s, a_data)): pessimism about "
        "proposals the data never tried (0: off, as released)",
    )
    noop_td: float = _f(
        0.0,
        "weight of a TD term on proposals labelled 'No' (the screen does not change): Q(s, a) = γ·V̄(s), what a "
        "no-op is worth in a deterministic app; grounds Q on actions the data never took (0: off, as released)",
    )
    outcome_td: float = _f(
        0.0,
        "weight of a TD term on executed proposals: every valid proposal is executed once on a copy of its state "
        "(simulator datasets; the stage `outcomes`, its env steps counted) and Q(s, a_j) = r_j + γ(1 − done_j)·V̄(s′_j) "
        "on the screen it led to, so Q of actions the data never took rests on what they did (0: off, as released)",
    )
    outcome_backup: Literal["data", "max"] = _f(
        "data",
        "V's target where proposals were executed (outcome_td): Q̄ of the dataset action (data, as released) or the "
        "largest Q̄ over the dataset action and the executed proposals (max: each was tried, so no extrapolation)",
    )
    folds: int = _f(
        5,
        "cross-fitting: K critics, each trained on the other folds' trajectories, score their own fold, so no advantage "
        "comes from a critic that saw the state (an in-sample V(s) memorizes Q(s, a_data) on unique screens); "
        "1 = one critic, as released",
    )
    holdout: float = _f(0.2, "with folds=1: fraction of trajectories (by id hash) the critic never trains on (released: 80/20)")
    bootstrap_truncated: bool = _f(
        False,
        "bootstrap V(s′) after a truncated last step (false: the episode's end is terminal, as the horizon is part of the task)",
    )
    time_feature: bool = _f(True, "V and Q also see the step index (the horizon makes values depend on it)")
    delta: float = _f(0.10, "keep a state when its best advantage exceeds δ (released: 0.10 General, 0.05 Web Shopping)")
    skip_unchanged: bool = _f(
        True,
        "candidates labelled 'No' (the screen does not change: a no-op in a deterministic app) are never chosen, "
        "like invalid ones (our addition; the released code uses the labels for fine-tuning only)",
    )
    margin: float = _f(
        0.0,
        "a proposal replaces a valid dataset action only when its advantage is higher by more than this "
        "(0: the released argmax; a guard against proposals the critic overrates)",
    )
    fallback: bool = _f(
        False,
        "proposals only where the dataset action is not kept (invalid, unchanged screen, or advantage <= δ); elsewhere "
        "the dataset action (false: the released argmax over all candidates)",
    )
    extract_candidates: int = _f(
        0, "best-of-N over the first k candidates only (0: all N; 1: the N = 1 ablation, dataset actions only)"
    )
    workers: int = _f(1, "processes of the exact-label and oracle stages")

    def __post_init__(self) -> None:
        if not isinstance(self.encoder, CriticEncoderConfig):
            raise ValueError(
                f"algo.digiq.encoder must be a CriticEncoderConfig (a critic's encoder keys), got {type(self.encoder).__name__}"
            )
        if self.candidates < 1:
            raise ValueError(f"algo.digiq.candidates must be >= 1, got {self.candidates}")
        if not self.temperature > 0:
            raise ValueError(f"algo.digiq.temperature must be > 0, got {self.temperature}")
        if not 0.0 <= self.tau <= 1.0:
            raise ValueError(f"algo.digiq.tau must be in [0, 1], got {self.tau}")
        if not 0.0 <= self.holdout < 1.0:
            raise ValueError(f"algo.digiq.holdout must be in [0, 1), got {self.holdout}")
        if self.conservative < 0 or self.noop_td < 0 or self.outcome_td < 0:
            raise ValueError(
                f"algo.digiq.conservative, noop_td and outcome_td must be >= 0, got {self.conservative}, {self.noop_td}, "
                f"{self.outcome_td}"
            )
        if self.outcome_backup != "data" and self.outcome_td <= 0:  # it would be silently ignored
            raise ValueError(
                f"algo.digiq.outcome_backup={self.outcome_backup} backs V up from executed proposals: "
                "set algo.digiq.outcome_td > 0"
            )
        if self.extract_candidates < 0:
            raise ValueError(f"algo.digiq.extract_candidates must be >= 0, got {self.extract_candidates}")
        if self.delta < 0 or self.margin < 0:
            raise ValueError(f"algo.digiq.delta and algo.digiq.margin must be >= 0, got {self.delta}, {self.margin}")
        if min(self.repft_batch, self.feature_batch, self.critic_batch, self.workers, self.folds) < 1:
            raise ValueError("algo.digiq batch sizes and workers must be >= 1")
