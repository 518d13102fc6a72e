"""Which tasks an online iteration collects: uniformly (the paper), balanced over families, or
weighted towards families whose outcome is still uncertain.

Uniform sampling follows the task list, so a family with 4% of the train split gets ~1 try in an
iteration of 32 rollouts and may never produce the first success an RL method needs (measured on
the simulator's General set: 68% of rollouts are web searches; install_app and maps_directions got
0 successes in 20 tries each over 768 online trajectories). ``family`` gives family f a share
∝ n_f^power, n_f its number of tasks in the pool: power 0 (the default) gives every family the same
share, 1 is uniform over tasks, 0.5 in between (temperature sampling over families);
``uncertainty`` gives family f a share ∝ sqrt(p_f (1 − p_f)) with p_f its Laplace-smoothed success
rate in the replay data (unseen families start at p = 1/2, the largest share), so effort goes where
outcomes are still undecided — a collection-side counterpart of DigiRL's instruction-level
curriculum, which only filters what is trained on.

``stratified_tasks`` is for small fixed draws (SFT demonstrations): i.i.d. draws by family leave a
family out with probability (1 − 1/F)^n — 12% for the General set's 12 train families and 24 demos,
and the family left out can be the one with 68% of the test tasks.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

import numpy as np

from digirl.core.types import TaskSpec, Trajectory

__all__ = ["DemoSampling", "TaskSampling", "family_outcomes", "family_weights", "sample_tasks", "stratified_tasks"]

TaskSampling = Literal["uniform", "family", "uncertainty"]
#: How SFT demo tasks are drawn (``sft.demo_sampling``, and Table 1's ``demo_sampling``).
DemoSampling = Literal["uniform", "family", "stratified"]

#: Lowest share weight of a family under ``uncertainty`` (relative to the largest, 0.5): a family the
#: policy always or never solves keeps being tried now and then.
FLOOR = 0.05


def family_outcomes(trajectories: Iterable[Trajectory]) -> dict[str, tuple[int, int]]:
    """(successes, attempts) per task family; environment failures are not attempts."""
    out: dict[str, list[int]] = {}
    for t in trajectories:
        if t.env_failure:
            continue
        s = out.setdefault(t.task.family, [0, 0])
        s[0] += int(t.success)
        s[1] += 1
    return {f: (s[0], s[1]) for f, s in out.items()}


def family_weights(
    mode: TaskSampling,
    families: Sequence[str],
    outcomes: Mapping[str, tuple[int, int]] | None = None,
    *,
    sizes: Mapping[str, int] | None = None,
    power: float = 0.0,
) -> dict[str, float] | None:
    """Unnormalized weight of each family (``None`` for uniform-over-tasks sampling); under
    ``family``, family f weighs ``sizes[f] ** power`` (equal weights when ``power`` is 0)."""
    if mode == "uniform":
        return None
    if mode == "family":
        if power == 0:
            return {f: 1.0 for f in families}
        if sizes is None:
            raise ValueError("task sampling 'family' with power != 0 needs the families' sizes")
        return {f: float(sizes[f]) ** power for f in families}
    if mode == "uncertainty":
        w = {}
        for f in families:
            s, n = (outcomes or {}).get(f, (0, 0))
            p = (s + 1) / (n + 2)
            w[f] = max(FLOOR, math.sqrt(p * (1 - p)))
        return w
    raise ValueError(f"unknown task sampling {mode!r} (uniform, family or uncertainty)")


def _by_family(pool: Sequence[TaskSpec | None]) -> dict[str, list[TaskSpec | None]]:
    """The pool's tasks per family, in pool order (``None``, an env-drawn task, counts as family "")."""
    out: dict[str, list[TaskSpec | None]] = {}
    for t in pool:
        out.setdefault(t.family if t is not None else "", []).append(t)
    return out


def sample_tasks(
    pool: Sequence[TaskSpec | None], n: int, rng: np.random.Generator, weights: Mapping[str, float] | None = None
) -> list[TaskSpec | None]:
    """``n`` tasks drawn with replacement: uniformly over ``pool``, or a family by ``weights`` then a task of it."""
    if weights is None:
        idx = rng.integers(0, len(pool), size=n)
        return [pool[int(i)] for i in idx]
    by_family = _by_family(pool)
    names = sorted(by_family)
    p = np.array([max(0.0, float(weights.get(f, 0.0))) for f in names])
    if p.sum() <= 0:
        raise ValueError("task sampling weights are all zero")
    out: list[TaskSpec | None] = []
    for f in rng.choice(len(names), size=n, p=p / p.sum()):
        members = by_family[names[int(f)]]
        out.append(members[int(rng.integers(0, len(members)))])
    return out


def stratified_tasks(pool: Sequence[TaskSpec | None], n: int, rng: np.random.Generator) -> list[TaskSpec | None]:
    """``n`` tasks, every family ⌊n/F⌋ or ⌈n/F⌉ times (the remainder goes to families drawn without
    replacement), each a task drawn uniformly from its family; returned in a shuffled order."""
    by_family = _by_family(pool)
    if not by_family:
        raise ValueError("stratified task sampling needs a non-empty pool")
    names = sorted(by_family)
    counts = np.full(len(names), n // len(names))
    counts[rng.choice(len(names), size=n % len(names), replace=False)] += 1
    out: list[TaskSpec | None] = []
    for name, k in zip(names, counts):
        members = by_family[name]
        out.extend(members[int(i)] for i in rng.integers(0, len(members), size=int(k)))
    return [out[int(i)] for i in rng.permutation(len(out))]
