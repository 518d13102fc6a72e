"""Screen ⇄ model coordinates: the processor's resize and our padding are inverted exactly."""

from __future__ import annotations

import numpy as np
import pytest

from digirl.core.actions import Action
from digirl.core.codecs import CoordFrame, get_codec
from digirl.policies.hf.geometry import ImageGeometry, model_image_size, prepare_image

ODD_SIZES = [(271, 601), (97, 211), (1079, 2401), (601, 271), (333, 333), (1081, 1921)]


def _round_trip_px(frame: CoordFrame, codec: str, w: int, h: int, px: float, py: float) -> tuple[float, float]:
    """Screen pixel → action → model text in ``frame`` → parsed action → screen pixel."""
    c = get_codec(codec, frame)
    a = c.parse(c.format(Action.tap(px / w, py / h)))
    assert a.is_valid, a.error
    assert a.touch is not None
    return a.touch[0] * w, a.touch[1] * h


def test_frames_are_affine_and_invert_exactly():
    g = ImageGeometry(screen=(271, 601), scaled=(271, 601), canvas=(601, 601), offset=(165, 0), model=(336, 336))
    for coords in ("normalized", "grid1000", "pixels"):
        f = g.frame(coords)
        for u, v in [(0.0, 0.0), (1.0, 1.0), (0.31, 0.77)]:
            x, y = f.scale_x * u + f.offset_x, f.scale_y * v + f.offset_y
            assert f.to_screen(x, y) == pytest.approx((u, v), abs=1e-12)
    # The screen's left edge sits at the canvas' 165th pixel: 165/601 of the model image.
    assert g.frame("pixels").offset_x == pytest.approx(336 * 165 / 601)
    with pytest.raises(ValueError, match="coords=pixels"):
        ImageGeometry((10, 10), (10, 10), (10, 10), (0, 0)).frame("pixels")


def test_padding_puts_every_screen_point_where_the_frame_says():
    rng = np.random.default_rng(0)
    for w, h in ODD_SIZES:
        shot = np.zeros((h, w, 3), np.uint8)
        px, py = int(rng.integers(0, w)), int(rng.integers(0, h))
        shot[py, px] = 255
        img, g = prepare_image(shot, pad_aspect=1.0, fill=(0, 0, 0))
        canvas = np.asarray(img)
        ys, xs = np.nonzero(canvas[..., 0])
        assert (xs[0], ys[0]) == (px + g.offset[0], py + g.offset[1])
        f = g.frame("normalized")  # the centre of that canvas pixel, as a fraction of the canvas
        assert f.scale_x * (px + 0.5) / w + f.offset_x == pytest.approx((xs[0] + 0.5) / g.canvas[0])
        assert f.scale_y * (py + 0.5) / h + f.offset_y == pytest.approx((ys[0] + 0.5) / g.canvas[1])


def test_qwen_smart_resize_predicted_exactly_and_round_trip_within_one_pixel():
    tf = pytest.importorskip("transformers")
    ip = tf.Qwen2VLImageProcessorPil()  # Qwen2-VL / Qwen2.5-VL's own pixel bounds
    rng = np.random.default_rng(1)
    for w, h in ODD_SIZES:
        shot = rng.integers(0, 255, (h, w, 3), dtype=np.uint8)
        img, g = prepare_image(shot)
        mw, mh = model_image_size(ip, *g.canvas)
        grid = ip(images=[img], return_tensors="pt")["image_grid_thw"][0]
        assert (int(grid[2]) * ip.patch_size, int(grid[1]) * ip.patch_size) == (mw, mh)  # what the processor did
        g = ImageGeometry(g.screen, g.scaled, g.canvas, g.offset, (mw, mh))
        for coords, codec, tol in [("pixels", "json", 1.0), ("pixels", "autoui", 1.0), ("normalized", "json", 0.5)]:
            f = g.frame(coords)
            for _ in range(200):
                px, py = rng.uniform(0, w), rng.uniform(0, h)
                bx, by = _round_trip_px(f, codec, w, h, px, py)
                assert abs(bx - px) <= tol and abs(by - py) <= tol, (w, h, coords, px, py, bx, by)
        # grid1000: a unit is up to 2.4 screen pixels here, so half a unit (plus the actions' 1e-4
        # rounding, twice) bounds the error instead of one pixel.
        f = g.frame("grid1000")
        for _ in range(200):
            px, py = rng.uniform(0, w), rng.uniform(0, h)
            bx, by = _round_trip_px(f, "json", w, h, px, py)
            assert abs(bx - px) <= max(1.0, 0.5e-3 * w + 1e-4 * w) and abs(by - py) <= max(1.0, 0.5e-3 * h + 1e-4 * h)


def test_downscaled_and_padded_screens_round_trip():
    rng = np.random.default_rng(2)
    for w, h in ODD_SIZES:
        shot = np.zeros((h, w, 3), np.uint8)
        img, g = prepare_image(shot, max_pixels=90_000, pad_aspect=1.0)
        assert img.size == g.canvas and g.scaled[0] * g.scaled[1] <= 90_000
        g = ImageGeometry(g.screen, g.scaled, g.canvas, g.offset, (336, 336))
        f = g.frame("normalized")
        for _ in range(200):
            px, py = rng.uniform(0, w), rng.uniform(0, h)
            bx, by = _round_trip_px(f, "json", w, h, px, py)
            assert abs(bx - px) <= 1.0 and abs(by - py) <= 1.0
        # A point in the padding is not on the screen: the codec says so instead of clamping.
        if g.offset != (0, 0):
            c = get_codec("json", f)
            assert not c.parse('{"type": "DUAL_POINT", "touch": [0.0, 0.0], "lift": [0.0, 0.0]}').is_valid
