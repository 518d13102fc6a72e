"""Browser crashes, leftover processes and the batched VectorRunner-compatible loop."""

from __future__ import annotations

import os
import signal
import time

import pytest

from tests.browser.conftest import require_miniwob

pytestmark = pytest.mark.browser


def _kill_browser(pool: object) -> None:
    """SIGKILL the main Chromium process of ``pool`` (what an OOM killer or a crash does)."""
    pids = pool.browser_pids()  # type: ignore[attr-defined]
    main = [p for p in pids if b"--type=" not in open(f"/proc/{p}/cmdline", "rb").read()]
    assert main, f"no browser process among {pids}"
    old = pool._browser  # type: ignore[attr-defined]  # (the pool may be relaunching by the time we look again)
    for p in main:
        os.kill(p, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while old.is_connected() and time.monotonic() < deadline:
        time.sleep(0.02)  # until the driver has seen the browser die (a condition, bounded)
    assert not old.is_connected()


def test_killed_browser_fails_the_episode_then_relaunches(pool: object) -> None:
    require_miniwob()
    from digirl.browser.miniwob import MiniWoBEnv
    from digirl.core.actions import Action
    from digirl.core.errors import EnvFailure

    env = MiniWoBEnv("click-test", pool=pool, elements=False)  # type: ignore[arg-type]
    try:
        env.reset(seed=0)
        launches = pool.launches  # type: ignore[attr-defined]
        _kill_browser(pool)
        with pytest.raises(EnvFailure):
            env.step(Action.tap(0.5, 0.5))
        env.reset(seed=0)  # relaunches Chromium and opens a fresh page
        assert pool.launches == launches + 1  # type: ignore[attr-defined]
        _, r, term, _, _ = env.step(env.cheat())  # type: ignore[arg-type]
        assert (r, term) == (1.0, True)
    finally:
        env.close()


@pytest.mark.slow
def test_close_leaves_no_chromium_process() -> None:
    require_miniwob()
    from digirl.browser.miniwob import MiniWoBEnv
    from digirl.browser.pool import BrowserPool, chromium_pids

    before = chromium_pids()
    pool = BrowserPool()
    envs = [MiniWoBEnv("click-test", pool=pool, elements=False) for _ in range(3)]
    for e in envs:
        e.reset(seed=1)
    ours = pool.browser_pids()
    assert len(ours) >= 3 and ours <= chromium_pids()  # browser + renderers + helpers
    for e in envs:
        e.close()
    pool.close()
    assert not (ours & chromium_pids())
    assert chromium_pids() <= before
    # the shared pool closes with its last env
    env = MiniWoBEnv("click-test", elements=False)
    env.reset(seed=2)
    shared = env.pool.browser_pids()
    assert shared
    env.close()
    assert env.pool.closed and not (shared & chromium_pids())


def test_run_matches_the_vector_runner_contract(pool: object) -> None:
    require_miniwob()
    from digirl.browser.vector import BrowserVectorEnv
    from digirl.core.actions import Action
    from digirl.envs.vector import EpisodeJob
    from digirl.policies.base import ActOutput

    with BrowserVectorEnv.make("digirl/miniwob.click-test-v0", 3, pool=pool, elements=False, horizon=2) as venv:
        seen: list[int] = []

        def act(observations: list) -> list[ActOutput]:  # type: ignore[type-arg]
            seen.append(len(observations))
            return [ActOutput(Action.tap(0.5, 0.02), "tap top", -1.0) for _ in observations]

        jobs = [EpisodeJob(None, s) for s in range(5)]
        trajs = list(venv.run(act, jobs))
        assert sorted(t.metadata["job_id"] for t in trajs) == sorted(j.job_id for j in jobs)
        assert max(seen) == 3  # one batched policy call for the 3 pages
        t = trajs[0]
        assert t.length == 2 and t.truncated and not t.success and t.final_observation is not None
        assert t.steps[0].action_text == "tap top" and t.steps[0].log_prob == -1.0
        assert t.seed in range(5) and t.metadata["episode_seed"] == t.seed


@pytest.mark.parametrize("retries", [0, 2])
def test_run_survives_a_killed_browser(retries: int, pool: object) -> None:
    """Chromium dies during the 2nd policy call: the episodes whose actions it is choosing (and any
    other episode live on that browser) are marked as env failures (no retries) or restarted with
    the same seed on the relaunched browser. A reset in flight at the kill retries on its own."""
    require_miniwob()
    from digirl.browser.vector import BrowserVectorEnv
    from digirl.core.actions import Action
    from digirl.envs.vector import EpisodeJob

    with BrowserVectorEnv.make("digirl/miniwob.click-test-v0", 3, pool=pool) as venv:
        batches: list[int] = []

        def tap_button(observations: list) -> list[Action]:  # type: ignore[type-arg]
            batches.append(len(observations))
            if len(batches) == 2:
                _kill_browser(venv.pool)
            return [Action.tap(*next(e for e in o.elements if e.kind == "button").center) for o in observations]

        out = list(venv.run(tap_button, [EpisodeJob(None, s) for s in range(6)], max_episode_retries=retries))
        retried = venv.stats.retries
    assert len(out) == 6 and batches[0] == 3  # the first call gets every page
    hit = batches[1]  # the episodes whose step was sent to the dead browser
    failed = [t for t in out if t.env_failure]
    if retries == 0:
        assert hit <= len(failed) <= 3
        assert all("step:" in t.failure_reason or "reset:" in t.failure_reason for t in failed)
        assert all(t.failure_reason.endswith("(1 attempt)") and t.metadata["failures"] for t in failed)
        assert all(t.success for t in out if not t.env_failure)
    else:
        assert not failed and all(t.success for t in out)
        again = sum(t.metadata["attempts"] == 2 for t in out)
        assert hit <= again <= 3 and retried == again


def test_collect_solver_demos() -> None:
    require_miniwob()
    from digirl.browser.vector import collect_solver_demos

    demos = collect_solver_demos("enter-password", 3, seeds=[5, 6, 7], num_envs=3, elements=False)
    assert [d.seed for d in demos] == [5, 6, 7]
    assert all(d.success and d.length == 5 for d in demos)
    assert [s.action.kind for s in demos[0].steps] == ["tap", "type", "tap", "type", "tap"]
    assert demos[0].task.env_id == "digirl/miniwob.enter-password-v0"
