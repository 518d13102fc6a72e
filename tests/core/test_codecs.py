"""Action text codecs: exact canonical strings, round trips, tolerant parsing, malformed text."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from digirl.core.actions import MAX_TEXT_LEN, Action, ActionType
from digirl.core.codecs import (
    CODECS,
    MAX_INPUT_LEN,
    ActionCodec,
    AutoUICodec,
    CogAgentCodec,
    JSONCodec,
    action_from_dict,
    action_to_dict,
    format_action,
    get_codec,
    parse_action,
)

NP = '"touch_point": "[-1.0, -1.0]", "lift_point": "[-1.0, -1.0]"'
DP = '"action_type": "DUAL_POINT", '

# (action, autoui, cogagent, json) — one row per action kind, exact canonical strings.
CANONICAL = [
    (
        Action.tap(0.52, 0.31),
        'Action Plan: [DUAL_POINT] ; Action Decision: "action_type": "DUAL_POINT", '
        '"touch_point": "[0.3100, 0.5200]", "lift_point": "[0.3100, 0.5200]", "typed_text": ""',
        "Grounded Operation: tap [[520,310]]",
        '{"type": "DUAL_POINT", "touch": [0.52, 0.31], "lift": [0.52, 0.31]}',
    ),
    (
        Action.swipe((0.5, 0.8), (0.5, 0.2)),
        'Action Plan: [DUAL_POINT] ; Action Decision: "action_type": "DUAL_POINT", '
        '"touch_point": "[0.8000, 0.5000]", "lift_point": "[0.2000, 0.5000]", "typed_text": ""',
        "Grounded Operation: swipe [[500,800],[500,200]]",
        '{"type": "DUAL_POINT", "touch": [0.5, 0.8], "lift": [0.5, 0.2]}',
    ),
    (
        Action.type_text("best buy"),
        f'Action Plan: [TYPE] ; Action Decision: "action_type": "TYPE", {NP}, "typed_text": "best buy"',
        'Grounded Operation: type "best buy"',
        '{"type": "TYPE", "text": "best buy"}',
    ),
    (
        Action.back(),
        f'Action Plan: [PRESS_BACK] ; Action Decision: "action_type": "PRESS_BACK", {NP}, "typed_text": ""',
        "Grounded Operation: press back",
        '{"type": "PRESS_BACK"}',
    ),
    (
        Action.home(),
        f'Action Plan: [PRESS_HOME] ; Action Decision: "action_type": "PRESS_HOME", {NP}, "typed_text": ""',
        "Grounded Operation: press home",
        '{"type": "PRESS_HOME"}',
    ),
    (
        Action.enter(),
        f'Action Plan: [PRESS_ENTER] ; Action Decision: "action_type": "PRESS_ENTER", {NP}, "typed_text": ""',
        "Grounded Operation: press enter",
        '{"type": "PRESS_ENTER"}',
    ),
    (
        Action.complete(),
        f'Action Plan: [STATUS_TASK_COMPLETE] ; Action Decision: "action_type": "STATUS_TASK_COMPLETE", {NP}, "typed_text": ""',
        "Grounded Operation: task complete",
        '{"type": "STATUS_TASK_COMPLETE"}',
    ),
    (
        Action.impossible(),
        "Action Plan: [STATUS_TASK_IMPOSSIBLE] ; Action Decision: "
        f'"action_type": "STATUS_TASK_IMPOSSIBLE", {NP}, "typed_text": ""',
        "Grounded Operation: task impossible",
        '{"type": "STATUS_TASK_IMPOSSIBLE"}',
    ),
]
NAMES = ("autoui", "cogagent", "json")
ROWS = [(name, row[0], row[i + 1]) for row in CANONICAL for i, name in enumerate(NAMES)]


def test_canonical_table_covers_every_valid_type() -> None:
    covered = {row[0].type for row in CANONICAL}
    assert covered == {t for t in ActionType if t is not ActionType.INVALID}
    assert {row[0].kind for row in CANONICAL} >= {"tap", "swipe"}


@pytest.mark.parametrize(("codec", "action", "text"), ROWS, ids=[f"{r[0]}-{r[1].kind}" for r in ROWS])
def test_canonical_round_trip(codec: str, action: Action, text: str) -> None:
    assert format_action(action, codec) == text
    assert parse_action(text, codec) == action
    assert format_action(parse_action(text, codec), codec) == text


# Text with every escaped character, a quote of the other kind and non-ASCII.
TRICKY = 'say "hi" \\ it\'s\n\tdone\r — 東京'


@pytest.mark.parametrize(
    ("codec", "expected"),
    [
        (
            "autoui",
            f'Action Plan: [TYPE] ; Action Decision: "action_type": "TYPE", {NP}, '
            '"typed_text": "say \\"hi\\" \\\\ it\'s\\n\\tdone\\r — 東京"',
        ),
        ("cogagent", 'Grounded Operation: type "say \\"hi\\" \\\\ it\'s\\n\\tdone\\r — 東京"'),
        ("json", '{"type": "TYPE", "text": "say \\"hi\\" \\\\ it\'s\\n\\tdone\\r — 東京"}'),
    ],
)
def test_typed_text_escapes_round_trip(codec: str, expected: str) -> None:
    a = Action.type_text(TRICKY)
    assert format_action(a, codec) == expected
    assert "\n" not in expected  # one line, so a line-based reader never splits it
    assert parse_action(expected, codec) == a


def test_cogagent_keeps_both_points_of_a_short_gesture() -> None:
    a = Action.dual_point((0.5, 0.5), (0.51, 0.5))  # a tap (length 0.01) whose lift differs
    assert a.is_tap
    assert format_action(a, "cogagent") == "Grounded Operation: swipe [[500,500],[510,500]]"
    assert parse_action(format_action(a, "cogagent"), "cogagent") == a


def test_cogagent_is_lossy_off_grid() -> None:
    a = Action.tap(0.12345, 0.5)  # stored as 0.1235 (4 decimals); the grid keeps 3
    assert format_action(a, "cogagent") == "Grounded Operation: tap [[124,500]]"
    assert parse_action(format_action(a, "cogagent"), "cogagent") == Action.tap(0.124, 0.5)


# ---------------------------------------------------------------------------------------- tolerant
AUTOUI_TOLERANT = [
    # the example in Auto-UI's own output, with a multi-step plan
    (
        'Action Plan: [DUAL_POINT,TYPE] ; Action Decision: "action_type": "DUAL_POINT", '
        '"touch_point": "[0.5200, 0.3100]", "lift_point": "[0.5200, 0.3100]", "typed_text": ""',
        Action.tap(0.31, 0.52),
    ),
    # no plan, no prefix (DigiRL history strings), fewer decimals
    (
        DP + '"touch_point": "[0.8, 0.5]", "lift_point": "[0.2, 0.5]", "typed_text": ""',
        Action.swipe((0.5, 0.8), (0.5, 0.2)),
    ),
    # more decimals (rounded to 4) and extra whitespace
    (
        'Action Decision:   "action_type" :  "DUAL_POINT" ,  "touch_point" : " [ 0.123456 ,0.654321 ] ", '
        '"lift_point": "[0.123456, 0.654321]" , "typed_text" : ""  ',
        Action.tap(0.6543, 0.1235),
    ),
    # single quotes, as Auto-GUI's evaluation writes
    (
        "Action Decision: 'action_type': 'TYPE', 'touch_point': '[-1.0, -1.0]', "
        "'lift_point': '[-1.0, -1.0]', 'typed_text': 'hello'",
        Action.type_text("hello"),
    ),
    # raw (unescaped) quotes inside the typed text
    (
        '"action_type": "TYPE", "typed_text": "search "red shoes" now"',
        Action.type_text('search "red shoes" now'),
    ),
    # key order changed, text not last
    ('"typed_text": "hi", "action_type": "TYPE", "touch_point": "[-1.0, -1.0]"', Action.type_text("hi")),
    # aliases without STATUS_ (DigiRL's translator matches "TASK_IMPOSSIBLE"), case, AitW int id
    ('Action Decision: "action_type": "TASK_IMPOSSIBLE"', Action.impossible()),
    ('"action_type": "status_task_complete", "typed_text": "ignored"', Action.complete()),
    ('"action_type": 5, "touch_point": "[-1.0, -1.0]"', Action.back()),
    ('"action_type": "press home"', Action.home()),
    # bare lists and a JSON-ish wrapper
    ('{"action_type": 4, "touch_point": [0.1, 0.2], "lift_point": [0.1, 0.2]}', Action.tap(0.2, 0.1)),
    # non-point actions ignore whatever points they carry
    ('"action_type": "PRESS_ENTER", "touch_point": "[7, nan]", "lift_point": "garbage"', Action.enter()),
]

COGAGENT_TOLERANT = [
    # the full CogAgent answer: plan, next action, then the operation
    (
        "Plan: 1. Open the app. 2. Search.\nNext Action: Tap the search bar.\nGrounded Operation: tap [[512,88]]",
        Action.tap(0.512, 0.088),
    ),
    ("Grounded Operation:tap [[500,300]]", Action.tap(0.5, 0.3)),  # no space after the colon
    ("TAP [[ 500 , 300 ]]", Action.tap(0.5, 0.3)),  # no marker, upper case, spaces
    ("click [[500,300]]", Action.tap(0.5, 0.3)),
    ("tap [[100,200,300,400]]", Action.tap(0.2, 0.3)),  # a box: its centre
    ("Grounded Operation: [button] Search -> tap [[250,750]]", Action.tap(0.25, 0.75)),
    ("tap [[500,300]] on the blue button\nmore text", Action.tap(0.5, 0.3)),
    ("tap [[500.5,300]]", Action.tap(0.5005, 0.3)),
    # direction forms: swipe = the finger's direction; scroll = the content's direction
    ("swipe up", Action.swipe((0.5, 0.7), (0.5, 0.3))),
    ("swipe down", Action.swipe((0.5, 0.3), (0.5, 0.7))),
    ("Swipe Left", Action.swipe((0.7, 0.5), (0.3, 0.5))),
    ("swipe right", Action.swipe((0.3, 0.5), (0.7, 0.5))),
    ("scroll down", Action.swipe((0.5, 0.7), (0.5, 0.3))),
    ("Grounded Operation: scroll up", Action.swipe((0.5, 0.3), (0.5, 0.7))),
    ("scroll left", Action.swipe((0.3, 0.5), (0.7, 0.5))),
    ("scroll right", Action.swipe((0.7, 0.5), (0.3, 0.5))),
    ("drag [[100,900],[100,100]]", Action.swipe((0.1, 0.9), (0.1, 0.1))),
    ("type 'hello'", Action.type_text("hello")),
    ("type hello world", Action.type_text("hello world")),
    ('type "say "hi" loud"', Action.type_text('say "hi" loud')),
    ('TYPE "x" into the field', Action.type_text("x")),
    ("press_back", Action.back()),
    ("PRESS HOME", Action.home()),
    ("press  enter.", Action.enter()),
    ("STATUS_TASK_COMPLETE", Action.complete()),
    ("status task impossible", Action.impossible()),
    ("task completed", Action.complete()),
]

JSON_TOLERANT = [
    ('```json\n{"type": "PRESS_BACK"}\n```', Action.back()),
    ('I will tap. {"type":"DUAL_POINT","lift":[0.5,0.5],"touch":[0.5,0.5]} done', Action.tap(0.5, 0.5)),
    ('{"action_type": "type", "typed_text": "hi"}', Action.type_text("hi")),
    ('{"type": "DUAL_POINT", "touch_point": [0, 1], "lift_point": [1, 0]}', Action.swipe((0, 1), (1, 0))),
    ('{"type": "task_complete"}', Action.complete()),
    ('{"type": "PRESS_HOME", "extra": 1}', Action.home()),
    ('{ not json } {"type": "PRESS_ENTER"}', Action.enter()),
]


@pytest.mark.parametrize(("text", "expected"), AUTOUI_TOLERANT)
def test_autoui_tolerant(text: str, expected: Action) -> None:
    assert parse_action(text, "autoui") == expected


@pytest.mark.parametrize(("text", "expected"), COGAGENT_TOLERANT)
def test_cogagent_tolerant(text: str, expected: Action) -> None:
    assert parse_action(text, "cogagent") == expected


@pytest.mark.parametrize(("text", "expected"), JSON_TOLERANT)
def test_json_tolerant(text: str, expected: Action) -> None:
    assert parse_action(text, "json") == expected


# ---------------------------------------------------------------------------------------- malformed
MALFORMED = [
    ("autoui", "", "empty model output"),
    ("autoui", "   \n", "empty model output"),
    ("autoui", "I think I should tap the button", 'no "action_type" field'),
    ("autoui", '"action_type": "CLICK"', "unknown action_type 'CLICK'"),
    ("autoui", '"action_type": "INVALID"', "unknown action_type"),
    ("autoui", DP + '"touch_point": "[0.1, 0.2]"', 'without a "lift_point"'),
    ("autoui", DP + '"touch_point": "[0.1]", "lift_point": "[0.1, 0.2]"', "not a pair"),
    ("autoui", DP + '"touch_point": "[nan, 0.2]", "lift_point": "[0.1, 0.2]"', "non-finite"),
    ("autoui", DP + '"touch_point": "[0.1, inf]", "lift_point": "[0.1, 0.2]"', "non-finite"),
    ("autoui", DP + '"touch_point": "[0.1, 0.2]", "lift_point": "[1.5, 0.2]"', "outside"),
    ("autoui", DP + '"touch_point": "[-1.0, -1.0]", "lift_point": "[0.1, 0.2]"', "outside"),
    ("autoui", DP + '"touch_point": "[a, b]", "lift_point": "[0.1, 0.2]"', "not a number"),
    ("autoui", '"action_type": "TYPE", "touch_point": "[-1.0, -1.0]"', 'TYPE without a "typed_text"'),
    ("autoui", '"action_type": "TYPE", "typed_text": ""', "typed text is empty"),
    ("autoui", '"action_type": "TYPE", "typed_text": "unterminated', "never closes"),
    ("autoui", DP + '"lift_point": "[0.1, 0.2]", "touch_point": "[0.1, 0.2', "never closes"),
    ("autoui", '"action_type": ', "has no value"),
    ("cogagent", "Grounded Operation:", "no operation found"),
    ("cogagent", "jump [[1,2]]", "unknown operation 'jump'"),
    ("cogagent", "tap", "tap needs one point"),
    ("cogagent", "tap [[1,2,3]]", "tap needs one point"),
    ("cogagent", "tap [[1001,300]]", "outside 0..1000"),
    ("cogagent", "tap [[-5,300]]", "outside 0..1000"),
    ("cogagent", "tap [[nan,300]]", "not a number"),
    ("cogagent", "tap [[inf,300]]", "not a number"),
    ("cogagent", "tap [[]]", "not a number"),
    ("cogagent", "swipe [[1,2]]", "swipe needs two points"),
    ("cogagent", "swipe diagonally", "swipe needs two points"),
    ("cogagent", "press power", "unknown key"),
    ("cogagent", "type", "type without text"),
    ("cogagent", 'type ""', "typed text is empty"),
    ("cogagent", 'type "abc', "never closes"),
    ("json", "no json here", "no JSON object found"),
    ("json", '{"type": 4}', 'no string "type"'),
    ("json", '{"type": "SWIPE"}', "unknown action type 'SWIPE'"),
    ("json", '{"type": "INVALID", "text": "x"}', "unknown action type"),
    ("json", '{"type": "DUAL_POINT", "touch": [0.1, 0.2]}', 'needs "lift"'),
    ("json", '{"type": "DUAL_POINT", "touch": [0.1], "lift": [0.1, 0.2]}', "must be [x, y]"),
    ("json", '{"type": "DUAL_POINT", "touch": [true, 0.2], "lift": [0.1, 0.2]}', "must be numbers"),
    ("json", '{"type": "DUAL_POINT", "touch": ["0.1", 0.2], "lift": [0.1, 0.2]}', "must be numbers"),
    ("json", '{"type": "DUAL_POINT", "touch": [NaN, 0.2], "lift": [0.1, 0.2]}', "non-finite"),
    ("json", '{"type": "DUAL_POINT", "touch": [Infinity, 0.2], "lift": [0.1, 0.2]}', "non-finite"),
    ("json", '{"type": "DUAL_POINT", "touch": [1e999, 0.2], "lift": [0.1, 0.2]}', "non-finite"),
    ("json", '{"type": "DUAL_POINT", "touch": [' + "9" * 400 + ', 0.2], "lift": [0.1, 0.2]}', "too large"),
    ("json", '{"type": "DUAL_POINT", "touch": [0.1, -0.2], "lift": [0.1, 0.2]}', "outside"),
    ("json", '{"type": "TYPE", "text": 5}', 'needs a string "text"'),
    ("json", '{"type": "TYPE", "text": ""}', "typed text is empty"),
    ("json", "[" * 5000 + "{" * 5000, "no JSON object found"),
]


@pytest.mark.parametrize(("codec", "text", "reason"), MALFORMED)
def test_malformed_becomes_invalid(codec: str, text: str, reason: str) -> None:
    a = parse_action(text, codec)
    assert a.type is ActionType.INVALID
    assert a.text == text  # the raw text is kept
    assert reason in a.error, a.error


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_typed_text_length_limit(codec: str) -> None:
    c = get_codec(codec)
    ok = Action.type_text("x" * MAX_TEXT_LEN)
    assert c.parse(c.format(ok)) == ok
    long_text = c.format(ok).replace("x" * MAX_TEXT_LEN, "x" * (MAX_TEXT_LEN + 1))
    bad = c.parse(long_text)
    assert bad.type is ActionType.INVALID
    assert f"more than {MAX_TEXT_LEN}" in bad.error


@pytest.mark.parametrize("codec", sorted(CODECS))
@pytest.mark.parametrize("value", [None, 42, b'{"type": "PRESS_BACK"}', ["tap"]])
def test_non_string_input(codec: str, value: object) -> None:
    a = get_codec(codec).parse(value)  # type: ignore[arg-type]
    assert a.type is ActionType.INVALID
    assert "expected model text (str)" in a.error
    assert a.text == repr(value)


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_overlong_model_output(codec: str) -> None:
    text = get_codec(codec).format(Action.back()) + " " * MAX_INPUT_LEN
    a = parse_action(text, codec)
    assert a.type is ActionType.INVALID
    assert f"more than {MAX_INPUT_LEN}" in a.error


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_format_invalid_raises(codec: str) -> None:
    with pytest.raises(ValueError, match="INVALID action has no"):
        format_action(Action.invalid("garbage", "no action"), codec)
    with pytest.raises(ValueError, match="formats Action values"):
        format_action("tap", codec)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------- registry
def test_registry() -> None:
    assert sorted(CODECS) == ["autoui", "cogagent", "json"]
    assert isinstance(get_codec("autoui"), AutoUICodec)
    assert isinstance(get_codec("cogagent"), CogAgentCodec)
    assert isinstance(get_codec("json"), JSONCodec)
    for name, codec in CODECS.items():
        assert isinstance(codec, ActionCodec)
        assert codec.name == name
    with pytest.raises(ValueError, match="unknown action codec 'xml'; available: autoui, cogagent, json"):
        get_codec("xml")
    with pytest.raises(ValueError, match="available"):
        parse_action('{"type": "PRESS_BACK"}', "nope")
    # json is the default
    assert parse_action('{"type": "PRESS_BACK"}') == Action.back()
    assert format_action(Action.back()) == '{"type": "PRESS_BACK"}'


# ---------------------------------------------------------------------------------------- dicts
DICT_CASES = [
    (Action.tap(0.5, 0.25), {"type": "DUAL_POINT", "touch": [0.5, 0.25], "lift": [0.5, 0.25]}),
    (Action.type_text("hi"), {"type": "TYPE", "text": "hi"}),
    (Action.back(), {"type": "PRESS_BACK"}),
    (Action.impossible(), {"type": "STATUS_TASK_IMPOSSIBLE"}),
    (Action.invalid("tap it!", "no type"), {"type": "INVALID", "text": "tap it!", "error": "no type"}),
]


@pytest.mark.parametrize(("action", "d"), DICT_CASES)
def test_dict_round_trip(action: Action, d: dict[str, object]) -> None:
    assert action_to_dict(action) == d
    assert action_from_dict(d) == action
    assert action_from_dict(json.loads(json.dumps(action_to_dict(action)))) == action


@pytest.mark.parametrize(
    ("d", "problem"),
    [
        ("PRESS_BACK", "must be a mapping"),
        ({}, "no valid 'type'"),
        ({"type": "TAP"}, "no valid 'type' (got 'TAP'"),
        ({"type": 4}, "no valid 'type'"),
        ({"type": "DUAL_POINT", "touch": [0.1, 0.2]}, "lacks ['lift']"),
        ({"type": "DUAL_POINT", "touch": [0.1, 0.2], "lift": [0.1]}, "lift must be a list [x, y]"),
        ({"type": "DUAL_POINT", "touch": [0.1, 2.0], "lift": [0.1, 0.2]}, "must lie in [0, 1]"),
        ({"type": "DUAL_POINT", "touch": [0.1, None], "lift": [0.1, 0.2]}, "must be numbers"),
        ({"type": "TYPE"}, "lacks ['text']"),
        ({"type": "TYPE", "text": ""}, "typed text is empty"),
        ({"type": "TYPE", "text": 3}, "must be a string"),
        ({"type": "PRESS_HOME", "text": ""}, "unexpected keys ['text']"),
        ({"type": "INVALID", "text": None, "error": "e"}, "must be strings"),
        ({"type": "INVALID", "text": "x", "error": "e", "when": 1}, "unexpected keys ['when']"),
    ],
)
def test_from_dict_rejects_bad_data(d: object, problem: str) -> None:
    with pytest.raises(ValueError) as ei:
        action_from_dict(d)  # type: ignore[arg-type]
    assert problem in str(ei.value)


def test_to_dict_rejects_non_action() -> None:
    with pytest.raises(ValueError, match="takes an Action"):
        action_to_dict({"type": "PRESS_BACK"})  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------- properties
unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
grid = st.integers(min_value=0, max_value=1000).map(lambda v: v / 1000)
texts = st.text(min_size=1, max_size=40)
non_point = st.sampled_from([Action.back(), Action.home(), Action.enter(), Action.complete(), Action.impossible()])


def actions(coord: st.SearchStrategy[float]) -> st.SearchStrategy[Action]:
    points = st.tuples(coord, coord)
    return st.one_of(
        st.builds(Action.dual_point, points, points),
        st.builds(lambda p: Action.tap(*p), points),
        st.builds(Action.type_text, texts),
        non_point,
    )


@settings(max_examples=200, deadline=None)
@given(action=actions(unit), codec=st.sampled_from(["autoui", "json"]))
def test_exact_codecs_round_trip(action: Action, codec: str) -> None:
    text = format_action(action, codec)
    assert parse_action(text, codec) == action
    assert format_action(parse_action(text, codec), codec) == text


@settings(max_examples=200, deadline=None)
@given(action=actions(grid))
def test_cogagent_round_trip_on_grid(action: Action) -> None:
    text = format_action(action, "cogagent")
    assert parse_action(text, "cogagent") == action
    assert format_action(parse_action(text, "cogagent"), "cogagent") == text


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=300), codec=st.sampled_from(sorted(CODECS)))
def test_parse_never_raises(text: str, codec: str) -> None:
    a = parse_action(text, codec)
    assert isinstance(a, Action)
    if not a.is_valid:
        assert a.text == text and a.error
        assert "parser error" not in a.error  # the catch-all safety net was not needed


@settings(max_examples=200, deadline=None)
@given(
    text=st.builds(
        lambda a, b: a + b,
        st.sampled_from([DP + '"touch_point": "', "tap [[", '{"type": "TYPE", "text": "']),
        st.text(max_size=40),
    ),
    codec=st.sampled_from(sorted(CODECS)),
)
def test_parse_never_raises_on_near_misses(text: str, codec: str) -> None:
    a = parse_action(text, codec)
    assert isinstance(a, Action)
    assert a.is_valid or "parser error" not in a.error


bad_coord = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf]),
    st.floats(min_value=1.0, exclude_min=True, allow_nan=False, allow_infinity=False),
    st.floats(max_value=0.0, exclude_max=True, allow_nan=False, allow_infinity=False),
)


@settings(max_examples=200, deadline=None)
@given(bad=bad_coord, good=unit, which=st.integers(0, 3))
def test_bad_coordinates_are_invalid(bad: float, good: float, which: int) -> None:
    vals = [good] * 4
    vals[which] = bad
    ty, tx, ly, lx = vals
    autoui = f'"action_type": "DUAL_POINT", "touch_point": "[{ty!r}, {tx!r}]", "lift_point": "[{ly!r}, {lx!r}]", "typed_text": ""'
    js = json.dumps({"type": "DUAL_POINT", "touch": [tx, ty], "lift": [lx, ly]})
    for codec, text in (("autoui", autoui), ("json", js)):
        a = parse_action(text, codec)
        assert a.type is ActionType.INVALID, (codec, text)
        assert "non-finite" in a.error or "outside" in a.error


@settings(max_examples=100, deadline=None)
@given(x=st.one_of(st.integers(max_value=-1), st.integers(min_value=1001)), y=st.integers(0, 1000))
def test_cogagent_off_grid_is_invalid(x: int, y: int) -> None:
    a = parse_action(f"tap [[{x},{y}]]", "cogagent")
    assert a.type is ActionType.INVALID
    assert "outside 0..1000" in a.error
