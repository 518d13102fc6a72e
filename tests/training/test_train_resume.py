"""A resumed ``digirl train`` takes back exactly what the uninterrupted run had (issue 43, finding 3):
killed after an iteration's shard is stored but before its checkpoint, it adds that shard to the
replay buffer once; the rerun of a finished run logs no second final evaluation."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from digirl.cli.main import main
from digirl.testing.tiny_runs import TINY_ONLINE_DIGIRL

ARGS = [*TINY_ONLINE_DIGIRL, "iterations=3", "checkpoint_keep=5", "log.tensorboard=false"]


def _rows(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines() if line.strip()]


def _at(rows: list[dict[str, Any]], step: int, key: str) -> list[Any]:
    return [r[key] for r in rows if r.get("step") == step and key in r]


def _killed_after_the_last_shard(whole: Path, to: Path) -> None:
    """``to``: the run folder as it was when the process died after storing iteration 3's shard,
    before its checkpoint (LATEST still names iteration 2; nothing of step 3 logged)."""
    shutil.copytree(whole, to)
    (to / "checkpoints" / "LATEST").write_text("iter-000002\n")
    shutil.rmtree(to / "checkpoints" / "iter-000003")
    for name in ("policy", "eval.json", "eval.md", "final-eval.json", "annotations"):
        p = to / name
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()
    kept = [r for r in _rows(to) if int(r.get("step", 0)) <= 2]
    (to / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept))


@pytest.mark.slow
def test_a_shard_stored_before_the_kill_enters_the_buffer_once_and_a_finished_run_is_not_evaluated_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    whole = tmp_path / "whole"
    assert main(["train", str(whole), *ARGS]) == 0
    rows = _rows(whole)
    assert _at(rows, 3, "data/replay_trajectories") == [18.0]  # 3 iterations of 6
    finals = _at(rows, 3, "eval/train_success_rate")
    assert len(finals) == 1

    resumed = tmp_path / "resumed"
    _killed_after_the_last_shard(whole, resumed)
    assert main(["train", str(resumed), *ARGS]) == 0
    assert _at(_rows(resumed), 3, "data/replay_trajectories") == [18.0]  # not 24: iteration 3's shard once
    assert _at(_rows(resumed), 3, "data/online_trajectories") == [18.0]

    # the same command on the finished run: nothing to do, and no second final-eval row
    before = (whole / "metrics.jsonl").read_text()
    capsys.readouterr()
    assert main(["train", str(whole), *ARGS, "--json"]) == 0
    assert (whole / "metrics.jsonl").read_text() == before
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["iterations"] == 3 and len(out["final"]) == 1
