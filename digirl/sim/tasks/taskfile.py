"""Reading task files: one instruction per line (``.txt``), with the expected family (``.tsv``), or a
YAML file that also defines task families.

- ``.txt`` (any other suffix): one instruction per line; blank lines and ``#`` comments skipped.
  A comment ``# families: my_families.yaml`` (a path relative to the file) registers the user
  families of that spec first.
- ``.tsv``: ``family<TAB>instruction[<TAB>slot=value;...]`` per line: the expected family (and
  slots) let ``digirl sim coverage`` measure whether lines are placed in the right family.
- ``.yaml`` / ``.yml``: ``families:`` (specs, :mod:`digirl.sim.families.spec`) and ``tasks:`` (a
  list of instructions, or of ``{text:, family:}``).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from digirl.core.errors import UnsupportedInstructionError

__all__ = ["TaskLine", "read_task_file"]

_DIRECTIVE = re.compile(r"^#\s*families\s*:\s*(?P<path>\S.*?)\s*$", re.I)


@dataclass(frozen=True)
class TaskLine:
    """One instruction of a task file, with what the file says it should parse to (if anything)."""

    lineno: int
    text: str
    expected: str = ""
    expected_slots: dict[str, str] = field(default_factory=dict)


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise UnsupportedInstructionError(f"{path}: not a UTF-8 text file ({e})") from e


def _families(spec_path: Path) -> None:
    from digirl.sim.families.spec import load_family_file

    load_family_file(spec_path)


def read_task_file(path: str | Path) -> list[TaskLine]:
    """The instructions of a task file (module doc); registers the families it names or defines."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"task file not found: {p}")
    if p.suffix.lower() in (".yaml", ".yml"):
        return _yaml(p)
    out: list[TaskLine] = []
    tsv = p.suffix.lower() == ".tsv"
    for i, line in enumerate(_text(p).splitlines(), start=1):
        s = line.strip()
        m = _DIRECTIVE.match(s)
        if m:
            _families((p.parent / m.group("path")).resolve())
            continue
        if not s or s.startswith("#"):
            continue
        if not tsv:
            out.append(TaskLine(i, s))
            continue
        cols = line.rstrip("\n").split("\t")
        if len(cols) < 2 or not cols[1].strip():
            raise UnsupportedInstructionError(
                f"{p}: line {i}: expected 'family<TAB>instruction[<TAB>slot=value;...]', got {line!r}"
            )
        slots: dict[str, str] = {}
        for kv in cols[2].split(";") if len(cols) > 2 and cols[2].strip() else []:
            key, sep, value = kv.partition("=")
            if not sep:
                raise UnsupportedInstructionError(f"{p}: line {i}: slot {kv!r} is not key=value")
            slots[key.strip()] = value.strip()
        out.append(TaskLine(i, cols[1].strip(), cols[0].strip(), slots))
    return out


def _yaml(p: Path) -> list[TaskLine]:
    import yaml

    from digirl.sim.families.spec import FamilySpecError, register_spec

    try:
        data: Any = yaml.safe_load(_text(p))
    except yaml.YAMLError as e:
        raise UnsupportedInstructionError(f"{p}: not valid YAML ({e})") from e
    if not isinstance(data, dict) or not isinstance(data.get("tasks"), list):
        raise UnsupportedInstructionError(f"{p}: a YAML task file has a 'tasks:' list (and optionally 'families:')")
    fams = data.get("families") or []
    if not isinstance(fams, list):
        raise FamilySpecError(f"{p}: 'families:' must be a list of family specs")
    for spec in fams:
        register_spec(spec, source=str(p))
    out: list[TaskLine] = []
    for i, item in enumerate(data["tasks"], start=1):
        if isinstance(item, str) and item.strip():
            out.append(TaskLine(i, item.strip()))
        elif isinstance(item, dict) and isinstance(item.get("text"), str):
            out.append(TaskLine(i, item["text"].strip(), str(item.get("family", ""))))
        else:
            raise UnsupportedInstructionError(f"{p}: task {i} must be an instruction or {{text:, family:}}, got {item!r}")
    return out


def report_stale(stale: Sequence[str], module: str, what: str) -> int:
    """The exit status of checking shipped generated files: 1, naming the ``stale`` ones and the
    command that rewrites them (``python -m module --write``), or 0 when none is."""
    if stale:
        sys.stdout.write(f"out of date: {', '.join(stale)} (run python -m {module} --write)\n")
        return 1
    sys.stdout.write(f"shipped {what} files match the generator\n")
    return 0
