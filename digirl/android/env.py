"""``AndroidEnv``: AitW-style tasks on a real Android device or emulator, rewarded by a VLM judge.

Per episode: reset the device (snapshot load on an :class:`EmulatorPool` slot, HOME on a phone),
then per step: send the action over adb, settle by observation, judge the settled screen. A
success verdict gives reward 1 and ends the episode (DigiRL's sparse 0/1 reward). Horizons are
DigiRL's: 10 steps for General, 20 for Web Shopping.

Failures of the environment (device offline, adb unreachable, a screenshot that is not an image,
the judge endpoint down through all its retries) raise :class:`~digirl.core.errors.EnvFailure`,
so runners mark the episode as an environment failure; nothing becomes a silent reward of 0.
Text the device cannot type (emoji without ADBKeyBoard) is an invalid action, like unparseable
model output. An *undecided* judge answer counts as "not yet a success" and is counted in the
step info (``undecided="env_failure"`` makes it an environment failure instead).
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from digirl.android.device import AdbDevice, SettleConfig, UntypableTextError
from digirl.android.emulator import DeviceProvider, EmulatorPool
from digirl.core.actions import Action
from digirl.core.errors import ConfigError, EnvFailure
from digirl.core.types import TaskSpec, UIElement
from digirl.envs.base import DeviceEnv, StepResult
from digirl.judge.base import JudgeVerdict, SuccessJudge
from digirl.utils.images import resize_array

__all__ = ["HORIZONS", "AndroidEnv", "load_tasks"]

log = logging.getLogger(__name__)

#: DigiRL's step limits per task set.
HORIZONS = {"general": 10, "webshop": 20}


def _task_from(
    item: TaskSpec | str | dict[str, Any],
    i: int,
    *,
    family: str,
    split: str,
    horizon: int,
    env_id: str,
    prefix: str,
) -> TaskSpec:
    if isinstance(item, TaskSpec):
        t = item
    elif isinstance(item, dict):
        t = TaskSpec.from_dict(item)
    elif isinstance(item, str):
        t = TaskSpec(instruction=item)
    else:
        raise ConfigError(f"task #{i} is neither a TaskSpec, a dict nor a string: {item!r}")
    return TaskSpec(
        instruction=t.instruction,
        task_id=t.task_id or f"{prefix}-{i:04d}",
        family=t.family or family,
        split=t.split or split,
        horizon=horizon if t.horizon in (0, 10) and horizon != 10 else t.horizon,
        env_id=env_id or t.env_id,  # the Android env's id, not the simulator's
        params=dict(t.params),
    )


def load_tasks(
    *,
    taskset: str | None = None,
    split: str = "test",
    task_file: str | os.PathLike[str] | None = None,
    tasks: Sequence[TaskSpec | str] | None = None,
    horizon: int = 10,
    env_id: str = "",
) -> list[TaskSpec]:
    """Tasks from an explicit list, a file, or a shipped instruction set (``general``/``webshop``).

    A task file is JSONL (one ``TaskSpec`` dict per line), a JSON list, or plain text with one
    instruction per line (blank lines and ``#`` comments skipped).
    """
    family = taskset or "general"
    items: list[Any]
    if tasks is not None:
        items, prefix = list(tasks), "task"
    elif task_file is not None:
        path = Path(task_file)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise ConfigError(f"cannot read task file {path}: {e}") from e
        prefix = path.stem
        try:
            if path.suffix == ".jsonl":
                items = [json.loads(line) for line in text.splitlines() if line.strip()]
            elif path.suffix == ".json":
                items = list(json.loads(text))
            else:
                items = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        except ValueError as e:
            raise ConfigError(f"task file {path} is not valid JSON/JSONL: {e}") from e
    elif taskset is not None:
        try:
            from digirl.sim.tasks.tasksets import load_taskset
        except ModuleNotFoundError as e:
            raise ConfigError(
                f"instruction set {taskset!r} needs digirl.sim.tasks.tasksets ({e}); pass task_file= instead"
            ) from e
        items, prefix = list(load_taskset(taskset, split)), f"android-{taskset}-{split}"
    else:
        raise ConfigError("AndroidEnv needs tasks: taskset=, task_file= or tasks=")
    out = [
        _task_from(it, i, family=family, split=split, horizon=horizon, env_id=env_id, prefix=prefix) for i, it in enumerate(items)
    ]
    if not out:
        raise ConfigError("the task list is empty")
    return out


class AndroidEnv(DeviceEnv):
    """An Android device as a :class:`DeviceEnv` with a VLM success judge.

    Device: ``pool`` + ``slot`` (an :class:`EmulatorPool` or :class:`DevicePool`), or ``device``,
    or ``serial`` (default ``$ANDROID_SERIAL``) at ``adb_host:adb_port``, or ``avd`` to start one
    emulator owned by this env (``emulator_kwargs`` go to :class:`EmulatorPool`).
    Judge: ``judge`` (any :class:`SuccessJudge`), else a :class:`~digirl.judge.VLMJudge` built from
    ``judge_base_url``/``judge_model`` (default ``$DIGIRL_JUDGE_BASE_URL``/``$DIGIRL_JUDGE_MODEL``)
    and ``judge_kwargs``. ``judge_on``: ``"step"`` (every step, as DigiRL) or ``"end"`` (only on
    a ``STATUS_*`` action and the last step of the horizon). The default observation size,
    270×600, is the simulator's, so a policy trained there sees the same input.
    """

    def __init__(
        self,
        serial: str | None = None,
        *,
        taskset: str | None = "general",
        split: str = "test",
        task_file: str | None = None,
        tasks: Sequence[TaskSpec | str] | None = None,
        task_order: str = "random",
        horizon: int | None = None,
        judge: SuccessJudge | None = None,
        judge_base_url: str | None = None,
        judge_model: str | None = None,
        judge_kwargs: dict[str, Any] | None = None,
        judge_on: str = "step",
        undecided: str = "continue",
        pool: DeviceProvider | None = None,
        slot: int = 0,
        device: AdbDevice | None = None,
        avd: str | None = None,
        emulator_kwargs: dict[str, Any] | None = None,
        adb_host: str = "127.0.0.1",
        adb_port: int = 5037,
        settle: SettleConfig | None = None,
        start_package: str | None = None,
        with_elements: bool = False,
        width: int = 270,
        height: int = 600,
        action_codec: str = "json",
        env_id: str = "",
    ) -> None:
        super().__init__(width=width, height=height, action_codec=action_codec)
        if task_order not in ("random", "sequential"):
            raise ConfigError(f"task_order must be random or sequential, got {task_order!r}")
        if judge_on not in ("step", "end"):
            raise ConfigError(f"judge_on must be step or end, got {judge_on!r}")
        if undecided not in ("continue", "env_failure"):
            raise ConfigError(f"undecided must be continue or env_failure, got {undecided!r}")
        self.default_horizon = horizon or HORIZONS.get(taskset or "", 10)
        self.env_id = env_id
        self.tasks = load_tasks(
            taskset=None if (tasks is not None or task_file) else taskset,
            split=split,
            task_file=task_file,
            tasks=tasks,
            horizon=self.default_horizon,
            env_id=env_id,
        )
        self.task_order = task_order
        self.judge_on = judge_on
        self.undecided_policy = undecided
        self.start_package = start_package
        self.with_elements = with_elements
        self.judge = judge if judge is not None else self._default_judge(judge_base_url, judge_model, judge_kwargs)
        self._own_pool: EmulatorPool | None = None
        if avd is not None:
            self._own_pool = EmulatorPool(avd, 1, adb_host=adb_host, adb_port=adb_port, **(emulator_kwargs or {}))
            self._own_pool.start()
            pool, slot = self._own_pool, 0
        self.pool = pool
        self.slot = slot
        if pool is not None:
            self.device = pool.device(slot)
        elif device is not None:
            self.device = device
        else:
            serial = serial or os.environ.get("ANDROID_SERIAL")
            if not serial:
                raise ConfigError("AndroidEnv needs a device: serial=, device=, pool= or avd= (or $ANDROID_SERIAL)")
            self.device = AdbDevice(serial, host=adb_host, port=adb_port, settle=settle)
        if settle is not None:
            self.device.settle_config = settle
        self._next_task = 0
        self._frame: np.ndarray | None = None
        self._prev_frame: np.ndarray | None = None
        self._episode_id = ""
        self.undecided_count = 0
        self.last_reset_info: dict[str, Any] = {}

    @staticmethod
    def _default_judge(base_url: str | None, model: str | None, kwargs: dict[str, Any] | None) -> SuccessJudge:
        base_url = base_url or os.environ.get("DIGIRL_JUDGE_BASE_URL")
        model = model or os.environ.get("DIGIRL_JUDGE_MODEL")
        if not base_url or not model:
            raise ConfigError(
                "AndroidEnv needs a success judge: judge=, or judge_base_url= and judge_model= "
                "(or $DIGIRL_JUDGE_BASE_URL and $DIGIRL_JUDGE_MODEL); see docs/judge.md"
            )
        from digirl.judge.vlm import VLMJudge

        return VLMJudge(base_url, model, **(kwargs or {}))

    def __repr__(self) -> str:
        return f"AndroidEnv(device={self.device!r}, tasks={len(self.tasks)}, judge={self.judge!r})"

    # ------------------------------------------------------------------ DeviceEnv hooks
    def _pick_task(self, task: TaskSpec | str | None, rng: np.random.Generator) -> TaskSpec:
        if isinstance(task, TaskSpec):
            return task
        if isinstance(task, str):
            for t in self.tasks:
                if task in (t.task_id, t.instruction):
                    return t
            # Any instruction can be posed on a real device; the judge decides success.
            return TaskSpec(
                instruction=task,
                task_id=f"adhoc-{uuid.uuid4().hex[:8]}",
                family=self.tasks[0].family,
                horizon=self.default_horizon,
                env_id=self.env_id,
            )
        if self.task_order == "sequential":
            t = self.tasks[self._next_task % len(self.tasks)]
            self._next_task += 1
            return t
        return self.tasks[int(rng.integers(len(self.tasks)))]

    def _reset(self, task: TaskSpec | str | None, rng: np.random.Generator) -> TaskSpec:
        spec = self._pick_task(task, rng)
        if self._episode_id:
            self.judge.end_episode(self._episode_id)
        self._episode_id = uuid.uuid4().hex
        t0 = time.monotonic()
        info: dict[str, Any] = {}
        try:
            if self.pool is not None:
                info = dict(self.pool.reset(self.slot))
            else:
                self.device.home()
            if self.start_package:
                self.device.launch(self.start_package)
            settled = self.device.settle()
        except EnvFailure:
            raise
        except OSError as e:  # anything the device layer did not map is still the environment's fault
            raise EnvFailure(f"reset of {self.device.serial} failed: {e!r}") from e
        self._frame, self._prev_frame = settled.frame, None
        self.last_reset_info = {**info, **settled.info(), "reset_total_s": round(time.monotonic() - t0, 4)}
        return spec

    def _resized(self, frame: np.ndarray) -> np.ndarray:
        h, w = self.observation_space.screenshot.height, self.observation_space.screenshot.width
        if frame.shape[0] == h and frame.shape[1] == w:
            return frame
        return resize_array(frame, (w, h), Image.Resampling.BILINEAR)

    def _screenshot(self) -> np.ndarray:
        if self._frame is None:
            self._frame = self.device.screenshot()
        return self._resized(self._frame)

    def _elements(self) -> tuple[UIElement, ...] | None:
        return self.device.ui_hierarchy() if self.with_elements else None

    def _step(self, action: Action) -> StepResult:
        t0 = time.monotonic()
        info: dict[str, Any] = {}
        try:
            if not action.ends_episode:
                try:
                    self.device.perform(action)
                except UntypableTextError as e:
                    return StepResult(0.0, False, {"invalid_action": True, "error": str(e)})
                settled = self.device.settle()
                # The judge sees the screen before the last *device* action next to the current one.
                self._prev_frame, self._frame = self._frame, settled.frame
                info.update(settled.info())
        except EnvFailure:
            raise
        except OSError as e:
            raise EnvFailure(f"{self.device.serial}: {action.kind} failed: {e!r}") from e
        last_step = self._steps + 1 >= self.horizon
        reward, terminated = 0.0, False
        if self.judge_on == "step" or action.ends_episode or last_step:
            verdict = self._judge(self._prev_frame, action)
            info["judge"] = {k: v for k, v in verdict.to_dict().items() if k != "raw"}
            if verdict.success is None:
                self.undecided_count += 1
                info["judge_undecided"] = True
                if self.undecided_policy == "env_failure":
                    raise EnvFailure(f"the judge could not decide ({verdict.raw[:120]!r})")
            elif verdict.success:
                reward, terminated = 1.0, True
        info["step_s"] = round(time.monotonic() - t0, 4)
        return StepResult(reward, terminated, info)

    def _judge(self, prev: np.ndarray | None, action: Action) -> JudgeVerdict:
        assert self._task is not None and self._frame is not None
        return self.judge.judge(
            self._task,
            self._resized(self._frame),
            previous=self._resized(prev) if prev is not None else None,
            actions=(*self._history, action),
            episode_id=self._episode_id,
        )

    def close(self) -> None:
        if self._episode_id:
            self.judge.end_episode(self._episode_id)
            self._episode_id = ""
        if self._own_pool is not None:
            self._own_pool.close()
            self._own_pool = None
