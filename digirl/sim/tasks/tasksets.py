"""The simulator's own task sets (``general``, ``webshop``, ``phone``) and task-file loading.

Task sets are generated from digirl's templates (:mod:`.templates`) and entity lists
(:mod:`.entities`) with a fixed seed and shipped as ``digirl/sim/tasksets/<name>_<split>.txt``.
Phrasing families and their proportions follow AitW General / Web Shopping as used by DigiRL
(``phone`` poses the on-device families); the test split names only held-out entities and adds a
few held-out phrasings (each group's ``test_templates``). The validation split (added later, additive:
train and test are pinned) is built as the test split is, from entities of its own
(:mod:`.validation_entities`) that no train or test line names: select recipes on it, report test.

Regenerate the shipped files with ``python -m digirl.sim.tasks.tasksets --write``.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from digirl.core.errors import UnsupportedInstructionError
from digirl.core.types import TaskSpec
from digirl.sim.intents import HORIZONS
from digirl.sim.tasks.entities import split_pool
from digirl.sim.tasks.parser import explain_instruction, parse_instruction
from digirl.sim.tasks.taskfile import read_task_file, report_stale
from digirl.sim.tasks.templates import (
    _SHOP_TRIPLE,
    _SHOP_TRIPLE_TEST,
    GENERAL_GROUPS,
    PHONE_GROUPS,
    SHOP_SITES_ORDER,
    Group,
    render_slot,
)

__all__ = [
    "HORIZONS",
    "SPLITS",
    "TASKSETS",
    "TASKSET_DIR",
    "generate_taskset",
    "load_task_file",
    "load_taskset",
    "task_from_instruction",
]

TASKSETS = ("general", "webshop", "phone")
SPLITS = ("train", "test", "validation")
#: Splits built like the test split: held-out entities and a share of held-out phrasings.
HELD_OUT_SPLITS = ("test", "validation")
#: Split sizes of DigiRL's AitW task files, which ours mirror.
SIZES = {
    ("general", "train"): 545,
    ("general", "test"): 432,
    ("webshop", "train"): 438,
    ("webshop", "test"): 360,
    ("phone", "train"): 450,
    ("phone", "test"): 300,
    # Validation: general and webshop about half a test split (72 webshop triples); phone its test size
    # (fewer lines leave some phone families two tasks).
    ("general", "validation"): 216,
    ("webshop", "validation"): 216,
    ("phone", "validation"): 300,
}
TASKSET_DIR = Path(__file__).resolve().parent.parent / "tasksets"
#: Share of a test group's lines written with its held-out (test-only) phrasings.
TEST_PHRASING_SHARE = 0.2


_SLOT = re.compile(r"\{(\w+?)(\d*)\}")


class _Decks:
    """Per-pool shuffled decks: entities come round-robin, so a split uses its pool evenly."""

    def __init__(self, split: str, rng: random.Random) -> None:
        self.split, self.rng = split, rng
        self._decks: dict[str, list[str]] = {}

    def draw(self, pool: str, avoid: Iterable[str] = ()) -> str:
        deck = self._decks.get(pool)
        values = split_pool(pool, self.split)
        if not values:
            raise ValueError(f"entity pool {pool!r} has no {self.split} entities")
        for _ in range(2):
            if not deck:
                deck = list(values)
                self.rng.shuffle(deck)
                self._decks[pool] = deck
            for i, v in enumerate(deck):
                if v not in avoid:
                    return deck.pop(i)
            deck = []
        return values[0]


def _fill(template: str, decks: _Decks) -> str:
    used: list[str] = []

    def sub(m: re.Match[str]) -> str:
        pool = m.group(1)
        v = decks.draw(pool, used)
        used.append(v)
        return render_slot(pool, v)

    return _SLOT.sub(sub, template)


def _quotas(groups: Sequence[Group], n: int) -> list[int]:
    # Largest-remainder apportionment: exact total, proportional to the weights.
    total = sum(g.weight for g in groups)
    raw = [g.weight * n / total for g in groups]
    out = [int(r) for r in raw]
    order = sorted(range(len(groups)), key=lambda i: (-(raw[i] - out[i]), i))
    for i in order[: n - sum(out)]:
        out[i] += 1
    return out


def _generate_groups(groups: Sequence[Group], split: str, n: int, rng: random.Random) -> list[tuple[str, str]]:
    decks = _Decks(split, rng)
    lines: list[tuple[str, str]] = []
    for group, quota in zip(groups, _quotas(groups, n)):
        seen: set[str] = set()
        n_test = round(quota * TEST_PHRASING_SHARE) if split in HELD_OUT_SPLITS and group.test_templates else 0
        for i in range(quota):
            pool = group.test_templates if i < n_test else group.templates
            text = ""
            for attempt in range(8):  # prefer distinct lines while the pools allow it
                text = _fill(pool[(i + attempt) % len(pool)], decks)
                if text not in seen:
                    break
            seen.add(text)
            lines.append((text, group.family))
    rng.shuffle(lines)
    return lines


def _generate_webshop(split: str, n: int, rng: random.Random) -> list[tuple[str, str]]:
    if n % 3:
        raise ValueError(f"webshop sets hold go-to/search/select triples; size {n} is not a multiple of 3")
    pairs = [(p, s) for p in split_pool("shop_product", split) for s in SHOP_SITES_ORDER]
    rng.shuffle(pairs)
    n_triples = n // 3
    if n_triples > len(pairs):
        raise ValueError(f"only {len(pairs)} product/site pairs for {n_triples} webshop triples")
    n_test = round(n_triples * TEST_PHRASING_SHARE * 0.5) if split in HELD_OUT_SPLITS else 0
    lines: list[tuple[str, str]] = []
    for i, (product, site) in enumerate(pairs[:n_triples]):
        quote = rng.choice("\"'")
        q = f"{quote}{product}{quote}"
        triple = _SHOP_TRIPLE_TEST if i < n_test else _SHOP_TRIPLE
        for template, fam in zip(triple, ("shop_goto", "shop_search", "shop_select")):
            lines.append((template.format(site=site, q=q), fam))
    # Shuffle whole triples, keeping each triple's go-to → search → select order as AitW does.
    triples = [lines[i : i + 3] for i in range(0, len(lines), 3)]
    rng.shuffle(triples)
    return [x for t in triples for x in t]


def _generate(name: str, split: str, seed: int = 0) -> list[tuple[str, str]]:
    """``(instruction, expected family)`` pairs of a task set."""
    if name not in TASKSETS:
        raise ValueError(f"unknown task set {name!r}; known: {', '.join(TASKSETS)}")
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; known: {', '.join(SPLITS)}")
    rng = random.Random(f"digirl-sim-{name}-{split}-{seed}")  # str seeds are stable across processes
    n = SIZES[(name, split)]
    if name == "webshop":
        return _generate_webshop(split, n, rng)
    return _generate_groups(GENERAL_GROUPS if name == "general" else PHONE_GROUPS, split, n, rng)


def generate_taskset(name: str, split: str, seed: int = 0) -> list[str]:
    """The instructions of task set ``name`` (``general``/``webshop``/``phone``), ``split`` (see :data:`SPLITS`)."""
    return [text for text, _ in _generate(name, split, seed)]


# --------------------------------------------------------------------------- loading
def task_from_instruction(text: str, *, taskset: str | None = None, horizon: int | None = None) -> TaskSpec:
    """A :class:`TaskSpec` for one instruction.

    Raises :class:`~digirl.core.errors.UnsupportedInstructionError` naming the text and why it is
    not a task.
    """
    found = explain_instruction(text)
    if found.intent is None:
        raise UnsupportedInstructionError(f"no simulator task family understands {text!r}: {found.reason}")
    intent = found.intent
    return _spec(text.strip(), intent.to_dict(), intent.family, taskset or intent.taskset, horizon, "", "")


def _spec(
    text: str,
    intent: dict[str, object],
    family: str,
    taskset: str,
    horizon: int | None,
    task_id: str,
    split: str,
) -> TaskSpec:
    from digirl.sim.families import family_source

    if taskset not in TASKSETS:
        raise ValueError(f"unknown task set {taskset!r}; known: {', '.join(TASKSETS)}")
    if horizon is not None and horizon <= 0:
        raise ValueError(f"horizon must be positive, got {horizon}")
    params: dict[str, object] = {"intent": intent}
    source = family_source(family)
    if source:  # a user family: how a worker process rebuilds it
        params["family_source"] = source
    return TaskSpec(
        instruction=text,
        task_id=task_id,
        family=family,
        split=split,
        horizon=horizon if horizon is not None else HORIZONS[taskset],
        env_id=f"digirl/sim-{taskset}-v0",
        params=params,
    )


def load_task_file(
    path: str | Path,
    *,
    taskset: str | None = None,
    horizon: int | None = None,
    skip_unsupported: bool = False,
) -> list[TaskSpec]:
    """Tasks from a task file (:mod:`.taskfile`: ``.txt`` one instruction per line, ``.tsv`` with the
    expected family, ``.yaml`` with user-defined families).

    Lines no family understands raise :class:`UnsupportedInstructionError` naming every such line
    and why, unless ``skip_unsupported``. ``taskset`` forces the env (default: each intent's own).
    """
    p = Path(path)
    specs: list[TaskSpec] = []
    bad: list[tuple[int, str, str]] = []
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", p.stem) or "tasks"
    for line in read_task_file(p):
        found = explain_instruction(line.text)
        if found.intent is None:
            bad.append((line.lineno, line.text, found.reason))
            continue
        intent = found.intent
        specs.append(
            _spec(line.text, intent.to_dict(), intent.family, taskset or intent.taskset, horizon, f"{stem}-{line.lineno:04d}", "")
        )
    if bad and not skip_unsupported:
        shown = "; ".join(f"line {n}: {t!r} ({why})" for n, t, why in bad[:10])
        more = f" (and {len(bad) - 10} more)" if len(bad) > 10 else ""
        raise UnsupportedInstructionError(
            f"{p}: {len(bad)} of {len(bad) + len(specs)} instructions are not supported by the simulator: "
            f"{shown}{more}. Pass skip_unsupported=True (CLI: --skip-unsupported) to drop them."
        )
    if not specs:
        raise UnsupportedInstructionError(f"{p}: no supported instructions in the file")
    return specs


def load_taskset(name: str, split: str) -> list[TaskSpec]:
    """The shipped task set ``name`` / ``split`` as task specs (``task_id`` = ``<name>-<split>-<i:04d>``)."""
    if name not in TASKSETS:
        raise ValueError(f"unknown task set {name!r}; known: {', '.join(TASKSETS)}")
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; known: {', '.join(SPLITS)}")
    path = TASKSET_DIR / f"{name}_{split}.txt"
    lines = path.read_text(encoding="utf-8").splitlines()
    specs = []
    for i, text in enumerate(lines):
        intent = parse_instruction(text)
        if intent is None:  # the shipped files are tested to parse; this guards hand edits
            raise UnsupportedInstructionError(f"{path}: line {i + 1} does not parse: {text!r}")
        specs.append(_spec(text, intent.to_dict(), intent.family, name, None, f"{name}-{split}-{i:04d}", split))
    return specs


def write_tasksets(directory: Path = TASKSET_DIR, seed: int = 0) -> list[Path]:
    """Write every shipped task file from the generator; returns the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for name in TASKSETS:
        for split in SPLITS:
            path = directory / f"{name}_{split}.txt"
            path.write_text("\n".join(generate_taskset(name, split, seed)) + "\n", encoding="utf-8")
            out.append(path)
    return out


def _main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m digirl.sim.tasks.tasksets", description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"(re)write the shipped task files in {TASKSET_DIR}")
    ap.add_argument("--check", action="store_true", help="exit 1 if the shipped files differ from the generator")
    args = ap.parse_args(argv)
    if args.write:
        for p in write_tasksets():
            sys.stdout.write(f"wrote {p}\n")
        return 0
    stale = [
        f"{n}_{s}"
        for n in TASKSETS
        for s in SPLITS
        if not (TASKSET_DIR / f"{n}_{s}.txt").is_file()
        or (TASKSET_DIR / f"{n}_{s}.txt").read_text(encoding="utf-8").splitlines() != generate_taskset(n, s)
    ]
    return report_stale(stale, "digirl.sim.tasks.tasksets", "task")


if __name__ == "__main__":
    sys.exit(_main())
