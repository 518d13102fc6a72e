"""Chat-completion requests → observations, actions → chat-completion responses.

A request is an OpenAI ``/v1/chat/completions`` body. The **last user message** carries the
instruction (its text parts) and the screenshot (its last ``image_url`` part, a ``data:`` URL with
base64 PNG/JPEG/WebP bytes; an earlier image in the same message is the previous screenshot). Earlier
assistant messages are the actions taken so far (parsed with the action codecs). An optional
``digirl`` object gives what chat messages cannot: ``history`` (action objects, overriding the
assistant messages), ``elements`` (UI elements, as stored in datasets) and ``step``.

Every problem with a request raises :class:`RequestError` with a 4xx status and an OpenAI-style
error body; nothing about the request can cause a 5xx.
"""

from __future__ import annotations

import base64
import binascii
import io
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image

from digirl.core.actions import Action
from digirl.core.codecs import CODECS, action_from_dict, action_to_dict
from digirl.core.types import Observation, UIElement
from digirl.policies.base import ActOutput

__all__ = ["CONTENT_MODES", "Limits", "ParsedRequest", "RequestError", "completion", "parse_request"]

#: How the message content is written: the policy's own text, or the action in a codec.
CONTENT_MODES = ("raw", *sorted(CODECS))
_ROLES = {"system", "developer", "user", "assistant", "tool"}
_IMAGE_FORMATS = {"PNG", "JPEG", "WEBP", "GIF", "BMP"}


class RequestError(Exception):
    """A bad request: ``status`` (4xx), a message for the client, the offending parameter."""

    def __init__(self, status: int, message: str, *, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code

    def body(self) -> dict[str, Any]:
        kind = {401: "authentication_error", 404: "not_found_error", 413: "request_too_large"}.get(
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


@dataclass(frozen=True)
class ParsedRequest:
    observation: Observation
    n: int
    greedy: bool
    temperature: float
    model: str


def _bad(message: str, param: str | None = None, status: int = 400, code: str | None = None) -> RequestError:
    return RequestError(status, message, param=param, code=code)


def _decode_image(url: Any, param: str, limits: Limits) -> np.ndarray:
    if isinstance(url, Mapping):
        url = url.get("url")
    if not isinstance(url, str):
        raise _bad("image_url must be an object with a string 'url' (a data: URL)", param)
    if not url.startswith("data:"):
        raise _bad("only data: URLs with base64 image bytes are accepted (the server fetches nothing)", param)
    header, sep, payload = url.partition(",")
    if not sep or ";base64" not in header:
        raise _bad("the image data: URL must be base64 encoded (data:image/png;base64,...)", param)
    if len(payload) > limits.max_image_bytes * 4 // 3 + 4:
        raise _bad(f"image is larger than {limits.max_image_bytes} bytes", param, 413, "image_too_large")
    try:
        raw = base64.b64decode("".join(payload.split()), validate=True)
    except (binascii.Error, ValueError):
        raise _bad("the image is not valid base64", param, code="invalid_base64") from None
    try:
        with Image.open(io.BytesIO(raw)) as im:
            w, h = im.size
            if w * h > limits.max_image_pixels:
                raise _bad(f"image is {w}x{h}, more than {limits.max_image_pixels} pixels", param, 413, "image_too_large")
            if im.format not in _IMAGE_FORMATS:
                raise _bad(f"unsupported image format {im.format}", param, code="invalid_image")
            rgb = im.convert("RGB")
    except RequestError:
        raise
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as e:
        raise _bad(f"the image cannot be decoded ({type(e).__name__})", param, code="invalid_image") from None
    if rgb.width == 0 or rgb.height == 0:
        raise _bad("the image has no pixels", param, code="invalid_image")
    return np.asarray(rgb, dtype=np.uint8)


def _parts(content: Any, param: str) -> list[Mapping[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if content is None:
        return []
    if not isinstance(content, list) or not all(isinstance(p, Mapping) for p in content):
        raise _bad("message content must be a string or a list of content parts", param)
    return content


def _action_from_text(text: str) -> Action:
    """The first codec that reads ``text`` as a valid action (history given as assistant messages)."""
    for name in ("json", "autoui", "cogagent"):
        a = CODECS[name].parse(text)
        if a.is_valid:
            return a
    return Action.invalid(text, "no codec reads this assistant message as an action")


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
        except ValueError as e:
            raise _bad(f"digirl.history: {e}", "digirl.history") from None
    if "elements" in ext and ext["elements"] is not None:
        el = ext["elements"]
        if not isinstance(el, list) or len(el) > limits.max_elements:
            raise _bad(f"digirl.elements must be a list of at most {limits.max_elements} elements", "digirl.elements")
        try:
            elements = tuple(UIElement.from_dict(e) for e in el)
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise _bad(
                f"digirl.elements: bad element ({e!r}); expected {{'bounds': [x0, y0, x1, y1], 'text', ...}}", "digirl.elements"
            ) from None
    step = ext.get("step")
    if step is not None and (isinstance(step, bool) or not isinstance(step, int) or step < 0):
        raise _bad("digirl.step must be a non-negative integer", "digirl.step")
    return history, elements, step


def parse_request(body: Any, model_id: str, limits: Limits) -> ParsedRequest:
    """Validate a decoded JSON body; raise :class:`RequestError` for anything wrong with it."""
    if not isinstance(body, Mapping):
        raise _bad("the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str):
        raise _bad("'model' is required (a string; see GET /v1/models)", "model")
    if model != model_id:
        raise _bad(f"model {model!r} is not served here; this server serves {model_id!r}", "model", 404, "model_not_found")
    if body.get("stream"):
        raise _bad("stream=true is not supported; send stream=false", "stream")
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
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _bad("'messages' must be a non-empty list", "messages")
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) or m.get("role") not in _ROLES:
            raise _bad(f"messages[{i}] must be an object with a role in {sorted(_ROLES)}", f"messages[{i}]")
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    if not users:
        raise _bad("no user message: send the instruction and the screenshot as a user message", "messages")
    last = users[-1]
    parts = _parts(messages[last].get("content"), f"messages[{last}].content")
    texts, images = [], []
    for j, p in enumerate(parts):
        kind = p.get("type")
        where = f"messages[{last}].content[{j}]"
        if kind == "text":
            if not isinstance(p.get("text"), str):
                raise _bad("a text part needs a string 'text'", where)
            texts.append(p["text"])
        elif kind == "image_url":
            images.append((p.get("image_url"), where))
        else:
            raise _bad(f"unsupported content part type {kind!r} (use text and image_url)", where)
    instruction = " ".join(" ".join(texts).split())
    if not instruction:
        raise _bad("the last user message has no instruction text", f"messages[{last}].content")
    if not images:
        raise _bad(
            "the last user message has no screenshot: add an image_url part (a base64 data: URL)", f"messages[{last}].content"
        )
    screenshot = _decode_image(*images[-1], limits)
    previous = _decode_image(*images[-2], limits) if len(images) > 1 else None
    history, elements, step = _extension(body.get("digirl"), limits)
    if history is None:
        said = [m.get("content") for m in messages[:last] if m["role"] == "assistant"]
        history = tuple(_action_from_text(c) for c in said if isinstance(c, str) and c.strip())[-limits.max_history :]
    obs = Observation(
        screenshot=screenshot,
        instruction=instruction,
        step=len(history) if step is None else step,
        history=history,
        elements=elements,
        previous_screenshot=previous,
    )
    return ParsedRequest(obs, n, greedy=float(temperature) == 0.0, temperature=float(temperature), model=model)


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
