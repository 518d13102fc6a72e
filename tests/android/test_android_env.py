"""AndroidEnv over the test ADB server: judged rewards, horizons, env failures, invalid text, tasks."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("adbutils")
pytestmark = pytest.mark.android

from android_adb_server import EnvScreen, ScreenDevice  # noqa: E402

from digirl.android.device import AdbDevice, SettleConfig  # noqa: E402
from digirl.android.env import AndroidEnv, load_tasks  # noqa: E402
from digirl.core.actions import Action  # noqa: E402
from digirl.core.errors import ConfigError, EnvFailure  # noqa: E402
from digirl.core.types import TaskSpec  # noqa: E402
from digirl.envs.registry import make, spec  # noqa: E402
from digirl.envs.toy import ToyEnv  # noqa: E402
from digirl.judge.base import JudgeUnavailable, JudgeVerdict  # noqa: E402

FAST = SettleConfig(min_wait_s=0.0, poll_interval_s=0.0, max_wait_s=0.5)
TASKS = ["Tap the right button", "Type the word and press enter"]


class ScriptedJudge:
    """A SuccessJudge stand-in: success when the device's env reported a reward; or a fixed script."""

    def __init__(self, screen: EnvScreen, script: Sequence[Any] = ()) -> None:
        self.screen = screen
        self.script = list(script)
        self.calls: list[dict[str, Any]] = []
        self.ended: list[str] = []

    def judge(
        self,
        task: TaskSpec | str,
        screenshot: np.ndarray,
        *,
        previous: np.ndarray | None = None,
        actions: Sequence[Action | str] = (),
        episode_id: str | None = None,
    ) -> JudgeVerdict:
        self.calls.append(
            {
                "task": task,
                "shape": screenshot.shape,
                "previous": previous is not None,
                "actions": tuple(actions),
                "episode": episode_id,
            }
        )
        if self.script:
            nxt = self.script.pop(0)
            if isinstance(nxt, Exception):
                raise nxt
            return JudgeVerdict(success=nxt, reason="scripted")
        return JudgeVerdict(success=bool(self.screen.rewards and self.screen.rewards[-1] > 0), reason="oracle")

    def end_episode(self, episode_id: str) -> None:
        self.ended.append(episode_id)


def _env(
    adb_server: Any, *, mode: str = "tap", script: Sequence[Any] = (), **kw: Any
) -> tuple[AndroidEnv, ScreenDevice, EnvScreen, ScriptedJudge]:
    screen = EnvScreen(ToyEnv(mode=mode, width=90, height=200, horizon=100), seed=0)
    dev = ScreenDevice(screen)
    adb_server.add_device("emulator-5554", dev)
    judge = ScriptedJudge(screen, script)
    kw.setdefault("tasks", TASKS)
    env = AndroidEnv("emulator-5554", adb_port=adb_server.port, judge=judge, settle=FAST, width=45, height=100, **kw)
    return env, dev, screen, judge


def test_judged_success_ends_the_episode_with_reward_one(adb_server: Any) -> None:
    env, dev, screen, judge = _env(adb_server)
    obs, info = env.reset(seed=0)
    assert obs.screenshot.shape == (100, 45, 3)  # resized to the declared size
    assert "input keyevent 3" in dev.commands  # reset of a plain device = HOME
    assert env.last_reset_info["settled"] is True
    obs, r, term, trunc, info = env.step(Action.tap(0.05, 0.02))  # a miss
    assert (r, term, trunc) == (0.0, False, False)
    assert info["judge"]["verdict"] == "failure" and info["settled"] and "settle_s" in info
    obs, r, term, trunc, info = env.step(screen.env.cheat())
    assert (r, term) == (1.0, True) and info["judge"]["verdict"] == "success"
    assert judge.calls[-1]["shape"] == (100, 45, 3) and judge.calls[-1]["previous"]
    assert len(judge.calls[-1]["actions"]) == 2  # the history includes the action just taken
    ep = judge.calls[-1]["episode"]
    env.reset()
    assert judge.ended == [ep]


def test_horizon_undecided_and_judge_on_end(adb_server: Any) -> None:
    env, _, _, _ = _env(adb_server, script=[None, False, None], horizon=3)
    env.reset(seed=1)
    _, _, _, _, info = env.step(Action.back())
    assert info["judge_undecided"] is True and env.undecided_count == 1
    env.step(Action.back())
    _, r, term, trunc, _ = env.step(Action.back())
    assert (r, term, trunc) == (0.0, False, True) and env.undecided_count == 2
    adb_server.remove_device("emulator-5554")

    env2, _, _, judge2 = _env(adb_server, script=[True], judge_on="end", horizon=5)
    env2.reset(seed=0)
    for _ in range(3):
        _, _, _, _, info = env2.step(Action.home())
        assert "judge" not in info
    _, r, term, _, _ = env2.step(Action.complete())
    assert (r, term) == (1.0, True) and len(judge2.calls) == 1


def test_undecided_as_env_failure_and_judge_down(adb_server: Any) -> None:
    env, _, _, _ = _env(adb_server, script=[None], undecided="env_failure")
    env.reset(seed=0)
    with pytest.raises(EnvFailure, match="could not decide"):
        env.step(Action.back())
    adb_server.remove_device("emulator-5554")
    env, _, _, _ = _env(adb_server, script=[JudgeUnavailable("endpoint down for minutes")])
    env.reset(seed=0)
    with pytest.raises(EnvFailure, match="down"):
        env.step(Action.back())


def test_device_offline_mid_episode_is_an_env_failure(adb_server: Any) -> None:
    env, dev, _, _ = _env(adb_server)
    env.reset(seed=0)
    env.step(Action.tap(0.05, 0.02))

    def go_offline(cmd: str) -> None:
        if cmd.startswith("input"):
            dev.state = "offline"  # the device drops right after receiving the tap

    dev.hook = go_offline
    with pytest.raises(EnvFailure, match="offline"):
        env.step(Action.tap(0.05, 0.02))
    dev.hook, dev.state = None, "device"
    dev.screencap_override = b"not a png"
    with pytest.raises(EnvFailure, match="PNG"):
        env.reset(seed=0)


def test_untypable_text_is_an_invalid_action(adb_server: Any) -> None:
    env, dev, _, judge = _env(adb_server, mode="type")
    env.reset(seed=0)
    _, r, term, _, info = env.step(Action.type_text("hi 🙂"))
    assert info["invalid_action"] is True and "ADBKeyBoard" in info["error"]
    assert (r, term) == (0.0, False) and judge.calls == []
    _, _, _, _, info = env.step(Action.type_text("it's $5 `now`"))
    assert "invalid_action" not in info and dev.typed[-1] == "it's $5 `now`"


def test_task_sources_and_registry(tmp_path: Path, adb_server: Any) -> None:
    txt = tmp_path / "tasks.txt"
    txt.write_text("# my tasks\nOpen the settings\n\nGo to ebay.com\n")
    ts = load_tasks(task_file=txt, horizon=20, taskset="webshop")
    assert [t.instruction for t in ts] == ["Open the settings", "Go to ebay.com"]
    assert ts[0].task_id == "tasks-0000" and ts[0].horizon == 20 and ts[0].family == "webshop"
    jl = tmp_path / "tasks.jsonl"
    jl.write_text(json.dumps({"instruction": "Search for cats", "task_id": "c1", "horizon": 7}) + "\n")
    assert load_tasks(task_file=jl)[0].horizon == 7
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_tasks(task_file=bad)
    with pytest.raises(ConfigError, match="cannot read"):
        load_tasks(task_file=tmp_path / "missing.txt")

    pytest.importorskip("digirl.sim.tasks.tasksets")
    shop = load_tasks(taskset="webshop", split="test", horizon=20, env_id="digirl/android-webshop-v0")
    assert len(shop) > 100 and all(t.horizon == 20 and t.env_id == "digirl/android-webshop-v0" for t in shop)
    assert load_tasks(taskset="general", split="train")[0].horizon == 10

    s = spec("digirl/android-webshop-v0")
    assert s.requires == "android" and s.kwargs["horizon"] == 20
    screen = EnvScreen(ToyEnv(horizon=50), seed=0)
    adb_server.add_device("emulator-5556", ScreenDevice(screen))
    env = make(
        "digirl/android-webshop-v0",
        serial="emulator-5556",
        adb_port=adb_server.port,
        task_file=str(txt),
        judge=ScriptedJudge(screen),
        settle=FAST,
        task_order="sequential",
    )
    assert env.horizon == 20
    assert [env.reset()[0].instruction for _ in range(3)] == [
        "Open the settings",
        "Go to ebay.com",
        "Open the settings",
    ]
    obs, _ = env.reset(options={"task": "Find a pair of red shoes"})  # any instruction can be posed
    assert obs.instruction == "Find a pair of red shoes"
    env.close()
    with pytest.raises(ConfigError, match="success judge"):
        AndroidEnv("emulator-5556", adb_port=adb_server.port, tasks=TASKS)
    with pytest.raises(ConfigError, match="needs a device"):
        AndroidEnv(None, tasks=TASKS, judge=ScriptedJudge(screen), adb_port=adb_server.port)


def test_with_a_vlm_judge_over_http(adb_server: Any) -> None:
    from digirl.judge import VLMJudge
    from digirl.testing.fake_openai import FakeOpenAI

    screen = EnvScreen(ToyEnv(mode="type", horizon=50), seed=0)
    adb_server.add_device("emulator-5554", ScreenDevice(screen))
    with FakeOpenAI() as srv:
        srv.script.extend(["failure", "success"])
        judge = VLMJudge(srv.base_url, "m", examples="none")
        device = AdbDevice("emulator-5554", port=adb_server.port, settle=FAST)
        env = AndroidEnv(device=device, tasks=TASKS, judge=judge)
        env.reset(seed=0)
        _, r1, _, _, i1 = env.step(Action.type_text("x"))  # the screen changes: a call
        _, r2, _, _, i2 = env.step(Action.tap(0.99, 0.99))  # nothing changes: no call
        _, r3, t3, _, i3 = env.step(Action.type_text("y"))  # changes again: a call, judged success
    assert (r1, r2, r3, t3) == (0.0, 0.0, 1.0, True)
    assert (i1["judge"]["cached"], i2["judge"]["cached"], i3["judge"]["cached"]) == (False, True, False)
    assert len(srv.requests) == 2


def _sim_or_skip() -> Any:
    try:
        return make("digirl/sim-general-v0")
    except (KeyError, ModuleNotFoundError) as e:
        pytest.skip(f"the simulator is not available: {e}")


def test_simulator_expert_solves_a_task_over_adb(adb_server: Any) -> None:
    """The simulator behind the test ADB server: its expert's actions travel as adb commands."""
    sim = _sim_or_skip()
    for seed in range(3):
        sim.reset(seed=seed)
        task = sim.task
        # The device's own episode must outlive the agent's (reset presses HOME on a plain device).
        screen = EnvScreen(sim, seed=seed, task=dataclasses.replace(task, horizon=100))
        adb_server.add_device("emulator-5554", ScreenDevice(screen))
        env = AndroidEnv(
            "emulator-5554",
            adb_port=adb_server.port,
            tasks=[task],
            judge=ScriptedJudge(screen),
            settle=FAST,
            horizon=task.horizon,
        )
        obs, _ = env.reset(seed=seed, options={"task": task})
        assert obs.screenshot.shape == (600, 270, 3)  # the simulator's size by default
        total, done = 0.0, False
        while not done:
            a = sim.cheat()
            assert a is not None
            _, r, term, trunc, info = env.step(a)
            assert "invalid_action" not in info, info
            total, done = total + r, term or trunc
        assert total == 1.0 and screen.rewards[-1] == 1.0, task.instruction
