"""Views shared by every phone (SystemTap), the per-tree node index, frame-cache admission and the
status bar pasted over cached frames: the same screens and behaviour as without them."""

from __future__ import annotations

import numpy as np

from digirl.core.actions import Action
from digirl.sim.content import suggestions, web_results
from digirl.sim.perturb import Dynamics
from digirl.sim.phone import Phone
from digirl.sim.render import Renderer
from digirl.sim.ui import H, SystemTap, View, W, nodes
from tests.sim.sim_reference import ReferenceRenderer


def _tap(phone: Phone, ref: str) -> None:
    v = phone.find(ref)
    assert v is not None, ref
    phone.apply(Action.tap(v.center()[0] / W, v.center()[1] / H))
    phone.end_step()


def _by_ref(root: View, prefix: str) -> View:
    return next(v for v in nodes(root) if v.ref.startswith(prefix))


def test_system_views_are_shared_and_act_on_the_tapped_phone() -> None:
    a, b = Phone(), Phone()
    a.launch("settings")
    b.launch("settings")
    for ref in ("navbar", "statusbar"):
        assert _by_ref(a.tree(), ref) is _by_ref(b.tree(), ref)
    assert isinstance(a.find("nav.home").on_tap, SystemTap)  # type: ignore[union-attr]
    _tap(b, "nav.home")
    assert (a.fg, b.fg) == ("settings", "launcher")
    c = Phone()
    assert _by_ref(b.tree(), "home.search") is _by_ref(c.tree(), "home.search")  # the shared home screen
    _tap(b, "home.app.clock")
    assert (a.fg, b.fg, c.fg) == ("settings", "clock", "launcher")


def test_shared_keyboard_types_into_the_tapped_phone() -> None:
    a, b = Phone(), Phone()
    for p in (a, b):
        _tap(p, "home.search")
    assert _by_ref(a.tree(), "kb.") is _by_ref(b.tree(), "kb.")
    _tap(a, "kb.h")
    _tap(a, "kb.i")
    _tap(b, "kb.o")
    assert a.apps["google"].fields["q"] == "hi" and b.apps["google"].fields["q"] == "o"


def test_find_and_nodes_match_the_tree() -> None:
    p = Phone()
    _tap(p, "home.search")
    tree = p.tree()
    assert p.nodes() == list(nodes(tree))
    for v in nodes(tree):
        if v.ref:
            assert p.find(v.ref) is tree.find(v.ref)
    assert p.find("no.such.ref") is None
    _tap(p, "kb.a")  # a new tree: a new index
    assert p.tree() is not tree and p.find("kb.a") is p.tree().find("kb.a")


def test_cached_content_is_fresh_lists() -> None:
    first = web_results("weather in paris")
    first.clear()
    assert web_results("weather in paris") == web_results("weather in paris") != []
    s = suggestions("pizza")
    s.append("x")
    assert "x" not in suggestions("pizza")


def test_frames_recur_across_status_bars_and_match_the_reference() -> None:
    """The same screen under other clocks and batteries: cache hits with the right status bar."""
    new, ref = Renderer(270, 600), ReferenceRenderer(270, 600)
    shots = []
    for clock, battery in [((9, 41), 87), ((9, 41), 87), ((7, 18), 38), ((12, 56), 100), ((7, 18), 38)]:
        p = Phone(Dynamics(), clock=clock, battery=battery)
        p.launch("calculator")
        got = new.render(p.tree())
        assert np.array_equal(got, ref.render(p.tree()))
        assert got.flags.writeable
        shots.append(got)
    assert new.stats["frame_hits"] == 3  # admitted on the second sighting, then any status bar
    assert np.array_equal(shots[2], shots[4]) and not np.array_equal(shots[0], shots[2])
    shots[3][:] = 0  # a caller's frame is its own
    p = Phone(Dynamics(), clock=(12, 56), battery=100)
    p.launch("calculator")
    assert np.array_equal(new.render(p.tree()), ref.render(p.tree()))
