"""A static Q/V report of a Digi-Q run: HTML + PNG, readable without any server.

Per trajectory: a chart of V(s_h), Q(s_h, a_h) and Q − V per step; per step: the screenshot with every
candidate drawn (a numbered dot for a tap, an arrow for a swipe; green for a positive advantage, red
for a negative one, a thick ring on the candidate best-of-N chose) and a table of the candidates with
Q, V, Q − V, the Yes/No label and, when computed, the true value (``digirl digiq oracle``).
"""

from __future__ import annotations

import html
import logging
from pathlib import Path
from typing import Any

import numpy as np

from digirl.core.actions import Action, ActionType
from digirl.core.codecs import action_from_dict
from digirl.data.annotations import StepAnnotation

__all__ = ["draw_candidates", "write_report"]

log = logging.getLogger(__name__)


def _color(adv: float) -> tuple[int, int, int]:
    a = max(-1.0, min(1.0, adv * 4))  # ±0.25 advantage saturates
    return (int(200 * max(0.0, -a)) + 30, int(170 * max(0.0, a)) + 30, 40)


def draw_candidates(screenshot: np.ndarray, candidates: list[dict[str, Any]], chosen: int | None, scale: int = 2) -> np.ndarray:
    """The screenshot (enlarged ×``scale``) with each candidate drawn and numbered."""
    from PIL import Image, ImageDraw, ImageFont

    img = Image.fromarray(screenshot).resize((screenshot.shape[1] * scale, screenshot.shape[0] * scale), Image.Resampling.NEAREST)
    draw = ImageDraw.Draw(img)
    w, h = img.size
    font = ImageFont.load_default(size=12 * scale) if hasattr(ImageFont, "load_default") else None
    side = 0
    for j, c in enumerate(candidates):
        a = action_from_dict(c["action"])
        col = _color(float(c.get("advantage", 0.0)))
        r = 7 * scale
        if a.type is ActionType.DUAL_POINT:
            assert a.touch is not None and a.lift is not None
            x0, y0 = a.touch[0] * (w - 1), a.touch[1] * (h - 1)
            if a.is_swipe:
                x1, y1 = a.lift[0] * (w - 1), a.lift[1] * (h - 1)
                draw.line((x0, y0, x1, y1), fill=col, width=2 * scale)
                draw.ellipse((x1 - r / 2, y1 - r / 2, x1 + r / 2, y1 + r / 2), fill=col)
            else:
                draw.ellipse((x0 - r, y0 - r, x0 + r, y0 + r), fill=col, outline=(255, 255, 255))
            if j == chosen:
                draw.ellipse((x0 - 2 * r, y0 - 2 * r, x0 + 2 * r, y0 + 2 * r), outline=(20, 20, 230), width=3 * scale)
            draw.text((x0 + r, y0 - r), str(j), fill=(0, 0, 0), font=font, stroke_width=2, stroke_fill=(255, 255, 255))
        else:  # keys, typing, status: a numbered tag along the left edge
            y = 40 * scale + side * 18 * scale
            side += 1
            label = f"{j}: {a}"[:28]
            draw.rectangle(
                (2, y - 2, 2 + 9 * len(label) * scale // 2 + 8, y + 14 * scale), fill=(255, 255, 255), outline=col, width=2
            )
            draw.text((6, y), label, fill=col, font=font)
    return np.asarray(img)


def _fmt(x: Any) -> str:
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "Yes" if x else "No"
    if isinstance(x, float):
        return f"{x:.3f}"
    return html.escape(str(x))


def _chart(rows: list[StepAnnotation], path: Path, title: str) -> None:
    steps = [r.step for r in rows]
    v = [r.value or 0.0 for r in rows]
    q = [r.q or 0.0 for r in rows]
    adv = [(r.q or 0.0) - (r.value or 0.0) for r in rows]
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ModuleNotFoundError:
        from digirl.training.plot import line_chart

        series = {
            "V(s)": list(zip(steps, v)),
            "Q(s, a)": list(zip(steps, q)),
            "Q - V (+0.5)": [(s, a + 0.5) for s, a in zip(steps, adv)],
        }
        line_chart(series, path, x_label="step", title=title)
        return
    fig, ax = plt.subplots(figsize=(5.5, 2.8))
    ax.plot(steps, v, marker="o", label="V(s)")
    ax.plot(steps, q, marker="s", label="Q(s, a_data)")
    ax.bar(steps, adv, alpha=0.35, color="grey", label="Q − V")
    ax.axhline(0, color="black", lw=0.5)
    ax.set_xlabel("step")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def write_report(
    run_dir: str | Path, *, out: str | Path | None = None, trajectories: int = 6, dataset: str | None = None
) -> Path:
    """Write ``OUT/index.html`` (default ``RUN/digiq-report``) for the first ``trajectories`` annotated
    trajectories (held-out ones first); returns its path."""
    from PIL import Image

    from digirl.algorithms.digiq.sidecar import Sidecar
    from digirl.config.core import load_config
    from digirl.data.annotations import ANNOTATIONS_DIR, read_annotations
    from digirl.data.store import TrajectoryStore
    from digirl.training.config import TrainConfig

    run = Path(run_dir)
    cfg = load_config(TrainConfig, preset=str(run / "config.yaml")) if (run / "config.yaml").is_file() else None
    data_path = dataset or (cfg.offline_dataset if cfg is not None else None)
    if not data_path:
        raise ValueError(f"{run}: no offline dataset known; pass --dataset")
    notes = read_annotations(run / ANNOTATIONS_DIR)
    if not notes:
        raise ValueError(f"{run}: no annotations (train the run first)")
    by_traj: dict[str, list[StepAnnotation]] = {}
    for a in notes:
        by_traj.setdefault(a.traj_id, []).append(a)
    oracle: dict[tuple[str, int, int], float] = {}
    if cfg is not None and cfg.algo.digiq.data and (Path(cfg.algo.digiq.data) / "oracle" / "expert").is_dir():
        from digirl.experiments.digiq_oracle import load_oracle

        oracle = load_oracle(Sidecar(cfg.algo.digiq.data), "expert")
    order = sorted(by_traj, key=lambda t: not any(a.extra.get("heldout") for a in by_traj[t]))[:trajectories]
    trajs = {t.traj_id: t for t in TrajectoryStore(data_path, create=False).iter_trajectories() if t.traj_id in set(order)}
    out_dir = Path(out) if out is not None else run / "digiq-report"
    (out_dir / "img").mkdir(parents=True, exist_ok=True)
    parts = [
        "<!doctype html><meta charset='utf-8'><title>Digi-Q report</title>",
        "<style>body{font-family:sans-serif;margin:1em}table{border-collapse:collapse;font-size:12px}"
        "td,th{border:1px solid #ccc;padding:2px 6px}.step{display:flex;gap:1em;margin:1em 0}"
        ".kept{background:#e6f4e6}</style>",
        f"<h1>Digi-Q: Q and V of {html.escape(str(run))}</h1>",
        "<p>Per step: V(s), Q(s, a) and Q − V of every candidate (0 = the dataset action). "
        "Green: positive advantage; red: negative; blue ring: best-of-N's choice. "
        "A step is kept (behaviour-cloned) when the chosen advantage exceeds δ.</p>",
    ]
    for tid in order:
        t = trajs.get(tid)
        if t is None:
            continue
        rows = sorted((a for a in by_traj[tid] if a.step >= 0), key=lambda a: a.step)
        held = any(a.extra.get("heldout") for a in rows)
        title = f"{t.task.instruction} — {'success' if t.success else 'failure'}{' (held out)' if held else ''}"
        _chart(rows, out_dir / "img" / f"{tid}.png", title[:90])
        parts.append(f"<h2>{html.escape(title)}</h2><img src='img/{tid}.png'>")
        for a in rows:
            if a.step >= len(t.steps):
                continue
            cands = a.extra.get("candidates") or []
            chosen = a.extra.get("chosen")
            img = draw_candidates(t.steps[a.step].observation.screenshot, cands, chosen)
            name = f"{tid}-{a.step}.png"
            Image.fromarray(img).save(out_dir / "img" / name)
            head = "<tr><th>#</th><th>action</th><th>Q</th><th>V</th><th>Q − V</th><th>label</th><th>true value</th></tr>"
            body = []
            for j, c in enumerate(cands):
                act: Action = action_from_dict(c["action"])
                cls = " class='kept'" if j == chosen and a.kept else ""
                body.append(
                    f"<tr{cls}><td>{j}{' ★' if j == chosen else ''}</td><td>{html.escape(str(act))}</td>"
                    f"<td>{_fmt(c.get('q'))}</td><td>{_fmt(a.value)}</td><td>{_fmt(c.get('advantage'))}</td>"
                    f"<td>{_fmt(c.get('label'))}</td><td>{_fmt(oracle.get((tid, a.step, j)))}</td></tr>"
                )
            parts.append(
                f"<div class='step'><img src='img/{name}' width='270'><div><b>step {a.step}</b> · "
                f"reward {t.steps[a.step].reward:g} · kept: {_fmt(a.kept)}<table>{head}{''.join(body)}</table></div></div>"
            )
    index = out_dir / "index.html"
    index.write_text("\n".join(parts))
    return index
