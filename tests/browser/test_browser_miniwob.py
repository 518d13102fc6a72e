"""MiniWoB++ in Chromium: registry, seeded reset, rewards, time limit, elements, scripted solvers."""

from __future__ import annotations

import numpy as np
import pytest

from tests.browser.conftest import require_miniwob

pytestmark = pytest.mark.browser


def test_every_shipped_task_is_registered_with_metadata() -> None:
    from digirl.browser.catalog import CURATED_TASKS, miniwob_html_dir, miniwob_tasks
    from digirl.envs.registry import list_envs, spec

    ids = {s.id for s in list_envs()}
    tasks = miniwob_tasks()
    assert len(tasks) >= len(CURATED_TASKS)
    if miniwob_html_dir() is not None:
        assert len(tasks) == len(list(miniwob_html_dir().glob("*.html")))  # type: ignore[union-attr]
    assert all(f"digirl/miniwob.{t}-v0" in ids for t in tasks)
    assert "digirl/webapp-v0" in ids
    s = spec("digirl/miniwob.click-checkboxes-v0")
    assert s.requires == "browser" and s.kwargs == {"task": "click-checkboxes"}
    assert s.metadata["expressible"] == "yes" and s.metadata["scripted_solver"] is True
    if "click-scroll-list" in tasks:
        assert spec("digirl/miniwob.click-scroll-list-v0").metadata["expressible"] == "no"


def test_curated_list_matches_the_solvers() -> None:
    pytest.importorskip("playwright.async_api")
    from digirl.browser.catalog import CURATED_TASKS
    from digirl.browser.solvers import SOLVERS

    assert set(CURATED_TASKS) == set(SOLVERS)


def test_reset_is_seeded_and_rewards_follow_miniwob(pool: object) -> None:
    require_miniwob()
    from digirl.browser.miniwob import MiniWoBEnv
    from digirl.core.actions import Action

    env = MiniWoBEnv("click-button", pool=pool)  # type: ignore[arg-type]
    try:
        obs, info = env.reset(seed=7)
        assert obs.screenshot.shape == (210, 160, 3) and obs.screenshot.dtype == np.uint8
        assert obs.instruction.startswith("Click on the") and info["task"]["params"]["seed"] == 7
        assert env.observation_space.contains(obs)
        buttons = [e for e in obs.elements or () if e.kind == "button"]
        assert buttons and all(0 <= v <= 1 for e in buttons for v in e.bounds)
        first = obs.instruction
        obs2, _ = env.reset(seed=7)
        assert obs2.instruction == first and np.array_equal(obs2.screenshot, obs.screenshot)

        # a tap on the instruction text does nothing: no reward, episode goes on
        _, r, term, trunc, info = env.step(Action.tap(0.5, 0.05))
        assert (r, term, trunc) == (0.0, False, False)
        # a wrong button ends the episode with MiniWoB's raw reward -1 -> our reward 0
        target = obs.instruction.split('"')[1]
        wrong = [b for b in buttons if b.text != target]
        if wrong:
            _, r, term, _, info = env.step(Action.tap(*wrong[0].center))
            assert term and r == 0.0 and info["raw_reward"] == -1.0
            env.reset(seed=7)
        _, r, term, _, info = env.step(env.cheat())  # type: ignore[arg-type]
        assert term and r == 1.0 and info["raw_reward"] == 1.0
        assert env.cheat() is None  # episode over
        with pytest.raises(RuntimeError):
            env.step(Action.tap(0.5, 0.5))
    finally:
        env.close()


def test_horizon_back_home_and_resize(pool: object) -> None:
    require_miniwob()
    from digirl.browser.miniwob import MiniWoBEnv
    from digirl.core.actions import Action

    env = MiniWoBEnv("click-test", pool=pool, width=80, height=105, horizon=3, elements=False)  # type: ignore[arg-type]
    try:
        obs, _ = env.reset(seed=1)
        assert obs.screenshot.shape == (105, 80, 3) and obs.elements is None
        _, _, _, _, info = env.step(Action.back())
        assert info["noop"] is True
        env.step(Action.home())
        _, r, term, trunc, _ = env.step("not an action")
        assert (r, term, trunc) == (0.0, False, True)  # horizon 3 in steps
    finally:
        env.close()


def test_page_time_limit_is_off_by_default_and_optional(pool: object) -> None:
    require_miniwob()
    from digirl.browser.miniwob import MiniWoBEnv
    from digirl.core.actions import Action

    env = MiniWoBEnv("click-test", pool=pool, elements=False)  # type: ignore[arg-type]
    short = MiniWoBEnv("click-test", pool=pool, elements=False, page_time_limit_s=1.0)  # type: ignore[arg-type]
    try:
        env.reset(seed=0)

        async def limit() -> float:
            return float(await env._session.current().evaluate("core.EPISODE_MAX_TIME"))

        assert pool.run(limit()) >= 3600 * 1000  # type: ignore[attr-defined]
        short.reset(seed=0)

        async def timed_out() -> None:  # the page's own 1 s timer ends the episode (however slow the machine)
            await short._session.current().wait_for_function("() => WOB_DONE_GLOBAL", timeout=60_000)

        pool.run(timed_out(), 90.0)  # type: ignore[attr-defined]
        _, r, term, _, info = short.step(Action.tap(0.5, 0.05))
        assert term and r == 0.0 and info["reason"] == "timed out" and info["not_applied"]
    finally:
        env.close()
        short.close()


@pytest.mark.slow
def test_every_scripted_solver_on_a_few_seeds(pool: object) -> None:
    """All curated tasks at once through the batched API (one page each), 2 seeds per task."""
    require_miniwob()
    from digirl.browser.catalog import CURATED_TASKS
    from digirl.browser.miniwob import MiniWoBEnv
    from digirl.browser.vector import BrowserVectorEnv
    from digirl.core.errors import EnvFailure

    envs = [MiniWoBEnv(t, pool=pool, elements=False) for t in CURATED_TASKS]  # type: ignore[arg-type]
    failed: list[str] = []
    with BrowserVectorEnv(envs) as venv:
        for seed in (11, 12):
            for r in venv.reset_many([seed] * len(envs)):
                assert not isinstance(r, EnvFailure), r
            active, total = list(range(len(envs))), [0.0] * len(envs)
            while active:
                acts = venv.cheat_many(active)
                for i, a in zip(active, acts):
                    assert a is not None and not isinstance(a, EnvFailure), f"{CURATED_TASKS[i]}: solver gave up"
                outs = venv.step_many(acts, active)  # type: ignore[arg-type]
                still = []
                for i, out in zip(active, outs):
                    assert not isinstance(out, EnvFailure), out
                    total[i] += out[1]
                    if not (out[2] or out[3]):
                        still.append(i)
                active = still
            failed += [f"{t}@{seed}" for t, r in zip(CURATED_TASKS, total) if r != 1.0]
    assert not failed, f"solver failures: {failed}"


def test_check_env_contract_on_a_typing_task(pool: object) -> None:
    """The shared env checker: spaces, invalid actions, horizon, seeded determinism, expert."""
    require_miniwob()
    from digirl.browser.miniwob import MiniWoBEnv
    from digirl.envs.checker import check_env

    env = MiniWoBEnv("login-user", pool=pool)  # type: ignore[arg-type]
    try:
        report = check_env(env, max_tasks=1)
        assert report.expert_rewards == {"miniwob.login-user": 1.0}
    finally:
        env.close()
