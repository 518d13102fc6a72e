"""The pixel region detector: exact boxes on drawn screens, coverage of the simulator's elements."""

from __future__ import annotations

import numpy as np
import pytest

from digirl.core.types import UIElement
from digirl.policies.regions import (
    CROP_SIZE,
    RegionDetector,
    box_recall_precision,
    detect_regions,
    region_crops,
    region_elements,
)
from digirl.sim.env import SimEnv

WHITE, BLUE, INK = (255, 255, 255), (30, 100, 220), (20, 20, 20)


def _screen(w: int = 270, h: int = 600) -> np.ndarray:
    return np.full((h, w, 3), WHITE, np.uint8)


def _fill(img: np.ndarray, x0: int, y0: int, x1: int, y1: int, colour: tuple[int, int, int]) -> None:
    img[y0:y1, x0:x1] = colour


def _glyph(img: np.ndarray, x0: int, y0: int, x1: int, y1: int) -> None:
    """A thin-stroked glyph (an outline): text is mostly background, unlike a filled box."""
    img[y0:y1, x0] = img[y0:y1, x1 - 1] = INK
    img[y0, x0:x1] = img[y1 - 1, x0:x1] = INK


def _px(boxes: list[tuple[float, float, float, float]], w: int = 270, h: int = 600) -> list[tuple[int, ...]]:
    return [(round(b[0] * w), round(b[1] * h), round(b[2] * w), round(b[3] * h)) for b in boxes]


def test_text_line_words_merge_and_separate_pieces_split() -> None:
    img = _screen()
    # A "text line": three glyph blocks 4 px apart (word gaps) → one box.
    for x in (20, 34, 48):
        _glyph(img, x, 100, x + 10, 112)
    # An icon 40 px to the right of the line → its own box.
    _glyph(img, 98, 100, 110, 112)
    # A second line below, 6 empty rows away.
    _glyph(img, 20, 118, 80, 128)
    assert _px(RegionDetector().detect(img)) == [(20, 100, 58, 112), (98, 100, 110, 112), (20, 118, 80, 128)]


def test_a_filled_button_is_a_box_and_its_label_is_found_inside() -> None:
    img = _screen()
    _fill(img, 40, 300, 230, 340, BLUE)  # the button
    _fill(img, 100, 314, 170, 326, WHITE)  # its (white) label, on the button's own colour
    assert _px(RegionDetector().detect(img)) == [(40, 300, 230, 340), (100, 314, 170, 326)]


def test_noise_and_blank_screens_give_no_boxes() -> None:
    img = _screen()
    img[50, 50] = INK  # one stray pixel (under min_side)
    assert RegionDetector().detect(img) == []
    assert RegionDetector().detect(_screen()) == []


def test_boxes_scale_with_the_screen_width() -> None:
    small, big = _screen(), _screen(540, 1200)
    _fill(small, 20, 100, 60, 112, INK)
    _fill(big, 40, 200, 120, 224, INK)
    (a,), (b,) = RegionDetector().detect(small), RegionDetector().detect(big)
    assert a == pytest.approx(b)


def test_bad_arrays_are_a_clear_error() -> None:
    with pytest.raises(ValueError, match="H×W×3"):
        RegionDetector().detect(np.zeros((10, 10), np.uint8))


def test_the_cache_sees_a_mutated_array_as_a_new_screen() -> None:
    img = _screen()
    _fill(img, 20, 100, 60, 112, INK)
    first = detect_regions(img)
    _fill(img, 20, 200, 60, 212, INK)  # the same array object, new content
    assert len(detect_regions(img)) == len(first) + 1


def test_crops_sample_each_box_from_the_screenshot() -> None:
    img = _screen()
    _fill(img, 0, 0, 135, 600, BLUE)  # left half blue
    els = (UIElement((0.0, 0.0, 0.5, 0.5)), UIElement((0.25, 0.0, 0.75, 0.1)))
    crops = region_crops(img, els)
    assert crops.shape == (2, 3, *CROP_SIZE) and crops.dtype == np.uint8
    assert (crops[0, :, :, :] == np.array(BLUE, np.uint8)[:, None, None]).all()
    half = CROP_SIZE[1] // 2
    assert (crops[1, 2, :, :half] == BLUE[2]).all() and (crops[1, :, :, half:] == 255).all()
    assert region_crops(img, ()).shape == (0, 3, *CROP_SIZE)


def _sim_screens(taskset: str, seeds: int, steps: int) -> list[tuple[np.ndarray, tuple[UIElement, ...]]]:
    out = []
    env = SimEnv(taskset, "validation")
    for seed in range(seeds):
        obs, _ = env.reset(seed=seed)
        for _ in range(steps):
            out.append((obs.screenshot, obs.elements))
            a = env.cheat()
            if a is None:
                break
            obs, _, term, trunc, _ = env.step(a)
            if term or trunc:
                break
    return out


def test_exact_boxes_on_the_simulator_home_screen() -> None:
    shot, elements = _sim_screens("general", 1, 1)[0]
    boxes = _px(detect_regions(shot))
    # The home screen's 8 app icons (two rows of four circles) and the dock's 4 app circles, in pixels.
    icons = [el for el in elements if el.kind == "app_icon"]
    assert len(icons) == 12
    for el in icons:
        # Every app icon has a detected box inside it whose centre taps it.
        inside = [b for b in boxes if el.contains((b[0] + b[2]) / 540, (b[1] + b[3]) / 1200)]
        assert inside, el
    assert (14, 190, 53, 230) in boxes  # Play Store's circle
    assert (9, 486, 261, 552) in boxes  # the dock (a filled box around four app circles)
    assert (0, 564, 270, 600) in boxes  # the navigation bar


@pytest.mark.parametrize("taskset", ["general", "webshop"])
def test_detected_boxes_cover_the_simulators_elements(taskset: str) -> None:
    """Recall/precision against the element list (which the detector never reads), over expert episodes."""
    recall, precision = [], []
    for shot, elements in _sim_screens(taskset, 3, 5):
        r, p = box_recall_precision(detect_regions(shot), [e.bounds for e in elements])
        recall.append(r)
        precision.append(p)
    assert np.mean(recall) >= 0.9 and np.mean(precision) >= 0.85, (np.mean(recall), np.mean(precision))


def test_region_elements_are_tappable_and_textless() -> None:
    shot, _ = _sim_screens("general", 1, 1)[0]
    els = region_elements(shot, 5)
    assert len(els) == 5 and all(e.clickable and e.text == "" and e.kind == "region" for e in els)
    assert [e.bounds for e in els] == detect_regions(shot)[:5]


def test_recall_precision_by_hand() -> None:
    ref = [(0.0, 0.0, 0.5, 0.5), (0.5, 0.5, 1.0, 1.0)]
    assert box_recall_precision([(0.1, 0.1, 0.2, 0.2)], ref) == (0.5, 1.0)
    # A phantom box outside every reference costs precision; a box straddling two references taps neither.
    assert box_recall_precision([(0.1, 0.1, 0.2, 0.2), (0.0, 0.6, 0.1, 0.7), (0.4, 0.4, 0.6, 0.6)], ref) == (0.5, 1 / 3)
    assert box_recall_precision([], ref) == (0.0, 0.0)
