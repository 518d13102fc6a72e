"""Screenshot helpers for the judge: a cheap screen hash and PNG data URLs."""

from __future__ import annotations

import hashlib

import numpy as np
from PIL import Image

from digirl.utils.images import resize
from digirl.utils.openai_chat import encode_image, image_data_url

__all__ = ["png_bytes", "png_data_url", "screen_hash"]


def _as_image(img: np.ndarray) -> Image.Image:
    if not isinstance(img, np.ndarray) or img.dtype != np.uint8 or img.ndim != 3 or img.shape[2] != 3:
        raise ValueError(f"expected a uint8 H×W×3 screenshot, got {getattr(img, 'dtype', type(img))} {getattr(img, 'shape', '')}")
    return Image.fromarray(img, "RGB")


def screen_hash(img: np.ndarray, size: tuple[int, int] = (48, 96), quant_shift: int = 2) -> str:
    """Hash of a grey, downscaled, quantized copy: equal for screens that look the same
    (a re-encoded or slightly noisy frame), different for any visible change of a few pixels' size."""
    small = resize(_as_image(img).convert("L"), size, Image.Resampling.BILINEAR)
    arr = np.asarray(small, dtype=np.uint8) >> quant_shift
    return hashlib.blake2b(arr.tobytes() + repr(img.shape).encode(), digest_size=16).hexdigest()


def png_bytes(img: np.ndarray, max_side: int | None = None) -> bytes:
    """PNG of ``img``, downscaled (aspect kept) so its longer side is at most ``max_side``."""
    return encode_image(img, "png", max_side)


def png_data_url(img: np.ndarray, max_side: int | None = None) -> str:
    """``data:image/png;base64,...`` for an OpenAI-style ``image_url`` content part."""
    return image_data_url(img, "png", max_side)
