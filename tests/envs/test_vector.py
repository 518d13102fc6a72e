"""VectorRunner: results equal a serial loop, batching, ordering, faults → retry or env_failure, no leaks."""

from __future__ import annotations

import functools
import gc
from collections.abc import Sequence
from typing import Literal

import numpy as np
import pytest

from digirl.core.actions import Action
from digirl.core.codecs import format_action
from digirl.core.errors import EnvFailure, UnsupportedInstructionError
from digirl.core.types import Observation, Trajectory, UIElement
from digirl.envs.toy import ToyEnv
from digirl.envs.vector import EpisodeJob, VectorRunner, env_factory, run_expert, screen_seed
from digirl.policies.base import ActOutput
from digirl.testing.fake_envs import FaultKind, FlakyEnv

Mode = Literal["inline", "process"]
STEP_S, RESET_S = 1.0, 10.0  # generous: the test machine may be loaded


def elem_policy(observations: Sequence[Observation]) -> list[ActOutput]:
    """Deterministic and observation-dependent: tap element (step % n), or type/enter in the type task."""
    out = []
    for o in observations:
        assert o.elements is not None
        if o.instruction.startswith("Tap"):
            el = o.elements[o.step % len(o.elements)]
            a = Action.tap(*el.center)
        else:
            a = Action.type_text("hello") if o.step == 0 else Action.enter()
        out.append(ActOutput(a, f"text:{a}", -0.5 - o.step))
    return out


def back_policy(observations: Sequence[Observation]) -> list[ActOutput]:
    """Never ends an episode in the toy env: runs to the horizon."""
    return [ActOutput(Action.back(), "back", None) for _ in observations]


def serial(job: EpisodeJob, mode: str) -> list[tuple[bytes, str, float, bool, bool]]:
    env = ToyEnv(mode)
    obs, _ = env.reset(seed=job.seed, options={"task": job.task})
    trace = []
    while True:
        out = elem_policy([obs])[0]
        nxt, r, te, tr, _ = env.step(out.action)
        trace.append((obs.screenshot.tobytes(), str(out.action), r, te, tr))
        obs = nxt
        if te or tr:
            return [*trace, (obs.screenshot.tobytes(), "", 0.0, False, False)]


def trace_of(t: Trajectory) -> list[tuple[bytes, str, float, bool, bool]]:
    assert t.final_observation is not None
    steps = [(s.observation.screenshot.tobytes(), str(s.action), s.reward, s.terminated, s.truncated) for s in t.steps]
    return [*steps, (t.final_observation.screenshot.tobytes(), "", 0.0, False, False)]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


@pytest.mark.parametrize("mode", ["inline", "process"])
def test_runner_matches_serial_loop(mode: Mode) -> None:
    jobs = [EpisodeJob(None, s) for s in range(8)] + [EpisodeJob("toy-type-hello", 3), EpisodeJob("Tap the red button", 4)]
    with VectorRunner(env_factory("digirl/toy-mixed-v0"), 3, mode=mode, step_timeout_s=STEP_S, reset_timeout_s=RESET_S) as runner:
        trajs = list(runner.run(elem_policy, jobs))
        assert runner.stats.episodes == len(jobs) and runner.stats.env_failures == 0
        assert runner.stats.steps == sum(t.length for t in trajs)
    assert sorted(t.metadata["job_id"] for t in trajs) == sorted(j.job_id for j in jobs)
    by_id = {t.metadata["job_id"]: t for t in trajs}
    for job in jobs:
        t = by_id[job.job_id]
        assert trace_of(t) == serial(job, "mixed")
        assert t.seed == job.seed and not t.env_failure and t.metadata["attempts"] == 1
        assert t.metadata["worker"] in range(3) and t.metadata["wall_time_s"] >= 0
        for i, s in enumerate(t.steps):
            assert s.observation.step == i  # the observation BEFORE the action
            assert s.action_text == f"text:{s.action}" and s.log_prob == -0.5 - i
            prev = t.steps[i - 1].observation.screenshot if i else None
            if prev is None:
                assert s.observation.previous_screenshot is None
            else:  # not shipped twice by the worker, restored by the parent
                assert s.observation.previous_screenshot is not None
                assert s.observation.previous_screenshot.tobytes() == prev.tobytes()
        assert t.final_observation is not None and t.final_observation.step == t.length
    assert by_id[jobs[-2].job_id].task.task_id == "toy-type-hello" and by_id[jobs[-2].job_id].success


def test_batching_and_completion_order() -> None:
    # Type tasks run to the horizon under back_policy-like acting; tap tasks end at once.
    def policy(observations: Sequence[Observation]) -> list[ActOutput]:
        sizes.append(len(observations))
        return [ActOutput(Action.tap(0.5, 0.175) if o.instruction.startswith("Tap") else Action.back(), "") for o in observations]

    sizes: list[int] = []
    seen: list[int] = []
    jobs = [EpisodeJob("toy-type-hello", 0), EpisodeJob("toy-tap-red", 1), EpisodeJob("toy-type-world", 2)]
    runner = VectorRunner(env_factory("digirl/toy-mixed-v0", horizon=3), 3, mode="inline")
    out = list(runner.run(policy, jobs, on_trajectory=lambda t: seen.append(t.metadata["job_id"])))
    assert [t.metadata["job_id"] for t in out] == seen
    assert seen[0] == jobs[1].job_id  # the 1-step episode completes first
    assert sizes == [3, 2, 2]  # one policy call per round over every env waiting for an action
    assert [t.length for t in out] == [1, 3, 3] and out[1].truncated

    sizes.clear()
    jobs = [EpisodeJob("toy-type-hello", s) for s in range(8)]
    assert len(list(runner.run(policy, jobs))) == 8
    assert sizes == [3] * 3 + [3] * 3 + [2] * 3  # 8 episodes of 3 steps over 3 envs
    runner.close()


def test_process_mode_batches_over_envs() -> None:
    sizes: list[int] = []

    def policy(observations: Sequence[Observation]) -> list[ActOutput]:
        sizes.append(len(observations))
        return back_policy(observations)

    # A long reset_batch_wait_s: the first batch waits for every worker to start, however slow.
    fn = env_factory("digirl/toy-type-v0", horizon=3)
    with VectorRunner(fn, 3, step_timeout_s=STEP_S, reset_timeout_s=RESET_S, reset_batch_wait_s=RESET_S) as runner:
        out = list(runner.run(policy, [EpisodeJob(None, s) for s in range(6)]))
    assert len(out) == 6 and all(t.length == 3 and t.truncated for t in out)
    assert max(sizes) == 3 and sum(sizes) == 18


FAULT_CASES: list[FaultKind] = ["crash", "hang", "raise"]


@pytest.mark.parametrize(("fault", "at_step"), [("crash", 1), ("hang", 1), ("raise", 1), ("hang", None)])
def test_transient_fault_is_retried(fault: FaultKind, at_step: int | None) -> None:
    fn = functools.partial(FlakyEnv, fault, at_step=at_step, faulty_attempts=1, mode="type", horizon=3)
    # A reset hang (at_step=None) is caught by reset_timeout_s, which also covers starting the worker.
    reset_s = RESET_S if at_step is not None else 3.0
    with VectorRunner(fn, 2, step_timeout_s=STEP_S, reset_timeout_s=reset_s) as runner:
        out = list(runner.run(back_policy, [EpisodeJob(None, 0), EpisodeJob(None, 1)]))
        pids = runner.spawned_pids
    assert len(out) == 2
    for t in out:
        assert not t.env_failure and t.length == 3 and t.metadata["attempts"] == 2
        assert t.metadata["failures"][0].startswith({"raise": "error", "crash": "crash", "hang": "hang"}[fault])
        assert ("reset exceeded" in t.metadata["failures"][0]) == (at_step is None)
    counter = {"crash": "crashes", "hang": "hangs", "raise": "errors"}[fault]
    assert getattr(runner.stats, counter) == 2 and runner.stats.restarts == 2 and runner.stats.retries == 2
    assert len(pids) == 4 and not any(_alive(p) for p in pids)


@pytest.mark.parametrize("fault", FAULT_CASES)
def test_persistent_fault_gives_env_failure(fault: FaultKind) -> None:
    fn = functools.partial(FlakyEnv, fault, at_step=0, seeds=[1], mode="type", horizon=3)
    runner = VectorRunner(fn, 2, step_timeout_s=STEP_S, reset_timeout_s=RESET_S, max_episode_retries=1)
    out = {t.seed: t for t in runner.run(back_policy, [EpisodeJob(None, s) for s in range(3)])}
    assert not out[0].env_failure and not out[2].env_failure and out[0].length == 3
    bad = out[1]
    assert bad.env_failure and not bad.success and bad.metadata["attempts"] == 2
    expected = {
        "crash": "crash: worker process died during step (exit code 13) (2 attempts)",
        "hang": "hang: step exceeded 1.0s (2 attempts)",
        "raise": "error: step raised SimulatedFault: FlakyEnv: simulated raise in step 0 (2 attempts)",
    }[fault]
    assert bad.failure_reason == expected
    assert runner.stats.env_failures == 1
    pids = runner.spawned_pids
    del runner  # the weakref finalizer must stop the workers too
    gc.collect()
    assert pids and not any(_alive(p) for p in pids)


def test_inline_mode_handles_exceptions() -> None:
    transient = functools.partial(FlakyEnv, "raise", faulty_attempts=1, mode="tap")  # raises in reset
    persistent = functools.partial(FlakyEnv, "crash", at_step=0, seeds=[0], mode="tap")  # crash → raise inline
    with VectorRunner(transient, 2, mode="inline") as runner:
        out = list(runner.run(back_policy, [EpisodeJob(None, s) for s in range(3)]))
    assert all(not t.env_failure and t.metadata["attempts"] == 2 for t in out) and runner.stats.errors == 3
    with VectorRunner(persistent, 1, mode="inline", max_episode_retries=2) as runner:
        out = list(runner.run(back_policy, [EpisodeJob(None, 0), EpisodeJob(None, 1)]))
    assert out[0].env_failure and out[0].failure_reason.endswith("(3 attempts)") and not out[1].env_failure


@pytest.mark.parametrize("mode", ["inline", "process"])
def test_unsupported_instruction_raises(mode: Mode) -> None:
    with VectorRunner(env_factory("digirl/toy-tap-v0"), 2, mode=mode, step_timeout_s=STEP_S, reset_timeout_s=RESET_S) as runner:
        with pytest.raises(UnsupportedInstructionError, match="Fly to the moon"):
            list(runner.run(back_policy, [EpisodeJob(None, 0), EpisodeJob("Fly to the moon", 1)]))
        assert runner.stats.errors == 0
        # The runner stays usable after the aborted run.
        assert len(list(runner.run(back_policy, [EpisodeJob(None, s) for s in range(3)]))) == 3


def test_broken_env_fn_raises_env_failure() -> None:
    with VectorRunner(functools.partial(FlakyEnv, "build"), 1, step_timeout_s=STEP_S, reset_timeout_s=RESET_S) as runner:
        with pytest.raises(EnvFailure, match="simulated failure to build"):
            list(runner.run(back_policy, [EpisodeJob(None, 0)]))


def test_abandoned_run_then_new_run() -> None:
    with VectorRunner(env_factory("digirl/toy-type-v0", horizon=3), 2, step_timeout_s=STEP_S, reset_timeout_s=RESET_S) as runner:
        for _ in runner.run(back_policy, [EpisodeJob(None, s) for s in range(4)]):
            break  # leaves the other env mid-request
        out = list(runner.run(elem_policy, [EpisodeJob("toy-type-hello", s) for s in range(4)]))
        assert len(out) == 4 and all(t.success and t.metadata["attempts"] == 1 for t in out)
        assert runner.stats.crashes + runner.stats.hangs + runner.stats.errors == 0


@pytest.mark.parametrize("mode", ["inline", "process"])
def test_run_expert(mode: Mode) -> None:
    jobs = [EpisodeJob(None, s) for s in range(6)]
    demos = run_expert(env_factory("digirl/toy-mixed-v0"), jobs, 2, mode=mode, step_timeout_s=STEP_S, reset_timeout_s=RESET_S)
    assert [t.metadata["job_id"] for t in demos] == [j.job_id for j in jobs]  # job order
    assert all(t.success and t.metadata["expert"] for t in demos)
    s = demos[0].steps[0]
    assert s.action_text == format_action(s.action, "json") and s.log_prob is None
    noisy = run_expert(env_factory("digirl/toy-mixed-v0"), jobs, 2, mode=mode, eps=0.5, seed=3, step_timeout_s=STEP_S)
    again = run_expert(env_factory("digirl/toy-mixed-v0"), jobs, 1, mode="inline", eps=0.5, seed=3)
    assert sum(len(t.metadata["noisy_steps"]) for t in noisy) > 0
    assert [[str(s.action) for s in t.steps] for t in noisy] == [[str(s.action) for s in t.steps] for t in again]


def test_screen_seed() -> None:
    shot = np.zeros((2, 3, 3), dtype=np.uint8)
    el = UIElement((0.1, 0.2, 0.3, 0.4), "search", "input")
    a = Observation(shot, "task a", elements=(el,))
    assert screen_seed(a) == 1279447728
    # the layout counts, not the texts nor the task
    assert screen_seed(Observation(shot + 1, "task b", elements=(UIElement(el.bounds, "typed", "input"),))) == 1279447728
    assert screen_seed(Observation(shot, "task a", elements=(UIElement((0.1, 0.2, 0.3, 0.5), "search", "input"),))) != 1279447728
    # without elements: the pixels
    assert screen_seed(Observation(shot, "x")) == screen_seed(Observation(shot.copy(), "y")) == 3788680614
    assert screen_seed(Observation(shot + 1, "x")) != 3788680614


def test_run_expert_sticky_noise() -> None:
    """Sticky noise: whenever a step is noisy on a given screen, it is the same action."""
    jobs = [EpisodeJob(None, s) for s in range(12)]
    demos = run_expert(env_factory("digirl/toy-mixed-v0"), jobs, 1, mode="inline", eps=0.6, seed=3, sticky=True)
    seen: dict[int, list[str]] = {}
    for t in demos:
        assert t.metadata["expert_sticky"]
        for h in t.metadata["noisy_steps"]:
            s = t.steps[h]
            seen.setdefault(screen_seed(s.observation), []).append(str(s.action))
    assert any(len(v) > 1 for v in seen.values())  # some screen got noise more than once
    assert all(len(set(v)) == 1 for v in seen.values()), seen


def test_argument_errors() -> None:
    runner = VectorRunner(env_factory("digirl/toy-tap-v0"), 1, mode="inline")
    jobs = [EpisodeJob(None, 0)]
    with pytest.raises(ValueError, match="either an act_fn or expert"):
        runner.run(back_policy, jobs, expert=True)
    with pytest.raises(TypeError, match="EpisodeJob"):
        runner.run(back_policy, [0])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="returned 0 outputs for 1"):
        list(runner.run(lambda obs: [], jobs))
    out = list(runner.run(lambda obs: [Action.back() for _ in obs], jobs))  # type: ignore[arg-type]  # plain Actions are accepted
    assert out[0].steps[0].action_text == "back"
    runner.close()
    with pytest.raises(RuntimeError, match="closed"):
        runner.run(back_policy, jobs)
    with pytest.raises(TypeError, match="picklable"):
        VectorRunner(lambda: ToyEnv(), 1)
    with pytest.raises(ValueError, match="non-negative"):
        EpisodeJob(None, -1)
    with pytest.raises(KeyError, match="unknown env id"):
        env_factory("digirl/nope-v0")


def test_job_gates_hold_episodes_back_in_order_and_act_for_sees_each_episodes_job() -> None:
    import threading

    from digirl.core.actions import Action
    from digirl.policies.base import ActOutput

    opened = threading.Event()
    seen: list[tuple[int, int]] = []  # (job_id, observation step) per action

    class PerEpisode:
        def __call__(self, observations):  # pragma: no cover - the runner calls act_for
            raise AssertionError("act_for must be used")

        def act_for(self, jobs, observations):
            seen.extend((j.job_id, o.step) for j, o in zip(jobs, observations))
            return [ActOutput(Action.back(), "back") for _ in observations]

    first = EpisodeJob(None, 0)
    gated = EpisodeJob(None, 1, gate=opened.is_set)
    after = EpisodeJob(None, 2)  # not gated, but after a closed gate: waits too
    threading.Timer(0.3, opened.set).start()
    with VectorRunner(env_factory("digirl/toy-tap-v0", horizon=2), 3, mode="inline") as runner:
        trajs = list(runner.run(PerEpisode(), [first, gated, after]))
    assert trajs[0].seed == 0 and sorted(t.seed for t in trajs) == [0, 1, 2]
    ids = [jid for jid, _ in seen]
    assert ids.index(gated.job_id) < ids.index(after.job_id)  # started in order, once the gate opened
    for t in trajs:  # each observation went with its own episode's job
        assert [step for jid, step in seen if jid == t.metadata["job_id"]] == list(range(t.length))
