"""The shared app builders in digirl.sim.apps.base: what they build and how the bound input behaves."""

from __future__ import annotations

from digirl.sim.apps.base import FIELD_FILL, letter_tile, tab_label
from digirl.sim.phone import Phone
from digirl.sim.ui import BLUE, FAINT, SUBTLE, TOP, WHITE, input_field


def test_text_input_is_input_field_bound_to_the_apps_field() -> None:
    app = Phone().apps["contacts"]
    app.fields["q"] = "ali"
    app.focus("q")
    rect = (12, TOP + 8, 348, TOP + 56)
    v = app.text_input(rect, "q", placeholder="Search contacts", ref="c.q", fill=FIELD_FILL, border=None)
    ref = input_field(
        rect, "ali", placeholder="Search contacts", focused=True, on_tap=None, ref="c.q", fill=FIELD_FILL, border=None
    )
    same = ("rect", "kind", "text", "ref", "fill", "radius", "border", "focused", "placeholder", "icon", "size", "fg")
    assert {k: getattr(v, k) for k in same} == {k: getattr(ref, k) for k in same}
    assert [c.ref for c in v.children] == ["c.q.clear"]  # text and clear=True: the × button
    v.children[0].on_tap()  # type: ignore[misc]
    assert app.fields["q"] == "" and app.focused == "q"
    app.blur()
    v.on_tap()  # type: ignore[misc]
    assert app.focused == "q"


def test_text_input_shows_given_text_and_no_clear_button_when_asked() -> None:
    app = Phone().apps["messages"]
    v = app.text_input((0, 0, 100, 40), "compose", placeholder="", ref="m", text="hi", clear=False)
    assert v.text == "hi" and not v.children and not v.focused
    assert (v.fill, v.border, v.radius, v.icon, v.size) == (WHITE, FAINT, 22, "search", 15)  # input_field's defaults


def test_clear_query_empties_a_search_and_reports_it() -> None:
    app = Phone().apps["photos"]
    assert app.clear_query() is False
    app.fields["q"] = "cat"
    app.focus("q")
    assert app.clear_query() is True
    assert app.fields["q"] == "" and app.focused is None


def test_letter_tile_and_tab_label() -> None:
    t = letter_tile((0, 0, 40, 40), "M", (1, 2, 3), radius=20, size=18, bold=True)
    assert (t.kind, t.text, t.fill, t.fg, t.align, t.bold, t.element) == ("text", "M", (1, 2, 3), WHITE, "center", True, False)
    on = tab_label((0, 0, 90, 40), "All", True, BLUE, ref="tab.all")
    off = tab_label((90, 0, 180, 40), "News", False, BLUE)
    assert (on.kind, on.fg, on.bold, on.size, on.ref) == ("tab", BLUE, True, 13, "tab.all")
    assert (off.fg, off.bold, off.on_tap, off.element) == (SUBTLE, False, None, None)
