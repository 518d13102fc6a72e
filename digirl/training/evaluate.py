"""Evaluation with DigiRL's protocol and a report users can trust.

Test split: the first N tasks *in order* (DigiRL evaluates the first 96). Validation split (simulator
task sets): the first N tasks in order, as test; choose recipes on it and report test beside it.
Train split: N tasks sampled at random with a fixed seed. Reported: success rate with a 95% Wilson interval, mean
episode length (all and successful), per-family success, and failure modes; optionally a GIF of a
few failed episodes per task family, linked from the Markdown report.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from digirl.core.errors import ConfigError
from digirl.core.types import TaskSpec, Trajectory

if TYPE_CHECKING:
    from digirl.training.config import EnvConfig, EvalConfig

log = logging.getLogger(__name__)

#: Failed episodes kept per family by :func:`summarize` (what ``write_reports(failure_gifs=N)`` can draw).
KEEP_FAILURES = 3
#: An episode out of steps whose last LOOP_WINDOW steps hold at most LOOP_WINDOW // 2 distinct
#: (screen, action) pairs went round a cycle (of up to 3 steps, twice): "looping", not "out_of_steps".
LOOP_WINDOW = 6


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a binomial proportion (well-behaved at 0 and n)."""
    if n == 0:
        return (0.0, 0.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def is_looping(t: Trajectory, window: int = LOOP_WINDOW) -> bool:
    """Whether the last ``window`` steps repeat at most ``window // 2`` (screen, action) pairs: the
    agent keeps taking the same actions on the same screens (pixel-equal), e.g. a tap that changes
    nothing, or enter / tap / enter / tap. A greedy policy back in a state repeats what it did there."""
    steps = t.steps[-window:]
    if len(steps) < window:
        return False
    pairs = {(hashlib.blake2b(s.observation.screenshot.tobytes(), digest_size=8).digest(), s.action_text) for s in steps}
    return len(pairs) <= window // 2


def failure_mode(t: Trajectory) -> str:
    """One label per episode: success, env_failure, stopped_early, gave_up, looping, out_of_steps, other."""
    if t.env_failure:
        return "env_failure"
    if t.success:
        return "success"
    last = t.steps[-1].action if t.steps else None
    if last is not None and last.kind == "complete":
        return "stopped_early"
    if last is not None and last.kind == "impossible":
        return "gave_up"
    if t.truncated:
        return "looping" if is_looping(t) else "out_of_steps"
    return "other"


@dataclass
class EvalReport:
    split: str
    episodes: int
    successes: int
    success_rate: float
    ci95: tuple[float, float]
    mean_length: float
    mean_length_success: float
    env_failures: int
    invalid_actions: int
    failure_modes: dict[str, int] = field(default_factory=dict)
    per_family: dict[str, dict[str, float]] = field(default_factory=dict)
    #: The first few failed episodes of each family (in memory only; not in ``to_dict``).
    failures: dict[str, list[Trajectory]] = field(default_factory=dict, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "failures"}
        d["ci95"] = list(self.ci95)
        plain: dict[str, Any] = json.loads(json.dumps(d))  # a deep copy of plain types
        return plain


def summarize(trajs: Iterable[Trajectory], split: str, *, keep_failures: int = KEEP_FAILURES) -> EvalReport:
    trajs = list(trajs)
    failures: dict[str, list[Trajectory]] = defaultdict(list)
    for t in trajs:
        fam_list = failures[t.task.family or "?"]
        if not t.success and not t.env_failure and len(fam_list) < keep_failures:
            fam_list.append(t)
    scored = [t for t in trajs if not t.env_failure]  # env failures are not scored as 0
    succ = sum(t.success for t in scored)
    fam: dict[str, list[bool]] = defaultdict(list)
    for t in scored:
        fam[t.task.family or "?"].append(t.success)
    lengths = [t.length for t in scored]
    slen = [t.length for t in scored if t.success]
    return EvalReport(
        split=split,
        episodes=len(scored),
        successes=succ,
        success_rate=succ / len(scored) if scored else 0.0,
        ci95=wilson_interval(succ, len(scored)),
        mean_length=float(np.mean(lengths)) if lengths else 0.0,
        mean_length_success=float(np.mean(slen)) if slen else 0.0,
        env_failures=len(trajs) - len(scored),
        invalid_actions=sum(1 for t in scored for s in t.steps if not s.action.is_valid),
        failure_modes=dict(Counter(failure_mode(t) for t in trajs)),
        per_family={k: {"episodes": len(v), "success_rate": float(np.mean(v))} for k, v in sorted(fam.items())},
        failures={k: v for k, v in sorted(failures.items()) if v},
    )


def eval_tasks(
    test_pool: Sequence[TaskSpec | None],
    train_pool: Sequence[TaskSpec | None],
    n_test: int,
    n_train: int,
    seed: int,
    *,
    val_pool: Sequence[TaskSpec | None] = (),
    n_val: int = 0,
) -> dict[str, list[TaskSpec | None]]:
    """DigiRL's protocol: the first ``n_test`` test tasks in order; the first ``n_val`` validation
    tasks in order (the same protocol on held-out tasks of its own); ``n_train`` random train tasks."""
    rng = np.random.default_rng(seed)
    out: dict[str, list[TaskSpec | None]] = {}
    if n_test > 0 and test_pool:
        out["test"] = list(test_pool[:n_test])
    if n_val > 0 and val_pool:
        out["validation"] = list(val_pool[:n_val])
    if n_train > 0 and train_pool:
        idx = rng.choice(len(train_pool), size=min(n_train, len(train_pool)), replace=False)
        out["train"] = [train_pool[int(i)] for i in sorted(idx)]
    return out


def validation_pool(env: EnvConfig, n: int) -> list[TaskSpec | None]:
    """The tasks of ``env.val_split``, or a :class:`ConfigError` where the env has no such split
    (``eval.val_tasks=N`` cannot apply there, and is not silently dropped)."""
    from digirl.training.common import task_pool

    what = f"eval.val_tasks={n}"
    try:
        pool = task_pool(env, env.val_split)
    except (ValueError, KeyError, FileNotFoundError) as e:
        raise ConfigError(f"{what}: {env.id} has no {env.val_split!r} split ({e}); set eval.val_tasks=0") from e
    # An env that ignores the split name hands back its one task list: that is not a validation split.
    if not pool or any(t is None or t.split != env.val_split for t in pool):
        raise ConfigError(
            f"{what}: {env.id} has no {env.val_split!r} split (the simulator task sets have one); set eval.val_tasks=0"
        )
    return pool


def eval_task_sets(
    env: EnvConfig,
    ev: EvalConfig,
    *,
    train_pool: Sequence[TaskSpec | None] | None = None,
    test_pool: Sequence[TaskSpec | None] | None = None,
) -> dict[str, list[TaskSpec | None]]:
    """The evaluation tasks ``ev`` asks for (test, validation, train), loading only the splits it
    needs; pools a caller already holds are reused. Used by ``digirl eval`` and the training loop."""
    from digirl.training.common import task_pool

    if train_pool is None:
        train_pool = task_pool(env, env.train_split) if ev.train_tasks > 0 else []
    if test_pool is None:
        test_pool = task_pool(env, env.test_split) if ev.test_tasks > 0 else []
    val = validation_pool(env, ev.val_tasks) if ev.val_tasks > 0 else []
    return eval_tasks(test_pool, train_pool, ev.test_tasks, ev.train_tasks, ev.seed, val_pool=val, n_val=ev.val_tasks)


def to_markdown(reports: Sequence[EvalReport]) -> str:
    lines = [
        "| split | episodes | success | 95% CI | mean length | env failures | invalid actions |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in reports:
        lines.append(
            f"| {r.split} | {r.episodes} | {100 * r.success_rate:.1f}% | {100 * r.ci95[0]:.1f}–{100 * r.ci95[1]:.1f}% "
            f"| {r.mean_length:.2f} | {r.env_failures} | {r.invalid_actions} |"
        )
    fams = sorted({f for r in reports for f in r.per_family})
    if fams:
        lines += ["", "| family | " + " | ".join(r.split for r in reports) + " |", "|---|" + "---|" * len(reports)]
        for f in fams:
            cells = []
            for r in reports:
                d = r.per_family.get(f)
                cells.append(f"{100 * d['success_rate']:.0f}% ({int(d['episodes'])})" if d else "–")
            lines.append(f"| {f} | " + " | ".join(cells) + " |")
    modes = sorted({m for r in reports for m in r.failure_modes})
    if modes:
        lines += ["", "| outcome | " + " | ".join(r.split for r in reports) + " |", "|---|" + "---|" * len(reports)]
        for m in modes:
            lines.append(f"| {m} | " + " | ".join(str(r.failure_modes.get(m, 0)) for r in reports) + " |")
    return "\n".join(lines) + "\n"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:60] or "x"


def write_failure_gifs(
    reports: Sequence[EvalReport], out_dir: Path, name: str, per_family: int
) -> dict[str, dict[str, list[dict[str, str]]]]:
    """GIFs of up to ``per_family`` failed episodes per split and family, in ``out_dir/NAME-failures/``.

    Returns ``{split: {family: [{"gif": path relative to out_dir, "instruction", "traj_id"}, ...]}}``.
    Needs imageio (the ``video`` extra).
    """
    from digirl.viz.video import write_episode_video

    out: dict[str, dict[str, list[dict[str, str]]]] = {}
    for r in reports:
        for fam, trajs in r.failures.items():
            for i, t in enumerate(trajs[:per_family]):
                rel = f"{name}-failures/{_slug(r.split)}-{_slug(fam)}-{i}.gif"
                try:
                    write_episode_video(t, out_dir / rel, fps=1.0, min_side=320)
                except ValueError as e:  # e.g. screenshots not kept: report it, keep the evaluation
                    log.warning("no GIF for a failed %s episode: %s", fam, e)
                    continue
                entry = {"gif": rel, "instruction": t.task.instruction, "traj_id": t.traj_id}
                out.setdefault(r.split, {}).setdefault(fam, []).append(entry)
    return out


def _failures_markdown(gifs: dict[str, dict[str, list[dict[str, str]]]]) -> str:
    lines = ["", "## Failed episodes", "", "| split | family | episode |", "|---|---|---|"]
    for split, fams in gifs.items():
        for fam, entries in fams.items():
            for e in entries:
                what = (e["instruction"] or e["traj_id"]).replace("|", "\\|").replace("[", "(").replace("]", ")")
                lines.append(f"| {split} | {fam} | [{what}]({e['gif']}) |")
    return "\n".join(lines) + "\n"


def write_reports(reports: Sequence[EvalReport], out_dir: str | Path, name: str = "eval", *, failure_gifs: int = 0) -> None:
    """``NAME.json`` and ``NAME.md`` in ``out_dir``; with ``failure_gifs=N``, GIFs of N failed episodes
    per family (see :func:`write_failure_gifs`) linked from the Markdown and listed in the JSON.

    The JSON maps each split to its report, beside what every result records
    (:func:`digirl.utils.provenance.result_metadata`: observation, selection_split, gpu, machine, command)."""
    from digirl.utils.provenance import result_metadata

    p = Path(out_dir)
    p.mkdir(parents=True, exist_ok=True)
    data: dict[str, Any] = {r.split: r.to_dict() for r in reports}
    data |= {k: v for k, v in result_metadata().items() if k not in data}
    md = to_markdown(reports)
    if failure_gifs > 0:
        gifs = write_failure_gifs(reports, p, name, failure_gifs)
        for split, fams in gifs.items():
            data[split]["failure_gifs"] = fams
        if gifs:
            md += _failures_markdown(gifs)
    (p / f"{name}.json").write_text(json.dumps(data, indent=2))
    (p / f"{name}.md").write_text(md)
