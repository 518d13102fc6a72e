"""The viewer's Gradio interface: filters and a paged list of trajectories; for the opened one, its
steps as thumbnails and a table of V/Q/advantage/kept, and one step in full (the screenshot with the
action drawn, the model's raw text, the learner's numbers, Digi-Q's candidates drawn with their Q).

Gradio is imported inside :func:`build_app` (the ``viewer`` extra); nothing here runs at import.
"""

from __future__ import annotations

import logging
import os
from collections import OrderedDict
from types import SimpleNamespace
from typing import Any

from PIL import Image

from digirl.core.types import Trajectory
from digirl.viewer.source import ALL, Filters, Row, ViewerSource

__all__ = ["PAGE_SIZE", "build_app", "launch"]

log = logging.getLogger(__name__)

PAGE_SIZE = 25
THUMB_HEIGHT = 240


def _gradio() -> Any:
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # no calls home
    try:
        import gradio as gr
    except ImportError as e:
        raise ModuleNotFoundError("the viewer needs Gradio: pip install 'digirl[viewer]'") from e
    return gr


def _thumb(img: Image.Image) -> Image.Image:
    scale = THUMB_HEIGHT / img.height
    return img.resize((max(1, round(img.width * scale)), THUMB_HEIGHT), Image.Resampling.BILINEAR) if scale < 1 else img


def _trajectory_note(note: Any, ann: str) -> str:
    """The whole-trajectory annotation (``step = -1``: DigiRL's instruction value and curriculum decision)."""
    if note is None:
        return ""
    parts = [] if note.value is None else [f"value {note.value:.3f}"]
    parts += [f"{k} {v}" for k, v in sorted(note.extra.items())]
    return f"\n\nupdate {ann}, whole trajectory: " + " · ".join(parts) if parts else ""


class _Callbacks:
    """What the app's events call: functions of the source, with the last few opened trajectories cached."""

    def __init__(self, gr: Any, src: ViewerSource, page_size: int) -> None:
        self.gr, self.src, self.page_size = gr, src, page_size
        self.cache: OrderedDict[str, Trajectory] = OrderedDict()

    def get(self, traj_id: str) -> Trajectory:
        if traj_id not in self.cache:
            self.cache[traj_id] = self.src.trajectory(traj_id)
            while len(self.cache) > 8:  # screenshots of a few trajectories, not of the dataset
                self.cache.popitem(last=False)
        self.cache.move_to_end(traj_id)
        return self.cache[traj_id]

    def notes(self, ann: str) -> Any:
        return self.src.notes(int(ann)) if ann and ann.isdigit() else {}

    def listing(self, text: str, family: str, outcome: str, iteration: str, split: str, page: float) -> tuple[Any, ...]:
        src = self.src
        rows = src.filter(Filters(text or "", family or ALL, outcome or ALL, iteration or ALL, split or ALL))
        shown, p, pages = src.page(rows, int(page or 1), self.page_size)
        count = f"**{len(rows)}** of {len(src.rows)} trajectories match · page {p} of {pages}"
        return src.table(shown), count, p, [r.row.traj_id for r in shown]

    def first_page(self, t: str, f: str, o: str, i: str, s: str) -> tuple[Any, ...]:
        return self.listing(t, f, o, i, s, 1)

    def turn(self, delta: int) -> Any:
        def go(t: str, f: str, o: str, i: str, s: str, p: float) -> tuple[Any, ...]:
            return self.listing(t, f, o, i, s, (p or 1) + delta)

        return go

    def step_outputs(self, traj_id: str, i: float, ann: str) -> tuple[Any, ...]:
        hidden = self.gr.update(value=None, visible=False), self.gr.update(value=[], visible=False)
        if not traj_id:
            return None, "", *hidden
        t = self.get(traj_id)
        if not t.steps:
            return None, "this trajectory has no steps", *hidden
        d = self.src.step(t, min(max(0, int(i or 0)), t.length - 1), self.notes(ann))
        has = d.candidates is not None
        return (
            d.picture,
            d.markdown,
            self.gr.update(value=d.candidates, visible=has),
            self.gr.update(value=d.candidate_rows, visible=has),
        )

    def open_traj(self, traj_id: str, ann: str) -> tuple[Any, ...]:
        gr, src = self.gr, self.src
        traj_id = (traj_id or "").strip()
        try:
            t = self.get(traj_id)
        except (KeyError, ValueError) as e:  # nothing opened yet, or a mistyped id
            return (traj_id, f"⚠ {e}" if traj_id else "", [], [], gr.update(value=0, maximum=1), *self.step_outputs("", 0, ann))
        r: Row = next(x for x in src.rows if x.row.traj_id == traj_id)
        n = self.notes(ann)
        info = (
            f"### {t.task.instruction}\n`{t.traj_id}` · {r.source} · family {t.task.family or '–'} · split {t.task.split or '–'}"
            f" · iteration {r.iteration_label} · {t.length} steps · reward {t.reward:g} · **{r.row.outcome}**"
            + (f" · policy version {t.policy_version}" if t.policy_version is not None else "")
            + (f"\n\nenv failure: {t.failure_reason}" if t.env_failure else "")
            + _trajectory_note(n.get((traj_id, -1)), ann)
        )
        gallery = [(_thumb(src.step(t, i, {}).picture), f"{i + 1}: {s.action}") for i, s in enumerate(t.steps)]
        if t.final_observation is not None and t.final_observation.screenshot.size:
            gallery.append((_thumb(Image.fromarray(t.final_observation.screenshot)), "final screen"))
        slider = gr.update(value=0, minimum=0, maximum=max(1, t.length - 1), interactive=t.length > 1)
        return (traj_id, info, gallery, src.step_table(t, n), slider, *self.step_outputs(traj_id, 0, ann))


def _layout(gr: Any, src: ViewerSource, iterations: list[int]) -> SimpleNamespace:
    """The page's components, top to bottom: filters, the paged list, the opened trajectory, one step."""
    ui = SimpleNamespace()
    gr.Markdown(
        f"## digirl view · `{src.path}`\n{src.kind} · {len(src.rows)} trajectories"
        + (f" ({', '.join(f'{k}: {len(v)}' for k, v in src.indexes.items())})" if src.kind == "run" else "")
        + (f" · annotations of updates {iterations[0]}–{iterations[-1]}" if iterations else " · no annotations")
    )
    with gr.Row():
        ui.text = gr.Textbox(label="task text (or traj_id)", elem_id="f-text", scale=3)
        ui.family = gr.Dropdown(src.choices("family"), value=ALL, label="family", elem_id="f-family")
        ui.outcome = gr.Dropdown(src.choices("outcome"), value=ALL, label="success", elem_id="f-outcome")
        ui.iteration = gr.Dropdown(src.choices("iteration"), value=ALL, label="iteration", elem_id="f-iteration")
        ui.split = gr.Dropdown(src.choices("split"), value=ALL, label="split", elem_id="f-split")
    ui.count = gr.Markdown(elem_id="match-count")
    ui.table = gr.Dataframe(
        headers=ViewerSource.TABLE_HEADERS,
        interactive=False,
        wrap=True,
        column_widths=["17%", "37%", "11%", "6%", "8%", "6%", "6%", "9%"],
        elem_id="traj-table",
    )
    with gr.Row():
        ui.prev_btn = gr.Button("◀ previous page", size="sm", elem_id="prev-page")
        ui.page = gr.Number(value=1, precision=0, label="page", minimum=1, elem_id="page")
        ui.next_btn = gr.Button("next page ▶", size="sm", elem_id="next-page")
    ui.page_ids = gr.State([])
    ann_choices = [str(i) for i in iterations] or ["none"]
    with gr.Row():
        ui.traj_box = gr.Textbox(label="trajectory (click a row above, or paste its traj_id)", elem_id="traj-id", scale=3)
        ui.open_btn = gr.Button("open", elem_id="open-traj")
        ui.ann = gr.Dropdown(ann_choices, value=ann_choices[-1], label="numbers of update", elem_id="ann-iter")
    ui.traj_info = gr.Markdown(elem_id="traj-info")
    ui.gallery = gr.Gallery(label="steps", columns=8, height=300, allow_preview=False, elem_id="steps-gallery")
    ui.steps_table = gr.Dataframe(headers=ViewerSource.STEP_HEADERS, interactive=False, elem_id="steps-table")
    ui.step = gr.Slider(0, 1, value=0, step=1, label="step", elem_id="step-slider")
    with gr.Row():
        ui.picture = gr.Image(type="pil", label="screenshot and action", elem_id="step-image", height=640)
        with gr.Column():
            ui.step_md = gr.Markdown(elem_id="step-info")
            ui.cand_img = gr.Image(type="pil", label="candidates, coloured by Q", visible=False, elem_id="cand-image", height=480)
            ui.cand_table = gr.Dataframe(
                headers=ViewerSource.CANDIDATE_HEADERS, interactive=False, visible=False, elem_id="cand-table"
            )
    return ui


def _wire(gr: Any, app: Any, ui: SimpleNamespace, cb: _Callbacks) -> None:
    """Which event calls which callback, with which inputs and outputs."""
    filters = [ui.text, ui.family, ui.outcome, ui.iteration, ui.split]
    list_out = [ui.table, ui.count, ui.page, ui.page_ids]
    step_out = [ui.picture, ui.step_md, ui.cand_img, ui.cand_table]
    traj_out = [ui.traj_box, ui.traj_info, ui.gallery, ui.steps_table, ui.step, *step_out]

    for comp in filters:
        comp.change(cb.first_page, filters, list_out)
    ui.page.submit(cb.listing, [*filters, ui.page], list_out)
    ui.prev_btn.click(cb.turn(-1), [*filters, ui.page], list_out)
    ui.next_btn.click(cb.turn(+1), [*filters, ui.page], list_out)

    def pick(ids: list[str], a: str, evt: Any) -> tuple[Any, ...]:
        row = evt.index[0] if isinstance(evt.index, (list, tuple)) else evt.index
        return cb.open_traj(ids[row] if 0 <= row < len(ids) else "", a)

    def pick_step(evt: Any) -> int:
        return int(evt.index if not isinstance(evt.index, (list, tuple)) else evt.index[0])

    # Gradio passes the event data to a parameter annotated with gr.SelectData (a runtime annotation).
    pick.__annotations__["evt"] = gr.SelectData
    pick_step.__annotations__["evt"] = gr.SelectData

    ui.table.select(pick, [ui.page_ids, ui.ann], traj_out)
    for event in (ui.open_btn.click, ui.traj_box.submit, ui.ann.change):
        event(cb.open_traj, [ui.traj_box, ui.ann], traj_out)
    ui.step.change(cb.step_outputs, [ui.traj_box, ui.step, ui.ann], step_out)
    ui.gallery.select(pick_step, None, ui.step)
    app.load(cb.first_page, filters, list_out)


def build_app(src: ViewerSource, *, page_size: int = PAGE_SIZE) -> Any:
    """The Gradio Blocks app for ``src`` (not launched)."""
    gr = _gradio()
    iterations = src.annotation_iterations()
    with gr.Blocks(title=f"digirl view · {src.path.name}") as app:
        ui = _layout(gr, src, iterations)
        _wire(gr, app, ui, _Callbacks(gr, src, page_size))
    return app


def launch(
    src: ViewerSource,
    *,
    host: str = "127.0.0.1",
    port: int | None = None,
    auth: tuple[str, str] | None = None,
    block: bool = True,
) -> Any:
    """Serve the viewer; ``block=False`` returns the running app (``app.close()`` stops it)."""
    app = build_app(src)
    app.launch(
        server_name=host,
        server_port=port,
        auth=auth,
        share=False,
        inbrowser=False,
        quiet=True,
        prevent_thread_lock=not block,
    )
    return app
