"""The simulator's speed paths give exactly what the plain code gives.

The view builders of :mod:`digirl.sim.ui` call ``View`` positionally (keyword binding of a 26-field
dataclass is ~1 us slower and trees are built every step): these tests pin every field of what they
build against the same views made with keywords, so a field added or moved in ``View`` cannot
silently shift a positional argument.
"""

from __future__ import annotations

import dataclasses

import pytest

from digirl.sim.ui import FAINT, SUBTLE, TEXT, View, box, icon_button, label, list_row


def _fields(v: View) -> dict[str, object]:
    out = {f.name: getattr(v, f.name) for f in dataclasses.fields(View)}
    out["children"] = [_fields(c) for c in v.children]
    return out


def _tap() -> None:
    return None


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"radius": 12, "border": FAINT, "blocker": True, "ref": "bar", "on_tap": _tap, "kind": "tab"},
        {"children": [View((1, 2, 3, 4))]},
        {"children": []},
    ],
)
def test_box_matches_keywords(kwargs: dict[str, object]) -> None:
    fill = (1, 2, 3)
    got = box((0, 10, 360, 60), fill, **kwargs)  # type: ignore[arg-type]
    kw = dict(kwargs)
    children = kw.pop("children", None)
    want = View((0, 10, 360, 60), fill=fill, children=list(children or []), **kw)  # type: ignore[arg-type]
    assert _fields(got) == _fields(want)
    if children:
        assert got.children is not children  # a copy: the caller's list is not shared


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"size": 11, "fg": SUBTLE, "align": "right", "bold": True, "ref": "t", "lines": 2, "on_tap": _tap}],
)
def test_label_matches_keywords(kwargs: dict[str, object]) -> None:
    got = label((4, 5, 100, 30), "Hello", **kwargs)  # type: ignore[arg-type]
    want = View((4, 5, 100, 30), kind="text", text="Hello", **kwargs)  # type: ignore[arg-type]
    assert _fields(got) == _fields(want)


def test_icon_button_matches_keywords() -> None:
    got = icon_button((0, 0, 40, 40), "back", _tap, ref="b", desc="Back", color=TEXT, fill=(9, 9, 9), radius=20)
    want = View(
        (0, 0, 40, 40),
        kind="icon",
        text="",
        ref="b",
        icon="back",
        icon_color=TEXT,
        fill=(9, 9, 9),
        radius=20,
        on_tap=_tap,
        placeholder="Back",
    )
    assert _fields(got) == _fields(want)


@pytest.mark.parametrize("icon,tap", [("search", _tap), ("", None)])
def test_list_row_matches_keywords(icon: str, tap: object) -> None:
    got = list_row(100, 52, "Title", sub="sub", ref="row", icon=icon, icon_color=SUBTLE, on_tap=tap)  # type: ignore[arg-type]
    row = View((0, 100, 360, 152), kind="list_item", ref="row", on_tap=tap, element=tap is not None)  # type: ignore[arg-type]
    tx = 16.0
    if icon:
        row.children.append(View((12, 110.0, 44, 142.0), kind="icon", icon=icon, icon_color=SUBTLE, element=False))
        tx = 60
    row.children.append(label((tx, 107.0, 348, 127.0), "Title", size=15))
    row.children.append(label((tx, 127.0, 348, 145.0), "sub", size=12, fg=SUBTLE))
    row.children.append(View((tx, 151, 360, 152), fill=FAINT, element=False))
    assert _fields(got) == _fields(row)


def _leaves(y: float) -> list[View]:
    """Leaves of every kind the renderer lays out, at content height ``y``."""
    from digirl.sim.ui import input_field, switch

    return [
        label((16, y, 344, y + 24), "Rwanda | Britannica", size=16, fg=(26, 13, 171)),
        label((16, y + 24, 344, y + 64), "Facts, history and overview of a small country " * 3, size=13, lines=2),
        label((16, y + 64, 200, y + 84), "centred", align="center", bold=True),
        input_field((16, y + 90, 344, y + 130), "typed text", placeholder="Search", focused=True, on_tap=_tap, ref="q"),
        input_field((16, y + 130, 344, y + 170), "", placeholder="Search", focused=True, on_tap=None, ref="e"),
        switch((16, y + 170, 344, y + 200), True, _tap, ref="s"),
        View((16, y + 200, 344, y + 240), kind="button", text="Install", icon="download", align="center", on_tap=_tap),
        icon_button((300, y + 240, 340, y + 280), "back", _tap, ref="b", desc="Back"),
    ]


@pytest.mark.parametrize("size", [(270, 600), (540, 1200), (123, 456)])
def test_moved_leaf_ops_equal_leaf_ops_at_the_place(size: tuple[int, int]) -> None:
    """Leaves laid out once and moved (scrolled, shuffled, clipped at the list's edges) give the
    ops that laying them out at their place gives, caret and clipped fills included."""
    from digirl.sim.render import Renderer

    moved, direct = Renderer(*size), Renderer(*size)
    # The reference lays every leaf out where it is (the code before the moved-leaf cache).
    direct._leaf_moved = lambda v, key, x0, y0, x1, y1, bg, clip: direct._leaf_ops(v, x0, y0, x1, y1, bg, clip)  # type: ignore[method-assign]
    clip = (0.0, 120.0, 360.0, 560.0)
    for y in (100.0, 103.5, 131.25, 97.0, 400.0, 555.0, 100.0):  # places repeat: moved and place-cached hits
        root = box((0, 0, 360, 800), (255, 255, 255))
        for v in _leaves(y):
            v.clip = clip
            root.children.append(v)
        root.children.extend(_leaves(y + 300))  # unclipped
        assert moved.compile(root) == direct.compile(root)
    assert moved._leaf_rel  # the moved path ran


def test_elements_are_kept_from_their_second_sighting() -> None:
    """One-off elements stay in the small young store (they die young instead of being promoted to
    the cycle collector's oldest generation); an element seen again is kept, and is the same value."""
    from digirl.core.types import UIElement
    from digirl.sim import elements

    elements._MADE.clear()
    elements._YOUNG.clear()
    root = box((0, 0, 360, 800), (255, 255, 255), children=[label((36, 80, 180, 120), "Once", on_tap=_tap)])
    (first,) = elements.tree_elements(root)
    assert first == UIElement((0.1, 0.1, 0.5, 0.15), "Once", "text", True, False, "")
    assert not elements._MADE and len(elements._YOUNG) == 1
    (again,) = elements.tree_elements(root)
    assert again is first and list(elements._MADE.values()) == [first]
    for i in range(elements._YOUNG_MAX + 2):  # one-off elements: the young store stays bounded
        elements.tree_elements(box((0, 0, 360, 800), None, children=[label((0, i, 90, i + 20), f"row {i}")]))
    assert len(elements._YOUNG) <= elements._YOUNG_MAX + 1 and list(elements._MADE.values()) == [first]
