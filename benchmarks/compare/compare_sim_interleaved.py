"""Simulator speed before/after, interleaved in one process: base and new step alternately.

On a shared machine, runs of the two revisions in turn (``compare_revs.py``) see different loads;
here both live in one process and take turns in short chunks, so load changes hit both alike. The
base revision is exported with ``git archive`` into a temporary folder and its ``digirl`` package
copied as ``digirl_base`` (imports renamed); this checkout is imported as is. Each side steps its
own ``SimEnv`` (same task set, seeds and policy) for ``--chunk`` steps at a time (finishing the
episode), alternating ABBA; steps per CPU-second per side, and the ratio new/base of the totals
and the median of the per-pair ratios.

With ``--isolate`` each side steps in a process of its own (the parent still alternates them, so
one runs at a time): in one process the two sides share the cycle collector, and a collection one
side's garbage causes may run, and be timed, on the other side's turn.

    python benchmarks/compare/compare_sim_interleaved.py --base 45926e5
    python benchmarks/compare/compare_sim_interleaved.py --base 45926e5 --pairs 20 --chunk 400 --policies expert
    python benchmarks/compare/compare_sim_interleaved.py --base 45926e5 --isolate

Writes benchmarks/results/compare_sim_interleaved.json with the exact command and the load average.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import multiprocessing
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parents[1]  # benchmarks/
REPO = HERE.parent
_IMPORT = re.compile(r"(^|[^A-Za-z0-9_.])digirl(?=[.\s]|$)", re.MULTILINE)


def export_base(rev: str, dest: Path, name: str = "digirl_base") -> None:
    """``rev``'s ``digirl`` package as package ``name`` under ``dest`` (absolute imports renamed)."""
    tree = dest / "tree"
    tree.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", rev, "digirl"], cwd=REPO, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    shutil.copytree(tree / "digirl", dest / name)
    for path in (dest / name).rglob("*.py"):
        src = path.read_text()
        path.write_text(_IMPORT.sub(lambda m: m.group(1) + name, src))


class Side:
    """One revision's env and running totals."""

    def __init__(self, package: str, taskset: str, policy: str) -> None:
        env_mod = importlib.import_module(package + ".sim.env")
        self.env = env_mod.SimEnv(taskset=taskset)
        self.policy = policy
        self.rng = np.random.default_rng(0)
        self.episode, self.done = 0, True
        self.steps = self.episodes = self.successes = 0
        self.cpu = 0.0

    def run(self, n: int) -> float:
        """Step ``n`` times (then to the end of the episode); returns steps per CPU-second."""
        env, k = self.env, 0
        t = time.process_time()
        while k < n or not self.done:
            if self.done:
                env.reset(seed=self.episode)
                self.episode += 1
                self.episodes += 1
                self.done = False
            a = env.cheat() if self.policy == "expert" else env.action_space.sample(self.rng)
            _, r, term, trunc, _ = env.step(a)
            self.successes += r > 0
            k += 1
            self.done = term or trunc
        took = time.process_time() - t
        self.steps += k
        self.cpu += took
        return k / took

    def reset_totals(self) -> None:
        self.steps = self.episodes = self.successes = 0
        self.cpu = 0.0


def _serve(conn: Connection, paths: list[str], package: str, taskset: str, policy: str) -> None:
    """A side in a process of its own (``--isolate``): runs chunks on request, answers with totals."""
    sys.path[:0] = paths
    side = Side(package, taskset, policy)
    while True:
        msg = conn.recv()
        if msg is None:
            return
        if msg == "reset":
            side.reset_totals()
            conn.send(None)
        else:
            rate = side.run(int(msg))
            conn.send((rate, side.steps, side.cpu, side.episodes, side.successes))


class RemoteSide:
    """:class:`Side` in a child process; the totals are those of its last reply."""

    def __init__(self, paths: list[str], package: str, taskset: str, policy: str) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(child, paths, package, taskset, policy), daemon=True)
        self._proc.start()
        self.steps = self.episodes = self.successes = 0
        self.cpu = 0.0

    def run(self, n: int) -> float:
        self._conn.send(n)
        rate, self.steps, self.cpu, self.episodes, self.successes = self._conn.recv()
        return float(rate)

    def reset_totals(self) -> None:
        self._conn.send("reset")
        self._conn.recv()
        self.steps = self.episodes = self.successes = 0
        self.cpu = 0.0

    def close(self) -> None:
        self._conn.send(None)
        self._proc.join()


def compare(taskset: str, policy: str, pairs: int, chunk: int, paths: list[str] | None = None) -> dict[str, Any]:
    """``paths``: run each side in a child process with these on ``sys.path`` (``--isolate``)."""
    sides: dict[str, Side | RemoteSide]
    if paths is None:
        sides = {"base": Side("digirl_base", taskset, policy), "new": Side("digirl", taskset, policy)}
    else:
        sides = {name: RemoteSide(paths, pkg, taskset, policy) for name, pkg in (("base", "digirl_base"), ("new", "digirl"))}
    for s in sides.values():  # warm imports and caches
        s.run(300)
        s.reset_totals()
    per_pair: list[float] = []
    for i in range(pairs):
        order = ("base", "new") if i % 2 == 0 else ("new", "base")
        rates = {name: sides[name].run(chunk) for name in order}
        per_pair.append(rates["new"] / rates["base"])
    for s in sides.values():
        if isinstance(s, RemoteSide):
            s.close()
    rate = {name: s.steps / s.cpu for name, s in sides.items()}
    return {
        "taskset": taskset,
        "policy": policy,
        **{f"{name}_steps_per_cpu_s": round(rate[name], 1) for name in sides},
        **{f"{name}_success_per_episode": round(s.successes / max(1, s.episodes), 4) for name, s in sides.items()},
        "steps_per_side": sides["new"].steps,
        "ratio": round(rate["new"] / rate["base"], 3),
        "ratio_median_of_pairs": round(statistics.median(per_pair), 3),
        "ratio_min_max_of_pairs": [round(min(per_pair), 3), round(max(per_pair), 3)],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base", required=True, help="base git revision")
    p.add_argument("--pairs", type=int, default=16, help="alternations per task set and policy")
    p.add_argument("--chunk", type=int, default=300, help="steps per turn")
    p.add_argument("--tasksets", nargs="+", default=["general", "webshop"])
    p.add_argument("--policies", nargs="+", default=["expert", "random"], choices=["expert", "random"])
    p.add_argument("--isolate", action="store_true", help="each side in a process of its own (own heap and collector)")
    p.add_argument("--out", type=Path, default=HERE / "results" / "compare_sim_interleaved.json")
    args = p.parse_args(argv)
    base = subprocess.run(["git", "rev-parse", args.base], cwd=REPO, check=True, capture_output=True, text=True).stdout.strip()
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, check=True, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO, capture_output=True, text=True
    ).stdout
    load_start = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory(prefix="digirl-base-") as tmp:
        export_base(base, Path(tmp))
        sys.path.insert(0, tmp)
        sys.path.insert(0, str(REPO))
        for ts in args.tasksets:
            for policy in args.policies:
                row = compare(ts, policy, args.pairs, args.chunk, [tmp, str(REPO)] if args.isolate else None)
                rows.append(row)
                print(
                    f"{ts:8s} {policy:6s} base {row['base_steps_per_cpu_s']:8.1f}  new {row['new_steps_per_cpu_s']:8.1f} "
                    f"steps/CPU-s  ratio {row['ratio']:.2f}x (median of pairs {row['ratio_median_of_pairs']:.2f}x, "
                    f"range {row['ratio_min_max_of_pairs'][0]:.2f}-{row['ratio_min_max_of_pairs'][1]:.2f}); "
                    f"success/episode {row['base_success_per_episode']:.3f} / {row['new_success_per_episode']:.3f}",
                    flush=True,
                )
    res = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        # no policy observes anything here: each step renders the screenshot and extracts the elements
        "observation": "none (scripted expert and random actions; every step renders screenshot + elements)",
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "base": base,
        "new": head + (" (with uncommitted changes)" if dirty else ""),
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpu_count": os.cpu_count(),
            "load_avg_at_start": load_start,
            "load_avg_at_end": os.getloadavg(),
        },
        "resolution": [270, 600],
        "perturbation": 1,
        "isolate": args.isolate,
        "pairs": args.pairs,
        "chunk": args.chunk,
        "results": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
