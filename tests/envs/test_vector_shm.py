"""Screenshots cross process boundaries through shared memory: identical trajectories to running
the envs inline, and no shared-memory block outlives the runner, a killed worker or a killed parent."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from digirl.core.types import Observation, Trajectory
from digirl.envs.vector import EpisodeJob, VectorRunner, env_factory, run_expert
from digirl.policies.base import ActOutput

SHM = Path("/dev/shm")
pytestmark = pytest.mark.skipif(not SHM.is_dir(), reason="needs /dev/shm")


def _blocks(pid: int) -> list[str]:
    return sorted(p.name for p in SHM.glob(f"digirl_{pid}_*"))


def _record(t: Trajectory) -> list[object]:
    """Everything a trajectory holds, frames as bytes."""
    obs = [s.observation for s in t.steps] + [t.final_observation]
    rows: list[object] = [t.task.instruction, t.success, t.env_failure, t.length]
    for o in obs:
        assert o is not None
        prev = o.previous_screenshot
        rows.append((o.screenshot.shape, o.screenshot.tobytes(), None if prev is None else prev.tobytes(), o.elements, o.step))
    rows += [(str(s.action), s.action_text, s.reward, s.terminated, s.truncated, s.log_prob) for s in t.steps]
    return rows


def _policy() -> object:
    from digirl.policies.config import EncoderConfig
    from digirl.policies.default import DefaultPolicy

    return DefaultPolicy(EncoderConfig(dim=32, layers=1, frame_stack=2), seed=0)


def test_policy_trajectories_equal_inline_mode() -> None:
    policy = _policy()

    def act(observations: Sequence[Observation]) -> list[ActOutput]:
        return policy.act(observations, greedy=True)  # type: ignore[attr-defined, no-any-return]

    fn = env_factory("digirl/sim-general-v0", width=180, height=400)
    out = {}
    for mode in ("inline", "process"):
        jobs = [EpisodeJob(None, seed=s) for s in range(10)]
        # Deterministic scheduling (batches wait for every reset), so both modes batch alike.
        with VectorRunner(fn, 3, mode=mode, reset_timeout_s=60, reset_batch_wait_s=float("inf")) as runner:  # type: ignore[arg-type]
            trajs = list(runner.run(act, jobs))
            if mode == "process":
                assert all(h.block is not None for h in runner._handles)  # frames went through shared memory
        out[mode] = {t.seed: _record(t) for t in trajs}
    assert out["inline"] == out["process"] and len(out["inline"]) == 10
    assert _blocks(os.getpid()) == []


def test_expert_trajectories_equal_inline_mode() -> None:
    fn = env_factory("digirl/sim-webshop-v0")
    jobs = [EpisodeJob(None, seed=s) for s in range(6)]
    a = run_expert(fn, jobs, 2, mode="inline")
    b = run_expert(fn, [EpisodeJob(j.task, j.seed) for j in jobs], 2, mode="process", reset_timeout_s=60)
    assert [_record(t) for t in a] == [_record(t) for t in b]
    assert _blocks(os.getpid()) == []


def test_worker_killed_mid_episode_is_retried_and_leaves_no_block() -> None:
    fn = env_factory("digirl/sim-general-v0", width=180, height=400)
    policy = _policy()
    calls = 0
    runner = VectorRunner(fn, 2, reset_timeout_s=60, step_timeout_s=30)

    def act(observations: Sequence[Observation]) -> list[ActOutput]:
        nonlocal calls
        calls += 1
        if calls == 3:  # kill a worker between its reply and the next command
            os.kill(runner._handles[0].proc.pid, signal.SIGKILL)
        return one_by_one(observations)

    def one_by_one(observations: Sequence[Observation]) -> list[ActOutput]:
        """Batch-independent acting (the retry changes which episodes share a batch)."""
        return [policy.act([o], greedy=True)[0] for o in observations]  # type: ignore[attr-defined]

    jobs = [EpisodeJob(None, seed=s) for s in range(6)]
    with runner:
        trajs = list(runner.run(act, jobs))
        assert runner.stats.crashes == 1 and runner.stats.restarts == 1
        assert len(_blocks(os.getpid())) == 2  # the block of the slot survives its worker
    assert len(trajs) == 6 and not any(t.env_failure for t in trajs)
    assert _blocks(os.getpid()) == []
    with VectorRunner(fn, 2, mode="inline") as inline:
        want = {t.seed: _record(t) for t in inline.run(one_by_one, jobs)}
    assert {t.seed: _record(t) for t in trajs} == want


def test_killed_parent_leaves_no_block(tmp_path: Path) -> None:
    """SIGKILL the process that owns the runner mid-run: the resource tracker unlinks its blocks."""
    script = tmp_path / "victim.py"
    script.write_text(
        textwrap.dedent(
            """
            import os, signal, sys
            from digirl.envs.vector import EpisodeJob, VectorRunner, env_factory

            def _blocks_of_self():
                return [n for n in os.listdir("/dev/shm") if n.startswith(f"digirl_{os.getpid()}_")]

            def main():
                runner = VectorRunner(env_factory("digirl/sim-general-v0"), 2, reset_timeout_s=60)
                for i, t in enumerate(runner.run(None, [EpisodeJob(None, s) for s in range(20)], expert=True)):
                    if i == 2:
                        print("pid", os.getpid(), "blocks", len(_blocks_of_self()), flush=True)
                        os.kill(os.getpid(), signal.SIGKILL)

            if __name__ == "__main__":
                main()
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    m = re.search(r"pid (\d+) blocks (\d+)", proc.stdout)
    assert m is not None and m.group(2) == "2", (proc.stdout, proc.stderr)
    # Only the victim's own blocks: /dev/shm may hold other processes' (another container's, or a
    # run whose resource tracker was SIGKILLed with its process group).
    victim = int(m.group(1))
    deadline = time.monotonic() + 20
    while _blocks(victim) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _blocks(victim) == []


def test_frames_survive_later_replies() -> None:
    """A frame handed to the caller is its own copy: later replies reuse the block, not the array."""
    fn = env_factory("digirl/sim-general-v0", width=180, height=400)
    with VectorRunner(fn, 1, reset_timeout_s=60) as runner:
        trajs = list(runner.run(None, [EpisodeJob(None, seed=s) for s in range(4)], expert=True))
    shots = [s.observation.screenshot for t in trajs for s in t.steps]
    # the first reply of a slot is pickled (no block yet); every later frame is a private copy
    assert all(s.flags.writeable and (s.flags.owndata or isinstance(s.base, bytes)) for s in shots)
    assert sum(s.flags.owndata for s in shots) >= len(shots) - 1
    assert len({s.tobytes() for s in shots}) > 3 and all(np.asarray(s).shape == (400, 180, 3) for s in shots)
