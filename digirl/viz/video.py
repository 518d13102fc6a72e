"""Episode videos: one frame per step (the action drawn on the screenshot, the instruction above),
then the final screen with the outcome, written as GIF or MP4 with imageio.

GIF goes through imageio's Pillow plugin (no extra dependency beyond imageio); MP4 through PyAV
(H.264, ``pip install 'digirl[video]'`` installs both).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from digirl.core.types import Trajectory
from digirl.viz.draw import as_image, step_picture

__all__ = ["FORMATS", "episode_frames", "write_episode_video", "write_video"]

FORMATS = ("gif", "mp4")


def _outcome(t: Trajectory) -> str:
    if t.env_failure:
        return f"ENV FAILURE ({t.failure_reason or 'unknown'})"
    return "SUCCESS" if t.success else "FAILED"


def episode_frames(t: Trajectory, *, min_side: int = 420) -> list[np.ndarray]:
    """The frames of ``t`` (needs its screenshots loaded), all of one size.

    Frame i shows step i's screenshot with its action; its caption is the instruction and
    ``step i/n: action, reward r``. The last frame is the final observation (when stored) captioned
    with the outcome. Frames of different sizes are padded to the largest with black.
    """
    n = t.length
    pics: list[Image.Image] = []
    for i, s in enumerate(t.steps):
        shot = s.observation.screenshot
        if shot.size == 0:
            raise ValueError(f"trajectory {t.traj_id}: step {i} has no pixels (was it loaded with load_images=False?)")
        caption = f"{t.task.instruction}\nstep {i + 1}/{n}: {s.action}, reward {s.reward:g}"
        pics.append(step_picture(shot, s.action, caption=caption, min_side=min_side))
    last = t.final_observation.screenshot if t.final_observation is not None else None
    if last is not None and last.size:
        pics.append(
            step_picture(last, None, caption=f"{t.task.instruction}\nend after {n} steps: {_outcome(t)}", min_side=min_side)
        )
    elif pics:  # no final screen: hold the last frame with the outcome
        shot = t.steps[-1].observation.screenshot
        pics.append(
            step_picture(shot, None, caption=f"{t.task.instruction}\nend after {n} steps: {_outcome(t)}", min_side=min_side)
        )
    if not pics:
        raise ValueError(f"trajectory {t.traj_id} has no steps and no final screenshot: nothing to show")
    return _same_size(pics)


def _same_size(pics: Sequence[Image.Image], even: bool = True) -> list[np.ndarray]:
    w = max(p.width for p in pics)
    h = max(p.height for p in pics)
    if even:  # H.264 in yuv420p needs even sides
        w, h = w + w % 2, h + h % 2
    out = []
    for p in pics:
        if p.size != (w, h):
            canvas = Image.new("RGB", (w, h), (0, 0, 0))
            canvas.paste(p, (0, 0))
            p = canvas
        out.append(np.asarray(p, dtype=np.uint8))
    return out


def _imageio() -> Any:
    try:
        import imageio.v3 as iio
    except ImportError as e:
        raise ModuleNotFoundError("episode videos need imageio: pip install 'digirl[video]'") from e
    return iio


def write_video(frames: Sequence[np.ndarray], path: str | Path, *, fps: float = 1.0, fmt: str | None = None) -> Path:
    """Write ``frames`` (uint8 H×W×3, all one size) to ``path`` as GIF or MP4 (``fmt`` or the suffix)."""
    path = Path(path)
    fmt = (fmt or path.suffix.lstrip(".")).lower()
    if fmt not in FORMATS:
        raise ValueError(f"video format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if not frames:
        raise ValueError("no frames to write")
    if not fps > 0:
        raise ValueError(f"fps must be > 0, got {fps}")
    stack = np.stack([np.asarray(as_image(f)) for f in frames])
    iio = _imageio()
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "gif":
        iio.imwrite(path, stack, extension=".gif", duration=round(1000 / fps), loop=0)
    else:
        try:
            import av  # noqa: F401  (imageio's pyav plugin needs it)
        except ImportError as e:
            raise ModuleNotFoundError("MP4 needs PyAV: pip install 'digirl[video]' (or use --format gif)") from e
        if stack.shape[1] % 2 or stack.shape[2] % 2:
            stack = np.pad(stack, ((0, 0), (0, stack.shape[1] % 2), (0, stack.shape[2] % 2), (0, 0)))
        iio.imwrite(path, stack, extension=".mp4", plugin="pyav", codec="libx264", fps=fps)
    return path


def write_episode_video(
    t: Trajectory, path: str | Path, *, fps: float = 1.0, fmt: str | None = None, min_side: int = 420
) -> Path:
    """:func:`episode_frames` of ``t`` written to ``path`` (see :func:`write_video`)."""
    return write_video(episode_frames(t, min_side=min_side), path, fps=fps, fmt=fmt)
