"""Screen ⇄ model-image geometry: what the processor does to a screenshot, inverted exactly.

A screenshot of W×H pixels becomes the model's image in up to three steps, each an axis-aligned
affine map: an optional downscale (``max_image_pixels``), an optional padding onto a canvas of
the processor's aspect ratio (for processors that center-crop, which would cut the screen), and
the processor's own resize (Qwen's "smart resize" to multiples of 28 px, a fixed square, ...).
:class:`ImageGeometry` records the sizes of every step and turns them into the
:class:`~digirl.core.codecs.CoordFrame` the model writes in, so a point the model names maps back
to the screen point it looked at, at any screen size. Only numpy and Pillow are used here.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image

from digirl.core.codecs import CoordFrame
from digirl.utils.images import resize

__all__ = ["ImageGeometry", "crops_center", "model_image_size", "prepare_image"]


@dataclass(frozen=True)
class ImageGeometry:
    """Sizes (width, height) of a screenshot at each step on its way into the model."""

    screen: tuple[int, int]
    #: After the optional downscale.
    scaled: tuple[int, int]
    #: The canvas the scaled screenshot is pasted on (== ``scaled`` without padding).
    canvas: tuple[int, int]
    #: Where the scaled screenshot's top-left corner sits on the canvas.
    offset: tuple[int, int]
    #: The image the model sees (the processor's output size), when the processor's resize is known.
    model: tuple[int, int] | None = None

    def frame(self, coords: str) -> CoordFrame:
        """The frame of ``coords`` (``normalized``, ``pixels`` or ``grid1000``): written = scale·screen + offset."""
        (sw, sh), (cw, ch), (ox, oy) = self.scaled, self.canvas, self.offset
        # Screen fraction u lands at canvas pixel u·sw + ox, i.e. canvas fraction (u·sw + ox) / cw.
        fx, fy, gx, gy = sw / cw, sh / ch, ox / cw, oy / ch
        if coords == "normalized":
            return CoordFrame(fx, fy, gx, gy)
        if coords == "grid1000":
            return CoordFrame(1000 * fx, 1000 * fy, 1000 * gx, 1000 * gy, integer=True)
        if coords == "pixels":
            if self.model is None:
                raise ValueError(
                    "coords=pixels needs the size of the image the model sees, which this processor does not "
                    "report; use coords=normalized or grid1000"
                )
            mw, mh = self.model
            return CoordFrame(mw * fx, mh * fy, mw * gx, mh * gy, integer=True)
        raise ValueError(f"unknown coords {coords!r}; expected normalized, pixels or grid1000")


def _get(size: Any, name: str) -> Any:
    """A field of a processor's size spec (a dict, or transformers' ``SizeDict``)."""
    if size is None:
        return None
    if isinstance(size, dict):
        return size.get(name)
    return getattr(size, name, None)


def _fixed(size: Any) -> tuple[int, int] | None:
    w, h = _get(size, "width"), _get(size, "height")
    return (int(w), int(h)) if w and h else None


def crops_center(image_processor: Any) -> tuple[int, int] | None:
    """(width, height) of the center crop the processor applies, or ``None`` when it does not crop."""
    if not getattr(image_processor, "do_center_crop", False):
        return None
    return _fixed(getattr(image_processor, "crop_size", None))


def model_image_size(image_processor: Any, width: int, height: int) -> tuple[int, int] | None:
    """(width, height) of the image the processor makes from a ``width``×``height`` input, if known.

    Qwen-VL processors: their own ``smart_resize`` with their patch and merge sizes and pixel
    bounds (the function the processor itself calls, so the result is exact). Processors with a
    fixed output (a center crop or a fixed height × width): that size.
    """
    fn = getattr(sys.modules.get(type(image_processor).__module__), "smart_resize", None)
    patch, merge = getattr(image_processor, "patch_size", None), getattr(image_processor, "merge_size", None)
    if callable(fn) and isinstance(patch, int) and isinstance(merge, int):
        size = getattr(image_processor, "size", None)
        lo = _get(size, "shortest_edge") or getattr(image_processor, "min_pixels", None)
        hi = _get(size, "longest_edge") or getattr(image_processor, "max_pixels", None)
        kw = {k: v for k, v in (("min_pixels", lo), ("max_pixels", hi)) if v is not None}
        h, w = fn(height, width, factor=patch * merge, **kw)
        return (int(w), int(h))
    crop = crops_center(image_processor)
    if crop is not None:
        return crop
    return _fixed(getattr(image_processor, "size", None))


def prepare_image(
    screenshot: np.ndarray,
    *,
    max_pixels: int = 0,
    pad_aspect: float | None = None,
    fill: tuple[int, int, int] = (0, 0, 0),
) -> tuple[Image.Image, ImageGeometry]:
    """The image handed to the processor and its geometry (``model`` is filled in by the caller).

    ``max_pixels`` > 0 downscales (keeping the aspect ratio) to at most that many pixels;
    ``pad_aspect`` (width / height) pads the screenshot, centred, onto a canvas of that aspect.
    """
    h, w = int(screenshot.shape[0]), int(screenshot.shape[1])
    img = Image.fromarray(screenshot)
    sw, sh = w, h
    if max_pixels and w * h > max_pixels:
        s = math.sqrt(max_pixels / (w * h))
        sw, sh = max(1, int(w * s)), max(1, int(h * s))
        img = resize(img, (sw, sh), Image.Resampling.BICUBIC)
    cw, ch, ox, oy = sw, sh, 0, 0
    if pad_aspect is not None and pad_aspect > 0:
        if sw / sh < pad_aspect:
            cw = max(sw, round(sh * pad_aspect))
        else:
            ch = max(sh, round(sw / pad_aspect))
        ox, oy = (cw - sw) // 2, (ch - sh) // 2
        if (cw, ch) != (sw, sh):
            canvas = Image.new("RGB", (cw, ch), fill)
            canvas.paste(img, (ox, oy))
            img = canvas
    return img, ImageGeometry(screen=(w, h), scaled=(sw, sh), canvas=(cw, ch), offset=(ox, oy))
