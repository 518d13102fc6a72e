"""User-defined task families from a declarative spec (YAML or a dict): phrasings with slots,
success conditions on the phone's state (:func:`~digirl.sim.families.state.device_state`), an
optional initial state and a closed-loop expert plan. docs/tasks.md describes the format::

    families:
      - name: data_saver
        phrasings: ["turn {state} data saver", "(enable|disable) data saver"]
        slots: {state: {"on": [on, enable], "off": [off, disable]}}
        setup: [{set: settings.data_saver, to: "{state}", invert: true}]
        success: [{state: settings.data_saver, equals: "{state}"}]
        plan:
          - open_app: Settings
          - tap: settings.network
            until: {state: settings.page, equals: network}
          - tap: settings.data_saver.switch

Everything is checked when the spec is loaded; a problem raises :class:`FamilySpecError` naming
the file, the family and what is wrong.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from digirl.core.actions import Action
from digirl.sim.families.state import STATE_NAMES, device_state
from digirl.sim.family_registry import TaskFamily, register_family
from digirl.sim.intents import FAMILIES, TASKSET_FAMILIES, Intent

if TYPE_CHECKING:
    import numpy as np

    from digirl.sim.goals import TaskContext
    from digirl.sim.phone import Phone
    from digirl.sim.plans import ExpertStep

__all__ = ["FamilySpecError", "load_family_file", "register_spec"]

_OPS = ("equals", "not_equals", "contains", "has_words", "at_least", "at_most")
_ACTIONS = ("open_app", "tap", "type", "back", "home", "swipe", "wait")
_KEYS = {"name", "taskset", "doc", "phrasings", "slots", "setup", "success", "plan"}
_TRUE, _FALSE = {"on", "true", "yes", "1", "enabled"}, {"off", "false", "no", "0", "disabled"}


class FamilySpecError(ValueError):
    """A family spec that cannot be used (names the file, the family and the problem)."""


def _fill(value: Any, slots: Mapping[str, str]) -> Any:
    if not isinstance(value, str):
        return value
    return re.sub(r"\{(\w+)\}", lambda m: slots.get(m.group(1), m.group(0)), value)


def _as_bool(v: Any) -> bool | None:
    if isinstance(v, bool):
        return v
    s = str(v).strip().lower()
    return True if s in _TRUE else False if s in _FALSE else None


def _words(text: str) -> set[str]:
    from digirl.sim.content import words

    return {w.rstrip("s") if len(w) > 3 else w for w in words(text)}


class Condition:
    """``{state: NAME, OP: VALUE}``: OP one of equals, not_equals, contains, has_words, at_least, at_most."""

    def __init__(self, raw: Any, where: str) -> None:
        if not isinstance(raw, Mapping) or "state" not in raw:
            raise FamilySpecError(f"{where}: a condition is a mapping with 'state' and one of {', '.join(_OPS)}; got {raw!r}")
        ops = [k for k in raw if k != "state"]
        if len(ops) != 1 or ops[0] not in _OPS:
            raise FamilySpecError(f"{where}: a condition needs exactly one of {', '.join(_OPS)}; got {sorted(raw)}")
        if raw["state"] not in STATE_NAMES:
            raise FamilySpecError(f"{where}: unknown state {raw['state']!r}; known: {', '.join(STATE_NAMES)}")
        self.name, self.op, self.value = str(raw["state"]), ops[0], raw[ops[0]]

    def holds(self, state: Mapping[str, Any], slots: Mapping[str, str]) -> bool:
        have, want = state[self.name], _fill(self.value, slots)
        if self.op in ("at_least", "at_most"):
            try:
                n, bound = float(len(have) if isinstance(have, list) else have), float(want)
            except (TypeError, ValueError):
                return False
            return n >= bound if self.op == "at_least" else n <= bound
        if isinstance(have, bool):
            b = _as_bool(want)
            same = b is not None and have == b
            return same if self.op == "equals" else (not same if self.op == "not_equals" else False)
        items = have if isinstance(have, list) else [have]
        w = str(want).strip().lower()
        if self.op == "equals":
            return any(str(x).strip().lower() == w for x in items)
        if self.op == "not_equals":
            return all(str(x).strip().lower() != w for x in items)
        if self.op == "contains":
            return any(w in str(x).lower() for x in items)
        need = _words(str(want))
        return any(need <= _words(str(x)) for x in items)


def _conditions(raw: Any, where: str) -> list[Condition]:
    items = raw if isinstance(raw, list) else [raw]
    return [Condition(c, f"{where}[{i}]") for i, c in enumerate(items)]


class Step:
    """One plan step: an action (open_app, tap, type, back, home, swipe, wait) and when it is done."""

    def __init__(self, raw: Any, where: str, last: bool) -> None:
        if not isinstance(raw, Mapping):
            raise FamilySpecError(f"{where}: a plan step is a mapping like {{tap: REF, until: CONDITION}}; got {raw!r}")
        acts = [k for k in raw if k in _ACTIONS]
        extra = set(raw) - set(_ACTIONS) - {"until", "into", "submit"}
        if len(acts) != 1 or extra:
            raise FamilySpecError(
                f"{where}: a step needs exactly one of {', '.join(_ACTIONS)} (and optionally until, into, submit); "
                f"got {sorted(raw)}"
            )
        self.kind, self.arg = acts[0], raw[acts[0]]
        self.until = _conditions(raw["until"], f"{where}.until") if "until" in raw else []
        self.into, self.submit = raw.get("into"), bool(raw.get("submit", True))
        if self.kind == "type" and not self.into:
            raise FamilySpecError(f"{where}: a type step names the field: {{type: TEXT, into: REF}}")
        if self.kind == "swipe" and self.arg not in ("up", "down", "from_top"):
            raise FamilySpecError(f"{where}: swipe is up, down or from_top; got {self.arg!r}")
        if not self.until and self.kind != "open_app" and not last:
            raise FamilySpecError(f"{where}: only the last step may omit 'until' (when is this step done?)")

    def done(self, e: ExpertStep, state: Mapping[str, Any], slots: Mapping[str, str]) -> bool:
        """Whether the step needs nothing more (an ``open_app`` step: that app is in front)."""
        if self.kind == "open_app":
            from digirl.sim.phone import resolve_app

            if e.phone.fg != resolve_app(_fill(str(self.arg), slots)):
                return False
            return all(c.holds(state, slots) for c in self.until)
        return bool(self.until) and all(c.holds(state, slots) for c in self.until)

    def act(self, e: ExpertStep, slots: Mapping[str, str]) -> Action:
        arg = _fill(self.arg, slots)
        if self.kind == "open_app":
            from digirl.sim.phone import resolve_app

            return e.open_app(resolve_app(str(arg))) or e.wait()
        if self.kind == "tap":
            return e.goto(str(arg)) or Action.back()
        if self.kind == "type":
            return _type(e, str(_fill(self.into, slots)), str(arg), self.submit)
        if self.kind == "swipe":
            if arg == "from_top":
                return Action.swipe((0.5, 0.01), (0.5, 0.5))
            return Action.scroll(str(arg), center=(0.5, 0.6), length=0.4)
        return {"back": Action.back, "home": Action.home, "wait": e.wait}[self.kind]()


def _type(e: ExpertStep, ref: str, text: str, submit: bool) -> Action:
    v = e.phone.find(ref)
    if v is None:
        return Action.back()
    if not v.focused:
        return e.goto(ref) or Action.back()
    have = v.text or ""
    if have.strip().lower() == text.strip().lower():
        return Action.enter() if submit else e.wait()
    if text.lower().startswith(have.lower()):
        return Action.type_text(text[len(have) :])
    return e.goto(ref + ".clear") or e.goto("kb.backspace") or Action.back()


def _slot_parser(raw: Any, where: str) -> Callable[[dict[str, str]], dict[str, str] | None] | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise FamilySpecError(f"{where}: slots maps a slot name to {{canonical value: [what people write]}}")
    table: dict[str, dict[str, str]] = {}
    for slot, values in raw.items():
        if not isinstance(values, Mapping):
            raise FamilySpecError(f"{where}.{slot}: give {{canonical value: [synonyms]}}, got {values!r}")
        table[str(slot)] = {str(s).lower(): str(canon) for canon, syns in values.items() for s in [canon, *(syns or [])]}

    def parse(slots: dict[str, str]) -> dict[str, str] | None:
        out = dict(slots)
        for slot, synonyms in table.items():
            if slot in out:
                canon = synonyms.get(out[slot].lower())
                if canon is None:
                    return None
                out[slot] = canon
        return out

    return parse


def _setup(raw: Any, where: str) -> Callable[[Phone, Intent, TaskContext, np.random.Generator], None] | None:
    if not raw:
        return None
    acts = raw if isinstance(raw, list) else [raw]
    for i, a in enumerate(acts):
        ok = isinstance(a, Mapping) and (
            ("set" in a and "to" in a and str(a["set"]).startswith("settings.") and a["set"] in STATE_NAMES)
            or set(a) in ({"install"}, {"uninstall"})
        )
        if not ok:
            raise FamilySpecError(
                f"{where}[{i}]: a setup action is {{set: settings.NAME, to: VALUE}} or {{install|uninstall: APP}}; got {a!r}"
            )

    def setup(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
        from digirl.sim.device import set_setting

        for a in acts:
            if "install" in a:
                phone.install(_fill(str(a["install"]), intent.slots))
            elif "uninstall" in a:
                phone.uninstall(_fill(str(a["uninstall"]), intent.slots))
            else:
                name, value = str(a["set"]).split(".", 1)[1], _fill(a["to"], intent.slots)
                if name in ("brightness", "volume"):
                    setattr(phone.settings, name, int(value))
                    continue
                b = _as_bool(value)
                if b is None:
                    raise ValueError(f"setting {name} needs on/off, got {value!r}")
                set_setting(phone, name, (not b) if a.get("invert") else b)

    return setup


def register_spec(spec: Mapping[str, Any], *, source: str = "<spec>", replace: bool = True) -> TaskFamily:
    """Check one family spec (module doc) and register it; returns the family."""
    name = spec.get("name") if isinstance(spec, Mapping) else None
    where = f"{source}: family {name!r}"
    if not isinstance(spec, Mapping) or not isinstance(name, str):
        raise FamilySpecError(f"{source}: a family spec is a mapping with a 'name'; got {spec!r}")
    unknown = set(spec) - _KEYS
    if unknown:
        raise FamilySpecError(f"{where}: unknown keys {sorted(unknown)}; known: {sorted(_KEYS)}")
    if name in FAMILIES:
        raise FamilySpecError(f"{where}: {name!r} is a built-in family; choose another name")
    taskset = str(spec.get("taskset", "general"))
    if taskset not in TASKSET_FAMILIES:
        raise FamilySpecError(f"{where}: taskset must be one of {', '.join(TASKSET_FAMILIES)}, got {taskset!r}")
    phrasings = spec.get("phrasings")
    if not isinstance(phrasings, list) or not phrasings or not all(isinstance(p, str) and p.strip() for p in phrasings):
        raise FamilySpecError(f"{where}: 'phrasings' is a non-empty list of texts like 'turn {{state}} data saver'")
    for key in ("success", "plan"):
        if not spec.get(key):
            raise FamilySpecError(f"{where}: '{key}' is required")
    used = set(re.findall(r"\{(\w+)\}", repr([spec.get("success"), spec.get("setup"), spec.get("plan")])))
    for phrasing in phrasings:
        missing = used - set(re.findall(r"\{(\w+)\}", phrasing))
        if missing:
            raise FamilySpecError(f"{where}: phrasing {phrasing!r} has no {{{'}, {'.join(sorted(missing))}}} that the spec uses")
    success = _conditions(spec["success"], f"{where}.success")
    raw_plan = spec["plan"] if isinstance(spec["plan"], list) else [spec["plan"]]
    plan = [Step(s, f"{where}.plan[{i}]", i == len(raw_plan) - 1) for i, s in enumerate(raw_plan)]

    def predicate(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
        state = device_state(phone)
        return all(c.holds(state, intent.slots) for c in success)

    def expert(e: ExpertStep) -> Action:
        state, slots = device_state(e.phone), e.intent.slots
        for step in plan:
            if not step.done(e, state, slots):
                return step.act(e, slots)
        return Action.complete()

    try:
        return register_family(
            TaskFamily(
                name,
                predicate,
                expert,
                setup=_setup(spec.get("setup"), f"{where}.setup"),
                taskset=taskset,
                doc=str(spec.get("doc", "")),
            ),
            phrasings=phrasings,
            parse=_slot_parser(spec.get("slots"), f"{where}.slots"),
            replace=replace,
            source={"spec": dict(spec)},
        )
    except ValueError as e:
        raise FamilySpecError(f"{where}: {e}") from e


def load_family_file(path: str | Path) -> list[str]:
    """Register every family of a YAML spec file (a ``families:`` list, or a list); returns their names."""
    import yaml

    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"family spec file not found: {p}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise FamilySpecError(f"{p}: not valid YAML ({e})") from e
    specs = data.get("families") if isinstance(data, Mapping) else data
    if not isinstance(specs, Sequence) or isinstance(specs, str) or not specs:
        raise FamilySpecError(f"{p}: expected a 'families:' list of family specs")
    return [register_spec(s, source=str(p)).name for s in specs]
