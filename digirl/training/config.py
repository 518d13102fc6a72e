"""Typed configuration of SFT, collection, training and evaluation runs.

Every field has help text; presets live in ``digirl/config/presets/*.yaml`` and any field can be
overridden on the command line as ``section.key=value``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from digirl.algorithms.base import AlgoConfig
from digirl.distributed.config import RayConfig
from digirl.policies.config import PolicyConfig
from digirl.training.task_sampling import DemoSampling

__all__ = [
    "AsyncConfig",
    "CollectConfig",
    "EnvConfig",
    "EvalConfig",
    "EvalRunConfig",
    "LogConfig",
    "PolicyConfig",
    "SFTConfig",
    "SFTRunConfig",
    "TrainConfig",
]


def _f(default: Any, help: str) -> Any:
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata={"help": help})
    return field(default=default, metadata={"help": help})


def _sub(cls: type, help: str) -> Any:
    return field(default_factory=cls, metadata={"help": help})


#: Options every run config (train, sft, collect, eval) has, declared once.
_DETERMINISTIC_HELP = (
    "same command, same machine -> same numbers: lock-step policy batches, trajectories in job order, "
    "deterministic torch kernels (slower on GPU); false lets quick envs start without waiting for slow resets"
)
_OBSERVATION_HELP = (
    "what the agent sees: screenshot (pixels and the instruction) or screenshot+elements (also the simulator's "
    "UI element list: texts, boxes, kinds); sets the policy's, the critics' and the Digi-Q encoder's use_elements "
    "together (an explicit one that disagrees is an error). auto: what the policy sees (a loaded policy: as "
    "saved), critics alike unless given; the settled value is saved and written into every result JSON"
)


def _deterministic() -> Any:
    return _f(True, _DETERMINISTIC_HELP)


def _observation() -> Any:
    return _f("auto", _OBSERVATION_HELP)


@dataclass
class EnvConfig:
    id: str = _f("digirl/sim-general-v0", "registered env id (see `digirl envs list`)")
    perturbation: int = _f(1, "simulator in-the-wild perturbation level 0/1/2 (simulator envs only)")
    world_version: int = _f(0, "simulator world version (shifts layouts and content)")
    task_file: str | None = _f(None, "train on the instructions of this file (one per line) instead of the env's train split")
    train_split: str = _f("train", "split that online collection samples from")
    test_split: str = _f("test", "split evaluated sequentially (DigiRL protocol)")
    val_split: str = _f("validation", "split eval.val_tasks evaluates (simulator task sets: held-out entities of its own)")
    num_envs: int = _f(4, "environments stepped in parallel")
    runner: str = _f(
        "auto",
        "collector backend: auto (what the env asks for: browser envs share one Chromium, others use process), "
        "process (one worker process per env, fault-tolerant), inline (in this process), browser, or another "
        "registered backend",
    )
    step_timeout_s: float = _f(30.0, "a step slower than this restarts the env worker")
    max_episode_retries: int = _f(2, "retries of an episode whose env crashed before it is marked an env failure")
    latency_s: list[float] = _f(
        [],
        "artificial latency of every reset and step: [low, high] seconds, drawn uniformly per call (e.g. [0.5, 2.0] "
        "as a real phone; digirl.envs.wrappers.Latency); [] = none",
    )
    ray: RayConfig = _sub(RayConfig, "Ray runner (env.runner=ray): cluster address, resources per actor, devices")

    def __post_init__(self) -> None:
        from digirl.envs.collector import collector_names

        if self.runner not in collector_names():
            raise ValueError(f"env.runner {self.runner!r} is not one of {', '.join(collector_names())}")
        if self.num_envs < 1:
            raise ValueError(f"env.num_envs must be >= 1, got {self.num_envs}")
        if self.latency_s and not (len(self.latency_s) == 2 and 0 <= self.latency_s[0] <= self.latency_s[1]):
            raise ValueError(f"env.latency_s must be [low, high] seconds with 0 <= low <= high, got {self.latency_s}")
        if self.runner != "ray" and self.ray != RayConfig():
            raise ValueError(f"env.ray.* options are set but env.runner={self.runner}; add env.runner=ray")

    def env_kwargs(self) -> dict[str, Any]:
        kw: dict[str, Any] = {"latency_s": list(self.latency_s)} if self.latency_s else {}
        from digirl.envs.registry import env_has

        if env_has(self.id, "world_options"):
            kw |= {"perturbation": self.perturbation, "world_version": self.world_version}
        return kw

    def collector_options(self) -> dict[str, Any]:
        """The backend options :func:`~digirl.envs.collector.make_collector` gets (``env.ray.*`` for Ray)."""
        return self.ray.to_options() if self.runner == "ray" else {}


@dataclass
class SFTConfig:
    demos: int = _f(64, "expert demonstrations to collect (ignored when dataset is given)")
    demo_sampling: DemoSampling = _f(
        "uniform",
        "how demo tasks are drawn from the train split: uniform over tasks; family (each draw picks a family "
        "uniformly, so rare families get demos too, but a family can get none); stratified (every family "
        "floor(n/F) or ceil(n/F) demos: none is left out)",
    )
    dataset: str | None = _f(None, "train on this stored dataset instead of fresh expert demos")
    expert_noise: float = _f(0.0, "probability that a demo step is replaced by a random action")
    steps: int = _f(150, "optimizer steps")
    batch_size: int = _f(64, "minibatch size in steps")
    lr: float = _f(1e-3, "learning rate")
    max_grad_norm: float = _f(1.0, "gradient clipping norm")

    def __post_init__(self) -> None:
        if not 0.0 <= self.expert_noise <= 1.0:  # checked here, before any folder is made
            raise ValueError(f"expert_noise must be in [0, 1] (a probability), got {self.expert_noise}")


@dataclass
class EvalConfig:
    every: int = _f(2, "evaluate every N online iterations (0 = only at the end)")
    test_tasks: int = _f(96, "first N tasks of the test split, in order (DigiRL protocol: 96)")
    train_tasks: int = _f(32, "tasks sampled at random from the train split")
    val_tasks: int = _f(
        0,
        "first N tasks of the validation split (env.val_split), in order, evaluated beside test: choose recipes and "
        "checkpoints on validation, report test (an env without that split is an error)",
    )
    greedy: bool = _f(True, "greedy actions during evaluation (false: sample at policy.temperature)")
    sampled: bool = _f(
        False,
        "also evaluate with sampled actions at policy.temperature, beside the greedy evaluation: digirl train "
        "logs eval/<split>_sampled_success_rate and leaves training's random streams as they were (the run is "
        "otherwise the same); digirl eval writes eval-sampled.json",
    )
    loop_escape: bool = _f(
        False,
        "greedy evaluation only: where the greedy action would go round a cycle of 1-3 actions again (the "
        "same action a third time, a b a b, a b c a b c), sample that action at policy.temperature instead "
        "(digirl/policies/decoding.py); training's random streams are left as they were",
    )
    seed: int = _f(12345, "seed of evaluation episodes (same for every evaluation)")
    selection_split: str = _f(
        "unspecified",
        "the split this run's recipe (hyperparameters, checkpoint, stopping point) was chosen on: validation, test, "
        "none or unspecified; recorded in every result JSON, so a reader knows whether a test number is held out",
    )


@dataclass
class LogConfig:
    tensorboard: bool = _f(True, "write TensorBoard events when tensorboard is installed")
    wandb: bool = _f(False, "log to Weights & Biases (respects WANDB_MODE)")
    wandb_project: str = _f("digirl", "W&B project")
    progress: bool = _f(True, "show progress bars")


@dataclass
class AsyncConfig:
    """Asynchronous learning (``asynchronous.max_staleness`` >= 1; ``docs/distributed.md``)."""

    max_staleness: int = _f(
        0,
        "k: 0 = synchronous (collect, then update: the loop of earlier versions, unchanged); k >= 1 = the envs "
        "keep collecting while the learner updates, with no barrier between iterations, and every trajectory comes "
        "from a policy at most k updates older than the one learning from it (episodes wait rather than start "
        "further ahead; older data is dropped). Needs env.runner process, inline or ray",
    )
    correction: Literal["is", "none"] = _f(
        "is",
        "off-policy correction: is = weight each off-policy step's actor loss by the truncated importance weight "
        "min(rho_bar, pi/mu) (V-trace's rho; mu from the stored behaviour log-probability), none = use stale data as is",
    )
    rho_bar: float = _f(1.0, "truncation of the importance weights (V-trace's rho-bar)")
    c_bar: float = _f(1.0, "truncation of the V-trace trace coefficients (c-bar) in the replay priorities")
    replay_sample: int = _f(
        0,
        "trajectories drawn from the replay buffer for each update (0 = all of them, as the synchronous loop); "
        "> 0 draws them by priority",
    )
    priority_alpha: float = _f(0.5, "prioritised replay: draw probability ∝ priority^alpha (0 = uniform; DistRL: 0.5)")
    priority_td: float = _f(1.0, "priority weight of the mean |V-trace TD error| (algorithms with a step critic, e.g. DigiRL)")
    priority_rho: float = _f(1.0, "priority weight of the mean truncated importance weight")

    def __post_init__(self) -> None:
        if self.max_staleness < 0:
            raise ValueError(f"asynchronous.max_staleness must be >= 0, got {self.max_staleness}")
        if not (self.rho_bar > 0 and self.c_bar > 0):
            raise ValueError("asynchronous.rho_bar and asynchronous.c_bar must be > 0")
        if self.replay_sample < 0 or self.priority_alpha < 0 or self.priority_td < 0 or self.priority_rho < 0:
            raise ValueError("asynchronous.replay_sample, priority_alpha, priority_td and priority_rho must be >= 0")


@dataclass
class TrainConfig:
    """A training run: ``digirl train RUN_DIR [preset] key=value ...``."""

    mode: Literal["offline", "online", "off2on"] = _f(
        "online", "offline: dataset only; online: collect+update; off2on: offline phase then online"
    )
    iterations: int = _f(10, "online iterations (each collects rollout_size trajectories, then updates)")
    rollout_size: int = _f(16, "trajectories collected per online iteration (paper: 16)")
    group_size: int = _f(
        1,
        "rollouts per sampled task in an online iteration, all from one env seed (the same start screen, "
        "different sampled actions): rollout_size/group_size tasks, each played group_size times. GRPO "
        "(algo.name=grpo) needs >= 2 and normalises returns within each group; 1 = every rollout its own task draw",
    )
    warmup_iterations: int = _f(0, "first online iterations only collect (no update)")
    task_sampling: Literal["uniform", "family", "uncertainty"] = _f(
        "uniform",
        "which train tasks an online iteration collects: uniform over the task list (the paper), family "
        "(every family equally often), or uncertainty (families weighted by sqrt(p(1-p)) of their smoothed "
        "success so far; see digirl/training/task_sampling.py)",
    )
    task_family_power: float = _f(
        0.0,
        "task_sampling=family: family f gets a share of each iteration's tasks proportional to n_f^power, n_f its "
        "train tasks (0 = every family equally often, 1 = as uniform, 0.5 in between)",
    )
    offline_dataset: str | None = _f(None, "stored dataset for the offline phase (required for offline and off2on)")
    replay_capacity: int = _f(2000, "trajectories kept for training (FIFO; released code: 2000)")
    seed: int = _f(0, "seed of everything in the run")
    deterministic: bool = _deterministic()
    checkpoint_keep: int = _f(2, "checkpoints kept on disk")
    env: EnvConfig = _sub(EnvConfig, "environment")
    observation: str = _observation()
    policy: PolicyConfig = _sub(PolicyConfig, "policy network")
    algo: AlgoConfig = _sub(AlgoConfig, "algorithm")
    eval: EvalConfig = _sub(EvalConfig, "evaluation")
    log: LogConfig = _sub(LogConfig, "logging")
    asynchronous: AsyncConfig = _sub(AsyncConfig, "asynchronous learning: staleness bound, off-policy correction, priorities")

    def __post_init__(self) -> None:
        if self.mode in ("offline", "off2on") and not self.offline_dataset:
            raise ValueError(f"mode={self.mode} needs offline_dataset=PATH (a dataset from `digirl collect`)")
        if self.iterations < 0 or self.rollout_size < 1:
            raise ValueError("iterations must be >= 0 and rollout_size >= 1")
        if not 0.0 <= self.task_family_power <= 1.0:
            raise ValueError(f"task_family_power must be in [0, 1], got {self.task_family_power}")
        self._check_groups()

    def _check_groups(self) -> None:
        """``group_size`` against ``rollout_size``, the algorithm and the collector (issue 45: GRPO's groups)."""
        from digirl.algorithms.registry import algorithm_config_class

        own = algorithm_config_class(self.algo.name)
        if self.group_size < 1 or self.rollout_size % self.group_size:
            raise ValueError(f"group_size must be >= 1 and divide rollout_size ({self.rollout_size}), got {self.group_size}")
        if getattr(own, "needs_groups", False) and self.group_size < 2:
            raise ValueError(f"algo.name={self.algo.name} compares rollouts of one task and seed: set group_size >= 2 (e.g. 8)")
        if getattr(own, "on_policy", False) and self.mode != "online":
            raise ValueError(f"algo.name={self.algo.name} learns on-policy: use mode=online (policy.init=DIR for an SFT start)")
        if self.group_size > 1 and self.env.runner == "ray" and self.env.ray.inference == "actor":
            # actors reseed the policy's sampling from the job's seed: a group's copies would act alike
            raise ValueError("group_size > 1 needs env.ray.inference=learner (actors sample from the job seed)")


@dataclass
class SFTRunConfig:
    """Supervised fine-tuning: ``digirl sft OUT_DIR key=value ...``."""

    seed: int = _f(0, "seed")
    deterministic: bool = _deterministic()
    env: EnvConfig = _sub(EnvConfig, "environment the demos come from")
    observation: str = _observation()
    policy: PolicyConfig = _sub(PolicyConfig, "policy network")
    sft: SFTConfig = _sub(SFTConfig, "supervised fine-tuning")


@dataclass
class CollectConfig:
    """Collection of an offline dataset: ``digirl collect OUT_DIR policy.init=PATH key=value ...``."""

    trajectories: int = _f(256, "trajectories to collect")
    seed: int = _f(0, "seed")
    deterministic: bool = _deterministic()
    expert: bool = _f(False, "use the env's scripted expert instead of a policy")
    expert_noise: float = _f(0.0, "expert only: probability of a random action per step")
    expert_noise_sticky: bool = _f(
        False,
        "expert only: the random action is a fixed function of the screen's layout (a habit: the same wrong action "
        "on the same kind of screen, whatever the task) instead of fresh at every step",
    )
    shard_size: int = _f(64, "trajectories per stored shard: a killed collect loses (and re-collects) at most this many")
    env: EnvConfig = _sub(EnvConfig, "environment")
    observation: str = _observation()
    policy: PolicyConfig = _sub(PolicyConfig, "policy (policy.init = a saved policy folder)")

    def __post_init__(self) -> None:
        if self.trajectories < 0 or self.shard_size < 1:
            raise ValueError("trajectories must be >= 0 and shard_size >= 1")
        if not 0.0 <= self.expert_noise <= 1.0:  # checked here, before the dataset folder is made
            raise ValueError(f"expert_noise must be in [0, 1] (a probability), got {self.expert_noise}")


@dataclass
class EvalRunConfig:
    """Evaluation: ``digirl eval POLICY_DIR key=value ...``."""

    deterministic: bool = _deterministic()

    env: EnvConfig = _sub(EnvConfig, "environment")
    eval: EvalConfig = _sub(EvalConfig, "evaluation protocol")
    observation: str = _observation()
    policy: PolicyConfig = _sub(PolicyConfig, "policy options (device, temperature)")
