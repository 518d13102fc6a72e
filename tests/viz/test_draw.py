"""Actions drawn on screenshots: where the marks land, that the input is untouched, candidates, captions."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from digirl.core.actions import Action
from digirl.viz.draw import (
    TAP_COLOR,
    Candidate,
    add_caption,
    as_image,
    draw_action,
    draw_candidates,
    enlarge,
    q_color,
    step_picture,
)

GREY = 128


def screen(h: int = 600, w: int = 270) -> np.ndarray:
    return np.full((h, w, 3), GREY, dtype=np.uint8)


def changed(img: Image.Image, base: int = GREY) -> np.ndarray:
    """Mask of pixels that differ from the uniform background."""
    return (np.asarray(img).astype(int) != base).any(-1)


def test_tap_marks_the_point_and_leaves_the_input_alone() -> None:
    s = screen()
    img = draw_action(s, Action.tap(0.25, 0.5))
    assert (s == GREY).all() and img.size == (270, 600)  # 600 >= 420: not enlarged
    ys, xs = np.nonzero(changed(img))
    cx, cy = 0.25 * 269, 0.5 * 599
    assert abs(xs.mean() - cx) < 2 and abs(ys.mean() - cy) < 2 and xs.max() - xs.min() < 40
    assert tuple(np.asarray(img)[round(cy), round(cx)]) == TAP_COLOR  # the centre dot


def test_swipe_draws_from_touch_to_lift() -> None:
    img = draw_action(screen(), Action.swipe((0.5, 0.8), (0.5, 0.2)))
    ys, xs = np.nonzero(changed(img))
    assert ys.min() < 0.25 * 600 and ys.max() > 0.75 * 600 and xs.max() - xs.min() < 60


@pytest.mark.parametrize(
    "action",
    [
        Action.type_text("hello"),
        Action.back(),
        Action.home(),
        Action.enter(),
        Action.complete(),
        Action.impossible(),
        Action.invalid("??", "no type"),
    ],
)
def test_non_point_actions_are_badges_at_the_top_right(action: Action) -> None:
    mask = changed(draw_action(screen(), action))
    ys, xs = np.nonzero(mask)
    assert mask.any() and ys.max() < 60 and xs.max() > 250  # a small box in the top-right corner


def test_small_screens_are_enlarged_pixel_exactly() -> None:
    s = np.random.default_rng(0).integers(0, 256, (210, 160, 3), dtype=np.uint8)
    big = enlarge(as_image(s))
    assert big.size == (320, 420)
    assert (np.asarray(big)[::2, ::2] == s).all()
    assert draw_action(s, Action.tap(0.5, 0.5)).size == (320, 420)


def test_candidates_are_coloured_by_q_and_the_chosen_one_is_on_top() -> None:
    lo, hi = q_color(0.0, 0.0, 1.0), q_color(1.0, 0.0, 1.0)
    assert lo[2] > lo[0] and hi[0] > hi[2]  # blue for low Q, red for high Q
    cands = [
        Candidate(Action.tap(0.3, 0.3), 0.1),
        Candidate(Action.tap(0.3, 0.3), 0.9, chosen=True),
        Candidate(Action.back(), None),
    ]
    img = np.asarray(draw_candidates(screen(), cands))
    centre = img[round(0.3 * 599), round(0.3 * 269)]
    assert tuple(centre) == hi  # the chosen (highest) candidate drawn last, at the same point
    assert changed(Image.fromarray(img))[:60, 200:].any()  # the BACK candidate's badge


def test_caption_keeps_lines_and_adds_a_band_above() -> None:
    img = add_caption(as_image(screen()), "first line\nsecond line")
    one = add_caption(as_image(screen()), "first line")
    assert img.width == 270 and img.height > one.height > 600
    assert (np.asarray(img)[-600:] == GREY).all()  # the screenshot sits below the band, untouched
    assert step_picture(screen(), None, caption="x").height == one.height


def test_bad_screenshots_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="uint8"):
        draw_action(np.zeros((4, 4), np.float32), Action.back())
    with pytest.raises(ValueError, match="non-empty"):
        draw_action(np.zeros((0, 0, 3), np.uint8), Action.back())
