"""A dependency-free line chart (Pillow only), used when matplotlib is not installed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

_COLORS = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189), (140, 86, 75), (227, 119, 194)]


def line_chart(
    series: Mapping[str, Sequence[tuple[float, float]]],
    path: str | Path,
    *,
    x_label: str = "",
    y_label: str = "",
    title: str = "",
    size: tuple[int, int] = (640, 400),
    y_range: tuple[float, float] = (0.0, 1.0),
) -> None:
    """Draw ``{name: [(x, y), ...]}`` as lines with markers and a legend; y in ``y_range``."""
    w, h = size
    img = Image.new("RGB", size, "white")
    d = ImageDraw.Draw(img)
    font = ImageFont.load_default(size=13) if hasattr(ImageFont, "load_default") else None
    left, right, top, bottom = 60, 20, 30 if title else 15, 45
    xs = [x for pts in series.values() for x, _ in pts] or [0.0, 1.0]
    x0, x1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    y0, y1 = y_range

    def px(x: float, y: float) -> tuple[float, float]:
        return (left + (x - x0) / (x1 - x0) * (w - left - right), h - bottom - (y - y0) / (y1 - y0) * (h - top - bottom))

    for i in range(6):  # horizontal grid with labels
        yv = y0 + (y1 - y0) * i / 5
        _, yp = px(x0, yv)
        d.line([(left, yp), (w - right, yp)], fill=(230, 230, 230))
        d.text((8, yp - 7), f"{100 * yv:.0f}%" if y1 <= 1.0 else f"{yv:.2g}", fill="black", font=font)
    d.line([(left, top), (left, h - bottom), (w - right, h - bottom)], fill="black")
    for xv in sorted(set(xs)):
        xp, _ = px(xv, y0)
        d.text((xp - 8, h - bottom + 5), f"{xv:g}", fill="black", font=font)
    d.text((w // 2 - 60, h - 20), x_label, fill="black", font=font)
    if y_label:
        d.text((8, top - 14 if top > 14 else 0), y_label, fill="black", font=font)
    if title:
        d.text((w // 2 - 80, 5), title, fill="black", font=font)
    for i, (name, pts) in enumerate(series.items()):
        c = _COLORS[i % len(_COLORS)]
        p = [px(x, y) for x, y in pts]
        if len(p) > 1:
            d.line(p, fill=c, width=2)
        for xp, yp in p:
            d.ellipse([xp - 3, yp - 3, xp + 3, yp + 3], fill=c)
        d.text((left + 10, top + 5 + 16 * i), f"- {name}", fill=c, font=font)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    img.save(path)
