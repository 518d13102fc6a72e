"""Browser backend throughput (env steps/s vs a bare Playwright loop) and scripted-solver success.

One step = a click at a point of the MiniWoB click-test task area + a 160×210 PNG screenshot decoded
to a numpy array + the reward read (+ the visible-element list in the ``+elements`` variants); a
finished or truncated (10 steps) episode is reset (reset JS + the same observation). For each number
of concurrent pages, the same N pages (each in its own context) serve every variant, in alternating
windows:

- ``bare``: N asyncio tasks, one per page, each looping click → screenshot + reward read
  (+ element-list ``evaluate`` and its parsing), concurrent → decode, with plain Playwright calls
  (``page.screenshot``, ``page.evaluate``): no batch barrier, the best case for a hand-written loop;
- ``env``: :meth:`BrowserVectorEnv.run` over N :class:`MiniWoBEnv` with a constant-tap ``act_fn``,
  i.e. the full framework path a collector uses (pages stepped independently, observations batched
  into policy calls, action mapping, episode bookkeeping, Trajectory objects);
- ``bare-cdp`` (``--bare-cdp``): the bare loop with the framework's two capture tricks done by
  hand (raw DevTools ``Page.captureScreenshot``; reward + element list in one ``evaluate``): what
  the framework costs over the best hand-written loop;
- ``lockstep`` (``--lockstep``): ``step_many`` over all N envs per round (every batch waits for its
  slowest page), the pre-``run`` way of batching, for reference.

``--solvers`` also runs every scripted solver on 50 seeds (0..49) and reports success per task.

    python benchmarks/throughput/bench_browser.py                     # throughput, 1/4/8/16 pages
    python benchmarks/throughput/bench_browser.py --solvers --seeds 50
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
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
from playwright.async_api import CDPSession, Page

from digirl.browser.actions import ELEMENTS_JS, capture, elements_from_js, frame_from_bytes, observe_js
from digirl.browser.catalog import CURATED_TASKS
from digirl.browser.env import MAX_ELEMENTS
from digirl.browser.miniwob import TASK_AREA, MiniWoBEnv
from digirl.browser.pool import BrowserPool
from digirl.browser.vector import BrowserVectorEnv, collect_solver_demos
from digirl.core.actions import Action
from digirl.core.errors import EnvFailure
from digirl.core.types import Observation, Trajectory
from digirl.envs.vector import EpisodeJob
from digirl.policies.base import ActOutput

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


def _busy_s() -> float:
    """CPU seconds the whole machine has been busy (all processes, from /proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / _TICK  # minus idle and iowait


def _pct(xs: list[float], q: float) -> float:
    return float(np.percentile(xs, q)) * 1000 if xs else float("nan")


async def _bare(pages: list[Page], seconds: float, elements: bool, cdp: list[CDPSession] | None = None) -> dict[str, Any]:
    """Plain Playwright on the given pages: one free-running asyncio task per page.

    With ``cdp`` (the ``bare-cdp`` variant) the loop uses the framework's two tricks by hand: the
    raw DevTools capture and one ``evaluate`` for the reward and the element list.
    """
    x, y = TASK_AREA.to_page(TAP)
    lat: list[float] = []
    counts = [0] * len(pages)
    stop = time.perf_counter() + seconds
    el_args = [TASK_AREA.x, TASK_AREA.y, TASK_AREA.width, TASK_AREA.height, MAX_ELEMENTS]
    merged = observe_js(STATUS_JS, elements)

    async def observe(k: int, status: bool) -> Any:
        page = pages[k]
        if cdp is not None:
            data, (_sx, _sy, rows, st) = await asyncio.gather(
                capture(cdp[k], TASK_AREA, (0.0, 0.0)), page.evaluate(merged, el_args)
            )
            got: list[Any] = [data, st, rows]
        else:  # screenshot, reward read and element list concurrently (the strongest simple loop)
            calls: list[Any] = [page.screenshot(type="png", clip=CLIP)]  # type: ignore[arg-type]
            if status:
                calls.append(page.evaluate(STATUS_JS))
            if elements:
                calls.append(page.evaluate(ELEMENTS_JS, el_args))
            got = await asyncio.gather(*calls)
        frame_from_bytes(got[0], 160, 210)
        if elements:
            elements_from_js(got[-1], TASK_AREA)
        return got[1] if status else None

    async def loop(k: int) -> None:
        page, t, seed = pages[k], 0, 10_000 * (k + 1)
        while time.perf_counter() < stop:
            t0 = time.perf_counter()
            await page.mouse.click(x, y)
            done, _raw = await observe(k, True)
            t += 1
            if done or t >= HORIZON:  # a reset returns an observation too
                seed, t = seed + 1, 0
                await page.evaluate(RESET_JS, seed)
                await observe(k, False)
            lat.append(time.perf_counter() - t0)
            counts[k] += 1

    c0, t0 = _cpu(), time.perf_counter()
    await asyncio.gather(*(loop(k) for k in range(len(pages))))
    wall, c1 = time.perf_counter() - t0, _cpu()
    return {"steps": sum(counts), "wall_s": wall, "lat": lat, "cpu": (c1[0] - c0[0], c1[1] - c0[1])}


def _env_run(venv: BrowserVectorEnv, seconds: float, elements: bool, first_seed: int) -> dict[str, Any]:
    """:meth:`BrowserVectorEnv.run` with a constant-tap policy until ``seconds`` have passed."""
    for e in venv.envs:
        e.with_elements = elements
    tap = ActOutput(Action.tap(*TAP), "tap", None)
    calls: list[float] = []

    def act(observations: Sequence[Observation]) -> list[ActOutput]:
        calls.append(len(observations))
        return [tap] * len(observations)

    jobs = [EpisodeJob(None, first_seed + k) for k in range(int(200 * seconds) + venv.num_envs)]  # > 200 steps/s
    s0, f0 = venv.stats.steps, venv.stats.env_failures
    c0, t0 = _cpu(), time.perf_counter()
    stop = t0 + seconds
    run = venv.run(act, jobs)
    for _traj in run:
        if time.perf_counter() >= stop:
            break
    wall, c1 = time.perf_counter() - t0, _cpu()
    cast(Generator[Trajectory, None, None], run).close()  # waits for the steps in flight (not counted)
    cpu = (c1[0] - c0[0], c1[1] - c0[1])
    steps = venv.stats.steps - s0
    out = {"steps": steps, "wall_s": wall, "lat": [], "env_failures": venv.stats.env_failures - f0, "cpu": cpu}
    out["mean_batch"] = float(np.mean(calls)) if calls else 0.0
    return out


def _lockstep(venv: BrowserVectorEnv, seconds: float, elements: bool) -> dict[str, Any]:
    """``step_many`` over every env (resetting the ones that ended): each round waits for all pages."""
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
    out: dict[str, Any] = {"steps": steps, "wall_s": round(wall, 3), "steps_per_s": steps / wall}
    out["windows_steps_per_s"] = [round(r["steps"] / r["wall_s"], 2) for r in runs]
    if lat:
        out["p50_ms"], out["p90_ms"] = _pct(lat, 50), _pct(lat, 90)
    # CPU per step is robust to other load on the machine: wall-clock rates are not.
    out["cpu_ms_per_step_python"] = 1000 * sum(r["cpu"][0] for r in runs) / steps
    out["cpu_ms_per_step_browser"] = 1000 * sum(r["cpu"][1] for r in runs) / steps
    if "env_failures" in runs[0]:
        out["env_failures"] = sum(r["env_failures"] for r in runs)
    if "mean_batch" in runs[0]:
        out["mean_policy_batch"] = round(float(np.mean([r["mean_batch"] for r in runs])), 2)
    return out


def throughput(levels: list[int], seconds: float, rounds: int, lockstep: bool, bare_cdp: bool) -> list[dict[str, Any]]:
    """Per level, the same N pages serve all variants, alternating in ``rounds`` windows of
    ``seconds / rounds`` each, so page start-up and changing load hit every variant alike."""
    rows = []
    variants = ["bare", "env", "bare+elements", "env+elements"]
    if bare_cdp:
        variants += ["bare-cdp", "bare-cdp+elements"]
    if lockstep:
        variants += ["lockstep", "lockstep+elements"]
    with BrowserPool() as pool:
        for n in levels:
            envs = [MiniWoBEnv("click-test", pool=pool, horizon=HORIZON) for _ in range(n)]
            with BrowserVectorEnv(envs) as venv:
                venv.reset_many(list(range(n)))  # opens and loads the pages
                pages = [e._session.current() for e in envs]
                _env_run(venv, 3.0, True, first_seed=1)  # warm-up (fresh pages are slow at first), not counted
                w = seconds / rounds
                busy0, own0, t_level = _busy_s(), sum(_cpu()), time.perf_counter()
                runs: dict[str, list[dict[str, Any]]] = {v: [] for v in variants}
                for r in range(rounds):
                    for v in variants:
                        el = v.endswith("+elements")
                        if v.startswith("bare"):
                            venv.reset_many(list(range(n)))
                            sessions = [e._session.cdp for e in envs] if v.startswith("bare-cdp") else None
                            runs[v].append(pool.run(_bare(pages, w, el, sessions), timeout=w + 120))
                        elif v.startswith("env"):
                            runs[v].append(_env_run(venv, w, el, first_seed=100_000 * (r + 1)))
                        else:
                            runs[v].append(_lockstep(venv, w, el))
                # CPU used by other processes of the machine while this level ran (should be ~0)
                foreign = (_busy_s() - busy0) - (sum(_cpu()) - own0)
                level_wall = time.perf_counter() - t_level
            row: dict[str, Any] = {"pages": n, "other_processes_cpu_cores": round(max(0.0, foreign) / level_wall, 3)}
            for v in variants:
                row[v] = _merge(runs[v])
            for v in variants:
                if v not in ("bare", "bare+elements"):
                    base = "bare+elements" if v.endswith("+elements") else "bare"
                    row[f"ratio_{v}_vs_{base}"] = row[v]["steps_per_s"] / row[base]["steps_per_s"]
            if bare_cdp:
                for sfx in ("", "+elements"):
                    rate = row[f"env{sfx}"]["steps_per_s"]
                    row[f"ratio_env{sfx}_vs_bare-cdp{sfx}"] = rate / row[f"bare-cdp{sfx}"]["steps_per_s"]
            rows.append(row)
            line = "  ".join(f"{v} {row[v]['steps_per_s']:5.1f}/s" for v in variants)
            ratios = "  ".join(f"{k[6:]} x{val:.2f}" for k, val in row.items() if k.startswith("ratio_"))
            cpu = "  ".join(
                f"{v} {row[v]['cpu_ms_per_step_python']:.1f}+{row[v]['cpu_ms_per_step_browser']:.1f}" for v in variants
            )
            print(
                f"pages {n:2d}: {line}\n          {ratios}\n          CPU ms/step python+browser: {cpu}\n"
                f"          other processes used {row['other_processes_cpu_cores']:.2f} cores meanwhile",
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
    ap.add_argument("--seconds", type=float, default=12.0, help="measurement time per variant and level")
    ap.add_argument("--rounds", type=int, default=3, help="alternating windows per variant and level")
    ap.add_argument("--lockstep", action="store_true", help="also measure the lock-step step_many batching")
    ap.add_argument("--bare-cdp", action="store_true", help="also measure a bare loop using the framework's capture tricks")
    ap.add_argument("--solvers", action="store_true", help="also measure scripted-solver success")
    ap.add_argument("--no-throughput", action="store_true")
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--num-envs", type=int, default=4, help="pages used for the solver runs")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "results" / "browser.json"))
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
        "step": "click + 160x210 PNG screenshot decoded to numpy + reward read (+ element list); reset on done or 10 steps",
    }
    out = Path(args.out)
    if out.exists():  # keep the other section when only one is re-measured
        old = json.loads(out.read_text())
        for key in ("throughput", "throughput_run", "solvers"):
            if key in old:
                result[key] = old[key]
    if not args.no_throughput:
        result["throughput"] = throughput(args.pages, args.seconds, args.rounds, args.lockstep, args.bare_cdp)
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
