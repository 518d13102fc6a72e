"""The held-out paraphrase set (tests/sim/data/heldout_paraphrases.tsv, written before the parser was
read, lines never edited to pass) and the lines that must be rejected with a reason."""

from __future__ import annotations

import pytest

from digirl.sim.coverage import coverage_report_file
from digirl.sim.intents import FAMILIES
from digirl.sim.tasks.parser import explain_instruction
from digirl.sim.tasks.taskfile import read_task_file
from tests.sim.conftest import DATA

HELDOUT = DATA / "heldout_paraphrases.tsv"
REJECTS = DATA / "heldout_rejects.txt"


def test_heldout_set_spans_every_family() -> None:
    lines = read_task_file(HELDOUT)
    assert len(lines) >= 300
    assert {x.expected for x in lines} == set(FAMILIES)


def test_heldout_lines_parse_to_the_right_family() -> None:
    r = coverage_report_file(HELDOUT, run_expert=False)
    exp = r["expected"]
    assert exp["rate"] >= 0.95, exp["wrong"]
    # Of the lines placed right, the slot values the file states must match too.
    assert len(exp["slot_mismatches"]) <= 0.05 * exp["right_family"], exp["slot_mismatches"]


def test_heldout_lines_are_solved_by_the_expert() -> None:
    r = coverage_report_file(HELDOUT, perturbation=1, seeds=(0,))
    assert r["expert"]["ran"] and r["solved"] / r["lines"] >= 0.99, r["failures"][:10]


@pytest.mark.parametrize("level", [0, 2])
def test_heldout_lines_are_solved_at_every_level(level: int) -> None:
    r = coverage_report_file(HELDOUT, perturbation=level, seeds=(0, 1))
    assert r["solved"] / r["lines"] >= 0.99, r["failures"][:10]


@pytest.mark.parametrize("line", [x.text for x in read_task_file(REJECTS)])
def test_lines_no_family_takes_are_rejected_with_a_reason(line: str) -> None:
    found = explain_instruction(line)
    assert found.intent is None, (line, found.intent)
    assert len(found.reason) > 10
