"""Gymnasium for real: ``gymnasium.make`` after ``import digirl``, real spaces, ``check_env``, stock wrappers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import digirl
from digirl.core.actions import Action, ActionType
from digirl.envs.registry import register_gymnasium

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


def test_register_gymnasium_without_gymnasium_adds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gymnasium", None)  # `import gymnasium` now fails as if not installed
    assert register_gymnasium() == 0


gym = pytest.importorskip("gymnasium")
from gymnasium import spaces  # noqa: E402
from gymnasium.utils.env_checker import check_env  # noqa: E402

from digirl.envs.gym import ACTION_TYPES, GymnasiumEnv  # noqa: E402


@pytest.mark.parametrize("first", ["digirl", "gymnasium"])
def test_gymnasium_make_works_after_import_digirl_in_either_order(first: str) -> None:
    second = "gymnasium" if first == "digirl" else "digirl"
    code = (
        f"import sys, {first}\n"
        "light = sorted(m for m in ('gymnasium', 'torch', 'numpy') if m in sys.modules)\n"
        f"import {second}, gymnasium\n"
        "env = gymnasium.make('digirl/sim-general-v0')\n"
        "obs, info = env.reset(seed=0)\n"
        "print(light, type(env.unwrapped).__name__, sorted(obs), obs['screenshot'].shape)"
    )
    light = "['gymnasium', 'numpy']" if first == "gymnasium" else "[]"  # import digirl alone loads neither
    assert _run(code) == f"{light} GymnasiumEnv ['elements', 'history', 'instruction', 'screenshot', 'step'] (600, 270, 3)"


def test_every_simulator_id_is_registered_with_gymnasium() -> None:
    sim_ids = [s.id for s in digirl.list_envs() if s.id.startswith("digirl/sim-")]
    assert {f"digirl/sim-{ts}{t}-v0" for ts in ("general", "webshop", "phone") for t in ("", "-test")} <= set(sim_ids)
    for env_id in sim_ids:
        spec = gym.spec(env_id)
        assert spec.entry_point == "digirl.envs.gym:GymnasiumEnv" and spec.kwargs == {"env_id": env_id}
        assert spec.nondeterministic is False


@pytest.mark.parametrize("env_id", ["digirl/sim-general-v0", "digirl/sim-webshop-v0", "digirl/sim-phone-test-v0"])
@pytest.mark.parametrize("action_format", ["dict", "text"])
def test_check_env_passes(env_id: str, action_format: str) -> None:
    env = gym.make(env_id, render_mode="rgb_array", action_format=action_format)
    check_env(env.unwrapped)  # raises on any failure (spaces, seeding, determinism, data reuse, render)
    env.close()


def test_spaces_are_gymnasium_spaces() -> None:
    env = gym.make("digirl/sim-general-v0")
    obs_space, act_space = env.observation_space, env.action_space
    assert isinstance(obs_space, spaces.Dict) and isinstance(act_space, spaces.Dict)
    shot = obs_space["screenshot"]
    assert isinstance(shot, spaces.Box) and shot.shape == (600, 270, 3) and shot.dtype == np.uint8
    assert isinstance(obs_space["instruction"], spaces.Text)
    assert isinstance(obs_space["elements"], spaces.Sequence)
    assert act_space["type"] == spaces.Discrete(7)
    assert [t.value for t in ACTION_TYPES] == [
        "DUAL_POINT",
        "TYPE",
        "PRESS_BACK",
        "PRESS_HOME",
        "PRESS_ENTER",
        "STATUS_TASK_COMPLETE",
        "STATUS_TASK_IMPOSSIBLE",
    ]
    obs, info = env.reset(seed=3)
    assert obs in obs_space and obs["step"] == 0 and obs["history"] == ()
    assert info["task"]["instruction"] == obs["instruction"]
    assert isinstance(gym.make("digirl/sim-general-v0", action_format="text").action_space, spaces.Text)


def test_dict_action_does_what_the_digirl_action_does() -> None:
    genv = gym.make("digirl/sim-general-v0", perturbation=0)
    denv = digirl.make("digirl/sim-general-v0", perturbation=0)
    gobs, _ = genv.reset(seed=11)
    dobs, _ = denv.reset(seed=11)
    assert np.array_equal(gobs["screenshot"], dobs.screenshot)
    tap = {"type": 0, "touch": np.array([0.5, 0.3], np.float32), "lift": np.array([0.5, 0.3], np.float32), "text": "x"}
    gobs, greward, gterm, gtrunc, ginfo = genv.step(tap)
    dobs, dreward, dterm, dtrunc, dinfo = denv.step(Action.tap(0.5, 0.3))
    assert np.array_equal(gobs["screenshot"], dobs.screenshot)
    assert (greward, gterm, gtrunc, ginfo) == (dreward, dterm, dtrunc, dinfo)
    assert gobs["step"] == 1 and gobs["history"] == ('{"type": "DUAL_POINT", "touch": [0.5, 0.3], "lift": [0.5, 0.3]}',)


def test_bad_action_is_an_invalid_step_never_a_crash() -> None:
    env = gym.make("digirl/sim-general-v0")
    env.reset(seed=0)
    for bad in (
        {"type": 0, "touch": [float("nan"), 0.2], "lift": [0.1, 0.2], "text": ""},
        {"type": 9},
        {"type": 2.5, "touch": [0, 0], "lift": [0, 0], "text": " "},
        {"touch": [0.1, 0.1]},
        "tap somewhere nice",
        42,
    ):
        obs, reward, terminated, _, info = env.step(bad)
        assert info["invalid_action"] is True and reward == 0.0 and terminated is False
    assert obs["history"] == ("INVALID",) * 6


def test_expert_solves_a_task_through_gymnasium() -> None:
    env = gym.make("digirl/sim-general-v0", perturbation=0)
    genv = env.unwrapped
    assert isinstance(genv, GymnasiumEnv)
    env.reset(seed=5)
    total, done, steps = 0.0, False, 0
    while not done:
        expert = genv.env.cheat()
        assert expert is not None
        action = genv.to_space(expert)
        assert action in env.action_space and genv.action_of(action) == expert
        _, reward, terminated, truncated, info = env.step(action)
        total, done, steps = total + reward, terminated or truncated, steps + 1
    assert total == 1.0 and info["success"] is True and steps <= 10


def test_stock_wrappers_compose() -> None:
    """The docs' wrapper example: TimeLimit, FilterObservation, RecordEpisodeStatistics."""
    from gymnasium.wrappers import FilterObservation, RecordEpisodeStatistics, TimeLimit

    env = RecordEpisodeStatistics(
        FilterObservation(TimeLimit(gym.make("digirl/sim-general-v0"), 3), ["screenshot", "instruction"])
    )
    obs, _ = env.reset(seed=0)
    assert sorted(obs) == ["instruction", "screenshot"]
    back = {"type": ACTION_TYPES.index(ActionType.PRESS_BACK), "touch": [0, 0], "lift": [0, 0], "text": " "}
    steps, done = 0, False
    while not done:
        obs, _, terminated, truncated, info = env.step(back)
        steps, done = steps + 1, terminated or truncated
    assert steps == 3 and truncated and not terminated
    assert info["episode"]["l"] == 3 and info["episode"]["r"] == 0.0


def test_wrapping_a_built_env_and_render() -> None:
    inner = digirl.make("digirl/toy-tap-v0")
    env = GymnasiumEnv(inner, render_mode="rgb_array")
    obs, _ = env.reset(seed=1)
    frame = env.render()
    assert frame is not None and np.array_equal(frame, obs["screenshot"]) and frame is not obs["screenshot"]
    assert obs["elements"] == () or obs in env.observation_space
    with pytest.raises(ValueError, match="exactly one"):
        GymnasiumEnv()
    with pytest.raises(ValueError, match="render_mode"):
        GymnasiumEnv(inner, render_mode="human")


def test_ids_registered_later_reach_gymnasium() -> None:
    digirl.register("digirl/test-gym-late-v0", "digirl.envs.toy:ToyEnv", mode="tap")
    # An id Gymnasium's grammar rejects is still a digirl env: a warning, not an error.
    digirl.register("digirl/test gym spaces", "digirl.envs.toy:ToyEnv", mode="tap")
    try:
        env = gym.make("digirl/test-gym-late-v0")
        assert env.reset(seed=0)[0]["screenshot"].dtype == np.uint8
        assert "digirl/test gym spaces" not in gym.envs.registry
        assert digirl.make("digirl/test gym spaces").reset(seed=0)[0].screenshot.dtype == np.uint8
    finally:
        from digirl.envs import registry

        for env_id in ("digirl/test-gym-late-v0", "digirl/test gym spaces"):
            registry._REGISTRY.pop(env_id, None)
            gym.envs.registry.pop(env_id, None)


def test_vector_envs_and_a_readable_repr() -> None:
    """Sync vector envs batch the Dict observation; the Text spaces print without their character set."""
    assert "text_charset()" in repr(gym.make("digirl/sim-general-v0").observation_space)
    vec = gym.make_vec("digirl/sim-general-v0", num_envs=2, vectorization_mode="sync")
    obs, _ = vec.reset(seed=0)
    assert obs["screenshot"].shape == (2, 600, 270, 3) and len(obs["instruction"]) == 2
    back = {
        "type": np.array([2, 2]),
        "touch": np.zeros((2, 2), np.float32),
        "lift": np.zeros((2, 2), np.float32),
        "text": (" ", " "),
    }
    obs, reward, terminated, truncated, _ = vec.step(back)
    assert obs["step"].tolist() == [1, 1] and reward.tolist() == [0.0, 0.0] and not terminated.any() and not truncated.any()
    vec.close()
