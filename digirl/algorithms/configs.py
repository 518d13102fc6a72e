"""One config class per algorithm, and the ``algo`` section that holds them all.

Every algorithm reads only its own class: :class:`FilteredBCConfig`, :class:`DigiRLConfig`,
:class:`DigiQAlgoConfig` (each an :class:`ActorConfig`, the options of the behaviour-cloning actor
update they share). The name table (:mod:`digirl.algorithms.catalog`) pairs each algorithm with its
class, and :func:`~digirl.algorithms.registry.make_algorithm` hands an algorithm its own config.

The user writes one ``algo`` section (``algo.name=…``, ``algo.lam=…``): :class:`AlgoConfig`, every
built-in algorithm's options side by side, so presets and scripts that set one algorithm's options
and run another (``fbc-general`` is ``digirl-general`` with ``algo.name=filtered_bc``) keep loading.
It is built from the classes above, not written out again: an option is declared once, where its
algorithm is.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Literal, TypeVar

from digirl.algorithms.catalog import algorithm_names
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
    "GRPOConfig",
    "PPOConfig",
    "PolicyGradientConfig",
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
class PolicyGradientConfig(ActorConfig):
    """The clipped policy-gradient update GRPO and PPO share (PPO's surrogate; digirl.algorithms.onpolicy).

    Both learn on-policy from the newest iteration's trajectories only (``mode=online``; start from an
    SFT policy with ``policy.init``). Their optimizer steps per update: ``update_epochs`` passes over
    those steps in minibatches of ``batch_size`` (× ``grad_accum``), at most ``actor_steps``.
    """

    #: On-policy: ``digirl train`` accepts only ``mode=online`` for these algorithms.
    on_policy: ClassVar[bool] = True

    clip_eps: float = _f(0.2, "GRPO/PPO: ε of the clipped ratio clip(π/π_old, 1−ε, 1+ε) (PPO paper: 0.2)")
    update_epochs: float = _f(
        4.0, "GRPO/PPO: passes over the newest iteration's steps per update, in minibatches of batch_size (≤ actor_steps)"
    )
    entropy_coef: float = _f(
        0.0, "GRPO/PPO: weight of the entropy bonus, estimated from the sampled actions as −ρ·log π (0 = off)"
    )
    efficiency_coef: float = _f(
        0.0,
        "GRPO/PPO: a success's return is 1 − c·steps/horizon (MobileGUI-RL-style efficiency term; failures are not "
        "charged for their steps, so failing fast never pays); 0 = the plain 0/1 outcome; must be in [0, 1)",
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.clip_eps > 0:
            raise ValueError(f"algo.clip_eps must be > 0, got {self.clip_eps}")
        if not self.update_epochs > 0:
            raise ValueError(f"algo.update_epochs must be > 0, got {self.update_epochs}")
        if self.entropy_coef < 0:
            raise ValueError(f"algo.entropy_coef must be >= 0, got {self.entropy_coef}")
        if not 0.0 <= self.efficiency_coef < 1.0:
            raise ValueError(f"algo.efficiency_coef must be in [0, 1), got {self.efficiency_coef}")


@dataclass
class GRPOConfig(PolicyGradientConfig):
    """GRPO (``algo.name=grpo``): group-relative advantages over G rollouts of one task and seed
    (``group_size`` of the run), clipped ratio, KL penalty to the reference (starting) policy."""

    #: GRPO needs the run to collect groups (``group_size`` >= 2).
    needs_groups: ClassVar[bool] = True

    grpo_advantage: Literal["trajectory", "step"] = _f(
        "trajectory",
        "GRPO advantage: trajectory (each step gets its episode's group-normalised return) or step (each step's "
        "discounted return-to-go γ^(H−1−h)·R, normalised over all the steps of its group)",
    )
    grpo_scale: bool = _f(True, "GRPO: divide by the group's standard deviation (false: subtract the group mean only)")
    kl_coef: float = _f(0.04, "GRPO: weight β of the KL penalty to the reference policy, the one training started from (0 = off)")
    zero_variance: Literal["skip", "downweight", "keep"] = _f(
        "skip",
        "GRPO: groups whose returns are all equal (no learning signal): skip them (ARPO, MobileRL), downweight "
        "them by zero_variance_weight (they still feel the KL penalty), or keep them at weight 1",
    )
    zero_variance_weight: float = _f(0.1, "GRPO, zero_variance=downweight: the loss weight of such a group's steps")
    success_replay: int = _f(
        0,
        "GRPO (ARPO-style replay): keep the last N successful trajectories of each task; a group with no success "
        "gets one of them in place of one failure (0 = off; only trajectories still in the run's replay buffer)",
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.grpo_advantage not in ("trajectory", "step"):
            raise ValueError(f"algo.grpo_advantage must be trajectory or step, got {self.grpo_advantage!r}")
        if self.zero_variance not in ("skip", "downweight", "keep"):
            raise ValueError(f"algo.zero_variance must be skip, downweight or keep, got {self.zero_variance!r}")
        if self.kl_coef < 0:
            raise ValueError(f"algo.kl_coef must be >= 0, got {self.kl_coef}")
        if not 0.0 <= self.zero_variance_weight <= 1.0:
            raise ValueError(f"algo.zero_variance_weight must be in [0, 1], got {self.zero_variance_weight}")
        if self.success_replay < 0:
            raise ValueError(f"algo.success_replay must be >= 0, got {self.success_replay}")


@dataclass
class PPOConfig(PolicyGradientConfig):
    """PPO (``algo.name=ppo``): a learned value baseline V(s), GAE(γ, λ) advantages, clipped ratio, value loss."""

    gae_lambda: float = _f(0.95, "PPO: λ of generalised advantage estimation (1 = Monte-Carlo return − V, 0 = one-step TD)")
    value_lr: float = _f(1e-3, "PPO: learning rate of the value network")
    value_epochs: float = _f(4.0, "PPO: passes of the value network over the newest steps per update (≤ actor_steps)")
    normalize_advantages: bool = _f(True, "PPO: normalise the batch's advantages to mean 0, std 1")
    critic: CriticEncoderConfig = field(
        default_factory=CriticEncoderConfig,
        metadata={"help": "the screen encoder of the value network (DigiRL's step critic, PPO's V(s)); not the policy's"},
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.critic, CriticEncoderConfig):
            raise ValueError(f"algo.critic must be a CriticEncoderConfig, got {type(self.critic).__name__}")
        if not 0.0 <= self.gae_lambda <= 1.0:
            raise ValueError(f"algo.gae_lambda must be in [0, 1], got {self.gae_lambda}")
        if not self.value_epochs > 0 or not self.value_lr > 0:
            raise ValueError("algo.value_epochs and algo.value_lr must be > 0")


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
    branch_score: Literal["auto", "rollout", "critic"] = _f(
        "auto",
        "branch: how a sampled action is valued: rollout (executed on a clone of the env and rolled out to the end: "
        "needs state_clone and state_replay), critic (not executed: a learned Q(s, a) scores it, on any env), "
        "auto (rollout where the env can clone, else critic)",
    )
    branch_critic_steps: int = _f(40, "branch: Q-critic optimizer steps per update (branch_score=critic)")
    branch_critic_lr: float = _f(1e-3, "branch: Q-critic learning rate")
    branch_critic_batch: int = _f(64, "branch: Q-critic minibatch size")
    critic: CriticEncoderConfig = field(
        default_factory=CriticEncoderConfig,
        metadata={"help": "the value networks' screen encoder (DigiRL's and PPO's V(s), branch's Q(s, a)); not the policy's"},
    )

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
        if self.branch_score not in ("auto", "rollout", "critic"):
            raise ValueError(f"algo.branch_score must be auto, rollout or critic, got {self.branch_score!r}")
        if self.branch_critic_steps < 0 or self.branch_critic_batch < 1:
            raise ValueError("algo.branch_critic_steps must be >= 0 and algo.branch_critic_batch >= 1")


@dataclass
class _Named:
    name: str = _f("digirl", "algorithm: filtered_bc, digirl, or another registered name (`digirl config keys train`)")

    def __post_init__(self) -> None:
        if self.name not in algorithm_names():
            raise ValueError(f"algo.name {self.name!r} is not registered; known: {', '.join(algorithm_names())}")


@dataclass
class AlgoConfig(BranchConfig, PPOConfig, GRPOConfig, DigiQAlgoConfig, DigiRLConfig, FilteredBCConfig, _Named):
    """The ``algo`` section: ``algo.name`` and every built-in algorithm's options (each algorithm reads its own).

    (Field order: ``name``, the actor's options, then Filtered BC's, DigiRL's, Digi-Q's, the clipped
    update's, GRPO's and PPO's, as the bases list them; ``critic`` is DigiRL's and PPO's.)
    """

    # Properties of the algorithm ``name`` picks (read them from its own class), not of the whole section.
    on_policy: ClassVar[bool] = False
    needs_groups: ClassVar[bool] = False

    def __post_init__(self) -> None:
        _Named.__post_init__(self)
        super().__post_init__()  # each algorithm's and the actor's checks, once each (method resolution order)
