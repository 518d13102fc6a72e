"""Escaping of typed text into `input text` shell commands (pure; checked with a POSIX shell parser)."""

from __future__ import annotations

import base64
import shlex

import pytest

from digirl.android.textinput import UntypableTextError, plan_text_input, shell_quote

pytestmark = pytest.mark.android


def _replay(text: str, *, adbkeyboard: bool = False) -> str:
    """What the device would type: parse each command like `sh`, apply `input`'s %s rule."""
    out = []
    for c in plan_text_input(text, adbkeyboard=adbkeyboard):
        argv = shlex.split(c.command)
        if argv[:2] == ["input", "text"]:
            assert len(argv) == 3, c.command  # one argument: nothing leaked out of the quotes
            out.append(argv[2].replace("%s", " "))
        elif argv[:2] == ["input", "keyevent"]:
            out.append({"66": "\n", "61": "\t"}[argv[2]])
        else:
            assert argv[:4] == ["am", "broadcast", "-a", "ADB_INPUT_B64"]
            out.append(base64.b64decode(argv[-1]).decode())
    return "".join(out)


@pytest.mark.parametrize(
    "text",
    [
        "hello world",
        "it's a \"quoted\" 'string'",
        "$HOME ${PATH} $(rm -rf /) `reboot`",
        "a & b | c ; d < e > f ( g ) \\ h * i ? j ~ k # l",
        "100%sure and 50%s of %%s",
        "'",
        "  leading and trailing  ",
    ],
)
def test_metacharacters_round_trip(text: str) -> None:
    assert _replay(text) == text


def test_newlines_and_tabs_become_keyevents() -> None:
    plan = plan_text_input("first line\nsecond\tcol\n")
    kinds = [c.kind for c in plan]
    assert kinds == ["text", "key", "text", "key", "text", "key"]
    assert plan[1].command == "input keyevent 66" and plan[3].command == "input keyevent 61"
    assert _replay("first line\nsecond\tcol\n") == "first line\nsecond\tcol\n"


def test_literal_percent_s_is_split_between_commands() -> None:
    plan = plan_text_input("50%sale")
    assert [shlex.split(c.command)[2] for c in plan] == ["50%", "sale"]


def test_emoji_needs_adbkeyboard() -> None:
    with pytest.raises(UntypableTextError, match="ADBKeyBoard"):
        plan_text_input("nice 👍")
    plan = plan_text_input("nice 👍\nok", adbkeyboard=True)
    assert [c.kind for c in plan] == ["ime", "key", "text"]
    assert _replay("nice 👍\nok", adbkeyboard=True) == "nice 👍\nok"


@pytest.mark.parametrize("bad", ["", "bell\x07", "nul\x00", "del\x7f"])
def test_untypable_text(bad: str) -> None:
    with pytest.raises(UntypableTextError):
        plan_text_input(bad)


def test_shell_quote() -> None:
    assert shlex.split("echo " + shell_quote("a'b")) == ["echo", "a'b"]
