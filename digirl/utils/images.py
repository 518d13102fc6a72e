"""Image resizing that gives the same pixels under every Pillow version.

Pillow resizes in two separable passes (horizontal, vertical), each rounded to 8 bits. Up to
Pillow 12 the horizontal pass always runs first; Pillow 13 chooses the order from the sizes, so one
``Image.resize`` call gives different pixels for the same input depending on the installed Pillow.
That changed what the policy saw, and so every trained result, with nothing but a dependency
update (an extra that pins Pillow < 13 was enough). :func:`resize` runs the passes itself, the
horizontal one first, each as a one-axis resize (which no version reorders): the result equals
Pillow 12's ``Image.resize`` exactly, under Pillow 12 and 13 alike.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

__all__ = ["resize", "resize_array"]

# Pillow resizes these modes with premultiplied alpha; the passes must see the same pixels.
_PREMULTIPLIED = {"RGBA": "RGBa", "LA": "La"}


def resize(img: Image.Image, size: tuple[int, int], resample: Image.Resampling) -> Image.Image:
    """``img.resize(size, resample)`` with the horizontal pass first, whatever Pillow is installed."""
    width, height = size
    if resample == Image.Resampling.NEAREST or img.width == width or img.height == height:
        return img.resize(size, resample)  # one pass (or a pure index mapping): no order to choose
    mode = _PREMULTIPLIED.get(img.mode)
    work = img.convert(mode) if mode else img
    work = work.resize((width, img.height), resample).resize(size, resample)
    return work.convert(img.mode) if mode else work


def resize_array(pixels: np.ndarray, size: tuple[int, int], resample: Image.Resampling) -> np.ndarray:
    """:func:`resize` of an H×W(×C) uint8 array, as an array."""
    out: np.ndarray = np.asarray(resize(Image.fromarray(pixels), size, resample))
    return out
