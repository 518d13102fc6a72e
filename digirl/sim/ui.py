"""A small retained-mode UI toolkit: a tree of :class:`View` nodes in logical coordinates.

The phone is :data:`W` × :data:`H` logical units (dp, 9:20); the renderer scales to pixels. Apps
build a fresh tree from their state whenever that state changes; the same tree is then used for
drawing, for hit-testing taps (top-most clickable node wins, *blocker* nodes stop the search), for
the UI-element list the agent reads, and for the scripted expert (which looks nodes up by ``ref``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial

__all__ = [
    "Color",
    "H",
    "Rect",
    "ScrollInfo",
    "SystemTap",
    "View",
    "W",
    "box",
    "button",
    "flatten",
    "icon_button",
    "input_field",
    "label",
    "list_row",
    "nodes",
    "scroll_list",
    "shared_ops_view",
    "shared_view",
    "slider",
    "switch",
]

W, H = 360, 800
STATUS_H, NAV_H = 24, 48
TOP, BOTTOM = STATUS_H, H - NAV_H  # content area

Color = tuple[int, int, int]
Rect = tuple[float, float, float, float]

# Material-like palette.
WHITE: Color = (255, 255, 255)
BG: Color = (248, 249, 250)
TEXT: Color = (32, 33, 36)
SUBTLE: Color = (95, 99, 104)
FAINT: Color = (218, 220, 224)
BLUE: Color = (26, 115, 232)
LIGHT_BLUE: Color = (232, 240, 254)
RED: Color = (217, 48, 37)
GREEN: Color = (24, 128, 56)
YELLOW: Color = (249, 171, 0)
DARK: Color = (32, 33, 36)
BLACK: Color = (0, 0, 0)
SCRIM: Color = (118, 118, 122)


@dataclass(eq=False, slots=True)
class View:
    """One node. ``rect`` is ``(x0, y0, x1, y1)`` in logical units; children paint after parents."""

    rect: Rect
    kind: str = "view"
    text: str = ""
    ref: str = ""
    fill: Color | None = None
    fg: Color = TEXT
    size: int = 14
    radius: int = 0
    border: Color | None = None
    align: str = "left"
    bold: bool = False
    icon: str = ""
    icon_color: Color | None = None
    on_tap: Callable[[], None] | None = None
    focused: bool = False
    #: Stops hit-testing: taps on it that reach no clickable child do nothing (dialogs, app bars).
    blocker: bool = False
    checked: bool | None = None
    #: Whether the node is listed as a UI element (None: decide from kind/text/clickable).
    element: bool | None = None
    #: Text shown when the node is an empty input.
    placeholder: str = ""
    #: Pre-rendered picture name drawn instead of primitives (e.g. the keyboard).
    patch: str = ""
    lines: int = 1
    #: A cached subtree that never changes (status bar, keyboard): drawn as one pre-rendered layer.
    static: bool = False
    children: list[View] = field(default_factory=list)
    clip: Rect | None = None
    scroll: ScrollInfo | None = None
    #: A static subtree drawn as one cached picture (True) or as its cached draw ops (False: for
    #: subtrees with many variants, like suggestion lists, whose pictures would crowd the patch cache).
    picture: bool = True

    @property
    def clickable(self) -> bool:
        return self.on_tap is not None

    def add(self, *views: View) -> View:
        self.children.extend(views)
        return self

    def visible_rect(self) -> Rect | None:
        """``rect`` intersected with the clip rectangle, or ``None`` when nothing is visible."""
        if self.clip is None:
            return self.rect
        x0, y0, x1, y1 = self.rect
        cx0, cy0, cx1, cy1 = self.clip
        r = (max(x0, cx0), max(y0, cy0), min(x1, cx1), min(y1, cy1))
        return r if r[2] > r[0] and r[3] > r[1] else None

    def contains(self, x: float, y: float) -> bool:
        r = self.visible_rect()
        return r is not None and r[0] <= x <= r[2] and r[1] <= y <= r[3]

    def center(self) -> tuple[float, float]:
        r = self.visible_rect() or self.rect
        return ((r[0] + r[2]) / 2, (r[1] + r[3]) / 2)

    def translate(self, dy: float, clip: Rect | None) -> None:
        x0, y0, x1, y1 = self.rect
        self.rect = (x0, y0 + dy, x1, y1 + dy)
        self.clip = clip
        for c in self.children:
            c.translate(dy, clip)

    def find(self, ref: str) -> View | None:
        for v in nodes(self):
            if v.ref == ref:
                return v
        return None

    def texts(self) -> str:
        """All text in the subtree, space-joined."""
        return " ".join(v.text for v in nodes(self) if v.text)


@dataclass(frozen=True, slots=True)
class SystemTap:
    """The ``on_tap`` of a system view shared by every phone (status and navigation bars, keyboards):
    :meth:`Phone.tap <digirl.sim.phone.Phone.tap>` calls the tapped phone's ``method`` (with ``arg``).
    Such views hold no reference to a phone, so one tree, and its cached pictures and elements,
    serves every episode."""

    method: str
    arg: str | None = None
    #: Call the method on this app of the phone (its key) instead of on the phone.
    app: str = ""

    def __call__(self) -> None:
        raise TypeError(f"SystemTap({self.method!r}) is dispatched by the phone that is tapped")


_SHARED: dict[object, View] = {}


def shared_view(key: object, make: Callable[[], View]) -> View:
    """A static subtree shared by every phone (built once per ``key``, marked ``static``): its taps
    must be :class:`SystemTap`. The renderer draws it as one cached layer and its elements are
    cached, by identity, so sharing the view makes those caches hit across episodes."""
    v = _SHARED.get(key)
    if v is None:
        v = make()
        v.static = True
        if len(_SHARED) > 512:
            _SHARED.clear()
        _SHARED[key] = v
    return v


_SHARED_OPS: dict[object, View] = {}


def shared_ops_view(key: object, make: Callable[[], View]) -> View:
    """Like :func:`shared_view`, for subtrees with many variants (one per query typed, ...): drawn
    from their cached ops rather than as a picture, and kept in a larger store of their own, so
    they do not evict the system views."""
    v = _SHARED_OPS.get(key)
    if v is None:
        v = make()
        v.static, v.picture = True, False
        if len(_SHARED_OPS) > 512:
            _SHARED_OPS.clear()
        _SHARED_OPS[key] = v
    return v


@dataclass(slots=True)
class ScrollInfo:
    """What a scroll list holds, including rows scrolled out of view (the expert reads it)."""

    key: str
    rect: Rect
    offset: float
    max_offset: float
    #: ref → (top, bottom) in content coordinates, for every row with a ref.
    rows: dict[str, tuple[float, float]] = field(default_factory=dict)


def scroll_amount(length: float) -> float:
    """Pixels a vertical swipe of ``length`` (a fraction of the screen height) scrolls a list by."""
    return max(length * H * 1.2, 120.0)


def flatten(root: View) -> Iterator[View]:
    """Nodes in paint order (pre-order)."""
    return iter(nodes(root))


def nodes(root: View) -> list[View]:
    """Nodes in paint order (pre-order), as a list (a loop without a generator's per-node cost)."""
    out: list[View] = []
    stack = [root]
    pop, push, extend = stack.pop, out.append, stack.extend
    while stack:
        v = pop()
        push(v)
        children = v.children
        if children:
            extend(reversed(children))
    return out


# ---------------------------------------------------------------- builders
def box(
    rect: Rect,
    fill: Color | None = None,
    *,
    radius: int = 0,
    border: Color | None = None,
    blocker: bool = False,
    ref: str = "",
    on_tap: Callable[[], None] | None = None,
    children: list[View] | None = None,
    kind: str = "view",
) -> View:
    # Positional (field order; tests/sim/test_sim_speed_paths.py checks it against keywords): a
    # dataclass __init__ of 26 fields binds keywords ~1 us slower, and trees are built every step.
    # fmt: off
    return View(rect, kind, "", ref, fill, TEXT, 14, radius, border, "left", False, "", None, on_tap, False, blocker,
                None, None, "", "", 1, False, list(children) if children else [])
    # fmt: on


def label(
    rect: Rect,
    text: str,
    *,
    size: int = 14,
    fg: Color = TEXT,
    align: str = "left",
    bold: bool = False,
    ref: str = "",
    lines: int = 1,
    on_tap: Callable[[], None] | None = None,
) -> View:
    # Positional, as in box().
    # fmt: off
    return View(rect, "text", text, ref, None, fg, size, 0, None, align, bold, "", None, on_tap, False, False,
                None, None, "", "", lines, False, [])
    # fmt: on


def button(
    rect: Rect,
    text: str,
    on_tap: Callable[[], None] | None,
    *,
    ref: str,
    style: str = "filled",
    color: Color = BLUE,
    size: int = 14,
    radius: int = 18,
    icon: str = "",
) -> View:
    """``style``: filled (white text on ``color``), tonal, outlined or text."""
    fill: Color | None
    if style == "filled":
        fill, fg, border = color, WHITE, None
    elif style == "tonal":
        fill, fg, border = LIGHT_BLUE, color, None
    elif style == "outlined":
        fill, fg, border = WHITE, color, FAINT
    else:
        fill, fg, border = None, color, None
    return View(
        rect,
        kind="button",
        text=text,
        ref=ref,
        fill=fill,
        fg=fg,
        border=border,
        size=size,
        radius=radius,
        align="center",
        bold=True,
        on_tap=on_tap,
        icon=icon,
    )


def icon_button(
    rect: Rect,
    icon: str,
    on_tap: Callable[[], None] | None,
    *,
    ref: str,
    desc: str,
    color: Color = SUBTLE,
    fill: Color | None = None,
    radius: int = 0,
) -> View:
    """An icon-only button. ``desc`` (like Android's content description) is its element text."""
    # Positional, as in box().
    # fmt: off
    return View(rect, "icon", "", ref, fill, TEXT, 14, radius, None, "left", False, icon, color, on_tap, False, False,
                None, None, desc, "", 1, False, [])
    # fmt: on


def input_field(
    rect: Rect,
    text: str,
    *,
    placeholder: str,
    focused: bool,
    on_tap: Callable[[], None] | None,
    ref: str,
    on_clear: Callable[[], None] | None = None,
    fill: Color = WHITE,
    radius: int = 22,
    border: Color | None = FAINT,
    icon: str = "search",
    size: int = 15,
    fg: Color = TEXT,
) -> View:
    """A one-line text input; shows a caret when focused and a clear (×) button when it has text."""
    v = View(
        rect,
        kind="input",
        text=text,
        ref=ref,
        fill=fill,
        radius=radius,
        border=BLUE if focused else border,
        focused=focused,
        placeholder=placeholder,
        on_tap=on_tap,
        icon=icon,
        size=size,
        fg=fg,
    )
    _x0, y0, x1, y1 = rect
    if text and on_clear is not None:
        v.children.append(icon_button((x1 - 36, y0, x1 - 4, y1), "close", on_clear, ref=ref + ".clear", desc="Clear text"))
    return v


def switch(rect: Rect, checked: bool, on_tap: Callable[[], None] | None, *, ref: str) -> View:
    return View(rect, kind="switch", ref=ref, checked=checked, on_tap=on_tap, text="")


def list_row(
    y: float,
    h: float,
    title: str,
    *,
    sub: str = "",
    ref: str = "",
    icon: str = "",
    icon_color: Color | None = None,
    on_tap: Callable[[], None] | None = None,
    x0: float = 0,
    x1: float = W,
    right: View | None = None,
    title_size: int = 15,
    divider: bool = True,
    sub_color: Color = SUBTLE,
) -> View:
    """A list row with optional leading icon, title, subtitle and trailing view."""
    # Positional, as in box().
    # fmt: off
    row = View((x0, y, x1, y + h), "list_item", "", ref, None, TEXT, 14, 0, None, "left", False, "", None, on_tap, False,
               False, None, on_tap is not None, "", "", 1, False, [])
    # fmt: on
    tx = x0 + 16
    if icon:
        # fmt: off
        row.children.append(View((x0 + 12, y + h / 2 - 16, x0 + 44, y + h / 2 + 16), "icon", "", "", None, TEXT, 14, 0, None,
                                 "left", False, icon, icon_color, None, False, False, None, False, "", "", 1, False, []))
        # fmt: on
        tx = x0 + 60
    rx = x1 - 12 - (right.rect[2] - right.rect[0] if right is not None else 0)
    if sub:
        row.children.append(label((tx, y + h / 2 - 19, rx, y + h / 2 + 1), title, size=title_size))
        row.children.append(label((tx, y + h / 2 + 1, rx, y + h / 2 + 19), sub, size=12, fg=sub_color))
    else:
        row.children.append(label((tx, y, rx, y + h), title, size=title_size))
    if right is not None:
        row.children.append(right)
    if divider:
        # fmt: off
        row.children.append(View((tx, y + h - 1, x1, y + h), "view", "", "", FAINT, TEXT, 14, 0, None, "left", False, "", None,
                                 None, False, False, None, False, "", "", 1, False, []))
        # fmt: on
    return row


def scroll_list(
    key: str,
    rect: Rect,
    rows: list[View],
    offsets: dict[str, float],
    *,
    top_pad: float = 0,
    fill: Color | None = None,
    dress: Callable[[int, View], None] | None = None,
) -> View:
    """A vertical scroll container. ``rows`` are laid out in content coordinates (their ``rect`` y
    starts at 0 = top of the content); rows entirely out of view are dropped from the tree but kept
    in :class:`ScrollInfo` so the expert knows where they are.

    ``dress(i, row)``, when given, adds the children of row ``i``, and is called only for rows in
    view (long result lists build a few rows, not all): those children must carry no refs."""
    _x0, y0, _x1, y1 = rect
    content_h = max((r.rect[3] for r in rows), default=0.0) + top_pad + 12
    max_off = max(0.0, content_h - (y1 - y0))
    off = min(max(0.0, offsets.get(key, 0.0)), max_off)
    info = ScrollInfo(key, rect, off, max_off)
    container = View(rect, kind="scroll", fill=fill, scroll=info, element=False)
    dy = y0 + top_pad - off
    for i, r in enumerate(rows):
        top, bot = r.rect[1] + top_pad, r.rect[3] + top_pad
        if r.ref:
            info.rows[r.ref] = (top, bot)
        if r.children:
            for c in nodes(r):
                if c.ref and c is not r:
                    info.rows.setdefault(c.ref, (c.rect[1] + top_pad, c.rect[3] + top_pad))
        if bot - off < 0 or top - off > y1 - y0:
            continue
        if dress is not None:
            dress(i, r)
        r.translate(dy, rect)
        container.children.append(r)
    return container


def slider(
    rect: Rect,
    value: int,
    on_set: Callable[[int], None],
    *,
    ref: str,
    desc: str,
    step: int = 5,
    color: Color = BLUE,
) -> View:
    """A 0–100 slider: a tap sets the value under the finger, in ``step`` increments.

    It is listed as one UI element (``desc`` and the value); its tap targets (refs
    ``<ref>.<value>``, one per step) are not.
    """
    x0, y0, x1, y1 = rect
    cy = (y0 + y1) / 2
    frac = min(max(value, 0), 100) / 100
    v = View(rect, kind="slider", ref=ref, placeholder=f"{desc} {value}%", element=True)
    v.children.append(View((x0, cy - 3, x1, cy + 3), fill=FAINT, radius=3, element=False))
    v.children.append(View((x0, cy - 3, x0 + (x1 - x0) * frac, cy + 3), fill=color, radius=3, element=False))
    tx = x0 + (x1 - x0) * frac
    v.children.append(View((tx - 10, cy - 10, tx + 10, cy + 10), fill=color, radius=10, element=False))
    n = max(1, 100 // step)
    seg = (x1 - x0) / n
    for k in range(n + 1):
        cx = x0 + k * seg
        v.children.append(
            View((cx - seg / 2, y0, cx + seg / 2, y1), ref=f"{ref}.{k * step}", on_tap=partial(on_set, k * step), element=False)
        )
    return v
