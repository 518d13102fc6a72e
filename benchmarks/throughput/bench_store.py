"""Throughput of the trajectory store: append and load of 10-step trajectories with 270x600 screenshots.

    python benchmarks/throughput/bench_store.py [--trajectories 64] [--batch 16] [--repeats 3]

Screens are synthetic UI-like frames (flat panels, text rows), every step distinct, so the PNG
de-duplication never kicks in. Writes benchmarks/results/store.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from digirl.core.actions import Action
from digirl.core.types import Observation, Step, TaskSpec, Trajectory
from digirl.data.hf import export_hf
from digirl.data.store import TrajectoryStore

WIDTH, HEIGHT, STEPS = 270, 600, 10


def ui_frame(rng: np.random.Generator, k: int) -> np.ndarray:
    """A phone-like screen: status bar with a changing label, coloured list rows with text."""
    img = Image.new("RGB", (WIDTH, HEIGHT), (245, 245, 245))
    d = ImageDraw.Draw(img)
    d.rectangle([0, 0, WIDTH, 24], fill=(30, 30, 30))
    d.text((8, 6), f"12:{k % 60:02d}  frame {k}", fill=(255, 255, 255))
    for i in range(12):
        y = 40 + i * 46
        color = tuple(int(v) for v in rng.integers(60, 250, 3))
        d.rectangle([10, y, WIDTH - 10, y + 38], fill=color)
        d.text((20, y + 12), f"Item {int(rng.integers(1000))} lorem ipsum dolor", fill=(0, 0, 0))
    return np.array(img)


def make_trajectories(n: int, seed: int = 0) -> list[Trajectory]:
    rng = np.random.default_rng(seed)
    out = []
    for t in range(n):
        task = TaskSpec(f"Open app {t % 7}", task_id=f"open-{t % 7}", family="apps", horizon=STEPS)
        frames = [ui_frame(rng, t * (STEPS + 1) + i) for i in range(STEPS + 1)]
        steps: list[Step] = []
        hist: list[Action] = []
        for i in range(STEPS):
            a = Action.tap(float(rng.random()), float(rng.random()))
            obs = Observation(frames[i], task.instruction, i, tuple(hist), None, frames[i - 1] if i else None)
            steps.append(Step(obs, a, str(a), float(i == STEPS - 1), i == STEPS - 1, False, {"i": i}, -1.0))
            hist.append(a)
        final = Observation(frames[STEPS], task.instruction, STEPS, tuple(hist), None, frames[STEPS - 1])
        out.append(Trajectory(task, steps, final_observation=final, traj_id=f"bench-{t}"))
    return out


def bench(trajs: list[Trajectory], batch: int, durable: bool, workers: int, root: Path) -> dict[str, float]:
    if root.exists():
        shutil.rmtree(root)
    store = TrajectoryStore(root, durable=durable, io_workers=workers)
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(0, len(trajs), batch):
        store.append(trajs[i : i + batch])
    t_append, c_append = time.perf_counter() - t0, time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    loaded = store.load()
    t_load, c_load = time.perf_counter() - t0, time.process_time() - c0
    assert len(loaded) == len(trajs)
    t0 = time.perf_counter()
    store.load(load_images=False)
    t_load_noimg = time.perf_counter() - t0
    t0 = time.perf_counter()
    TrajectoryStore(root).trajectory_ids()  # a fresh handle: no cached index
    t_ids = time.perf_counter() - t0
    t0 = time.perf_counter()
    store.summary()
    t_summary = time.perf_counter() - t0
    out = root.parent / f"{root.name}-hf"
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    export_hf(store, out)
    t_export = time.perf_counter() - t0
    shutil.rmtree(out)
    return {
        "append_s": t_append,
        "append_cpu_s": c_append,
        "load_s": t_load,
        "load_cpu_s": c_load,
        "load_no_images_s": t_load_noimg,
        "trajectory_ids_s": t_ids,
        "summary_s": t_summary,
        "export_hf_s": t_export,
        "size_bytes": store.size_bytes(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trajectories", type=int, default=64)
    ap.add_argument("--batch", type=int, default=16, help="trajectories per append")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dir", default=None, help="scratch folder (default: a temp dir)")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "results" / "store.json"))
    args = ap.parse_args()

    trajs = make_trajectories(args.trajectories)
    n_steps = args.trajectories * STEPS
    scratch = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="bench-store-"))
    results: dict[str, dict[str, float]] = {}
    try:
        for durable, workers in ((True, 1), (True, 4), (False, 1)):
            runs = [bench(trajs, args.batch, durable, workers, scratch / "ds") for _ in range(args.repeats)]
            med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            results[f"{'durable' if durable else 'no_fsync'}_workers{workers}"] = {
                **{k: round(v, 4) for k, v in med.items()},
                "append_traj_per_s": round(args.trajectories / med["append_s"], 1),
                "append_steps_per_s": round(n_steps / med["append_s"], 1),
                "load_traj_per_s": round(args.trajectories / med["load_s"], 1),
                "load_steps_per_s": round(n_steps / med["load_s"], 1),
                "load_no_images_steps_per_s": round(n_steps / med["load_no_images_s"], 1),
                "append_cpu_ms_per_step": round(1000 * med["append_cpu_s"] / n_steps, 2),
                "load_cpu_ms_per_step": round(1000 * med["load_cpu_s"] / n_steps, 2),
                "bytes_per_step": round(med["size_bytes"] / n_steps, 1),
            }
    finally:
        if not args.dir:
            shutil.rmtree(scratch, ignore_errors=True)
    raw = WIDTH * HEIGHT * 3
    report = {
        "name": "store",
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpu_count": os.cpu_count(),
            "load_avg_1m_at_end": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        },
        "setup": {
            "trajectories": args.trajectories,
            "steps_per_trajectory": STEPS,
            "screenshot": f"{WIDTH}x{HEIGHT} RGB, distinct per step (+1 final frame per trajectory)",
            "raw_bytes_per_screenshot": raw,
            "batch": args.batch,
            "repeats": args.repeats,
            "statistic": "median over repeats; *_cpu_* is process CPU time (all threads), "
            "less sensitive than wall time to other load on the machine",
            "png_compress_level": 1,
        },
        "results": results,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    for mode, r in results.items():
        print(
            f"{mode:18s} append {r['append_traj_per_s']:.1f} traj/s {r['append_steps_per_s']:.1f} steps/s | "
            f"load {r['load_traj_per_s']:7.1f} traj/s {r['load_steps_per_s']:8.1f} steps/s | "
            f"load w/o images {r['load_no_images_steps_per_s']:.1f} steps/s | "
            f"CPU ms/step append {r['append_cpu_ms_per_step']} load {r['load_cpu_ms_per_step']} | "
            f"{r['bytes_per_step'] / 1024:.1f} KiB/step (raw {raw / 1024:.0f} KiB)"
        )
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
