"""Before/after speed ratios measured side by side: this checkout against a base revision.

The base revision is checked out into a temporary git worktree; the same benchmark scripts (this
checkout's ``bench_sim.py`` and ``bench_collect.py``) then run alternately against both trees
(``PYTHONPATH`` picks the tree, so env worker processes import the same one), in ABBA order so a
drift in machine load hits both sides alike. Each figure is the median over ``--repeats`` rounds;
the ratio is new/base of the medians. On a shared machine, more repeats give steadier ratios.

    python benchmarks/compare/compare_revs.py                              # base: merge-base with main
    python benchmarks/compare/compare_revs.py --base ce8d287 --repeats 7 --suites sim
    python benchmarks/compare/compare_revs.py --suites collect --device cuda --envs 1 4 16 64
    python benchmarks/compare/compare_revs.py --base-tree ../old --base-label 3150a6b   # no git here

Writes benchmarks/results/compare_<device>.json: both revisions, every round's figures, medians
and ratios, with the exact command.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[1]  # benchmarks/
REPO = BENCH.parent


def _git(*args: str, cwd: Path = REPO) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _run_suite(suite: str, tree: Path, args: argparse.Namespace, scratch: Path) -> dict[str, float]:
    """One run of a suite against ``tree``; returns metric name → value."""
    out = scratch / f"{suite}.json"
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1"}
    if suite == "sim":
        cmd = [
            sys.executable,
            str(BENCH / "throughput" / "bench_sim.py"),
            "--steps",
            str(args.sim_steps),
            "--workers",
            "",
            "--out",
            str(out),
        ]
    else:
        cmd = [
            sys.executable,
            str(BENCH / "throughput" / "bench_collect.py"),
            "--episodes",
            str(args.episodes),
            "--device",
            args.device,
        ]
        cmd += ["--frame-stack", str(args.frame_stack), "--out", str(out), "--envs", *map(str, args.envs)]
    proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{suite} on {tree} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    data = json.loads(out.read_text())
    if suite == "sim":
        return {f"sim {r['taskset']} {r['policy']} steps/s (cpu)": float(r["steps_per_s_cpu"]) for r in data["single"]}
    return {f"collect envs={r['envs']} env steps/s": float(r["env_steps_per_s"]) for r in data["collection"]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base", default=None, help="base revision (default: git merge-base HEAD main)")
    p.add_argument("--base-tree", type=Path, default=None, help="an existing checkout of the base (then no git is needed)")
    p.add_argument("--base-label", default=None, help="what to call the base in the JSON (with --base-tree)")
    p.add_argument("--new-label", default=None, help="what to call this checkout in the JSON (default: its git HEAD)")
    p.add_argument("--suites", nargs="+", default=["sim", "collect"], choices=["sim", "collect"])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--sim-steps", type=int, default=3000, help="steps per simulator measurement")
    p.add_argument("--episodes", type=int, default=64, help="timed episodes per collection measurement")
    p.add_argument("--envs", type=int, nargs="+", default=[1, 4, 16])
    p.add_argument("--device", default="cpu")
    p.add_argument("--frame-stack", type=int, default=1)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)

    if args.base_tree is not None:
        base, head = args.base_label or str(args.base_tree), args.new_label or "this checkout"
    else:
        base = _git("rev-parse", args.base or _git("merge-base", "HEAD", "main"))
        head = args.new_label or _git("rev-parse", "HEAD")
        if _git("status", "--porcelain", "--untracked-files=no"):
            head += " (with uncommitted changes)"
    rounds: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="digirl-base-") as tmp:
        base_tree = args.base_tree.resolve() if args.base_tree is not None else Path(tmp) / "tree"
        if args.base_tree is None:
            _git("worktree", "add", "--detach", str(base_tree), base)
        try:
            trees = {"base": base_tree, "new": REPO}
            for r in range(args.repeats):
                order = ["base", "new"] if r % 2 == 0 else ["new", "base"]  # ABBA
                for side in order:
                    for suite in args.suites:
                        with tempfile.TemporaryDirectory() as scratch:
                            t0 = time.monotonic()
                            figures = _run_suite(suite, trees[side], args, Path(scratch))
                        took = round(time.monotonic() - t0, 1)
                        rounds.append({"round": r, "side": side, "suite": suite, "seconds": took, **figures})
                        shown = ", ".join(f"{k.split(' steps')[0]}={v:.1f}" for k, v in figures.items())
                        print(f"round {r} {side:4s} {suite}: {shown}", flush=True)
        finally:
            if args.base_tree is None:
                _git("worktree", "remove", "--force", str(base_tree))

    metrics = sorted({k for row in rounds for k in row if "steps/s" in k})
    summary = {}
    for m in metrics:
        b = [row[m] for row in rounds if row["side"] == "base" and m in row]
        n = [row[m] for row in rounds if row["side"] == "new" and m in row]
        mb, mn = statistics.median(b), statistics.median(n)
        per_round = [x / y for x, y in zip(n, b)]
        summary[m] = {
            "base_median": round(mb, 1),
            "new_median": round(mn, 1),
            "ratio": round(mn / mb, 3),
            "ratio_min_max_of_rounds": [round(min(per_round), 3), round(max(per_round), 3)],
        }
        print(f"{m:45s} base {mb:9.1f}   new {mn:9.1f}   ratio {mn / mb:6.2f}x")
    res = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "base": base,
        "new": head,
        "machine": {
            "platform": platform.platform(),
            "processor": _cpu_name(),
            "python": platform.python_version(),
            "cpu_count": os.cpu_count(),
            "load_avg_at_end": os.getloadavg(),
        },
        "device": args.device,
        "repeats": args.repeats,
        "summary": summary,
        "rounds": rounds,
    }
    out = args.out or BENCH / "results" / f"compare_{args.device.split(':')[0]}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
