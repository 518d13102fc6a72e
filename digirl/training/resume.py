"""What a resumed ``digirl train`` takes back from its run folder, so that it goes on as the
uninterrupted run would have.

A run can be killed between two writes of one iteration: after the iteration's shard is stored in
``RUN/data`` but before its checkpoint, or after the final evaluation is logged but before the run
returns. On resume:

- :func:`stored_iterations` splits the stored online trajectories into those of checkpointed
  iterations (the replay buffer had received them: they go back into it, once) and those of
  iterations the checkpoint does not cover (the loop reuses each as that iteration's rollouts,
  instead of collecting it again, and adds it to the buffer then; adding it at start as well put it
  there twice);
- :func:`final_eval_done` / :func:`mark_final_eval` record that the final evaluation of iteration
  N is done (``RUN/final-eval.json``), so the rerun of a finished run neither evaluates again nor
  appends a second final-eval row to ``metrics.jsonl``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from digirl.core.types import Trajectory
from digirl.data.store import atomic_write_json
from digirl.utils.provenance import result_metadata

__all__ = ["FINAL_EVAL_FILE", "final_eval_done", "mark_final_eval", "stored_iterations"]

#: In the run folder: the iteration whose final evaluation is done, and its reports.
FINAL_EVAL_FILE = "final-eval.json"


def stored_iterations(
    online: Iterable[Trajectory],
    iteration: int,
    *,
    updates: int = 0,
    max_staleness: int = 0,
    warmup_iterations: int = 0,
) -> tuple[list[Trajectory], dict[int, list[Trajectory]]]:
    """``(replay, pending)`` from a run's stored online trajectories and its checkpoint's ``iteration``
    (online iterations completed).

    ``replay``: the trajectories of iterations ``< iteration`` without env failures, in storage
    order: what the uninterrupted run's replay buffer had received by then. ``pending``: iteration
    -> its trajectories (env failures included, as collected) for every stored iteration ``>=
    iteration``: collected and stored, but not yet learned from when the run was killed.
    A trajectory without an ``iteration`` in its metadata counts as checkpointed.

    With asynchronous learning (``max_staleness`` k > 0) the learner dropped, instead of replaying,
    a trajectory more than k updates older than its version when it consumed that iteration; that
    version is recomputed from the checkpoint's ``updates`` (one update per iteration from
    ``warmup_iterations`` on), and such trajectories stay out of ``replay`` as well.
    """
    replay: list[Trajectory] = []
    pending: dict[int, list[Trajectory]] = {}
    for t in online:
        it = int(t.metadata.get("iteration", -1))
        if it >= iteration:
            pending.setdefault(it, []).append(t)
        elif t.env_failure:
            continue
        elif max_staleness > 0 and _was_stale(t, it, iteration, updates, max_staleness, warmup_iterations):
            continue
        else:
            replay.append(t)
    return replay, pending


def _was_stale(t: Trajectory, it: int, iteration: int, updates: int, k: int, warmup: int) -> bool:
    """Whether the asynchronous learner, consuming iteration ``it``, dropped ``t`` as stale."""
    if t.policy_version is None or it < 0:
        return False
    version = updates - sum(1 for i in range(it, iteration) if i >= warmup)  # the learner's, consuming `it`
    return version - t.policy_version > k


def final_eval_done(run_dir: str | Path, iteration: int) -> list[dict[str, Any]] | None:
    """The final evaluation's reports (``EvalReport.to_dict()`` each) when it already ran for
    ``iteration``; ``None`` when it did not (or ran for another iteration: the run was extended)."""
    path = Path(run_dir) / FINAL_EVAL_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):  # unreadable: evaluate again rather than trust it
        return None
    if not isinstance(data, dict) or data.get("iteration") != iteration or not isinstance(data.get("final"), list):
        return None
    return list(data["final"])


def mark_final_eval(run_dir: str | Path, iteration: int, final: list[dict[str, Any]]) -> None:
    """Record, atomically, that the final evaluation of ``iteration`` is done (call it after the
    evaluation's metrics and reports are written)."""
    atomic_write_json(Path(run_dir) / FINAL_EVAL_FILE, {"iteration": iteration, "final": final, **result_metadata()})
