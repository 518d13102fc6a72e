"""The prompt an ``hf`` policy sees and the action text it is trained to write.

Pure text: the chat messages (instruction, the last K actions, one or two screenshots) and the
format description, for a given codec and coordinate frame. Heavy libraries are not imported.
"""

from __future__ import annotations

from collections.abc import Sequence

from digirl.core.actions import Action
from digirl.core.codecs import ActionCodec, CoordFrame, get_codec

__all__ = ["DEFAULT_PROMPT", "format_hint", "history_text", "messages", "render_prompt"]

#: The built-in user prompt; ``{format}`` describes the action text and its coordinates.
DEFAULT_PROMPT = (
    "You operate an Android phone. Task: {instruction}\nPrevious actions:\n{history}\nReply with the next action {format}"
)

_JSON_HINT = (
    'as one JSON object: {"type": "DUAL_POINT", "touch": [x, y], "lift": [x, y]} (a tap lifts where it touches), '
    '{"type": "TYPE", "text": "..."}, {"type": "PRESS_BACK"}, {"type": "PRESS_HOME"}, {"type": "PRESS_ENTER"}, '
    '{"type": "STATUS_TASK_COMPLETE"} or {"type": "STATUS_TASK_IMPOSSIBLE"}.'
)
_AUTOUI_HINT = (
    'in the Auto-UI format: Action Plan: [TYPE] ; Action Decision: "action_type": "DUAL_POINT", '
    '"touch_point": "[y, x]", "lift_point": "[y, x]", "typed_text": "" (types: DUAL_POINT, TYPE, PRESS_BACK, '
    "PRESS_HOME, PRESS_ENTER, STATUS_TASK_COMPLETE, STATUS_TASK_IMPOSSIBLE)."
)
_COORDS_HINT = {
    "normalized": " x and y are fractions of the image width and height (0 to 1).",
    "pixels": " x and y are pixels of the {w}x{h} image.",
    "grid1000": " x and y run from 0 to 1000 across the image width and height.",
}


def format_hint(action_format: str, coords: str, image_size: tuple[int, int] | None = None) -> str:
    """The sentence that tells the model how to write its action."""
    base = _JSON_HINT if action_format == "json" else _AUTOUI_HINT
    hint = _COORDS_HINT[coords]
    if coords == "pixels":
        w, h = image_size or (0, 0)
        hint = hint.format(w=w, h=h)
    return base + hint


def history_text(history: Sequence[Action], codec: ActionCodec, k: int) -> str:
    """The last ``k`` actions, oldest first, one numbered line each (``none`` when empty)."""
    last = list(history)[-k:] if k > 0 else []
    if not last:
        return "none"
    first = len(history) - len(last) + 1
    lines = []
    for i, a in enumerate(last):
        text = codec.format(a) if a.is_valid else "(unparseable output)"
        lines.append(f"{first + i}. {text}")
    return "\n".join(lines)


def render_prompt(
    template: str,
    instruction: str,
    history: Sequence[Action],
    *,
    action_format: str,
    coords: str,
    frame: CoordFrame | None = None,
    history_len: int = 4,
    image_size: tuple[int, int] | None = None,
) -> str:
    """The user text of one observation (``template`` empty = :data:`DEFAULT_PROMPT`)."""
    codec = get_codec(action_format, frame)
    return (template or DEFAULT_PROMPT).format(
        instruction=instruction,
        history=history_text(history, codec, history_len),
        format=format_hint(action_format, coords, image_size),
    )


def messages(text: str, n_images: int) -> list[dict[str, object]]:
    """One user turn: ``n_images`` images (previous first, then current) and the text."""
    content: list[dict[str, str]] = [{"type": "image"} for _ in range(n_images)]
    content.append({"type": "text", "text": text})
    return [{"role": "user", "content": content}]
