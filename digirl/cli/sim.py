"""``digirl sim``: render expert episodes, play the simulated phone by hand, check task coverage."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from digirl.cli.common import FAMILY_FILES, add_command, add_group, arg, emit_json, register_family_files

__all__ = ["add_commands", "parse_command"]

_HELP_PLAY = """commands: tap X Y | swipe up|down|left|right | type TEXT | back | home | enter | complete |
          impossible | expert | elements | state | quit — or an action in JSON or Auto-UI text"""


# The simulated phone each command builds (see _make_env).
_ENV_ARGS = (
    arg(
        "--taskset",
        choices=("general", "webshop", "phone", "compound"),
        default=None,
        help="task set (default: inferred from the instruction)",
    ),
    arg("--seed", type=int, default=0, help="episode seed (default: 0)"),
    arg("--perturbation", type=int, choices=(0, 1, 2), default=1, help="pop-ups, ads, slow loads, layout jitter (default: 1)"),
    arg("--world-version", type=int, default=0, help="shift layouts and content (default: 0)"),
    arg("--width", type=int, default=270, help="screenshot width in pixels (default: 270)"),
    arg("--height", type=int, default=600, help="screenshot height in pixels (default: 600)"),
    arg("--generic", action="store_true", help="unknown instructions become a web search instead of an error"),
    FAMILY_FILES,
)


def add_commands(sub: Any) -> None:
    ss = add_group(
        sub,
        "sim",
        help="the embedded simulated phone: render episodes, play it, check coverage",
        example='digirl sim render --task "Set an alarm for 7:30 am" --out frames/',
    )

    add_command(
        ss,
        "render",
        "run the scripted expert on a task; save every frame (PNG) and a GIF",
        "digirl sim render --task \"Go to costco.com, search for 'tv'\" --out frames/ --seed 3",
        _cmd_render,
        *_ENV_ARGS,
        arg("--task", required=True, help="instruction (parsed into a task) or a task id of the task set"),
        arg("--out", required=True, type=Path, help="directory for frame_NNN.png and episode.gif"),
        arg("--noise", type=float, default=0.0, help="probability of a random action instead of the expert's"),
        arg("--gif-ms", type=int, default=700, help="GIF frame duration in ms (default: 700)"),
    )
    add_command(
        ss,
        "play",
        "drive the simulated phone from the terminal (screenshot written each step)",
        'digirl sim play --task "Check my email" --out /tmp/phone',
        _cmd_play,
        *_ENV_ARGS,
        arg("--task", default=None, help="instruction; default: a random task of the task set"),
        arg("--out", type=Path, default=Path("sim_play"), help="where screen.png is written each step"),
        json=False,
    )

    try:
        from digirl.cli.sim_coverage import add_coverage_parser
    except ModuleNotFoundError as e:
        if e.name != "digirl.sim.coverage":
            raise
    else:
        add_coverage_parser(ss)


def _make_env(args: argparse.Namespace, task: str | None) -> tuple[Any, Any]:
    """Build the env (task set inferred from the instruction when not given) and the task to reset with."""
    from digirl.sim.env import SimEnv
    from digirl.sim.intents import Intent

    register_family_files(args.families)
    taskset = args.taskset
    spec: Any = task
    if task is not None and taskset is None:
        spec = SimEnv(allow_generic=args.generic).task_for_instruction(task)
        taskset = Intent.from_dict(spec.params["intent"]).taskset
    env = SimEnv(
        taskset=taskset or "general",
        perturbation=args.perturbation,
        world_version=args.world_version,
        width=args.width,
        height=args.height,
        allow_generic=args.generic,
    )
    if isinstance(spec, str):
        ids = {t.task_id: t for t in env.tasks()}
        spec = ids.get(spec, spec)
    return env, spec


def _cmd_render(args: argparse.Namespace) -> int:
    import numpy as np
    from PIL import Image

    env, spec = _make_env(args, args.task)
    args.out.mkdir(parents=True, exist_ok=True)
    obs, _ = env.reset(seed=args.seed, options={"task": spec})
    frames = [obs.screenshot]
    rng = np.random.default_rng(args.seed + 7919)
    actions: list[str] = []
    done, total, info = False, 0.0, {}
    while not done:
        a = env.cheat()
        if args.noise > 0 and rng.random() < args.noise:
            a = env.action_space.sample(rng)
        actions.append(str(a))
        obs, r, term, trunc, info = env.step(a)
        frames.append(obs.screenshot)
        total += r
        done = term or trunc
    paths = []
    for i, f in enumerate(frames):
        path = args.out / f"frame_{i:03d}.png"
        Image.fromarray(f).save(path, optimize=True)
        paths.append(str(path))
    gif = args.out / "episode.gif"
    imgs = [Image.fromarray(f).convert("P", palette=Image.Palette.ADAPTIVE, colors=128) for f in frames]
    imgs[0].save(gif, save_all=True, append_images=imgs[1:], duration=args.gif_ms, loop=0)
    result = {
        "instruction": env.task.instruction,
        "intent": env.intent.to_dict(),
        "success": total > 0,
        "reward": total,
        "steps": len(actions),
        "actions": actions,
        "final_app": info.get("app"),
        "final_screen": info.get("screen"),
        "frames": len(paths),
        "gif": str(gif),
    }
    if args.json:
        emit_json(result)
    else:
        print(f"task:    {result['instruction']}")
        print(f"intent:  {json.dumps(result['intent'])}")
        for i, a in enumerate(actions):
            print(f"  step {i + 1:2d}: {a}")
        print(
            f"outcome: {'SUCCESS' if result['success'] else 'FAILURE'} in {len(actions)} steps "
            f"(reward {total:g}); {len(paths)} frames and {gif} written"
        )
    return 0


def parse_command(line: str, codec_text: Any = None) -> Any:
    """A play-loop line → Action (``None`` for meta commands). Simple commands first, then JSON/Auto-UI."""
    from digirl.core.actions import Action
    from digirl.core.codecs import parse_action

    s = line.strip()
    words = s.split(maxsplit=1)
    if not words:
        return Action.invalid(line, "empty command")
    cmd, rest = words[0].lower(), (words[1] if len(words) > 1 else "")
    try:
        if cmd == "tap":
            x, y = (float(v) for v in rest.replace(",", " ").split())
            return Action.tap(x, y)
        if cmd == "swipe":
            return Action.scroll(rest.strip().lower() or "up", center=(0.5, 0.55), length=0.4)
        if cmd == "type" and rest:
            return Action.type_text(rest)
    except ValueError as e:
        return Action.invalid(line, str(e))
    simple = {
        "back": Action.back,
        "home": Action.home,
        "enter": Action.enter,
        "complete": Action.complete,
        "impossible": Action.impossible,
    }
    if cmd in simple and not rest:
        return simple[cmd]()
    for codec in ("json", "autoui"):
        a = parse_action(s, codec)
        if a.is_valid:
            return a
    return Action.invalid(line, "not a command, JSON or Auto-UI action")


def _cmd_play(args: argparse.Namespace) -> int:
    from PIL import Image

    env, spec = _make_env(args, args.task)
    args.out.mkdir(parents=True, exist_ok=True)
    obs, _ = env.reset(seed=args.seed, options={"task": spec})
    print(f"task: {env.task.instruction}\n{_HELP_PLAY}")
    done = False
    while True:
        shot = args.out / "screen.png"
        Image.fromarray(obs.screenshot).save(shot)
        print(f"\n[step {obs.step}] {env.phone.fg} / {env.phone.current.screen()} — screenshot: {shot}")
        if done:
            print("episode over (success)" if env.success else "episode over")
            return 0
        try:
            line = input("action> ")
        except EOFError:
            return 0
        cmd = line.strip().lower()
        if cmd in ("quit", "exit", "q"):
            return 0
        if cmd in ("elements", "e"):
            for i, el in enumerate(obs.elements or ()):
                b = ", ".join(f"{v:.3f}" for v in el.bounds)
                print(f"  {i:2d} {el.kind:9s} [{b}] {el.text!r}{' *' if el.clickable else ''}")
            continue
        if cmd == "state":
            print(json.dumps(env.state_summary(), indent=1, default=str))
            continue
        action = env.cheat() if cmd == "expert" else parse_command(line)
        if not action.is_valid:
            print(f"  ? {action.error}", file=sys.stderr)
            continue
        obs, r, term, trunc, info = env.step(action)
        print(f"  {action} → reward {r:g}, info {info}")
        done = term or trunc
