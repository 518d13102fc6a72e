"""Coordinate frames: a model writing pixels of its resized image (or a 0-1000 grid) parses in one pass."""

from __future__ import annotations

import pytest

from digirl.core.actions import Action
from digirl.core.codecs import CoordFrame, get_codec


def test_integer_pixel_frame_formats_and_parses_both_codecs():
    f = CoordFrame(280, 616, integer=True)  # e.g. Qwen2.5-VL's resized 280x616 image
    tap = Action.tap(0.5, 0.25)
    j = get_codec("json", f)
    assert j.format(tap) == '{"type": "DUAL_POINT", "touch": [140, 154], "lift": [140, 154]}'
    assert j.parse('{"type": "DUAL_POINT", "touch": [140, 154], "lift": [140, 154]}') == tap
    a = get_codec("autoui", f)
    text = a.format(tap)
    assert '"touch_point": "[154, 140]"' in text  # Auto-UI writes [y, x]
    assert a.parse(text) == tap
    # Non-point actions are unchanged; the identity frame is the plain codec.
    assert j.format(Action.type_text("hi")) == get_codec("json").format(Action.type_text("hi"))
    assert get_codec("json", CoordFrame()) is get_codec("json")


def test_points_outside_the_screen_in_the_frame_are_invalid_not_clamped():
    f = CoordFrame(0.5, 1.0, 0.25, 0.0)  # the screen fills the middle half of a padded image
    j = get_codec("json", f)
    assert j.parse('{"type": "DUAL_POINT", "touch": [0.5, 0.5], "lift": [0.5, 0.5]}') == Action.tap(0.5, 0.5)
    bad = j.parse('{"type": "DUAL_POINT", "touch": [0.1, 0.5], "lift": [0.1, 0.5]}')
    assert not bad.is_valid and "outside the screen" in bad.error
    assert not j.parse('{"type": "DUAL_POINT", "touch": [1e400, 1], "lift": [0, 0]}').is_valid


def test_bad_frames_and_codecs_without_frames():
    with pytest.raises(ValueError):
        CoordFrame(0.0, 1.0)
    with pytest.raises(ValueError, match="own coordinate grid"):
        get_codec("cogagent", CoordFrame(1000, 1000, integer=True))
