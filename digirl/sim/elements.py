"""The UI elements the agent reads: visible nodes of a view tree that carry text or take taps.

An element is dropped when an opaque blocker painted after it (a dialog, the keyboard, an app
bar) covers its centre, as on a phone where what is under an overlay cannot be read or tapped.
"""

from __future__ import annotations

from collections import OrderedDict

from digirl.core.types import UIElement
from digirl.sim.ui import H, Rect, View, W, flatten

__all__ = ["StaticElements", "tree_elements"]

_ELEMENT_KINDS = {"input", "switch", "button", "icon", "list_item", "tab", "app_icon", "key", "keyboard", "logo"}


def tree_elements(root: View, static_cache: StaticElements | None = None) -> tuple[UIElement, ...]:
    """The visible UI elements of a view tree (normalized bounds), without those under an overlay.

    A node is hidden when an opaque blocker painted after it covers its centre, so nodes are
    visited top-most first (reversed paint order). ``static_cache`` keeps the result of static
    subtrees (status bar, keyboard), which then cost one cover test per element. The loops are
    inlined (:func:`_element`, :func:`_covered`): this runs for every node of every new screen."""
    nodes: list[View] = []  # paint order; a static subtree is one entry when cached
    stack = [root]
    pop, push, extend = stack.pop, nodes.append, stack.extend
    cached = static_cache is not None
    while stack:
        v = pop()
        push(v)
        if v.children and not (v.static and cached):
            extend(reversed(v.children))
    out: list[UIElement] = []
    add = out.append
    above: list[Rect] = []  # opaque blockers painted after the node
    made, kinds = _MADE, _ELEMENT_KINDS
    for v in reversed(nodes):
        if v.static and static_cache is not None:
            cands, blockers = static_cache.get(v)
            if above:
                for el, cx, cy in cands:
                    for o in above:  # = _covered(above, cx, cy)
                        if o[0] <= cx <= o[2] and o[1] <= cy <= o[3]:
                            break
                    else:
                        add(el)
            else:
                out.extend(el for el, _, _ in cands)
            above.extend(blockers)
            continue
        r = v.rect
        clip = v.clip
        if clip is not None:  # = v.visible_rect() (max/min as conditionals: same values, no calls)
            r = (
                r[0] if r[0] >= clip[0] else clip[0],
                r[1] if r[1] >= clip[1] else clip[1],
                r[2] if r[2] <= clip[2] else clip[2],
                r[3] if r[3] <= clip[3] else clip[3],
            )
            if not (r[2] > r[0] and r[3] > r[1]):
                continue
        flag = v.element
        if flag is not False:
            tap, kind = v.on_tap, v.kind
            if flag or tap is not None or v.text or kind in kinds:
                # = _element(v, r), not covered: built (or reused) only when shown
                text = ("on" if v.checked else "off") if kind == "switch" else (v.text or v.placeholder)
                if text or tap is not None:
                    cx, cy = (r[0] + r[2]) / 2, (r[1] + r[3]) / 2
                    for o in above:
                        if o[0] <= cx <= o[2] and o[1] <= cy <= o[3]:
                            break
                    else:
                        clickable = tap is not None
                        key = (r if 0 not in r else tuple(map(repr, r)), text, kind, clickable, v.focused, v.ref)
                        found = made.get(key)
                        if found is None:
                            found = _make(key, r, text, kind, clickable, v.focused, v.ref)
                        add(found)
        if v.blocker and (v.fill is not None or v.patch):
            above.append(r)
    out.reverse()  # paint order: background first, as the screen is read
    return tuple(out)


def _covered(above: list[Rect], cx: float, cy: float) -> bool:
    for o in above:
        if o[0] <= cx <= o[2] and o[1] <= cy <= o[3]:
            return True
    return False


def _element(v: View, r: Rect) -> UIElement | None:
    """The node as a UI element (bounds ``r``), or None when it is not one."""
    if v.element is False or not (v.element or v.on_tap is not None or v.text or v.kind in _ELEMENT_KINDS):
        return None
    text = ("on" if v.checked else "off") if v.kind == "switch" else (v.text or v.placeholder)
    clickable = v.on_tap is not None
    if not (text or clickable):
        return None
    # Elements are immutable values: the same one is reused (a frozen dataclass costs ~2 µs to make,
    # and most elements, like tabs, bars and rows seen before, recur).
    # 0.0 and -0.0 are equal keys but not equal bounds (they print differently): keep them apart.
    key = (r if 0 not in r else tuple(map(repr, r)), text, v.kind, clickable, v.focused, v.ref)
    el = _MADE.get(key)
    if el is None:
        el = _make(key, r, text, v.kind, clickable, v.focused, v.ref)
    return el


def _make(key: _Key, r: Rect, text: str, kind: str, clickable: bool, focused: bool, ref: str) -> UIElement:
    """The element for ``key`` after a miss in :data:`_MADE`: kept there from its second sighting.

    Elements seen once (a result row at the place this episode's shuffle put it) stay in the small
    :data:`_YOUNG` store and die young. Kept in one store of 4,096 cleared when full, each new
    element lived ~500 steps, long enough to be promoted to the collector's oldest generation: those
    promotions (~8 a step on General) paced its full collections."""
    el = _YOUNG.get(key)
    if el is None:
        el = UIElement((r[0] / W, r[1] / H, r[2] / W, r[3] / H), text, kind, clickable, focused, ref)  # positional: cheaper
        if len(_YOUNG) > _YOUNG_MAX:
            _YOUNG.clear()
        _YOUNG[key] = el
        return el
    if len(_MADE) > _MADE_MAX:
        _MADE.clear()
    _MADE[key] = el
    return el


_Key = tuple[object, str, str, bool, bool, str]
_MADE: dict[_Key, UIElement] = {}
_MADE_MAX = 4096  # entries are GC-tracked objects that every full collection visits
_YOUNG: dict[_Key, UIElement] = {}
_YOUNG_MAX = 256


class StaticElements:
    """Elements of static subtrees by identity: (element, centre) candidates not covered inside the
    subtree, in visiting order, and the subtree's own blockers. Bounded: entries keep views alive
    (the phone's shared system views, which hold no phone)."""

    def __init__(self, size: int = 512) -> None:
        self._size = size
        self._cache: OrderedDict[int, tuple[View, list[tuple[UIElement, float, float]], list[Rect]]] = OrderedDict()

    def get(self, v: View) -> tuple[list[tuple[UIElement, float, float]], list[Rect]]:
        ent = self._cache.get(id(v))
        if ent is not None and ent[0] is v:  # identity check: ids are reused after a view dies
            self._cache.move_to_end(id(v))
            return ent[1], ent[2]
        cands: list[tuple[UIElement, float, float]] = []
        blockers: list[Rect] = []
        for node in reversed(list(flatten(v))):
            r = node.visible_rect()
            if r is None:
                continue
            el = _element(node, r)
            cx, cy = (r[0] + r[2]) / 2, (r[1] + r[3]) / 2
            if el is not None and not _covered(blockers, cx, cy):
                cands.append((el, cx, cy))
            if node.blocker and (node.fill is not None or node.patch):
                blockers.append(r)
        self._cache[id(v)] = (v, cands, blockers)
        if len(self._cache) > self._size:
            self._cache.popitem(last=False)
        return cands, blockers
