"""``digirl data``: inspect, validate and export trajectory datasets."""

from __future__ import annotations

import argparse
from typing import Any

from digirl.cli.common import add_command, add_group, arg, emit_json

_DATASET = arg("path", help="dataset folder (holds meta.json)")


def add_commands(sub: Any) -> None:
    """Register ``digirl data info | check | export-hf | export-video | import-legacy``."""
    dsub = add_group(sub, "data", "inspect, validate and export trajectory datasets", "digirl data info runs/demo/data")
    add_command(
        dsub,
        "info",
        "summarize a dataset: trajectories, steps, success rate, env failures, families, tasks, size; "
        "warns, and exits with code 1, on what `data check` would fail that shows without reading images "
        "(an unreadable or truncated shard, a traj_id stored twice); the summary then covers the sound shards",
        "digirl data info runs/demo/data --top 5",
        _info,
        _DATASET,
        arg("--top", type=int, default=10, help="how many tasks to list (default 10)"),
    )
    add_command(
        dsub,
        "check",
        "validate every shard, row and screenshot; exit code 1 if anything is wrong",
        "digirl data check runs/demo/data",
        _check,
        _DATASET,
    )
    add_command(
        dsub,
        "export-hf",
        "export as a Hugging Face datasets folder (one row per step, embedded screenshots)",
        "digirl data export-hf runs/demo/data exports/demo-hf",
        _export,
        _DATASET,
        arg("out", help="output folder (must not exist or be empty)"),
        arg("--exclude-failures", action="store_true", help="leave env-failure trajectories out"),
        arg("--rows-per-file", type=int, default=2000, help="steps per Parquet file (default 2000)"),
    )
    add_command(
        dsub,
        "export-video",
        "write episodes as GIF or MP4: each step's screenshot with its action drawn, the instruction as caption",
        "digirl data export-video runs/demo/data --episodes 0:3,failures --format mp4 --out videos/",
        _export_video,
        _DATASET,
        arg(
            "--episodes",
            default="0:5",
            help="comma-separated traj_ids, 0-based indices, A:B ranges, 'failures', 'successes' or 'all' (default 0:5)",
        ),
        arg("--format", choices=("gif", "mp4"), default="gif", help="gif (imageio + Pillow) or mp4 (H.264 via PyAV)"),
        arg("--out", required=True, help="folder for the videos (TRAJ_ID.gif / .mp4)"),
        arg("--fps", type=float, default=1.0, help="frames (steps) per second (default 1)"),
        arg("--limit", type=int, default=50, help="write at most this many videos (default 50)"),
    )
    add_command(
        dsub,
        "import-legacy",
        "import a DigiRL / Digi-Q released trajectory file (.pt pickle) safely: an allowlist loader, never their code",
        "digirl data import-legacy general_offline.pt --images aitw_images/ data/general-offline --family general",
        _import_legacy,
        arg("file", help="the released .pt (torch.save) or pickle file: a list of trajectories of step dicts"),
        arg("out", help="dataset folder to create (or append to)"),
        arg("--images", required=True, help="folder holding the screenshots; image paths are matched by file name"),
        arg("--family", default="", help="task family written for every trajectory (e.g. general, webshop)"),
        arg("--split", default="", help="task split written for every trajectory (e.g. train)"),
        arg("--env-id", default="", help="env id written into the tasks (default: none)"),
        arg(
            "--missing",
            choices=("skip", "blank"),
            default="skip",
            help="a trajectory with a missing or unreadable screenshot: skip it (default) or put a black frame there",
        ),
        arg("--max-side", type=int, default=None, help="downscale screenshots whose longer side exceeds this"),
    )


def _human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover - loop always returns


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _info(args: argparse.Namespace) -> int:
    from digirl.data.store import TrajectoryStore

    store = TrajectoryStore(args.path, create=False)
    bad = store.quick_check()
    problems = [line for sid in sorted(bad, key=int) for line in bad[sid]]
    s = store.summary(shards=[sid for sid in store.shard_ids() if sid not in bad])
    if args.json:
        emit_json(s | {"problems": problems})
        return 1 if problems else 0
    _print_summary(s, args.top)
    if problems:
        import sys

        for line in problems:
            print(f"warning: {line}", file=sys.stderr)
        print(
            f"warning: {len(problems)} problem(s) in {len(bad)} shard(s) of {args.path}; the summary above leaves "
            f"those shards out; run `digirl data check {args.path}` for a full check",
            file=sys.stderr,
        )
        return 1
    return 0


def _print_summary(s: dict[str, Any], top: int) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    t = Table(title=f"dataset {s['path']}", show_header=False)
    t.add_column("field")
    t.add_column("value", justify="right")
    mean_len = "n/a" if s["mean_length"] is None else f"{s['mean_length']:.2f}"
    for k, v in (
        ("trajectories", s["trajectories"]),
        ("steps", s["steps"]),
        ("success rate", f"{_pct(s['success_rate'])} ({s['successes']} successes)"),
        ("env failures", s["env_failures"]),
        ("mean length", mean_len),
        ("shards", s["shards"]),
        ("size on disk", _human_bytes(s["size_bytes"])),
        ("schema version", s["schema_version"]),
        ("written by digirl", s["digirl_version"]),
        ("created", s["created"]),
    ):
        t.add_row(k, str(v))
    for k, v in s["info"].items():
        t.add_row(f"info.{k}", str(v))
    console.print(t)
    for title, groups, limit in (("per family", s["families"], None), ("top tasks", s["tasks"], top)):
        if not groups:
            continue
        g = Table(title=title)
        for col in ("name", "trajectories", "env failures", "success rate"):
            g.add_column(col, justify="left" if col == "name" else "right")
        for name, v in list(groups.items())[:limit]:
            g.add_row(name or "(none)", str(v["trajectories"]), str(v["env_failures"]), _pct(v["success_rate"]))
        console.print(g)


def _check(args: argparse.Namespace) -> int:
    import sys

    from digirl.core.errors import DataError
    from digirl.data.store import TrajectoryStore

    try:
        store = TrajectoryStore(args.path, create=False)
        problems = store.check()
        n = len(store.trajectory_ids()) if not problems else None
    except DataError as e:  # the dataset itself (meta.json) is unusable
        problems, n = [str(e)], None
    if args.json:
        emit_json({"path": args.path, "ok": not problems, "problems": problems, "trajectories": n})
    elif problems:
        for line in problems:
            print(line, file=sys.stderr)
        print(f"{len(problems)} problem(s) found in {args.path}", file=sys.stderr)
    else:
        print(f"ok: {args.path} ({n} trajectories, every shard and screenshot readable)")
    return 1 if problems else 0


def _export(args: argparse.Namespace) -> int:
    from digirl.data.hf import export_hf
    from digirl.data.store import TrajectoryStore

    store = TrajectoryStore(args.path, create=False)
    result = export_hf(store, args.out, include_failures=not args.exclude_failures, rows_per_file=args.rows_per_file)
    if args.json:
        emit_json(result)
    else:
        print(
            f"exported {result['rows']} steps of {result['trajectories']} trajectories "
            f"into {result['files']} file(s) at {result['path']}"
        )
    return 0


def _export_video(args: argparse.Namespace) -> int:
    from pathlib import Path

    from digirl.data.browse import DatasetIndex, select_episodes
    from digirl.viz.video import write_episode_video

    index = DatasetIndex(args.path)
    rows = select_episodes(index.rows, args.episodes)[: max(0, args.limit)]
    out = Path(args.out)
    written = []
    for r in rows:
        path = write_episode_video(index.trajectory(r.traj_id), out / f"{r.traj_id}.{args.format}", fps=args.fps)
        written.append({"traj_id": r.traj_id, "path": str(path), "steps": r.length, "outcome": r.outcome})
        if not args.json:
            print(f"{path}  ({r.length} steps, {r.outcome}): {r.instruction}")
    if args.json:
        emit_json({"videos": written})
    elif not written:
        print("no episodes selected")
    return 0


def _import_legacy(args: argparse.Namespace) -> int:
    from digirl.data.legacy import import_legacy

    rep = import_legacy(
        args.file,
        args.images,
        args.out,
        family=args.family,
        split=args.split,
        env_id=args.env_id,
        on_missing=args.missing,
        max_side=args.max_side,
    )
    if args.json:
        emit_json(rep.to_dict() | {"out": args.out})
        return 0
    print(
        f"imported {rep.imported} of {rep.trajectories_in_file} trajectories ({rep.steps} steps) into {args.out}; "
        f"{rep.invalid_actions} actions unparseable (kept as INVALID), {rep.with_candidates} trajectories with candidates"
    )
    if rep.skipped_missing_images or rep.blank_images:
        skip = args.missing == "skip"
        what = f"skipped {rep.skipped_missing_images} trajectories" if skip else f"{rep.blank_images} black frames"
        print(f"missing screenshots: {what}; first missing: {', '.join(rep.missing_images[:5])}")
    if rep.skipped_empty:
        print(f"skipped {rep.skipped_empty} empty trajectories")
    if rep.dropped_keys:
        print(f"not stored: {', '.join(rep.dropped_keys)}")
    return 0
