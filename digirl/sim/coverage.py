"""How much of a task file the simulator covers: parsed instructions and expert-solved tasks.

A line is *parsed* when :func:`~digirl.sim.tasks.parser.explain_instruction` maps it to an intent
(else the report gives the reason), and *solved* when the simulator's scripted expert
(``env.cheat()``) reaches a reward > 0 within the task's horizon (10 General, 20 Web Shopping,
15 phone; a compound task's scales with its plan) at the given perturbation level, for every seed.
Every line gets a status saying why it fails, if it does: ``parse``, ``unsupported_app`` or
``expert``. When the lines say which family they
should be (a ``.tsv`` task file), the report also counts lines parsed to the right family and
slot values that differ. ``digirl sim coverage --task-file FILE`` prints the report.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from digirl.core.types import TaskSpec
from digirl.sim.intents import Intent
from digirl.sim.tasks.parser import explain_instruction
from digirl.sim.tasks.taskfile import TaskLine, read_task_file
from digirl.sim.tasks.tasksets import TASKSETS, task_from_instruction

__all__ = ["coverage_report", "coverage_report_file", "run_expert_episode"]

log = logging.getLogger(__name__)


def run_expert_episode(env: Any, task: TaskSpec, seed: int) -> tuple[bool, int, str]:
    """Roll the scripted expert on ``task``: ``(success, steps, reason)`` (reason empty on success)."""
    env.reset(seed=seed, options={"task": task})
    total, steps = 0.0, 0
    horizon = int(getattr(env, "horizon", task.horizon))  # a compound task's scales with its plan
    # The env truncates at the horizon; the bound only guards against an env that never ends.
    for steps in range(1, horizon + 2):
        action = env.cheat()
        if action is None:
            return False, steps - 1, f"expert had no action at step {steps - 1}"
        _, reward, terminated, truncated, _ = env.step(action)
        total += float(reward)
        if terminated or truncated:
            break
    if total > 0:
        return True, steps, ""
    if steps >= horizon:
        return False, steps, f"not solved within the horizon ({horizon} steps)"
    return False, steps, f"episode ended after {steps} steps without success"


_OPEN = re.compile(
    r"^(?:open|launch|start|use|run)\s+(?:the\s+|my\s+)?(?P<app>[\w'-]+(?:\s[\w'-]+)?)(?:\s+app)?(?:\s+(?:and|then|to)\b.*)?$",
    re.I,
)
#: Words that name part of an app, not an app ("open the dial pad", "open the timer tab").
_NOT_APP = re.compile(r"(?:tab|pad|page|mode|settings?|screen|menu|folder)$", re.I)
_APP_FAMILIES = ("open_app", "app_settings", "app_notifications")


def _phone_app(name: str) -> bool:
    """Whether ``name`` is an app the simulated phone has (built in or installed on every phone)."""
    from digirl.sim.apps import EXTRA_APPS
    from digirl.sim.content import norm_name
    from digirl.sim.phone import resolve_app

    return not resolve_app(name).startswith("x.") or norm_name(name) in {norm_name(a) for a in EXTRA_APPS}


def _reject_kind(text: str, reason: str) -> tuple[str, str]:
    """Why a line did not parse: ``unsupported_app`` when it asks for an app the phone lacks, else ``parse``."""
    m = _OPEN.match(text.strip().rstrip(".!"))
    if m is not None and not _NOT_APP.search(m.group("app")) and not _phone_app(m.group("app")):
        return "unsupported_app", f"no {m.group('app')!r} app on the simulated phone ({reason})"
    return "parse", reason


def _placeholder_apps(intent: Intent) -> list[str]:
    """Apps a parsed task opens that the phone only has as a placeholder screen (not a real app)."""
    from digirl.sim.families.compound import plan_parts

    parts = plan_parts(intent) if intent.family == "compound" else (intent,)
    installed = {p.get("app").lower() for p in parts if p.family == "install_app"}  # a store app the task installs
    return [
        p.get("app")
        for p in parts
        if p.family in _APP_FAMILIES and p.get("app") and p.get("app").lower() not in installed and not _phone_app(p.get("app"))
    ]


def _new_family() -> dict[str, int]:
    return {"lines": 0, "solved": 0, "episodes": 0, "successes": 0, "expected": 0, "right": 0}


def _check_expected(item: TaskLine, got: Intent | None, reason: str, expected: dict[str, Any], fam: dict[str, int]) -> None:
    """Count ``item`` against the family (and slots) its task file expects."""
    expected["lines"] += 1
    fam["expected"] += 1
    if got is None or got.family != item.expected:
        expected["wrong"].append(
            {
                "line": item.lineno,
                "text": item.text,
                "expected": item.expected,
                "got": got.family if got else None,
                "reason": reason,
            }
        )
        return
    expected["right_family"] += 1
    fam["right"] += 1
    bad = {k: [v, got.get(k)] for k, v in item.expected_slots.items() if _norm(got.get(k)) != _norm(v)}
    if bad:
        expected["slot_mismatches"].append({"line": item.lineno, "text": item.text, "slots": bad})


def _make_env(env_id: str, perturbation: int) -> tuple[Any | None, str]:
    from digirl.envs import registry

    try:
        return registry.make(env_id, perturbation=perturbation), ""
    except (KeyError, ImportError) as e:  # the simulator backend is not available in this build
        return None, f"{env_id} is not available ({type(e).__name__}: {e})"
    except TypeError as e:
        return None, f"{env_id} could not be built with perturbation={perturbation} ({e})"


def _norm(v: str) -> str:
    return re.sub(r"[^a-z0-9:]", "", v.lower())


def coverage_report_file(path: str | Path, **kw: Any) -> dict[str, Any]:
    """:func:`coverage_report` of a task file (``.txt``, ``.tsv`` with expected families, ``.yaml``)."""
    report = coverage_report(read_task_file(path), **kw)
    report["task_file"] = str(path)
    return report


def coverage_report(
    lines: Sequence[str | TaskLine],
    *,
    perturbation: int = 1,
    seeds: Sequence[int] = (0,),
    run_expert: bool = True,
    taskset: str | None = None,
    max_lines: int | None = None,
) -> dict[str, Any]:
    """Parse (and optionally expert-solve) ``lines``; blank lines and ``#`` comments are skipped.

    ``lines`` are instructions, or :class:`~digirl.sim.tasks.taskfile.TaskLine` values that may
    carry the expected family and slots. Returns a JSON-serializable dict: totals, ``parse_rate``,
    ``solve_rate`` (lines solved for every seed / lines), ``how`` (lines matched as written, after
    normalization, or as a question turned into a web search), per-``families`` counts,
    ``unsupported`` (line, text, reason), ``failures`` (expert episodes that failed),
    ``per_line`` (every line's ``status``: ``solved``, ``parse`` (no family takes it),
    ``unsupported_app`` (it asks for an app the phone lacks), ``expert`` (parsed, but the scripted
    expert failed on some seed) or ``not_run`` (parsed; expert not run), with the ``reason``; a
    parsed line that opens an app the phone only has as a placeholder says so),
    ``status_counts``, an
    ``expected`` section when lines name their family (right-family rate, wrong lines, slot
    mismatches) and an ``expert`` section saying whether the expert ran (and why not).
    """
    if taskset is not None and taskset not in TASKSETS:
        raise ValueError(f"unknown task set {taskset!r}; known: {', '.join(TASKSETS)}")
    if not seeds:
        raise ValueError("seeds must not be empty")
    items = [
        x if isinstance(x, TaskLine) else TaskLine(i, x.strip())
        for i, x in enumerate(lines, start=1)
        if isinstance(x, TaskLine) or (x.strip() and not x.strip().startswith("#"))
    ]
    if max_lines is not None:
        items = items[:max_lines]
    scan = _scan_lines(items, taskset)
    expert: dict[str, Any] = {"ran": False, "skipped_reason": "", "perturbation": perturbation, "seeds": list(seeds)}
    solved_lines = 0
    if not run_expert:
        expert["skipped_reason"] = "not requested (--no-expert)"
    elif scan.tasks:
        solved_lines = _run_experts(scan, expert, perturbation, seeds)
    return _summary(scan, expert, len(items), solved_lines)


@dataclass
class _Scan:
    """What parsing the lines found, filled in further by the expert runs."""

    families: dict[str, dict[str, int]] = field(default_factory=dict)
    unsupported: list[dict[str, Any]] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)
    tasks: list[tuple[int, TaskSpec]] = field(default_factory=list)
    per_line: list[dict[str, Any]] = field(default_factory=list)
    # "compound" joins when a line is one
    how: dict[str, int] = field(default_factory=lambda: {"rule": 0, "normalized": 0, "question": 0})
    expected: dict[str, Any] = field(default_factory=lambda: {"lines": 0, "right_family": 0, "wrong": [], "slot_mismatches": []})


def _scan_lines(items: Sequence[TaskLine], taskset: str | None) -> _Scan:
    """Parse every line: its family or why none takes it, and the task of each parsed line."""
    scan = _Scan()
    families, per_line = scan.families, scan.per_line
    for item in items:
        lineno, text = item.lineno, item.text
        found = explain_instruction(text)
        if item.expected:
            _check_expected(item, found.intent, found.reason, scan.expected, families.setdefault(item.expected, _new_family()))
        if found.intent is None:
            kind, why = _reject_kind(text, found.reason)
            scan.unsupported.append({"line": lineno, "text": text, "reason": found.reason})
            per_line.append({"line": lineno, "text": text, "status": kind, "reason": why, "family": None})
            continue
        scan.how[found.how] = scan.how.get(found.how, 0) + 1
        placeholder = _placeholder_apps(found.intent)
        per_line.append(
            {
                "line": lineno,
                "text": text,
                "status": "parsed",
                "reason": f"opens {', '.join(placeholder)}: a placeholder screen, not an app of the phone" if placeholder else "",
                "family": found.intent.family,
            }
        )
        task = task_from_instruction(text, taskset=taskset)
        scan.tasks.append((lineno, task))
        families.setdefault(task.family, _new_family())["lines"] += 1
    return scan


def _run_experts(scan: _Scan, expert: dict[str, Any], perturbation: int, seeds: Sequence[int]) -> int:
    """Run the expert on every parsed line for every seed; fills ``expert`` and returns the lines solved.

    When an environment cannot be made, the run stops and reports parse coverage only."""
    envs: dict[str, Any] = {}
    t0 = time.perf_counter()
    episodes = successes = solved_lines = 0
    for lineno, task in scan.tasks:
        if task.env_id not in envs:
            env, why = _make_env(task.env_id, perturbation)
            if env is None:
                expert["skipped_reason"] = why
                break
            envs[task.env_id] = env
        oks = _solve_line(envs[task.env_id], lineno, task, seeds, scan.failures)
        fam = scan.families[task.family]
        episodes += len(oks)
        successes += sum(oks)
        fam["episodes"] += len(oks)
        fam["successes"] += sum(oks)
        all_ok = all(oks)
        if all_ok:
            solved_lines += 1
            fam["solved"] += 1
        row = next(r for r in scan.per_line if r["line"] == lineno)
        row["status"] = "solved" if all_ok else "expert"
        if not all_ok:
            row["reason"] = "; ".join(f"seed {f['seed']}: {f['reason']}" for f in scan.failures if f["line"] == lineno)
    for env in envs.values():
        env.close()
    if expert["skipped_reason"]:  # a partial run would mislead: report parse coverage only
        scan.failures.clear()
        for fam in scan.families.values():
            fam.update(solved=0, episodes=0, successes=0)
        return 0
    expert.update(
        ran=True,
        episodes=episodes,
        successes=successes,
        success_rate=successes / episodes if episodes else 0.0,
        seconds=round(time.perf_counter() - t0, 3),
    )
    return solved_lines


def _solve_line(env: Any, lineno: int, task: TaskSpec, seeds: Sequence[int], failures: list[dict[str, Any]]) -> list[bool]:
    """One expert episode per seed on ``task``; each failure is appended to ``failures``."""
    oks: list[bool] = []
    for seed in seeds:
        try:
            ok, steps, reason = run_expert_episode(env, task, seed)
        except Exception as e:  # one broken task must not hide the rest of the report
            log.warning("expert episode failed on line %d: %s", lineno, e, exc_info=True)
            ok, steps, reason = False, 0, f"error: {type(e).__name__}: {e}"
        oks.append(ok)
        if not ok:
            failures.append(
                {"line": lineno, "text": task.instruction, "family": task.family, "seed": seed, "steps": steps, "reason": reason}
            )
    return oks


def _summary(scan: _Scan, expert: dict[str, Any], n: int, solved_lines: int) -> dict[str, Any]:
    """The report's JSON: totals and rates, per-family counts, per-line statuses."""
    per_line, families, expected = scan.per_line, scan.families, scan.expected
    if not expert["ran"]:  # not asked, or stopped part-way: no line's expert result stands
        for row in per_line:
            if row["status"] in ("parsed", "solved", "expert"):
                row["status"] = "not_run"
    status_counts: dict[str, int] = {}
    for row in per_line:
        status_counts[row["status"]] = status_counts.get(row["status"], 0) + 1
    if expected["lines"]:
        expected["rate"] = expected["right_family"] / expected["lines"]
    else:
        for fam in families.values():
            del fam["expected"], fam["right"]
    return {
        "lines": n,
        "parsed": len(scan.tasks),
        "parse_rate": len(scan.tasks) / n if n else 0.0,
        "how": scan.how,
        "expected": expected if expected["lines"] else None,
        "solved": solved_lines if expert["ran"] else None,
        "solve_rate": (solved_lines / n if n else 0.0) if expert["ran"] else None,
        "expert": expert,
        "families": dict(sorted(families.items())),
        "unsupported": scan.unsupported,
        "failures": scan.failures,
        "status_counts": status_counts,
        "per_line": per_line,
    }
