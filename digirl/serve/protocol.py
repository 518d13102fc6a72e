"""Chat-completion requests → observations, actions → chat-completion responses.

A request is an OpenAI ``/v1/chat/completions`` body. The **last user message** carries the
instruction (its text parts) and the screenshot (its last ``image_url`` part, a ``data:`` URL with
base64 PNG/JPEG/WebP bytes; an earlier image in the same message is the previous screenshot). Earlier
assistant messages are the actions taken so far (parsed with the action codecs). An optional
``digirl`` object gives what chat messages cannot: ``history`` (action objects, overriding the
assistant messages), ``elements`` (UI elements, as stored in datasets) and ``step``.

Every problem with a request raises :class:`RequestError` with a 4xx status and an OpenAI-style
error body; nothing about the request can cause a 5xx. Every field is checked here, before the
request joins a batch: numbers are finite and in range (element bounds normalized, temperature,
``n``, ``step``), texts and lists bounded, so no request can make a batch it shares fail.
"""

from __future__ import annotations

import binascii
import io
import math
import re
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image

from digirl.core.actions import Action
from digirl.core.codecs import CODECS, action_from_dict, action_to_dict
from digirl.core.types import Observation, UIElement
from digirl.policies.base import ActOutput

__all__ = ["CONTENT_MODES", "PIXEL_COST", "Limits", "ParsedRequest", "RequestError", "Reserve", "completion", "parse_request"]

#: How the message content is written: the policy's own text, or the action in a codec.
CONTENT_MODES = ("raw", *sorted(CODECS))
_ROLES = {"system", "developer", "user", "assistant", "tool"}
_IMAGE_FORMATS = {"PNG", "JPEG", "WEBP", "GIF", "BMP"}
#: Base64 text (whitespace allowed, as the decoder skips it), checked in place from an offset.
_BASE64 = re.compile(r"[A-Za-z0-9+/\s]*={0,2}\s*")


class RequestError(Exception):
    """A bad request: ``status`` (4xx, or 503 when the server is full), a message for the client,
    the offending parameter; ``retry_after`` (seconds) goes out as a ``Retry-After`` header."""

    def __init__(
        self, status: int, message: str, *, param: str | None = None, code: str | None = None, retry_after: int | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code
        self.retry_after = retry_after

    def body(self) -> dict[str, Any]:
        kind = {401: "authentication_error", 404: "not_found_error", 413: "request_too_large", 503: "server_busy"}.get(
            self.status, "invalid_request_error"
        )
        return {"error": {"message": self.message, "type": kind, "param": self.param, "code": self.code}}


@dataclass(frozen=True)
class Limits:
    """Bounds on what one request may carry."""

    max_body_bytes: int = 32 * 1024 * 1024
    max_image_bytes: int = 16 * 1024 * 1024
    max_image_pixels: int = 4096 * 4096
    max_n: int = 16
    max_history: int = 256
    max_elements: int = 2000
    #: Arrays and objects inside one another (a real request nests 7 deep).
    max_json_depth: int = 32
    #: Values in the body (a request with 2,000 elements holds about 20,000).
    max_json_values: int = 200_000
    max_messages: int = 1024
    #: Characters of one text: a text part, an assistant message, an element's text or ref.
    max_text_chars: int = 16_384
    max_step: int = 1_000_000


#: ``reserve(n)``: count ``n`` more bytes against the server's in-flight budget (raises a 503 past it).
Reserve = Callable[[int], None]
#: Bytes an image of one pixel may cost while decoded: Pillow's 4-byte pixels and the RGB array.
PIXEL_COST = 7


@dataclass(frozen=True)
class ParsedRequest:
    observation: Observation
    n: int
    greedy: bool
    temperature: float
    model: str


def _bad(message: str, param: str | None = None, status: int = 400, code: str | None = None) -> RequestError:
    return RequestError(status, message, param=param, code=code)


def _decode_image(url: Any, param: str, limits: Limits, reserve: Reserve | None = None) -> np.ndarray:
    """The screenshot in a base64 ``data:`` URL as an RGB array. Copies are kept few (the URL may be
    16 MiB of text): the base64 text is checked in place, sliced once and decoded once; Pillow's
    pixels become the array without an intermediate RGB copy."""
    if isinstance(url, Mapping):
        url = url.get("url")
    if not isinstance(url, str):
        raise _bad("image_url must be an object with a string 'url' (a data: URL)", param)
    if not url.startswith("data:"):
        raise _bad("only data: URLs with base64 image bytes are accepted (the server fetches nothing)", param)
    comma = url.find(",", 0, 256)
    if comma < 0 or ";base64" not in url[:comma]:
        raise _bad("the image data: URL must be base64 encoded (data:image/png;base64,...)", param)
    if len(url) - comma - 1 > limits.max_image_bytes * 4 // 3 + 4:
        raise _bad(f"image is larger than {limits.max_image_bytes} bytes", param, 413, "image_too_large")
    if _BASE64.fullmatch(url, comma + 1) is None:
        raise _bad("the image is not valid base64", param, code="invalid_base64")
    try:
        raw = binascii.a2b_base64(url[comma + 1 :])  # skips the whitespace the check allowed
    except (binascii.Error, ValueError):
        raise _bad("the image is not valid base64", param, code="invalid_base64") from None
    try:
        with Image.open(io.BytesIO(raw)) as im:
            w, h = im.size
            if w * h > limits.max_image_pixels:
                raise _bad(f"image is {w}x{h}, more than {limits.max_image_pixels} pixels", param, 413, "image_too_large")
            if im.format not in _IMAGE_FORMATS:
                raise _bad(f"unsupported image format {im.format}", param, code="invalid_image")
            if reserve is not None:  # the header says how large the pixels will be: count them first
                reserve(PIXEL_COST * w * h)
            im.load()
            del raw
            rgb = im if im.mode == "RGB" else im.convert("RGB")
            if rgb.width == 0 or rgb.height == 0:
                raise _bad("the image has no pixels", param, code="invalid_image")
            return np.asarray(rgb, dtype=np.uint8)
    except RequestError:
        raise
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as e:
        raise _bad(f"the image cannot be decoded ({type(e).__name__})", param, code="invalid_image") from None


def _parts(content: Any, param: str) -> list[Mapping[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if content is None:
        return []
    if not isinstance(content, list) or not all(isinstance(p, Mapping) for p in content):
        raise _bad("message content must be a string or a list of content parts", param)
    return content


def _text(v: Any, param: str, limits: Limits, what: str = "a string") -> str:
    if not isinstance(v, str):
        raise _bad(f"{param} must be {what}", param)
    if len(v) > limits.max_text_chars:
        raise _bad(f"{param} has {len(v)} characters, more than {limits.max_text_chars}", param)
    return v


def _action_from_text(text: str) -> Action:
    """The first codec that reads ``text`` as a valid action (history given as assistant messages)."""
    for name in ("json", "autoui", "cogagent"):
        a = CODECS[name].parse(text)
        if a.is_valid:
            return a
    return Action.invalid(text, "no codec reads this assistant message as an action")


def _finite_number(v: Any) -> bool:
    """A JSON number a float holds finitely (JSON integers may have 4,000 digits: float() overflows)."""
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return abs(v) <= 2**1000
    return isinstance(v, float) and math.isfinite(v)


def _element(e: Any, param: str, limits: Limits) -> UIElement:
    """One UI element, every field checked: bounds are 4 finite numbers, normalized to the
    screenshot (0 <= x0 <= x1 <= 1, 0 <= y0 <= y1 <= 1); text fields are strings, flags booleans."""
    if not isinstance(e, Mapping):
        raise _bad(f"{param} must be an object {{'bounds': [x0, y0, x1, y1], 'text', ...}}", param)
    unknown = set(e) - {"bounds", "text", "kind", "clickable", "focused", "ref"}
    if unknown:
        raise _bad(f"{param} has unknown keys {sorted(unknown)} (known: bounds, text, kind, clickable, focused, ref)", param)
    b = e.get("bounds")
    if not isinstance(b, list) or len(b) != 4 or not all(_finite_number(v) for v in b):
        raise _bad(f"{param}.bounds must be a list of 4 finite numbers [x0, y0, x1, y1]", f"{param}.bounds")
    x0, y0, x1, y1 = (float(v) for v in b)
    if not (0.0 <= x0 <= x1 <= 1.0 and 0.0 <= y0 <= y1 <= 1.0):
        raise _bad(
            f"{param}.bounds {b} must be normalized to the screenshot: 0 <= x0 <= x1 <= 1 and 0 <= y0 <= y1 <= 1 "
            "(clip elements that reach past the screen)",
            f"{param}.bounds",
        )
    flags = {}
    for key, default in (("clickable", True), ("focused", False)):
        v = e.get(key, default)
        if not isinstance(v, bool):
            raise _bad(f"{param}.{key} must be true or false", f"{param}.{key}")
        flags[key] = v
    return UIElement(
        bounds=(x0, y0, x1, y1),
        text=_text(e.get("text", ""), f"{param}.text", limits),
        kind=_text(e.get("kind", "view"), f"{param}.kind", limits),
        clickable=flags["clickable"],
        focused=flags["focused"],
        ref=_text(e.get("ref", ""), f"{param}.ref", limits),
    )


def _extension(ext: Any, limits: Limits) -> tuple[tuple[Action, ...] | None, tuple[UIElement, ...] | None, int | None]:
    if ext is None:
        return None, None, None
    if not isinstance(ext, Mapping):
        raise _bad("'digirl' must be an object", "digirl")
    unknown = set(ext) - {"history", "elements", "step"}
    if unknown:
        raise _bad(f"'digirl' has unknown keys {sorted(unknown)} (known: history, elements, step)", "digirl")
    history = elements = None
    if "history" in ext:
        h = ext["history"]
        if not isinstance(h, list) or len(h) > limits.max_history:
            raise _bad(f"digirl.history must be a list of at most {limits.max_history} action objects", "digirl.history")
        try:
            history = tuple(action_from_dict(a) for a in h)
        except (TypeError, ValueError, OverflowError) as e:  # OverflowError: a 400-digit coordinate
            raise _bad(f"digirl.history: {e}", "digirl.history") from None
    if "elements" in ext and ext["elements"] is not None:
        el = ext["elements"]
        if not isinstance(el, list) or len(el) > limits.max_elements:
            raise _bad(f"digirl.elements must be a list of at most {limits.max_elements} elements", "digirl.elements")
        elements = tuple(_element(e, f"digirl.elements[{i}]", limits) for i, e in enumerate(el))
    step = ext.get("step")
    if step is not None and (isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= limits.max_step):
        raise _bad(f"digirl.step must be an integer in 0..{limits.max_step}", "digirl.step")
    return history, elements, step


def _sampling(body: Mapping[str, Any], limits: Limits) -> tuple[int, float]:
    """(n, temperature) of a request, each checked: an integer in 1..max_n, a finite number in [0, 2]."""
    n = body.get("n", 1)
    if n is None:
        n = 1
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= limits.max_n:
        raise _bad(f"'n' must be an integer in 1..{limits.max_n}", "n")
    temperature = body.get("temperature", 1.0)
    if temperature is None:
        temperature = 1.0
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not 0 <= temperature <= 2:
        raise _bad("'temperature' must be a number in [0, 2] (0 = greedy)", "temperature")
    return n, float(temperature)


def _messages(body: Mapping[str, Any], limits: Limits) -> tuple[list[Mapping[str, Any]], int]:
    """The messages and the index of the last user message."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _bad("'messages' must be a non-empty list", "messages")
    if len(messages) > limits.max_messages:
        raise _bad(f"'messages' holds {len(messages)} messages, more than {limits.max_messages}", "messages")
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, Mapping) else None
        if not isinstance(role, str) or role not in _ROLES:
            raise _bad(f"messages[{i}] must be an object with a role in {sorted(_ROLES)}", f"messages[{i}]")
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    if not users:
        raise _bad("no user message: send the instruction and the screenshot as a user message", "messages")
    return messages, users[-1]


def parse_request(
    body: Any,
    model_ids: str | Sequence[str],
    limits: Limits,
    *,
    reserve: Reserve | None = None,
    needs_elements: bool = False,
) -> ParsedRequest:
    """Validate a decoded JSON body; raise :class:`RequestError` for anything wrong with it.

    ``model_ids``: the ids this server answers to (the first is its name). ``reserve`` counts the
    decoded images against the server's in-flight budget. ``needs_elements``: the policy reads the
    screen's UI elements, so a request without ``digirl.elements`` is refused (an empty list is a
    screen without elements)."""
    ids = [model_ids] if isinstance(model_ids, str) else list(model_ids)
    if not isinstance(body, Mapping):
        raise _bad("the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str):
        raise _bad("'model' is required (a string; see GET /v1/models)", "model")
    if model not in ids:
        served = " or ".join(repr(i) for i in ids)
        raise _bad(f"model {model[:200]!r} is not served here; this server serves {served}", "model", 404, "model_not_found")
    if body.get("stream"):
        raise _bad("stream=true is not supported; send stream=false", "stream")
    n, temperature = _sampling(body, limits)
    messages, last = _messages(body, limits)
    parts = _parts(messages[last].get("content"), f"messages[{last}].content")
    texts, images = [], []
    for j, p in enumerate(parts):
        kind = p.get("type")
        where = f"messages[{last}].content[{j}]"
        if kind == "text":
            texts.append(_text(p.get("text"), f"{where}.text", limits))
        elif kind == "image_url":
            images.append((p.get("image_url"), where))
        else:
            raise _bad(f"unsupported content part type {str(kind)[:40]!r} (use text and image_url)", where)
    instruction = " ".join(" ".join(texts).split())
    if not instruction:
        raise _bad("the last user message has no instruction text", f"messages[{last}].content")
    if len(instruction) > limits.max_text_chars:
        raise _bad(f"the instruction has {len(instruction)} characters, more than {limits.max_text_chars}", "messages")
    if not images:
        raise _bad(
            "the last user message has no screenshot: add an image_url part (a base64 data: URL)", f"messages[{last}].content"
        )
    history, elements, step = _extension(body.get("digirl"), limits)
    if needs_elements and elements is None:
        raise _bad(
            "this policy reads the screen's UI elements: send them as digirl.elements "
            "([] for a screen without any), or serve a pixels-only policy",
            "digirl.elements",
            code="elements_required",
        )
    if history is None:
        said = [m.get("content") for m in messages[:last] if m["role"] == "assistant"]
        said_texts = [_text(c, "an assistant message", limits) for c in said if isinstance(c, str) and c.strip()]
        history = tuple(_action_from_text(c) for c in said_texts[-limits.max_history :])
    screenshot = _decode_image(*images[-1], limits, reserve)  # the costly part, once all else is known to be fine
    previous = _decode_image(*images[-2], limits, reserve) if len(images) > 1 else None
    obs = Observation(
        screenshot=screenshot,
        instruction=instruction,
        step=len(history) if step is None else step,
        history=history,
        elements=elements,
        previous_screenshot=previous,
    )
    return ParsedRequest(obs, n, greedy=temperature == 0.0, temperature=temperature, model=model)


def _content(out: ActOutput, mode: str) -> str:
    if mode == "raw" or not out.action.is_valid:
        return out.text
    return CODECS[mode].format(out.action)


def completion(req: ParsedRequest, outputs: Sequence[ActOutput], *, mode: str, batch_size: int, kind: str) -> dict[str, Any]:
    """The chat-completion response body for ``outputs`` (one choice each)."""
    choices = []
    for i, o in enumerate(outputs):
        message = {
            "role": "assistant",
            "content": _content(o, mode),
            "digirl": {"action": action_to_dict(o.action), "valid": o.action.is_valid, "text": o.text, "log_prob": o.log_prob},
        }
        choices.append({"index": i, "message": message, "finish_reason": "stop", "logprobs": None})
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": req.model,
        "choices": choices,
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        "digirl": {"batch_size": batch_size, "policy_kind": kind},
    }
