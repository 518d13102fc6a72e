"""Browser backend throughput (env steps/s vs a bare Playwright loop) and scripted-solver success.

One step = a click at a point of the MiniWoB click-test task area + a 160×210 PNG screenshot decoded
to a numpy array + the reward read; a finished or truncated (10 steps) episode is reset. For each
number of concurrent pages, in the same run:

The same N pages (each in its own context) serve all three variants, in alternating windows:

- ``bare``: N asyncio tasks, one per page, each looping click → screenshot + reward
  read (concurrent) → decode with plain Playwright calls, and reset JS + screenshot at episode end
  (no batch barrier: the best case for a hand-written loop);
- ``env``: :class:`BrowserVectorEnv` ``step_many`` over N :class:`MiniWoBEnv` (``elements=False``),
  i.e. the full framework path (action mapping, bookkeeping, Observation, batch barrier);
- ``env+elements``: the same with the visible-element list (a JS call concurrent with the screenshot).

``--solvers`` also runs every scripted solver on 50 seeds (0..49) and reports success per task.

    python benchmarks/bench_browser.py                     # throughput, 1/4/8/16 pages, 8 s per level
    python benchmarks/bench_browser.py --solvers --seeds 50
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from playwright.async_api import Page

from digirl.browser.actions import frame_from_bytes
from digirl.browser.catalog import CURATED_TASKS
from digirl.browser.miniwob import TASK_AREA, MiniWoBEnv
from digirl.browser.pool import BrowserPool
from digirl.browser.vector import BrowserVectorEnv, collect_solver_demos
from digirl.core.actions import Action
from digirl.core.errors import EnvFailure

HORIZON = 10
TAP = (0.5, 0.6)  # a fixed point: sometimes the button, mostly not (episodes then truncate)
CLIP = {"x": TASK_AREA.x, "y": TASK_AREA.y, "width": TASK_AREA.width, "height": TASK_AREA.height}
RESET_JS = """(seed) => { core.endEpisode(0); Math.seedrandom(seed); core.setDataMode('train');
  core.EPISODE_MAX_TIME = 86400000; core.startEpisodeReal(); return WOB_TASK_READY; }"""
STATUS_JS = "() => [WOB_DONE_GLOBAL, WOB_RAW_REWARD_GLOBAL]"


_TICK = os.sysconf("SC_CLK_TCK")


def _cpu() -> tuple[float, float]:
    """(CPU s of this process, CPU s of its live descendants: Playwright driver + Chromium)."""
    me = os.getpid()
    parent: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parent[int(name)] = int(fields[1])
            ticks[int(name)] = int(fields[11]) + int(fields[12])
    tree: set[int] = set()
    frontier = {me}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier} - tree
        tree |= frontier
    return time.process_time(), sum(ticks[p] for p in tree) / _TICK


def _pct(xs: list[float], q: float) -> float:
    return float(np.percentile(xs, q)) * 1000 if xs else float("nan")


async def _bare(pages: list[Page], seconds: float) -> dict[str, Any]:
    """Plain Playwright on the given pages: one free-running asyncio task per page."""
    x, y = TASK_AREA.to_page(TAP)
    lat: list[float] = []
    counts = [0] * len(pages)
    stop = time.perf_counter() + seconds

    async def loop(k: int) -> None:
        page, t, seed = pages[k], 0, 10_000 * (k + 1)
        while time.perf_counter() < stop:
            t0 = time.perf_counter()
            await page.mouse.click(x, y)
            # screenshot and reward read concurrently, as the env does (the strongest simple loop)
            data, (done, _raw) = await asyncio.gather(
                page.screenshot(type="png", clip=CLIP),  # type: ignore[arg-type]
                page.evaluate(STATUS_JS),
            )
            frame_from_bytes(data, 160, 210)
            t += 1
            if done or t >= HORIZON:  # a reset returns an observation too: screenshot it
                seed, t = seed + 1, 0
                await page.evaluate(RESET_JS, seed)
                frame_from_bytes(await page.screenshot(type="png", clip=CLIP), 160, 210)  # type: ignore[arg-type]
            lat.append(time.perf_counter() - t0)
            counts[k] += 1

    c0, t0 = _cpu(), time.perf_counter()
    await asyncio.gather(*(loop(k) for k in range(len(pages))))
    wall, c1 = time.perf_counter() - t0, _cpu()
    return {"steps": sum(counts), "wall_s": wall, "lat": lat, "cpu": (c1[0] - c0[0], c1[1] - c0[1])}


def _framework(venv: BrowserVectorEnv, seconds: float, elements: bool) -> dict[str, Any]:
    """``step_many`` over every env (resetting the ones that ended)."""
    n = venv.num_envs
    for e in venv.envs:
        e.with_elements = elements
    seeds = [1000 * (k + 1) for k in range(n)]
    venv.reset_many(seeds)
    tap = Action.tap(*TAP)
    lat: list[float] = []
    steps = failures = 0
    stop = time.perf_counter() + seconds
    c0, t0 = _cpu(), time.perf_counter()
    while time.perf_counter() < stop:
        ts = time.perf_counter()
        outs = venv.step_many([tap] * n)
        lat.append(time.perf_counter() - ts)
        steps += n
        ended = [k for k, o in enumerate(outs) if isinstance(o, EnvFailure) or o[2] or o[3]]
        failures += sum(isinstance(o, EnvFailure) for o in outs)
        if ended:
            for k in ended:
                seeds[k] += 1
            venv.reset_many([seeds[k] for k in ended], indices=ended)
    wall, c1 = time.perf_counter() - t0, _cpu()
    cpu = (c1[0] - c0[0], c1[1] - c0[1])
    return {"steps": steps, "wall_s": wall, "lat": lat, "env_failures": failures, "cpu": cpu}


def _merge(runs: list[dict[str, Any]]) -> dict[str, Any]:
    lat = [x for r in runs for x in r["lat"]]
    steps = sum(r["steps"] for r in runs)
    wall = sum(r["wall_s"] for r in runs)
    out = {"steps": steps, "wall_s": round(wall, 3), "steps_per_s": steps / wall, "p50_ms": _pct(lat, 50)}
    out["p90_ms"] = _pct(lat, 90)
    # CPU per step is robust to other load on the machine: wall-clock rates are not.
    out["cpu_ms_per_step_python"] = 1000 * sum(r["cpu"][0] for r in runs) / steps
    out["cpu_ms_per_step_browser"] = 1000 * sum(r["cpu"][1] for r in runs) / steps
    if "env_failures" in runs[0]:
        out["env_failures"] = sum(r["env_failures"] for r in runs)
    return out


def throughput(levels: list[int], seconds: float, rounds: int) -> list[dict[str, Any]]:
    """Per level, the same N pages serve all variants, alternating in ``rounds`` windows of
    ``seconds / rounds`` each, so page start-up and changing load hit every variant alike."""
    rows = []
    with BrowserPool() as pool:
        for n in levels:
            envs = [MiniWoBEnv("click-test", pool=pool, horizon=HORIZON) for _ in range(n)]
            with BrowserVectorEnv(envs) as venv:
                venv.reset_many(list(range(n)))  # opens and loads the pages
                pages = [e._session.current() for e in envs]
                w = seconds / rounds
                runs: dict[str, list[dict[str, Any]]] = {"bare": [], "env": [], "env_el": []}
                for _ in range(rounds):
                    venv.reset_many(list(range(n)))
                    runs["bare"].append(pool.run(_bare(pages, w), timeout=w + 120))
                    runs["env"].append(_framework(venv, w, elements=False))
                    runs["env_el"].append(_framework(venv, w, elements=True))
            bare, env, env_el = _merge(runs["bare"]), _merge(runs["env"]), _merge(runs["env_el"])
            row = {
                "pages": n,
                "bare": bare,
                "env": env,
                "env_elements": env_el,
                "ratio_env_vs_bare": env["steps_per_s"] / bare["steps_per_s"],
                "ratio_env_elements_vs_bare": env_el["steps_per_s"] / bare["steps_per_s"],
            }
            rows.append(row)
            print(
                f"pages {n:2d}: bare {bare['steps_per_s']:6.1f}/s (p50 {bare['p50_ms']:.0f} ms)  "
                f"env {env['steps_per_s']:6.1f}/s (step p50 {env['p50_ms']:.0f} ms, x{row['ratio_env_vs_bare']:.2f})  "
                f"env+elements {env_el['steps_per_s']:6.1f}/s (x{row['ratio_env_elements_vs_bare']:.2f})\n"
                f"          CPU ms/step python+browser: bare {bare['cpu_ms_per_step_python']:.1f}"
                f"+{bare['cpu_ms_per_step_browser']:.1f}  env {env['cpu_ms_per_step_python']:.1f}"
                f"+{env['cpu_ms_per_step_browser']:.1f}  env+elements {env_el['cpu_ms_per_step_python']:.1f}"
                f"+{env_el['cpu_ms_per_step_browser']:.1f}",
                flush=True,
            )
    return rows


def solvers(seeds: int, num_envs: int) -> dict[str, Any]:
    out = {}
    for task in CURATED_TASKS:
        t0 = time.perf_counter()
        trajs = collect_solver_demos(task, seeds, num_envs=num_envs, elements=False)
        ok = sum(t.success for t in trajs)
        fails = sum(t.env_failure for t in trajs)
        out[task] = {
            "episodes": len(trajs),
            "successes": ok,
            "success_rate": ok / len(trajs),
            "env_failures": fails,
            "mean_steps": float(np.mean([t.length for t in trajs])),
            "failed_seeds": [t.seed for t in trajs if not t.success],
            "wall_s": time.perf_counter() - t0,
        }
        print(f"{task:24s} {ok}/{len(trajs)}  env failures {fails}  ({out[task]['wall_s']:.1f} s)", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, nargs="+", default=[1, 4, 8, 16])
    ap.add_argument("--seconds", type=float, default=8.0, help="measurement time per variant and level")
    ap.add_argument("--rounds", type=int, default=2, help="alternating windows per variant and level")
    ap.add_argument("--solvers", action="store_true", help="also measure scripted-solver success")
    ap.add_argument("--no-throughput", action="store_true")
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--num-envs", type=int, default=4, help="pages used for the solver runs")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "browser.json"))
    args = ap.parse_args()
    result: dict[str, Any] = {
        "command": " ".join([os.path.basename(sys.executable), *sys.argv]),
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpu_count": os.cpu_count(),
            "load_avg_at_start": os.getloadavg(),
        },
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "step": "click + 160x210 PNG screenshot decoded to numpy + reward read; reset on done or 10 steps",
    }
    out = Path(args.out)
    if out.exists():  # keep the other section when only one is re-measured
        old = json.loads(out.read_text())
        for key in ("throughput", "throughput_run", "solvers"):
            if key in old:
                result[key] = old[key]
    if not args.no_throughput:
        result["throughput"] = throughput(args.pages, args.seconds, args.rounds)
        result["throughput_run"] = {
            "command": result["command"],
            "date": result["date"],
            "load_avg_at_start": result["machine"]["load_avg_at_start"],
            "load_avg_at_end": os.getloadavg(),
        }
    if args.solvers:
        result["solvers"] = {
            "seeds": args.seeds,
            "command": result["command"],
            "date": result["date"],
            "tasks": solvers(args.seeds, args.num_envs),
        }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
