"""One config class per algorithm, and the ``algo`` section that holds them all.

Every algorithm reads only its own class: :class:`FilteredBCConfig`, :class:`DigiRLConfig`,
:class:`DigiQAlgoConfig` (each an :class:`ActorConfig`, the options of the behaviour-cloning actor
update they share). The registry (:mod:`digirl.algorithms.registry`) pairs each algorithm with its
class, and :func:`~digirl.algorithms.registry.make_algorithm` hands an algorithm its own config.

The user writes one ``algo`` section (``algo.name=…``, ``algo.lam=…``): :class:`AlgoConfig`, every
built-in algorithm's options side by side, so presets and scripts that set one algorithm's options
and run another (``fbc-general`` is ``digirl-general`` with ``algo.name=filtered_bc``) keep loading.
It is built from the classes above, not written out again: an option is declared once, where its
algorithm is.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal, TypeVar

from digirl.algorithms.digiq.config import DigiQConfig
from digirl.algorithms.encoder_config import CriticEncoderConfig

__all__ = [
    "ActorConfig",
    "AlgoConfig",
    "BranchConfig",
    "CriticEncoderConfig",
    "DigiQAlgoConfig",
    "DigiRLConfig",
    "FilteredBCConfig",
]

C = TypeVar("C", bound="ActorConfig")


def _f(default: Any, help: str) -> Any:
    return field(default=default, metadata={"help": help})


@dataclass
class ActorConfig:
    """The behaviour-cloning actor update every built-in algorithm ends with (paper Table 6 values noted)."""

    lr: float = _f(1e-3, "actor learning rate (paper: 3e-3 for AutoUI)")
    batch_size: int = _f(64, "actor minibatch size in steps (paper: 128)")
    grad_accum: int = _f(1, "gradient accumulation steps per optimizer step")
    max_grad_norm: float = _f(1.0, "gradient clipping norm (paper: 0.01 for AutoUI)")
    actor_steps: int = _f(40, "actor optimizer steps per online iteration (paper: 20)")
    offline_actor_steps: int = _f(200, "actor optimizer steps in the offline phase")
    actor_epochs: float | None = _f(
        None,
        "scale the actor's optimizer steps with the data it clones: this many passes over the samples per update, "
        "at most actor_steps (offline_actor_steps offline); null = always the fixed count. Fixed counts on a few "
        "hundred kept steps made DigiRL's pointer certain of actions it never tried (benchmarks/results/table1)",
    )
    gamma: float = _f(0.95, "discount for Monte-Carlo returns (released code: 0.95)")

    def __post_init__(self) -> None:
        if self.batch_size < 1 or self.grad_accum < 1:
            raise ValueError("algo.batch_size and algo.grad_accum must be >= 1")
        if self.actor_epochs is not None and not self.actor_epochs > 0:
            raise ValueError(f"algo.actor_epochs must be > 0 or null, got {self.actor_epochs}")

    @classmethod
    def of(cls: type[C], section: ActorConfig) -> C:
        """This class's options, taken from ``section`` (the ``algo`` section, or any config that has them)."""
        return cls(**{f.name: getattr(section, f.name) for f in fields(cls) if f.init})


@dataclass
class FilteredBCConfig(ActorConfig):
    """Filtered BC (``algo.name=filtered_bc``): clone the steps of the top-reward trajectories."""

    fbc_quantile: float = _f(0.9, "Filtered BC keeps trajectories at or above this reward quantile (released: 0.9)")


@dataclass
class DigiRLConfig(ActorConfig):
    """DigiRL (``algo.name=digirl``): critics, step advantages, instruction curriculum, filtered or AWR actor."""

    advantage: str = _f(
        "dr",
        "step advantage estimator (digirl.algorithms.estimators): dr (paper Eq. 4.3), released (code variant), "
        "mc (ablation: MC return only)",
    )
    lam: float = _f(0.5, "λ of the doubly-robust advantage (paper: 0.5)")
    threshold: float | None = _f(
        None, "keep steps with advantage > threshold; null = the estimator's own (dr: 1/H, the paper; released: 0)"
    )
    actor_weighting: Literal["hard", "awr"] = _f("hard", "hard filter (paper Eq. 4.2) or exponential AWR weights (ablation)")
    awr_beta: float = _f(0.5, "temperature of exponential AWR")
    curriculum: bool = _f(True, "instruction-level curriculum (paper Eq. 4.4) in the online phase")
    curriculum_top: float = _f(0.5, "fraction of trajectories kept by the curriculum (released code: 0.1)")
    curriculum_keep_successes: bool = _f(
        False,
        "the curriculum also keeps every successful trajectory below its cut, so it drops failures only "
        "(false: the paper's top fraction, which stops training the easiest tasks once most episodes succeed)",
    )
    critic_lr: float = _f(1e-3, "learning rate of both critics")
    critic_steps: int = _f(40, "step-critic optimizer steps per online iteration (paper: 5 epochs)")
    offline_critic_steps: int = _f(200, "step-critic optimizer steps in the offline phase")
    instruct_critic_steps: int = _f(40, "instruction-critic optimizer steps per iteration")
    critic_batch_size: int = _f(128, "critic minibatch size")
    value_loss: str = _f(
        "bce", "critic loss (digirl.algorithms.estimators): bce, cross-entropy on success (paper), or mse (ablation)"
    )
    twin_critic: bool = _f(True, "twin step-critic heads, min taken (released code)")
    critic_folds: int = _f(
        1,
        "cross-fitting: with K > 1 folds each trajectory's values come from critics trained on the other "
        "folds, never on it, and held-out critic accuracy is logged (1 = the paper's in-sample fit)",
    )
    critic: CriticEncoderConfig = field(
        default_factory=CriticEncoderConfig, metadata={"help": "the step critic's own screen encoder (not the policy's)"}
    )

    def __post_init__(self) -> None:
        from digirl.algorithms.estimators import advantage_estimator_names, value_loss_names

        super().__post_init__()
        if not isinstance(self.critic, CriticEncoderConfig):
            raise ValueError(
                f"algo.critic must be a CriticEncoderConfig (the critic's own encoder keys), got {type(self.critic).__name__}"
            )
        if self.advantage not in advantage_estimator_names():
            raise ValueError(f"algo.advantage must be one of {', '.join(advantage_estimator_names())}, got {self.advantage!r}")
        if self.value_loss not in value_loss_names():
            raise ValueError(f"algo.value_loss must be one of {', '.join(value_loss_names())}, got {self.value_loss!r}")
        if not 0.0 <= self.lam <= 1.0:
            raise ValueError(f"algo.lam must be in [0, 1], got {self.lam}")
        if not 0.0 < self.curriculum_top <= 1.0:
            raise ValueError(f"algo.curriculum_top must be in (0, 1], got {self.curriculum_top}")
        if self.critic_folds < 1:
            raise ValueError(f"algo.critic_folds must be >= 1, got {self.critic_folds}")


@dataclass
class DigiQAlgoConfig(ActorConfig):
    """Digi-Q (``algo.name=digiq``): its own options under ``algo.digiq``."""

    digiq: DigiQConfig = field(default_factory=DigiQConfig, metadata={"help": "Digi-Q (algo.name=digiq): its own options"})


@dataclass
class BranchConfig(ActorConfig):
    """Branching (``algo.name=branch``): K sampled actions per visited state, each executed on a clone of the
    env and rolled out to the end with the policy; its advantage is its return minus the mean of its state's
    group (Android Coach's single state, multiple actions). Needs an env that clones (``state_clone``) and
    replays (``state_replay``) its states: the simulator. The branches' env steps are counted
    (``rollout/branch_env_steps``) so comparisons at equal env steps are fair."""

    branch_k: int = _f(4, "branch: actions sampled per branched state (K)")
    branch_states: Literal["all", "random", "first", "last"] = _f(
        "random", "branch: which visited states of each episode to branch from (random: branch_max_states of them)"
    )
    branch_max_states: int = _f(2, "branch: states branched per episode (0 = every visited state)")
    branch_include_taken: bool = _f(
        True, "branch: the episode's own action at the state joins its group, valued by the episode's return from there"
    )
    branch_weighting: Literal["positive", "awr"] = _f(
        "positive",
        "branch: actor weight of a branched action: positive (its advantage where > 0: clone the better-than-average "
        "actions) or awr (exp(advantage / branch_beta) for every action)",
    )
    branch_beta: float = _f(0.5, "branch: temperature of the awr weighting")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.branch_k < 1:
            raise ValueError(f"algo.branch_k must be >= 1, got {self.branch_k}")
        if self.branch_k == 1 and not self.branch_include_taken:
            raise ValueError("algo.branch_k=1 without branch_include_taken gives groups of one action: no advantage")
        if self.branch_max_states < 0:
            raise ValueError(f"algo.branch_max_states must be >= 0 (0 = every state), got {self.branch_max_states}")
        if self.branch_states not in ("all", "random", "first", "last"):
            raise ValueError(f"algo.branch_states must be all, random, first or last, got {self.branch_states!r}")
        if self.branch_weighting not in ("positive", "awr"):
            raise ValueError(f"algo.branch_weighting must be positive or awr, got {self.branch_weighting!r}")
        if not self.branch_beta > 0:
            raise ValueError(f"algo.branch_beta must be > 0, got {self.branch_beta}")


@dataclass
class _Named:
    name: str = _f("digirl", "algorithm: filtered_bc, digirl, or another registered name (`digirl config keys train`)")

    def __post_init__(self) -> None:
        from digirl.algorithms.registry import algorithm_names

        if self.name not in algorithm_names():
            raise ValueError(f"algo.name {self.name!r} is not registered; known: {', '.join(algorithm_names())}")


@dataclass
class AlgoConfig(BranchConfig, DigiQAlgoConfig, DigiRLConfig, FilteredBCConfig, _Named):
    """The ``algo`` section: ``algo.name`` and every built-in algorithm's options (each algorithm reads its own).

    (Field order: ``name``, the actor's options, then Filtered BC's, DigiRL's and Digi-Q's, as the bases list them.)
    """

    def __post_init__(self) -> None:
        _Named.__post_init__(self)
        super().__post_init__()  # Digi-Q's, DigiRL's and the actor's checks, once each (method resolution order)
