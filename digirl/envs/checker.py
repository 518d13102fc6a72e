"""``check_env``: does an env keep the :class:`~digirl.envs.base.DeviceEnv` contract?

Run it on every new backend or task family (the conformance tests run it over the registry).
It stops at the first violation with an ``AssertionError`` whose message names the check, what
was expected and what the env did; on success it returns a :class:`CheckReport` listing the
checks that passed and those skipped (with why). The env is left open; the caller closes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from digirl.core.actions import Action
from digirl.core.types import Observation, TaskSpec
from digirl.envs.base import DeviceEnv

__all__ = ["CheckReport", "check_env"]


@dataclass
class CheckReport:
    """What ``check_env`` verified. ``expert_rewards`` maps task ids to the scripted expert's return."""

    env: str
    passed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    expert_rewards: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"env": self.env, "passed": self.passed, "skipped": self.skipped, "expert_rewards": self.expert_rewards}


def _require(cond: bool, msg: str) -> None:
    if not cond:
        raise AssertionError(f"check_env: {msg}")


def _check_obs(env: DeviceEnv, obs: Any, where: str, step: int) -> Observation:
    if not isinstance(obs, Observation):
        raise AssertionError(f"check_env: {where} must return an Observation, got {type(obs).__name__}")
    shot = obs.screenshot
    space = env.observation_space.screenshot
    _require(
        shot.dtype == np.uint8 and shot.shape == space.shape,
        f"{where}: screenshot is {shot.dtype} {shot.shape}, the observation space declares uint8 {space.shape}",
    )
    _require(isinstance(obs.instruction, str) and obs.instruction != "", f"{where}: instruction must be a non-empty str")
    _require(obs.step == step, f"{where}: observation.step is {obs.step!r}, expected {step}")
    _require(env.observation_space.contains(obs), f"{where}: observation_space.contains(obs) is False")
    return obs


def _check_step_tuple(env: DeviceEnv, out: Any, step: int) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
    _require(isinstance(out, tuple) and len(out) == 5, f"step() must return a 5-tuple, got {type(out).__name__}")
    obs, reward, terminated, truncated, info = out
    _check_obs(env, obs, f"step() #{step}", step)
    _require(
        isinstance(reward, (float, int, np.floating)) and not isinstance(reward, bool),
        f"step() #{step}: reward must be a float, got {type(reward).__name__}",
    )
    _require(
        type(terminated) is bool and type(truncated) is bool,
        f"step() #{step}: terminated/truncated must be bool, got {type(terminated).__name__}/{type(truncated).__name__}",
    )
    _require(not (terminated and truncated), f"step() #{step}: terminated and truncated are both True")
    _require(isinstance(info, dict), f"step() #{step}: info must be a dict, got {type(info).__name__}")
    return obs, float(reward), terminated, truncated, info


def _rollout(env: DeviceEnv, seed: int, task: TaskSpec | str | None) -> list[tuple[bytes, float, bool, bool]]:
    """Reset with ``seed`` and act with a seed-derived random sequence; a fingerprint of each step."""
    obs, _ = env.reset(seed=seed, options={"task": task})
    rng = np.random.default_rng(seed)
    trace = [(obs.screenshot.tobytes() + obs.instruction.encode(), 0.0, False, False)]
    for _ in range(env.horizon):
        obs, reward, terminated, truncated, _info = env.step(env.action_space.sample(rng))
        trace.append((obs.screenshot.tobytes(), float(reward), terminated, truncated))
        if terminated or truncated:
            break
    return trace


def _expert_tasks(env: DeviceEnv, seeds: Sequence[int], max_tasks: int) -> list[tuple[int, TaskSpec | None]]:
    tasks_fn = getattr(env, "tasks", None)
    if callable(tasks_fn):
        tasks = list(tasks_fn())[:max_tasks]
        return [(seeds[i % len(seeds)], t) for i, t in enumerate(tasks)]
    return [(i, None) for i in range(max_tasks)]  # sampled tasks, one per seed


def check_env(env: DeviceEnv, *, seeds: Sequence[int] = (0, 1), check_expert: bool = True, max_tasks: int = 5) -> CheckReport:
    """Check ``env`` against the DeviceEnv contract; raise ``AssertionError`` on the first violation.

    Checked: spaces exist; ``reset`` → ``(Observation, dict)`` whose screenshot matches the space,
    with an instruction and ``step == 0``; ``step`` → the typed 5-tuple, never terminated and
    truncated together; observations are not mutated by later steps; invalid actions (an
    ``Action.invalid`` and the text ``"garbage"``) spend a step, set ``info["invalid_action"]`` and do
    not end the episode, so repeating them truncates exactly at the horizon; ``step`` after the end
    raises; the same seed and actions give identical screenshots and rewards; and, when
    ``cheat()`` gives actions and ``check_expert``, the scripted expert earns reward > 0 within the
    horizon on up to ``max_tasks`` tasks (from ``env.tasks()`` if the env has it, else sampled).
    """
    if not seeds:
        raise ValueError("check_env needs at least one seed")
    report = CheckReport(env=type(env).__name__)
    _check_spaces(env)
    report.passed.append("spaces")
    obs0 = _check_reset(env, seeds[0])
    report.passed.append("reset")
    _check_first_step(env, obs0, seeds[0])
    report.passed.append("step")
    _check_invalid_actions(env, seeds[0], report)
    _check_determinism(env, seeds)
    report.passed.append(f"seeded determinism (seeds {list(seeds)})")
    if not check_expert:
        report.skipped.append("scripted expert: check_expert=False")
        return report
    env.reset(seed=seeds[0])
    if env.cheat() is None:
        report.skipped.append("scripted expert: cheat() returned None")
        return report
    for seed, task in _expert_tasks(env, seeds, max_tasks):
        tid, total = _check_expert_episode(env, seed, task)
        report.expert_rewards[tid] = total
    report.passed.append(f"scripted expert solves {len(report.expert_rewards)} tasks")
    return report


def _check_spaces(env: DeviceEnv) -> None:
    _require(
        hasattr(env, "observation_space") and hasattr(env.observation_space, "screenshot"),
        "env.observation_space with a .screenshot ImageSpace is missing",
    )
    _require(
        hasattr(env, "action_space") and callable(getattr(env.action_space, "sample", None)),
        "env.action_space with .sample(rng) is missing",
    )


def _check_reset(env: DeviceEnv, seed: int) -> Observation:
    out = env.reset(seed=seed)
    _require(isinstance(out, tuple) and len(out) == 2, "reset() must return (observation, info)")
    obs0, info0 = out
    _check_obs(env, obs0, "reset()", 0)
    _require(isinstance(info0, dict), f"reset() info must be a dict, got {type(info0).__name__}")
    _require(isinstance(env.task, TaskSpec), f"env.task must be a TaskSpec after reset, got {type(env.task).__name__}")
    _require(env.horizon >= 1, f"env.horizon must be >= 1, got {env.horizon}")
    return obs0


def _check_first_step(env: DeviceEnv, obs0: Observation, seed: int) -> None:
    """One random step after reset: the typed 5-tuple, and the reset observation left as it was."""
    kept = obs0.screenshot.copy()
    step_out = _check_step_tuple(env, env.step(env.action_space.sample(np.random.default_rng(seed))), 1)
    _require(
        np.array_equal(kept, obs0.screenshot),
        "step() mutated the screenshot array of an earlier observation; return a new array each time",
    )
    _require(step_out[0].screenshot is not obs0.screenshot, "step() returned the same screenshot array object as reset()")


def _check_invalid_actions(env: DeviceEnv, seed: int, report: CheckReport) -> None:
    """Invalid actions: nothing happens, the step is spent, so the horizon truncates the episode;
    stepping past the end raises; the text ``"garbage"`` parses to an invalid action."""
    env.reset(seed=seed)
    horizon = env.horizon
    for t in range(1, horizon + 1):
        _o, _r, term, trunc, info = _check_step_tuple(env, env.step(Action.invalid("garbage", "not an action")), t)
        _require(bool(info.get("invalid_action")), f"an invalid action must set info['invalid_action'] (step {t})")
        _require(not term, f"an invalid action ended the episode (terminated at step {t}); it must only spend the step")
        _require(trunc == (t == horizon), f"truncated is {trunc} at step {t}, horizon {horizon}: expected {t == horizon}")
    report.passed.append("invalid actions and horizon truncation")
    try:
        env.step(Action.invalid("garbage"))
    except Exception:
        report.passed.append("step after the end raises")
    else:
        raise AssertionError("check_env: step() after the episode ended must raise (call reset() first)")

    env.reset(seed=seed)
    try:
        parsed = env.parse_action("garbage")
    except ModuleNotFoundError as e:  # no codec module in this build: nothing to parse text with
        report.skipped.append(f"text action 'garbage': {e}")
        return
    _require(isinstance(parsed, Action) and not parsed.is_valid, "parse_action('garbage') must give an invalid Action")
    _o, _r, term, _tr, info = _check_step_tuple(env, env.step("garbage"), 1)
    _require(bool(info.get("invalid_action")) and not term, "step('garbage') must set info['invalid_action'] and not terminate")
    report.passed.append("text action 'garbage' is an invalid action")


def _check_determinism(env: DeviceEnv, seeds: Sequence[int]) -> None:
    for seed in seeds:
        a, b = _rollout(env, seed, None), _rollout(env, seed, None)
        for t, (x, y) in enumerate(zip(a, b)):
            _require(x == y, f"not deterministic: seed {seed}, same actions, different screenshot/reward/flags at step {t}")
        _require(len(a) == len(b), f"not deterministic: seed {seed} gave episodes of {len(a) - 1} and {len(b) - 1} steps")


def _check_expert_episode(env: DeviceEnv, seed: int, task: TaskSpec | None) -> tuple[str, float]:
    """The scripted expert on one task: valid actions throughout and reward > 0 within the horizon."""
    obs, _ = env.reset(seed=seed, options={"task": task})
    tid = (env.task.task_id if env.task is not None else "") or obs.instruction
    total, actions = 0.0, []
    for _ in range(env.horizon):
        action = env.cheat()
        _require(
            isinstance(action, Action) and action.is_valid,
            f"cheat() must return a valid Action mid-episode on task {tid!r}, got {action!r}",
        )
        assert isinstance(action, Action)
        actions.append(str(action))
        _o, reward, term, trunc, _info = env.step(action)
        total += float(reward)
        if term or trunc:
            break
    _require(
        total > 0,
        f"scripted expert failed task {tid!r} (seed {seed}): reward {total} after "
        f"{len(actions)} steps (horizon {env.horizon}); actions: {actions}",
    )
    return tid, total
