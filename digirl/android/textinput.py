"""Turn text the agent wants to type into safe ``adb shell`` commands.

``input text <arg>`` runs through the device's ``sh`` and then through Android's ``input`` tool,
which has two quirks: a space must be written as ``%s`` (``input`` turns ``%s`` back into a space),
and it can only type characters the virtual keyboard map knows (ASCII). So:

* the argument is single-quoted for ``sh`` (a quote inside becomes ``'\\''``), which neutralises
  every shell metacharacter (``$ ` & | ; < > ( ) \\ * ? ~ #`` and quotes);
* a space becomes ``%s``; a literal ``%s`` in the text cannot be written in one ``input text``
  call (it would become a space), so the text is split between ``%`` and ``s`` into two calls;
* a newline becomes a separate ``input keyevent 66`` (ENTER) between the lines, a tab
  ``input keyevent 61`` (TAB);
* non-ASCII text (emoji, accents, CJK) goes through the ADBKeyBoard IME when it is installed
  and active (``am broadcast -a ADB_INPUT_B64 --es msg <base64>``); otherwise it is refused
  with :class:`UntypableTextError`, which the env turns into an invalid action.

Other control characters (``\\x00``–``\\x1f`` except ``\\n`` and ``\\t``) are refused as well.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

__all__ = [
    "KEYCODE_ENTER",
    "KEYCODE_TAB",
    "TextCommand",
    "UntypableTextError",
    "adbkeyboard_command",
    "plan_text_input",
    "shell_quote",
]

KEYCODE_ENTER = 66
KEYCODE_TAB = 61
#: ADBKeyBoard's broadcast action taking base64 text (avoids a second layer of escaping).
ADBKEYBOARD_B64_ACTION = "ADB_INPUT_B64"


class UntypableTextError(ValueError):
    """Text that cannot be typed on this device (no IME for non-ASCII, control characters)."""


@dataclass(frozen=True)
class TextCommand:
    """One shell command of a typing plan; ``kind`` is ``text``, ``key`` or ``ime``."""

    kind: str
    command: str


def shell_quote(s: str) -> str:
    """Single-quote ``s`` for a POSIX ``sh`` (Android's mksh/toybox sh included)."""
    return "'" + s.replace("'", "'\\''") + "'"


def _split_percent_s(chunk: str) -> list[str]:
    """Split so no piece contains a literal ``%s`` (``input text`` would turn it into a space)."""
    pieces: list[str] = []
    start = 0
    i = chunk.find("%s")
    while i >= 0:
        pieces.append(chunk[start : i + 1])  # ends with '%'
        start = i + 1  # next piece starts with 's'
        i = chunk.find("%s", start)
    pieces.append(chunk[start:])
    return [p for p in pieces if p]


def _input_text_commands(line: str) -> list[TextCommand]:
    out = []
    for piece in _split_percent_s(line):
        # Spaces become %s only *after* the split, so they never form a literal-%s boundary problem.
        out.append(TextCommand("text", "input text " + shell_quote(piece.replace(" ", "%s"))))
    return out


def adbkeyboard_command(text: str) -> TextCommand:
    """The ADBKeyBoard broadcast that types ``text`` (any Unicode) through the IME."""
    b64 = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return TextCommand("ime", f"am broadcast -a {ADBKEYBOARD_B64_ACTION} --es msg {b64}")


def plan_text_input(text: str, *, adbkeyboard: bool = False) -> list[TextCommand]:
    """Shell commands that type ``text`` exactly.

    ``adbkeyboard``: the ADBKeyBoard IME is installed and active, so non-ASCII lines can be typed.
    Raises :class:`UntypableTextError` for text that cannot be typed (see the module doc).
    """
    if not isinstance(text, str) or text == "":
        raise UntypableTextError("nothing to type")
    bad = sorted({c for c in text if (ord(c) < 32 and c not in "\n\t") or ord(c) == 127})
    if bad:
        raise UntypableTextError(f"text contains control characters {[hex(ord(c)) for c in bad]}")
    cmds: list[TextCommand] = []
    lines = text.split("\n")
    for li, line in enumerate(lines):
        if li > 0:
            cmds.append(TextCommand("key", f"input keyevent {KEYCODE_ENTER}"))
        segments = line.split("\t")
        for si, seg in enumerate(segments):
            if si > 0:
                cmds.append(TextCommand("key", f"input keyevent {KEYCODE_TAB}"))
            if not seg:
                continue
            if seg.isascii():
                cmds.extend(_input_text_commands(seg))
            elif adbkeyboard:
                cmds.append(adbkeyboard_command(seg))
            else:
                raise UntypableTextError(
                    "non-ASCII text cannot be typed with `input text`; install and enable the "
                    "ADBKeyBoard IME (com.android.adbkeyboard/.AdbIME) to type it"
                )
    return cmds
