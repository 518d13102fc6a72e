"""Icons drawn from primitives (lines, arcs, polygons) with Pillow, anti-aliased by supersampling.

:func:`icon_patch` returns an RGB array of the icon on a given background; the renderer caches it
per (name, size, colour, background), so each icon is drawn once per process.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PIL import Image, ImageDraw

from digirl.utils.images import resize

__all__ = ["ICONS", "icon_patch"]

_C = 96  # canvas side before downsampling (icon units 0..1 map onto it): supersampling for AA

Draw = ImageDraw.ImageDraw
Col = tuple[int, int, int]


def _p(*xy: float) -> list[float]:
    return [v * _C for v in xy]


def _line(d: Draw, c: Col, w: float, *pts: float) -> None:
    d.line(_p(*pts), fill=c, width=max(1, int(w * _C)), joint="curve")


def _search(d: Draw, c: Col) -> None:
    d.ellipse(_p(0.18, 0.18, 0.62, 0.62), outline=c, width=int(0.09 * _C))
    _line(d, c, 0.1, 0.56, 0.56, 0.84, 0.84)


def _mic(d: Draw, c: Col) -> None:
    d.rounded_rectangle(_p(0.38, 0.15, 0.62, 0.58), radius=int(0.12 * _C), fill=c)
    d.arc(_p(0.26, 0.3, 0.74, 0.7), 0, 180, fill=c, width=int(0.07 * _C))
    _line(d, c, 0.07, 0.5, 0.7, 0.5, 0.85)


def _back(d: Draw, c: Col) -> None:
    _line(d, c, 0.09, 0.2, 0.5, 0.82, 0.5)
    _line(d, c, 0.09, 0.45, 0.24, 0.2, 0.5, 0.45, 0.76)


def _close(d: Draw, c: Col) -> None:
    _line(d, c, 0.09, 0.25, 0.25, 0.75, 0.75)
    _line(d, c, 0.09, 0.75, 0.25, 0.25, 0.75)


def _menu(d: Draw, c: Col) -> None:
    for y in (0.3, 0.5, 0.7):
        _line(d, c, 0.08, 0.2, y, 0.8, y)


def _more(d: Draw, c: Col) -> None:
    for y in (0.25, 0.5, 0.75):
        d.ellipse(_p(0.43, y - 0.07, 0.57, y + 0.07), fill=c)


def _plus(d: Draw, c: Col) -> None:
    _line(d, c, 0.1, 0.5, 0.2, 0.5, 0.8)
    _line(d, c, 0.1, 0.2, 0.5, 0.8, 0.5)


def _minus(d: Draw, c: Col) -> None:
    _line(d, c, 0.1, 0.2, 0.5, 0.8, 0.5)


def _up(d: Draw, c: Col) -> None:
    d.polygon(_p(0.5, 0.28, 0.8, 0.68, 0.2, 0.68), fill=c)


def _down(d: Draw, c: Col) -> None:
    d.polygon(_p(0.5, 0.72, 0.8, 0.32, 0.2, 0.32), fill=c)


def _home(d: Draw, c: Col) -> None:
    d.ellipse(_p(0.22, 0.22, 0.78, 0.78), outline=c, width=int(0.08 * _C))


def _recents(d: Draw, c: Col) -> None:
    d.rounded_rectangle(_p(0.25, 0.25, 0.75, 0.75), radius=int(0.06 * _C), outline=c, width=int(0.08 * _C))


def _navback(d: Draw, c: Col) -> None:
    d.polygon(_p(0.28, 0.5, 0.72, 0.24, 0.72, 0.76), outline=c, width=int(0.08 * _C))


def _wifi(d: Draw, c: Col) -> None:
    d.pieslice(_p(0.05, 0.15, 0.95, 1.05), 225, 315, fill=c)


def _battery(d: Draw, c: Col) -> None:
    d.rounded_rectangle(_p(0.3, 0.18, 0.7, 0.9), radius=int(0.06 * _C), fill=c)
    d.rectangle(_p(0.42, 0.1, 0.58, 0.18), fill=c)


def _bluetooth(d: Draw, c: Col) -> None:
    _line(d, c, 0.07, 0.28, 0.3, 0.7, 0.68, 0.5, 0.86, 0.5, 0.14, 0.7, 0.32, 0.28, 0.7)


def _plane(d: Draw, c: Col) -> None:
    d.polygon(
        _p(
            0.5,
            0.08,
            0.57,
            0.4,
            0.92,
            0.6,
            0.57,
            0.55,
            0.56,
            0.8,
            0.68,
            0.9,
            0.32,
            0.9,
            0.44,
            0.8,
            0.43,
            0.55,
            0.08,
            0.6,
            0.43,
            0.4,
        ),
        fill=c,
    )


def _gear(d: Draw, c: Col) -> None:
    import math

    pts = []
    for i in range(16):
        a = math.pi * 2 * i / 16
        r = 0.42 if i % 2 == 0 else 0.32
        pts += [0.5 + r * math.cos(a), 0.5 + r * math.sin(a)]
    d.polygon(_p(*pts), fill=c)
    d.ellipse(_p(0.38, 0.38, 0.62, 0.62), fill=(0, 0, 0, 0))


def _clock(d: Draw, c: Col) -> None:
    d.ellipse(_p(0.14, 0.14, 0.86, 0.86), outline=c, width=int(0.08 * _C))
    _line(d, c, 0.07, 0.5, 0.28, 0.5, 0.5, 0.66, 0.6)


def _alarm(d: Draw, c: Col) -> None:
    _clock(d, c)
    _line(d, c, 0.07, 0.12, 0.26, 0.26, 0.12)
    _line(d, c, 0.07, 0.88, 0.26, 0.74, 0.12)


def _mail(d: Draw, c: Col) -> None:
    d.rectangle(_p(0.14, 0.26, 0.86, 0.74), outline=c, width=int(0.07 * _C))
    _line(d, c, 0.07, 0.14, 0.28, 0.5, 0.54, 0.86, 0.28)


def _camera(d: Draw, c: Col) -> None:
    d.rounded_rectangle(_p(0.12, 0.3, 0.88, 0.8), radius=int(0.08 * _C), fill=c)
    d.rectangle(_p(0.35, 0.2, 0.65, 0.32), fill=c)
    d.ellipse(_p(0.36, 0.41, 0.64, 0.69), fill=(0, 0, 0, 0))


def _phone(d: Draw, c: Col) -> None:
    d.arc(_p(0.15, 0.15, 0.95, 0.95), 90, 180, fill=c, width=int(0.16 * _C))
    d.ellipse(_p(0.15, 0.12, 0.38, 0.34), fill=c)
    d.ellipse(_p(0.64, 0.62, 0.88, 0.86), fill=c)


def _message(d: Draw, c: Col) -> None:
    d.rounded_rectangle(_p(0.14, 0.18, 0.86, 0.7), radius=int(0.1 * _C), fill=c)
    d.polygon(_p(0.26, 0.66, 0.26, 0.88, 0.46, 0.68), fill=c)


def _play(d: Draw, c: Col) -> None:
    d.polygon(_p(0.32, 0.2, 0.32, 0.8, 0.8, 0.5), fill=c)


def _pause(d: Draw, c: Col) -> None:
    d.rectangle(_p(0.28, 0.22, 0.42, 0.78), fill=c)
    d.rectangle(_p(0.58, 0.22, 0.72, 0.78), fill=c)


def _next(d: Draw, c: Col) -> None:
    d.polygon(_p(0.22, 0.22, 0.22, 0.78, 0.64, 0.5), fill=c)
    d.rectangle(_p(0.66, 0.22, 0.78, 0.78), fill=c)


def _shuffle(d: Draw, c: Col) -> None:
    _line(d, c, 0.07, 0.14, 0.3, 0.34, 0.3, 0.66, 0.7, 0.8, 0.7)
    _line(d, c, 0.07, 0.14, 0.7, 0.34, 0.7, 0.66, 0.3, 0.8, 0.3)
    d.polygon(_p(0.74, 0.2, 0.9, 0.3, 0.74, 0.4), fill=c)
    d.polygon(_p(0.74, 0.6, 0.9, 0.7, 0.74, 0.8), fill=c)


def _pin(d: Draw, c: Col) -> None:
    d.pieslice(_p(0.22, 0.1, 0.78, 0.66), 150, 390, fill=c)
    d.polygon(_p(0.25, 0.48, 0.75, 0.48, 0.5, 0.9), fill=c)
    d.ellipse(_p(0.4, 0.28, 0.6, 0.48), fill=(0, 0, 0, 0))


def _store(d: Draw, c: Col) -> None:
    d.polygon(_p(0.22, 0.12, 0.56, 0.5, 0.22, 0.88), fill=(0, 160, 230))
    d.polygon(_p(0.22, 0.12, 0.7, 0.38, 0.56, 0.5), fill=(52, 168, 83))
    d.polygon(_p(0.22, 0.88, 0.7, 0.62, 0.56, 0.5), fill=(234, 67, 53))
    d.polygon(_p(0.7, 0.38, 0.86, 0.5, 0.7, 0.62, 0.56, 0.5), fill=(251, 188, 5))


def _globe(d: Draw, c: Col) -> None:
    d.ellipse(_p(0.14, 0.14, 0.86, 0.86), outline=c, width=int(0.07 * _C))
    d.ellipse(_p(0.34, 0.14, 0.66, 0.86), outline=c, width=int(0.06 * _C))
    _line(d, c, 0.06, 0.14, 0.5, 0.86, 0.5)


def _chrome(d: Draw, c: Col) -> None:
    d.pieslice(_p(0.1, 0.1, 0.9, 0.9), 210, 330, fill=(219, 68, 55))
    d.pieslice(_p(0.1, 0.1, 0.9, 0.9), 330, 450, fill=(244, 180, 0))
    d.pieslice(_p(0.1, 0.1, 0.9, 0.9), 90, 210, fill=(15, 157, 88))
    d.ellipse(_p(0.3, 0.3, 0.7, 0.7), fill=(255, 255, 255))
    d.ellipse(_p(0.36, 0.36, 0.64, 0.64), fill=(66, 133, 244))


def _youtube(d: Draw, c: Col) -> None:
    d.rounded_rectangle(_p(0.1, 0.22, 0.9, 0.78), radius=int(0.16 * _C), fill=(255, 0, 0))
    d.polygon(_p(0.42, 0.36, 0.42, 0.64, 0.65, 0.5), fill=(255, 255, 255))


def _google(d: Draw, c: Col) -> None:
    w = int(0.14 * _C)
    d.arc(_p(0.16, 0.16, 0.84, 0.84), 30, 140, fill=(52, 168, 83), width=w)
    d.arc(_p(0.16, 0.16, 0.84, 0.84), 140, 215, fill=(251, 188, 5), width=w)
    d.arc(_p(0.16, 0.16, 0.84, 0.84), 215, 315, fill=(234, 67, 53), width=w)
    d.arc(_p(0.16, 0.16, 0.84, 0.84), 0, 30, fill=(66, 133, 244), width=w)
    d.rectangle(_p(0.5, 0.44, 0.84, 0.56), fill=(66, 133, 244))


def _calc(d: Draw, c: Col) -> None:
    d.rounded_rectangle(_p(0.2, 0.12, 0.8, 0.88), radius=int(0.06 * _C), outline=c, width=int(0.07 * _C))
    d.rectangle(_p(0.3, 0.22, 0.7, 0.38), fill=c)
    for x in (0.34, 0.5, 0.66):
        for y in (0.52, 0.66, 0.78):
            d.ellipse(_p(x - 0.04, y - 0.04, x + 0.04, y + 0.04), fill=c)


def _person(d: Draw, c: Col) -> None:
    d.ellipse(_p(0.34, 0.14, 0.66, 0.46), fill=c)
    d.pieslice(_p(0.18, 0.52, 0.82, 1.16), 180, 360, fill=c)


def _calendar(d: Draw, c: Col) -> None:
    d.rounded_rectangle(_p(0.14, 0.2, 0.86, 0.86), radius=int(0.06 * _C), outline=c, width=int(0.07 * _C))
    d.rectangle(_p(0.14, 0.2, 0.86, 0.38), fill=c)
    for x in (0.32, 0.5, 0.68):
        for y in (0.54, 0.7):
            d.rectangle(_p(x - 0.05, y - 0.04, x + 0.05, y + 0.04), fill=c)


def _folder(d: Draw, c: Col) -> None:
    d.polygon(_p(0.12, 0.24, 0.42, 0.24, 0.5, 0.32, 0.88, 0.32, 0.88, 0.8, 0.12, 0.8), fill=c)


def _music(d: Draw, c: Col) -> None:
    d.ellipse(_p(0.2, 0.6, 0.44, 0.82), fill=c)
    d.rectangle(_p(0.38, 0.18, 0.44, 0.72), fill=c)
    d.polygon(_p(0.38, 0.18, 0.78, 0.1, 0.78, 0.26, 0.44, 0.34), fill=c)


def _photos(d: Draw, c: Col) -> None:
    d.pieslice(_p(0.1, 0.1, 0.9, 0.9), 180, 270, fill=(234, 67, 53))
    d.pieslice(_p(0.1, 0.1, 0.9, 0.9), 270, 360, fill=(66, 133, 244))
    d.pieslice(_p(0.1, 0.1, 0.9, 0.9), 0, 90, fill=(52, 168, 83))
    d.pieslice(_p(0.1, 0.1, 0.9, 0.9), 90, 180, fill=(251, 188, 5))


def _star(d: Draw, c: Col) -> None:
    d.polygon(
        _p(0.5, 0.1, 0.61, 0.38, 0.9, 0.38, 0.67, 0.56, 0.76, 0.86, 0.5, 0.68, 0.24, 0.86, 0.33, 0.56, 0.1, 0.38, 0.39, 0.38),
        fill=c,
    )


def _cart(d: Draw, c: Col) -> None:
    _line(d, c, 0.07, 0.1, 0.2, 0.24, 0.2, 0.34, 0.62, 0.8, 0.62, 0.88, 0.32, 0.28, 0.32)
    d.ellipse(_p(0.32, 0.72, 0.44, 0.84), fill=c)
    d.ellipse(_p(0.7, 0.72, 0.82, 0.84), fill=c)


def _tabs(d: Draw, c: Col) -> None:
    d.rounded_rectangle(_p(0.2, 0.2, 0.8, 0.8), radius=int(0.08 * _C), outline=c, width=int(0.08 * _C))


def _history(d: Draw, c: Col) -> None:
    d.arc(_p(0.16, 0.16, 0.84, 0.84), 200, 520, fill=c, width=int(0.08 * _C))
    _line(d, c, 0.07, 0.5, 0.32, 0.5, 0.52, 0.64, 0.6)


def _suggest(d: Draw, c: Col) -> None:
    _line(d, c, 0.08, 0.74, 0.74, 0.3, 0.3)
    _line(d, c, 0.08, 0.3, 0.62, 0.3, 0.3, 0.62, 0.3)


def _incognito(d: Draw, c: Col) -> None:
    d.polygon(_p(0.2, 0.42, 0.32, 0.14, 0.68, 0.14, 0.8, 0.42), fill=c)
    d.rectangle(_p(0.08, 0.42, 0.92, 0.5), fill=c)
    d.ellipse(_p(0.16, 0.58, 0.42, 0.82), outline=c, width=int(0.07 * _C))
    d.ellipse(_p(0.58, 0.58, 0.84, 0.82), outline=c, width=int(0.07 * _C))


def _apps(d: Draw, c: Col) -> None:
    for x in (0.26, 0.5, 0.74):
        for y in (0.26, 0.5, 0.74):
            d.ellipse(_p(x - 0.07, y - 0.07, x + 0.07, y + 0.07), fill=c)


def _bell(d: Draw, c: Col) -> None:
    d.pieslice(_p(0.22, 0.16, 0.78, 0.72), 180, 360, fill=c)
    d.rectangle(_p(0.22, 0.44, 0.78, 0.7), fill=c)
    d.rectangle(_p(0.14, 0.66, 0.86, 0.74), fill=c)
    d.ellipse(_p(0.42, 0.74, 0.58, 0.88), fill=c)


def _check(d: Draw, c: Col) -> None:
    _line(d, c, 0.1, 0.18, 0.52, 0.4, 0.74, 0.84, 0.28)


def _chevron(d: Draw, c: Col) -> None:
    _line(d, c, 0.09, 0.38, 0.2, 0.68, 0.5, 0.38, 0.8)


def _directions(d: Draw, c: Col) -> None:
    d.polygon(_p(0.5, 0.06, 0.94, 0.5, 0.5, 0.94, 0.06, 0.5), fill=c)
    d.line(_p(0.36, 0.66, 0.36, 0.46, 0.62, 0.46), fill=(255, 255, 255), width=int(0.07 * _C))
    d.polygon(_p(0.58, 0.34, 0.72, 0.46, 0.58, 0.58), fill=(255, 255, 255))


def _car(d: Draw, c: Col) -> None:
    d.polygon(_p(0.12, 0.5, 0.26, 0.26, 0.74, 0.26, 0.88, 0.5, 0.88, 0.74, 0.12, 0.74), fill=c)
    d.ellipse(_p(0.2, 0.66, 0.36, 0.82), fill=c)
    d.ellipse(_p(0.64, 0.66, 0.8, 0.82), fill=c)


def _sun(d: Draw, c: Col) -> None:
    d.ellipse(_p(0.3, 0.3, 0.7, 0.7), fill=c)
    for a, b, x, y in ((0.5, 0.06, 0.5, 0.2), (0.5, 0.8, 0.5, 0.94), (0.06, 0.5, 0.2, 0.5), (0.8, 0.5, 0.94, 0.5)):
        _line(d, c, 0.07, a, b, x, y)


def _info(d: Draw, c: Col) -> None:
    d.ellipse(_p(0.12, 0.12, 0.88, 0.88), outline=c, width=int(0.07 * _C))
    d.rectangle(_p(0.46, 0.44, 0.54, 0.72), fill=c)
    d.ellipse(_p(0.45, 0.28, 0.55, 0.38), fill=c)


def _lock(d: Draw, c: Col) -> None:
    d.arc(_p(0.3, 0.14, 0.7, 0.6), 180, 360, fill=c, width=int(0.08 * _C))
    d.rectangle(_p(0.3, 0.36, 0.34, 0.48), fill=c)
    d.rectangle(_p(0.66, 0.36, 0.7, 0.48), fill=c)
    d.rounded_rectangle(_p(0.22, 0.46, 0.78, 0.86), radius=int(0.06 * _C), fill=c)


def _image(d: Draw, c: Col) -> None:
    d.polygon(_p(0.1, 0.8, 0.38, 0.4, 0.58, 0.66, 0.7, 0.52, 0.9, 0.8), fill=c)
    d.ellipse(_p(0.62, 0.18, 0.8, 0.36), fill=c)


def _filter(d: Draw, c: Col) -> None:
    for y, x in ((0.3, 0.35), (0.5, 0.62), (0.7, 0.45)):
        _line(d, c, 0.06, 0.14, y, 0.86, y)
        d.ellipse(_p(x - 0.07, y - 0.07, x + 0.07, y + 0.07), fill=c)


def _flashlight(d: Draw, c: Col) -> None:
    d.polygon(_p(0.3, 0.12, 0.7, 0.12, 0.7, 0.3, 0.6, 0.46, 0.4, 0.46, 0.3, 0.3), fill=c)
    d.rectangle(_p(0.4, 0.46, 0.6, 0.88), fill=c)


def _moon(d: Draw, c: Col) -> None:
    d.ellipse(_p(0.16, 0.16, 0.84, 0.84), fill=c)
    d.ellipse(_p(0.36, 0.06, 0.98, 0.68), fill=(0, 0, 0, 0))


def _rotate(d: Draw, c: Col) -> None:
    d.arc(_p(0.18, 0.18, 0.82, 0.82), 200, 470, fill=c, width=int(0.08 * _C))
    d.polygon(_p(0.1, 0.42, 0.3, 0.42, 0.2, 0.24), fill=c)


def _hotspot(d: Draw, c: Col) -> None:
    d.ellipse(_p(0.42, 0.42, 0.58, 0.58), fill=c)
    d.arc(_p(0.26, 0.26, 0.74, 0.74), 200, 340, fill=c, width=int(0.07 * _C))
    d.arc(_p(0.1, 0.1, 0.9, 0.9), 200, 340, fill=c, width=int(0.07 * _C))
    _line(d, c, 0.07, 0.5, 0.58, 0.5, 0.9)


def _signal(d: Draw, c: Col) -> None:
    for i, h in enumerate((0.25, 0.45, 0.65, 0.85)):
        x = 0.14 + 0.19 * i
        d.rectangle(_p(x, 0.92 - h, x + 0.13, 0.92), fill=c)


def _trash(d: Draw, c: Col) -> None:
    d.rectangle(_p(0.16, 0.2, 0.84, 0.28), fill=c)
    d.rectangle(_p(0.38, 0.1, 0.62, 0.2), fill=c)
    d.polygon(_p(0.24, 0.32, 0.76, 0.32, 0.7, 0.9, 0.3, 0.9), fill=c)


def _send(d: Draw, c: Col) -> None:
    d.polygon(_p(0.12, 0.14, 0.9, 0.5, 0.12, 0.86, 0.22, 0.5), fill=c)


def _bookmark(d: Draw, c: Col) -> None:
    d.polygon(_p(0.26, 0.1, 0.74, 0.1, 0.74, 0.9, 0.5, 0.7, 0.26, 0.9), fill=c)


def _download(d: Draw, c: Col) -> None:
    _line(d, c, 0.09, 0.5, 0.12, 0.5, 0.62)
    d.polygon(_p(0.28, 0.44, 0.72, 0.44, 0.5, 0.7), fill=c)
    d.rectangle(_p(0.18, 0.8, 0.82, 0.88), fill=c)


def _video(d: Draw, c: Col) -> None:
    d.rounded_rectangle(_p(0.1, 0.26, 0.66, 0.74), radius=int(0.08 * _C), fill=c)
    d.polygon(_p(0.66, 0.5, 0.9, 0.3, 0.9, 0.7), fill=c)


def _flip(d: Draw, c: Col) -> None:
    d.arc(_p(0.16, 0.16, 0.84, 0.84), 20, 160, fill=c, width=int(0.08 * _C))
    d.arc(_p(0.16, 0.16, 0.84, 0.84), 200, 340, fill=c, width=int(0.08 * _C))
    d.polygon(_p(0.76, 0.2, 0.9, 0.42, 0.66, 0.42), fill=c)
    d.polygon(_p(0.24, 0.8, 0.1, 0.58, 0.34, 0.58), fill=c)


def _timer(d: Draw, c: Col) -> None:
    d.ellipse(_p(0.16, 0.2, 0.84, 0.88), outline=c, width=int(0.08 * _C))
    d.rectangle(_p(0.4, 0.06, 0.6, 0.14), fill=c)
    _line(d, c, 0.08, 0.5, 0.54, 0.5, 0.34)


def _edit(d: Draw, c: Col) -> None:
    d.polygon(_p(0.2, 0.66, 0.62, 0.24, 0.76, 0.38, 0.34, 0.8), fill=c)
    d.polygon(_p(0.16, 0.84, 0.2, 0.66, 0.34, 0.8), fill=c)


ICONS: dict[str, Callable[[Draw, Col], None]] = {
    "search": _search,
    "mic": _mic,
    "back": _back,
    "close": _close,
    "menu": _menu,
    "more": _more,
    "plus": _plus,
    "minus": _minus,
    "up": _up,
    "down": _down,
    "home": _home,
    "recents": _recents,
    "navback": _navback,
    "wifi": _wifi,
    "battery": _battery,
    "bluetooth": _bluetooth,
    "plane": _plane,
    "gear": _gear,
    "clock": _clock,
    "alarm": _alarm,
    "mail": _mail,
    "camera": _camera,
    "phone": _phone,
    "message": _message,
    "play": _play,
    "pause": _pause,
    "pin": _pin,
    "store": _store,
    "globe": _globe,
    "chrome": _chrome,
    "youtube": _youtube,
    "google": _google,
    "calc": _calc,
    "person": _person,
    "calendar": _calendar,
    "folder": _folder,
    "music": _music,
    "photos": _photos,
    "star": _star,
    "cart": _cart,
    "tabs": _tabs,
    "history": _history,
    "suggest": _suggest,
    "incognito": _incognito,
    "apps": _apps,
    "bell": _bell,
    "check": _check,
    "chevron": _chevron,
    "directions": _directions,
    "car": _car,
    "sun": _sun,
    "info": _info,
    "lock": _lock,
    "image": _image,
    "filter": _filter,
    "flashlight": _flashlight,
    "moon": _moon,
    "rotate": _rotate,
    "next": _next,
    "shuffle": _shuffle,
    "hotspot": _hotspot,
    "signal": _signal,
    "trash": _trash,
    "send": _send,
    "bookmark": _bookmark,
    "download": _download,
    "video": _video,
    "flip": _flip,
    "timer": _timer,
    "edit": _edit,
}


def icon_patch(name: str, size: int, color: Col, bg: Col) -> np.ndarray:
    """The icon ``name`` drawn ``size``×``size`` pixels in ``color`` on ``bg`` (uint8 RGB)."""
    draw_fn = ICONS.get(name)
    big = Image.new("RGBA", (_C, _C), (*color, 0))
    if draw_fn is not None:
        draw_fn(ImageDraw.Draw(big), color)
    small = resize(big, (max(1, size), max(1, size)), Image.Resampling.LANCZOS)
    base = Image.new("RGBA", small.size, (*bg, 255))
    base.alpha_composite(small)
    out: np.ndarray = np.asarray(base.convert("RGB")).copy()
    return out
