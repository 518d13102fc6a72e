"""``SimEnv``: the embedded simulated Android phone as a :class:`~digirl.envs.base.DeviceEnv`.

Episodes: reset picks (or parses) a task, builds a fresh phone with this episode's seeded
dynamics and the task's initial state, and returns the home screen (the previous phone is
released: a reference to it kept from before the reset is no longer usable). Each step applies the
action, advances time (loading screens, installs), then evaluates the task's success predicate
on the phone's state: reward 1.0 and termination on the step it first holds; STATUS_TASK_COMPLETE
and STATUS_TASK_IMPOSSIBLE end the episode (reward 1.0 only if the predicate holds).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from digirl.core.actions import Action
from digirl.core.errors import UnsupportedInstructionError
from digirl.core.types import TaskSpec, UIElement
from digirl.envs.base import DeviceEnv, StepResult
from digirl.sim.elements import StaticElements, tree_elements
from digirl.sim.expert import expert_action
from digirl.sim.families import ensure_family, get_family
from digirl.sim.families.state import device_state
from digirl.sim.intents import HORIZONS, Intent, pinned
from digirl.sim.perturb import Dynamics, dark_theme
from digirl.sim.phone import Phone, resolve_app
from digirl.sim.predicates import TaskContext, check
from digirl.sim.render import FrameKey, Renderer
from digirl.sim.samples import sample_tasks, spec_for
from digirl.sim.ui import View

__all__ = ["SimEnv", "tree_elements"]

log = logging.getLogger(__name__)
_CLOCKS = ((7, 18), (8, 42), (9, 5), (9, 41), (10, 27), (11, 3), (12, 56), (14, 30))
_BATTERY = (38, 54, 67, 81, 92, 100)
_QUARTERS = (0, 15, 30, 45)


class SimEnv(DeviceEnv):
    """The simulated phone. ``taskset``: general | webshop | phone; ``split``: train | test.

    ``perturbation`` (0, 1, 2) sets pop-ups, ads, shuffled results, slow loads and layout jitter;
    ``world_version`` shifts layouts and content (non-stationarity). ``allow_generic`` turns an
    instruction no family understands into a web search for it instead of raising.
    ``expert_jitter`` (0..1) moves the expert's taps off-centre within the element.
    ``interruptions`` (0..1, opt-in): every kind of interruption (cookie banners, rating prompts,
    permission dialogs, interstitial ads, system update notices) at that rate, counted in each step's
    info. ``device_variation`` (off | train | test, opt-in): each episode runs on a device drawn from
    that pool (home layout, dock, wallpaper, dark theme, date format; ``test`` devices are held out).
    """

    def __init__(
        self,
        taskset: str = "general",
        split: str = "train",
        width: int = 270,
        height: int = 600,
        perturbation: int = 1,
        world_version: int = 0,
        allow_generic: bool = False,
        action_codec: str = "json",
        expert_jitter: float = 0.0,
        interruptions: float | None = None,
        device_variation: str = "off",
    ) -> None:
        if taskset not in HORIZONS:
            raise ValueError(f"taskset must be one of {', '.join(HORIZONS)}, got {taskset!r}")
        if split not in ("train", "test", "validation"):
            raise ValueError(f"split must be 'train', 'test' or 'validation', got {split!r}")
        if perturbation not in (0, 1, 2):
            raise ValueError(f"perturbation must be 0, 1 or 2, got {perturbation!r}")
        if interruptions is not None and not 0.0 <= float(interruptions) <= 1.0:
            raise ValueError(f"interruptions must be a rate in [0, 1] (or None: the perturbation level's), got {interruptions!r}")
        if device_variation not in ("off", "train", "test"):
            raise ValueError(f"device_variation must be off, train or test, got {device_variation!r}")
        super().__init__(width=width, height=height, action_codec=action_codec)
        self.taskset, self.split = taskset, split
        self.perturbation, self.world_version = int(perturbation), int(world_version)
        self.allow_generic = allow_generic
        self.expert_jitter = float(expert_jitter)
        self.interruptions = None if interruptions is None else float(interruptions)
        self.device_variation = device_variation
        self._dark: tuple[FrameKey, np.ndarray] | None = None  # the last dark-theme frame
        self.default_horizon = HORIZONS[taskset]
        self.renderer = Renderer(width, height)
        self.phone = Phone()
        self.ctx = TaskContext(Intent("check_email"))
        self._success = False
        self._family_observe: Callable[[Phone, Intent, TaskContext], None] | None = None
        self._tasks: list[TaskSpec] | None = None
        self._shot_tree: View | None = None
        self._shot_key: FrameKey | None = None
        self._elems_tree: View | None = None
        self._elems: tuple[UIElement, ...] = ()
        self._static_elems = StaticElements()

    # ---------------------------------------------------------------- tasks
    def tasks(self, split: str | None = None) -> list[TaskSpec]:
        """The task set of this env (from ``digirl.sim.tasks``, else the built-in samples); ``split``
        (train / test / validation) lists another split of the same set without changing the env's."""
        if split is not None and split != self.split:
            if split not in ("train", "test", "validation"):
                raise ValueError(f"split must be 'train', 'test' or 'validation', got {split!r}")
            if self.taskset == "compound":
                from digirl.sim.tasks.compose import compound_tasks

                return compound_tasks(split)
            from digirl.sim.tasks.tasksets import load_taskset

            return list(load_taskset(self.taskset, split))
        if self._tasks is None and self.taskset == "compound":
            from digirl.sim.tasks.compose import compound_tasks

            self._tasks = compound_tasks(self.split)
        if self._tasks is None:
            try:
                from digirl.sim.tasks.tasksets import load_taskset
            except ModuleNotFoundError as e:
                if not (e.name or "").startswith("digirl.sim.tasks"):
                    raise
                log.warning("digirl.sim.tasks is not installed; using the built-in sample tasks")
                self._tasks = sample_tasks(self.taskset)
            else:
                self._tasks = list(load_taskset(self.taskset, self.split))
        return self._tasks

    def _resolve(self, task: TaskSpec | str | None, rng: np.random.Generator) -> tuple[TaskSpec, Intent]:
        if task is None:
            tasks = self.tasks()
            if not tasks:
                raise UnsupportedInstructionError(f"task set {self.taskset}/{self.split} is empty")
            spec = tasks[int(rng.integers(len(tasks)))]
        elif isinstance(task, str):
            spec = self.task_for_instruction(task)
        elif isinstance(task, TaskSpec):
            spec = task
        else:
            raise TypeError(f"task must be a TaskSpec, an instruction string or None, got {type(task).__name__}")
        raw = spec.params.get("intent") if isinstance(spec.params, dict) else None
        if isinstance(raw, dict) and spec.params.get("family_source"):
            # A user-defined family: rebuild it in this process (a worker) from the task's parameters.
            ensure_family(str(raw.get("family", "")), spec.params["family_source"])
        if raw is None:
            spec = self.task_for_instruction(spec.instruction)
            raw = spec.params["intent"]
        try:
            intent = Intent.from_dict(raw)
        except (KeyError, TypeError, ValueError) as e:
            raise UnsupportedInstructionError(f"task {spec.task_id or spec.instruction!r} has a bad intent: {e}") from e
        return spec, intent

    def task_for_instruction(self, text: str) -> TaskSpec:
        """The task for an instruction (UnsupportedInstructionError, or a web search with allow_generic)."""
        parse: Callable[..., TaskSpec] | None
        try:
            from digirl.sim.tasks.tasksets import task_from_instruction as parse
        except ModuleNotFoundError as e:
            if not (e.name or "").startswith("digirl.sim.tasks"):
                raise
            parse = None
        if parse is not None:
            try:
                # The compound set is not one of the parser's task sets: its lines run where they parse to.
                return parse(text, taskset=None if self.taskset == "compound" else self.taskset, horizon=None)
            except UnsupportedInstructionError:
                if not self.allow_generic:
                    raise
        elif not self.allow_generic:
            raise UnsupportedInstructionError(
                f"cannot parse {text!r}: the instruction parser (digirl.sim.tasks) is not installed"
            )
        q = text.strip().rstrip("?.!")
        from digirl.sim.content import key_terms

        intent = Intent("web_search", {"query": q, "key_terms": " ".join(key_terms(q)[:6]), "answer": "generic"})
        return spec_for(text, intent, task_id="sim-generic")

    # ---------------------------------------------------------------- episode
    def _reset(self, task: TaskSpec | str | None, rng: np.random.Generator) -> TaskSpec:
        spec, intent = self._resolve(task, rng)
        dyn = Dynamics.sample(self.perturbation, self.world_version, rng, self.interruptions, self.device_variation)
        # A few clock/battery values only: status bars and home screens then repeat across episodes
        # and their pictures come from the render caches.
        clock = _CLOCKS[int(rng.integers(len(_CLOCKS)))]
        old = self.phone
        self.phone = Phone(dyn, clock=clock, battery=_BATTERY[int(rng.integers(len(_BATTERY)))])
        old.release()  # the last episode's phone: freed now rather than by the cycle collector
        self.ctx = self._setup(intent, rng)
        self._family_observe = get_family(intent.family).observe
        self._success = False
        self._shot_tree = None
        self._elems_tree = None
        if spec.horizon <= 0:
            spec = TaskSpec(**{**spec.to_dict(), "horizon": self.default_horizon})
        need = get_family(intent.family).horizon
        if need is not None and spec.horizon < need(intent):
            # A compound task gets room for every sub-goal, whatever its task set's horizon is.
            spec = TaskSpec(**{**spec.to_dict(), "horizon": need(intent)})
        return spec

    def _setup(self, intent: Intent, rng: np.random.Generator) -> TaskContext:
        """Put the phone in the task's initial state: the family's ``prepare``, the shared random
        state (Chrome's first page, two alarms), then the family's ``setup``."""
        p = self.phone
        # The shipped sets' tasks keep the phone their golden episodes pin; other tasks get it all.
        p.surfaces = not pinned(intent)
        family = get_family(intent.family)
        ctx = TaskContext(intent)
        browser: Any = p.apps["chrome"]
        start = ("google.com", "newtab", "nytimes.com", "google.com")[int(rng.integers(4))]
        browser.tabs[0].history = [start]
        if family.prepare is not None:
            family.prepare(p, intent, ctx, rng)
        clock: Any = p.apps["clock"]
        # (0, 15, 30, 45)[integers(4)] draws the same as rng.choice([0, 15, 30, 45]), ~10x faster.
        alarms = sorted({(int(rng.integers(5, 11)), _QUARTERS[int(rng.integers(4))]) for _ in range(2)})
        from digirl.sim.apps.clock import Alarm

        clock.alarms = [Alarm(h, m, bool(rng.integers(2)), "Weekdays" if i == 0 else "") for i, (h, m) in enumerate(alarms)]
        if family.setup is not None:
            try:
                family.setup(p, intent, ctx, rng)
            except (KeyError, ValueError) as e:  # a slot the family cannot use
                raise UnsupportedInstructionError(f"task {intent.to_dict()} cannot be set up: {e}") from e
        return ctx

    def _step(self, action: Action) -> StepResult:
        p = self.phone
        if action.ends_episode:
            ok = check(p, self.ctx)
            reward = 1.0 if ok and not self._success else 0.0
            self._success = self._success or ok
            return StepResult(reward, True, self._info({"success": ok}))
        info = p.apply(action)
        p.end_step()
        if self._family_observe is not None and p.loading == 0:
            self._family_observe(p, self.ctx.intent, self.ctx)
        ok = check(p, self.ctx)
        reward = 1.0 if ok and not self._success else 0.0
        self._success = self._success or ok
        info["success"] = ok
        return StepResult(reward, ok, self._info(info))

    def _info(self, extra: dict[str, Any]) -> dict[str, Any]:
        p = self.phone
        if p.dyn.count_interruptions:  # opt-in, so that the default ids' infos stay as they were
            extra = {"interruptions": len(p.interruptions), **extra}
        return {"app": p.fg, "screen": p.current.screen(), **extra}

    # ---------------------------------------------------------------- observation
    def _screenshot(self) -> np.ndarray:
        tree = self.phone.tree()
        if tree is not self._shot_tree or self._shot_key is None:
            self._shot_key = self.renderer.frame_key(tree)
            self._shot_tree = tree
        dev = self.phone.dyn.device
        if dev is not None and dev.dark:
            if self._dark is None or self._dark[0] != self._shot_key:
                self._dark = (self._shot_key, dark_theme(self.renderer.render_key(self._shot_key)))
            frame: np.ndarray = self._dark[1].copy()
            return frame
        return self.renderer.render_key(self._shot_key)

    def _elements(self) -> tuple[UIElement, ...]:
        tree = self.phone.tree()
        if tree is not self._elems_tree:
            self._elems = tree_elements(tree, self._static_elems)
            self._elems_tree = tree
        return self._elems

    def clone(self) -> SimEnv:
        """An independent copy of the env mid-episode (the ``state_clone`` capability): the phone, the
        task context, the episode's random streams and counters, everything but the caches. The renderer,
        the element cache and the task list are shared (pure caches and a read-only table); the view
        tree is left behind and rebuilt by the copy from its state on first use."""
        from digirl.envs.clone import copy_state

        tree = getattr(self.phone, "_tree", None)
        derived = {id(tree): None} if tree is not None else {}
        return copy_state(self, share=(self.renderer, self._static_elems, self._tasks), replace=derived)

    def cheat(self) -> Action | None:
        """The scripted expert's next action (pure: does not change the episode)."""
        if self._task is None:
            return None
        return expert_action(self.phone, self.ctx, jitter=self.expert_jitter, salt=self.phone.dyn.salt)

    @property
    def intent(self) -> Intent:
        return self.ctx.intent

    @property
    def success(self) -> bool:
        """Whether the task's predicate has held at some step of this episode."""
        return self._success

    def state_summary(self) -> dict[str, Any]:
        """A JSON-able summary of the phone and task (for debugging and viewers)."""
        p = self.phone
        return {
            "task": self._task.instruction if self._task else None,
            "intent": self.ctx.intent.to_dict(),
            "step": self._steps,
            "success": self._success,
            "perturbation": self.perturbation,
            "world_version": self.world_version,
            "interruptions": list(self.phone.interruptions),
            "device_id": None if self.phone.dyn.device is None else self.phone.dyn.device.id,
            "installed": [p.apps[k].label for k in p.installed],
            "notifications_target": {
                resolve_app(self.intent.get("app")): p.notifications.get(resolve_app(self.intent.get("app")))
            }
            if self.intent.get("app")
            else {},
            **p.summary(),
            "device": device_state(p),
        }
