"""``digirl tasks list|show``: the simulator's task sets, their families, slots, splits and example lines.

Everything is read from the shipped task files (``digirl/sim/tasksets/<set>_<split>.txt``), parsed
as the simulator parses them, so the counts are the tasks an env samples. Splits are whatever files
exist (train and test, and validation where shipped).
"""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from digirl.cli.common import add_command, add_group, arg, emit_json

__all__ = ["add_commands", "summarize"]


@dataclass
class FamilyInfo:
    name: str
    taskset: str
    doc: str = ""
    #: split → number of lines of this family in it
    counts: dict[str, int] = field(default_factory=dict)
    #: slot → distinct values seen, in first-seen order
    slots: dict[str, list[str]] = field(default_factory=dict)
    #: split → lines, in file order
    lines: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class TasksetInfo:
    name: str
    horizon: int
    #: split → number of lines
    sizes: dict[str, int] = field(default_factory=dict)
    #: split → env id that samples it (when one is registered)
    env_ids: dict[str, str] = field(default_factory=dict)
    families: dict[str, FamilyInfo] = field(default_factory=dict)
    #: split → lines, in file order
    lines: dict[str, list[str]] = field(default_factory=dict)


def _tasksets() -> list[str]:
    from digirl.sim.intents import HORIZONS
    from digirl.sim.tasks.tasksets import TASKSETS

    return [*TASKSETS, *(t for t in HORIZONS if t not in TASKSETS)]  # the shipped sets, then any other (compound)


def _load(taskset: str, split: str) -> list[Any] | None:
    """The tasks an env of ``taskset`` samples on ``split``, or ``None`` where no such split is shipped."""
    if taskset == "compound":
        try:
            from digirl.sim.tasks.compose import COMPOUND_DIR, compound_tasks
        except ModuleNotFoundError as e:  # a build without compound tasks
            if not (e.name or "").startswith("digirl.sim.tasks"):
                raise
            return None
        return compound_tasks(split) if (COMPOUND_DIR / f"compound_{split}.txt").exists() else None
    from digirl.sim.tasks.tasksets import TASKSET_DIR, TASKSETS, load_taskset

    if taskset not in TASKSETS or not (TASKSET_DIR / f"{taskset}_{split}.txt").exists():
        return None
    return load_taskset(taskset, split)


def summarize() -> dict[str, TasksetInfo]:
    """Every shipped task set, parsed: split sizes, families with their slots, counts and lines."""
    from digirl.envs.registry import list_envs
    from digirl.sim.families import get_family
    from digirl.sim.intents import HORIZONS, TASKSET_FAMILIES, Intent
    from digirl.sim.tasks.tasksets import SPLITS

    env_ids: dict[tuple[str, str], str] = {}
    # The plain id of a split is the one with no other options (device variation, drift ...).
    plain = sorted((s for s in list_envs() if s.metadata.get("simulator")), key=lambda s: (len(s.kwargs), s.id))
    for s in plain:
        key = (str(s.kwargs.get("taskset", "")), str(s.kwargs.get("split", "")))
        env_ids.setdefault(key, s.id)
    out: dict[str, TasksetInfo] = {}
    for ts in _tasksets():
        info = TasksetInfo(ts, HORIZONS[ts])
        for fam in TASKSET_FAMILIES.get(ts, ()):
            info.families[fam] = FamilyInfo(fam, ts, doc=get_family(fam).doc)
        for split in SPLITS:
            specs = _load(ts, split)
            if specs is None:
                continue
            info.sizes[split] = len(specs)
            info.lines[split] = [t.instruction for t in specs]
            if (ts, split) in env_ids:
                info.env_ids[split] = env_ids[(ts, split)]
            for t in specs:
                intent = Intent.from_dict(t.params["intent"])
                fi = info.families.get(intent.family)
                if fi is None:
                    fi = info.families[intent.family] = FamilyInfo(intent.family, ts, doc=get_family(intent.family).doc)
                fi.counts[split] = fi.counts.get(split, 0) + 1
                fi.lines.setdefault(split, []).append(t.instruction)
                for k, v in intent.slots.items():
                    seen = fi.slots.setdefault(k, [])
                    if v not in seen:
                        seen.append(v)
        if info.sizes:
            out[ts] = info
    return out


def add_commands(sub: Any) -> None:
    tsub = add_group(
        sub, "tasks", "The simulator's task sets: families, slots, split sizes and example lines.", "digirl tasks show set_alarm"
    )
    add_command(
        tsub,
        "list",
        "Every task set with its split sizes, and every family with its lines per split and its slots.",
        "digirl tasks list --taskset phone",
        cmd_list,
        arg("--taskset", default=None, help="only this task set (general, webshop, phone)"),
    )
    add_command(
        tsub,
        "show",
        "One task set, family or task id: what it asks, its slots with example values, and example lines per split.",
        "digirl tasks show webshop --examples 3",
        cmd_show,
        arg("name", metavar="NAME", help="a task set (general), a family (set_alarm) or a task id (general-test-0007)"),
        arg("-n", "--examples", type=int, default=5, help="example lines per split (default 5)"),
        arg("--split", default=None, help="only this split (train, test, validation)"),
    )


def _n(k: int, one: str, many: str) -> str:
    return f"{k} {one if k == 1 else many}"


def _family_json(f: FamilyInfo, examples: int | None = None, splits: list[str] | None = None) -> dict[str, Any]:
    keep = splits if splits is not None else list(f.lines)
    return {
        "name": f.name,
        "taskset": f.taskset,
        "doc": f.doc,
        "counts": {s: f.counts.get(s, 0) for s in keep},
        "slots": {k: (v if examples is None else v[: max(examples, 0)]) for k, v in f.slots.items()},
        **({} if examples is None else {"examples": {s: f.lines.get(s, [])[:examples] for s in keep}}),
    }


def cmd_list(args: argparse.Namespace) -> int:
    sets = summarize()
    if args.taskset is not None:
        if args.taskset not in sets:
            raise ValueError(f"unknown task set {args.taskset!r}; known: {', '.join(sets)}")
        sets = {args.taskset: sets[args.taskset]}
    if args.json:
        emit_json(
            {
                "tasksets": [
                    {
                        "name": ts.name,
                        "horizon": ts.horizon,
                        "sizes": ts.sizes,
                        "env_ids": ts.env_ids,
                        "families": [_family_json(f) for f in ts.families.values()],
                    }
                    for ts in sets.values()
                ]
            }
        )
        return 0
    for i, ts in enumerate(sets.values()):
        splits = list(ts.sizes)
        sizes = ", ".join(f"{s} {n}" for s, n in ts.sizes.items())
        envs = ", ".join(f"{s}: {e}" for s, e in ts.env_ids.items())
        print(
            ("\n" if i else "")
            + f"{ts.name}: {_n(len(ts.families), 'family', 'families')}, horizon {ts.horizon}; {sizes}  [{envs}]"
        )
        w = max(len(f) for f in ts.families)
        cw = {s: max(len(s), 5) for s in splits}
        print(f"  {'FAMILY':<{w}}  " + "  ".join(f"{s.upper():>{cw[s]}}" for s in splits) + "  SLOTS")
        for f in ts.families.values():
            counts = "  ".join(f"{f.counts.get(s, 0):>{cw[s]}}" for s in splits)
            print(f"  {f.name:<{w}}  {counts}  {', '.join(f.slots) or '-'}")
    if args.taskset is None:
        from digirl.sim.families import family_names

        listed = {f for ts in sets.values() for f in ts.families}
        others = [f for f in family_names() if f not in listed]
        if others:
            print(f"\nfamilies with no shipped tasks (use them in a task file): {', '.join(others)}")
    print("\nmore: digirl tasks show NAME (a task set, a family or a task id)")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    if args.examples < 0:
        raise ValueError("--examples must be >= 0")
    sets = summarize()
    name = args.name
    families = {f.name: f for ts in sets.values() for f in ts.families.values()}
    if name in sets:
        return _show_taskset(sets[name], args)
    if name in families:
        return _show_family(families[name], args)
    task = _find_task(sets, name)
    if task is not None:
        return _show_task(*task, args, env_id=sets[task[0]].env_ids.get(task[1], ""))
    from digirl.sim.families import family_names, get_family
    from digirl.sim.intents import family_taskset

    if name in family_names():  # a family no shipped line poses (compound, a user family, ...)
        return _show_family(FamilyInfo(name, family_taskset(name), doc=get_family(name).doc), args)
    raise ValueError(
        f"no task set, family or task id {name!r}; task sets: {', '.join(sets)}; families and task ids: see `digirl tasks list`"
    )


def _splits(available: list[str], want: str | None) -> list[str]:
    if want is None:
        return available
    if want not in available:
        raise ValueError(f"no split {want!r} here; splits: {', '.join(available)}")
    return [want]


def _show_taskset(ts: TasksetInfo, args: argparse.Namespace) -> int:
    splits = _splits(list(ts.sizes), args.split)
    if args.json:
        emit_json(
            {
                "taskset": ts.name,
                "horizon": ts.horizon,
                "sizes": {s: ts.sizes[s] for s in splits},
                "env_ids": {s: e for s, e in ts.env_ids.items() if s in splits},
                "families": {f.name: {s: f.counts.get(s, 0) for s in splits} for f in ts.families.values()},
                "examples": {s: ts.lines[s][: args.examples] for s in splits},
            }
        )
        return 0
    print(f"task set {ts.name}: horizon {ts.horizon}, {_n(len(ts.families), 'family', 'families')}")
    for s in splits:
        env = f" (env {ts.env_ids[s]})" if s in ts.env_ids else ""
        print(f"  {s}: {ts.sizes[s]} lines{env}")
    top = Counter({f.name: sum(f.counts.get(s, 0) for s in splits) for f in ts.families.values()})
    print("  families: " + ", ".join(f"{n} {c}" for n, c in top.most_common()))
    for s in splits:
        if args.examples:
            print(f"\n{s} (first {min(args.examples, ts.sizes[s])} of {ts.sizes[s]}):")
            for line in ts.lines[s][: args.examples]:
                print(f"  {line}")
    return 0


def _show_family(f: FamilyInfo, args: argparse.Namespace) -> int:
    splits = _splits(list(f.lines) or [], args.split) if args.split else list(f.lines)
    if args.json:
        emit_json({"family": _family_json(f, args.examples, splits)})
        return 0
    print(f"family {f.name} (task set {f.taskset})")
    if f.doc:
        print(f"  success: {f.doc}")
    print("  lines: " + (", ".join(f"{s} {f.counts.get(s, 0)}" for s in splits) or "none in the shipped task sets"))
    if f.slots:
        print("  slots (distinct values, first few):")
        w = max(len(k) for k in f.slots)
        for k, vals in f.slots.items():
            shown = ", ".join(repr(v) for v in vals[: max(args.examples, 1)])
            more = f" … ({len(vals)} distinct)" if len(vals) > max(args.examples, 1) else ""
            print(f"    {k:<{w}}  {shown}{more}")
    else:
        print("  slots: none")
    for s in splits:
        if args.examples:
            lines = f.lines.get(s, [])
            print(f"\n{s} (first {min(args.examples, len(lines))} of {len(lines)}):")
            for line in lines[: args.examples]:
                print(f"  {line}")
    return 0


def _find_task(sets: dict[str, TasksetInfo], task_id: str) -> tuple[str, str, Any] | None:
    """``(taskset, split, TaskSpec)`` of a shipped task id ``<set>-<split>-<NNNN>``."""
    parts = task_id.rsplit("-", 2)
    if len(parts) != 3 or not parts[2].isdigit():
        return None
    ts, split, idx = parts[0], parts[1], int(parts[2])
    info = sets.get(ts)
    if info is None or split not in info.lines or idx >= len(info.lines[split]):
        return None
    specs = _load(ts, split)
    return (ts, split, specs[idx]) if specs is not None else None


def _show_task(ts: str, split: str, spec: Any, args: argparse.Namespace, env_id: str = "") -> int:
    intent = spec.params["intent"]
    if args.json:
        emit_json(
            {
                "task_id": spec.task_id,
                "taskset": ts,
                "split": split,
                "instruction": spec.instruction,
                "horizon": spec.horizon,
                "env_id": env_id or None,
                "intent": intent,
            }
        )
        return 0
    print(f"{spec.task_id}: {spec.instruction}")
    print(f"  family {intent['family']}, horizon {spec.horizon}" + (f", env {env_id}" if env_id else ""))
    for k, v in intent.get("slots", {}).items():
        print(f"  {k} = {v!r}")
    print(f'  try it: digirl sim render --task "{spec.instruction}" --out frames/')
    return 0
