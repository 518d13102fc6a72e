"""A client for OpenAI-compatible ``/chat/completions`` endpoints (stdlib HTTP only), shared by the
VLM judge and the API-served policy.

What it does about flakiness and secrets:

* **Retries** with exponential backoff and full jitter on 408/409/425/429/5xx, timeouts, connection
  errors and non-JSON bodies, honouring ``Retry-After`` (seconds or an HTTP date, capped); other 4xx
  raise the client error at once. When every retry fails it raises the "unavailable" error.
* **Bounded concurrency**: a semaphore around each HTTP request, so many threads may share a client.
* **A call log** (memory, optional JSONL file, and ``logging``) with latency, token counts, status
  and attempt of every request.
* **The API key** is read from the environment variable named by ``api_key_env`` at each request;
  it is never stored, logged, put in a repr or a config, and is redacted from error bodies.

Failures raise :class:`ChatClientError` (refused, with the HTTP status) or :class:`ChatUnavailable`
(every retry failed); callers translate them (the judge raises ``JudgeError``/``JudgeUnavailable``).
"""

from __future__ import annotations

import base64
import email.utils
import http.client
import io
import json
import logging
import os
import random
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import numpy as np

from digirl.core.errors import DigirlError

__all__ = [
    "ChatClient",
    "ChatClientError",
    "ChatClientOptions",
    "ChatReply",
    "ChatUnavailable",
    "encode_image",
    "image_data_url",
    "message_text",
    "parse_retry_after",
]

log = logging.getLogger(__name__)

_RETRY_STATUS = {408, 409, 425, 429}
_USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")


class ChatClientError(DigirlError):
    """The endpoint refused the request (a 4xx other than rate limits): retrying will not help."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        #: The HTTP status (401: bad key, 404: unknown model or path, 400: a request it cannot take ...).
        self.status = status


class ChatUnavailable(DigirlError):
    """The endpoint kept failing (rate limits, 5xx, timeouts) through every retry."""


@dataclass(frozen=True)
class ChatReply:
    """The assistant text of one successful request, its token usage and how many requests it took."""

    text: str
    usage: dict[str, int]
    attempts: int
    latency_s: float


class _Transient(Exception):
    def __init__(self, status: str, retry_after: float | None = None, detail: str = "") -> None:
        super().__init__(status)
        self.status = status
        self.retry_after = retry_after
        self.detail = detail


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta seconds or an HTTP date); ``None`` if absent/bad."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def message_text(obj: Mapping[str, Any]) -> str:
    """The assistant text of a chat-completions response ('' when missing or malformed)."""
    try:
        content = obj["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def encode_image(img: np.ndarray, fmt: str = "png", max_side: int | None = None, jpeg_quality: int = 90) -> bytes:
    """PNG or JPEG bytes of a uint8 H×W×3 screenshot, downscaled (aspect kept) so its longer side is
    at most ``max_side``."""
    from PIL import Image

    from digirl.utils.images import resize

    if not isinstance(img, np.ndarray) or img.dtype != np.uint8 or img.ndim != 3 or img.shape[2] != 3:
        raise ValueError(f"expected a uint8 H×W×3 screenshot, got {getattr(img, 'dtype', type(img))} {getattr(img, 'shape', '')}")
    if fmt not in ("png", "jpeg"):
        raise ValueError(f"image format must be png or jpeg, got {fmt!r}")
    pil = Image.fromarray(img, "RGB")
    if max_side and max(pil.size) > max_side:
        scale = max_side / max(pil.size)
        pil = resize(pil, (max(1, round(pil.width * scale)), max(1, round(pil.height * scale))), Image.Resampling.LANCZOS)
    buf = io.BytesIO()
    if fmt == "png":
        pil.save(buf, format="PNG", optimize=False)
    else:
        pil.save(buf, format="JPEG", quality=jpeg_quality)
    return buf.getvalue()


def image_data_url(img: np.ndarray, fmt: str = "png", max_side: int | None = None, jpeg_quality: int = 90) -> str:
    """``data:image/...;base64,...`` for an OpenAI-style ``image_url`` content part."""
    data = base64.b64encode(encode_image(img, fmt, max_side, jpeg_quality)).decode("ascii")
    return f"data:image/{fmt};base64,{data}"


class ChatClientOptions(TypedDict, total=False):
    """:class:`ChatClient`'s connection options, for classes that build one and pass them on
    (``**options: Unpack[ChatClientOptions]``); the defaults are :class:`ChatClient`'s."""

    api_key_env: str
    max_concurrency: int
    max_retries: int
    timeout_s: float
    backoff_base_s: float
    backoff_max_s: float
    retry_after_max_s: float
    call_log_path: str | os.PathLike[str] | None
    call_log_size: int
    seed: int | None
    sleep: Callable[[float], None]


class ChatClient:
    """Chat completions from ``{base_url}/chat/completions`` with retries, a concurrency bound and a call log.

    ``base_url`` includes the API version (``https://api.openai.com/v1``, ``http://localhost:8000/v1``).
    ``name`` prefixes log lines and error messages (``judge``, ``policy``).
    ``sleep`` is injectable so tests can record backoff delays instead of waiting.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        max_concurrency: int = 4,
        max_retries: int = 6,
        timeout_s: float = 60.0,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 60.0,
        retry_after_max_s: float = 300.0,
        call_log_path: str | os.PathLike[str] | None = None,
        call_log_size: int = 10_000,
        seed: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
        name: str = "chat",
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        if max_concurrency < 1 or max_retries < 0 or not timeout_s > 0:
            raise ValueError("max_concurrency must be >= 1, max_retries >= 0 and timeout_s > 0")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.max_concurrency = max_concurrency
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self.retry_after_max_s = retry_after_max_s
        self.call_log_path = Path(call_log_path) if call_log_path else None
        self.name = name
        self._sleep = sleep
        self._rng = random.Random(seed)
        self._sem = threading.BoundedSemaphore(max_concurrency)
        self._lock = threading.Lock()
        self._calls: deque[dict[str, Any]] = deque(maxlen=call_log_size)
        self._in_flight = 0
        self.max_in_flight = 0
        self._warned_no_key = False

    def __repr__(self) -> str:
        return f"ChatClient(base_url={self.base_url!r}, model={self.model!r}, api_key_env={self.api_key_env!r})"

    # ------------------------------------------------------------------ call log
    @property
    def call_log(self) -> list[dict[str, Any]]:
        """Every HTTP request made (most recent ``call_log_size``)."""
        with self._lock:
            return list(self._calls)

    def stats(self) -> dict[str, Any]:
        """Request counts, retries, token totals and latency percentiles over the call log."""
        calls = self.call_log
        lat = sorted(c["latency_s"] for c in calls)
        return {
            "requests": len(calls),
            "requests_ok": sum(1 for c in calls if c["status"] == 200),
            "retries": sum(1 for c in calls if c["attempt"] > 1),
            "prompt_tokens": sum(c["prompt_tokens"] for c in calls),
            "completion_tokens": sum(c["completion_tokens"] for c in calls),
            "latency_mean_s": round(sum(lat) / len(lat), 4) if lat else 0.0,
            "latency_p50_s": round(lat[len(lat) // 2], 4) if lat else 0.0,
            "latency_p95_s": round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 4) if lat else 0.0,
            "max_in_flight": self.max_in_flight,
        }

    def _record(self, rec: dict[str, Any], extra_keys: Sequence[str]) -> None:
        with self._lock:
            self._calls.append(rec)
            if self.call_log_path is not None:
                self.call_log_path.parent.mkdir(parents=True, exist_ok=True)
                with self.call_log_path.open("a") as f:
                    f.write(json.dumps(rec) + "\n")
        lvl = logging.DEBUG if rec["status"] == 200 else logging.WARNING
        extra = " ".join(f"{k}={rec.get(k)}" for k in extra_keys)
        log.log(
            lvl,
            "%s call model=%s status=%s attempt=%d latency=%.3fs tokens=%d/%d %s %s",
            self.name,
            rec["model"],
            rec["status"],
            rec["attempt"],
            rec["latency_s"],
            rec["prompt_tokens"],
            rec["completion_tokens"],
            extra,
            rec["error"],
        )

    # ------------------------------------------------------------------ HTTP
    def redact(self, s: str) -> str:
        """``s`` with the API key (if set) replaced by ``***``."""
        key = os.environ.get(self.api_key_env, "")
        return s.replace(key, "***") if key and len(key) >= 4 else s

    def _post(self, payload: bytes) -> tuple[int, dict[str, Any]]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(self.api_key_env, "")
        if key:
            headers["Authorization"] = "Bearer " + key
        elif not self._warned_no_key:
            self._warned_no_key = True
            log.warning(
                "environment variable %s is not set; calling the %s endpoint without an API key", self.api_key_env, self.name
            )
        req = urllib.request.Request(self.base_url + "/chat/completions", data=payload, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                body = resp.read()
                status = int(resp.status)
        except urllib.error.HTTPError as e:
            detail = self.redact(e.read()[:300].decode("utf-8", errors="replace"))
            if e.code in _RETRY_STATUS or e.code >= 500:
                raise _Transient(str(e.code), parse_retry_after(e.headers.get("Retry-After")), detail) from None
            raise ChatClientError(f"{self.name} endpoint {self.base_url} answered HTTP {e.code}: {detail}", e.code) from None
        except TimeoutError as e:
            raise _Transient("timeout", None, repr(e)) from None
        except (urllib.error.URLError, ConnectionError, http.client.HTTPException, OSError) as e:
            raise _Transient("connection_error", None, self.redact(repr(e))) from None
        try:
            obj = json.loads(body)
        except ValueError:
            raise _Transient("bad_json", None, self.redact(body[:200].decode("utf-8", errors="replace"))) from None
        if not isinstance(obj, dict):
            raise _Transient("bad_json", None, "response is not a JSON object")
        return status, obj

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        delay = self._rng.uniform(0.0, min(self.backoff_max_s, self.backoff_base_s * 2 ** (attempt - 1)))
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.retry_after_max_s))
        return delay

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        temperature: float,
        max_tokens: int,
        meta: Mapping[str, Any] | None = None,
        annotate: Callable[[str], dict[str, Any]] | None = None,
    ) -> ChatReply:
        """One answer, with retries. ``meta`` is copied into every call-log record of this request;
        ``annotate(text)`` adds fields (e.g. a parsed verdict) to the successful record and its log line."""
        payload = json.dumps(
            {"model": self.model, "messages": messages, "temperature": temperature, "max_tokens": max_tokens}
        ).encode("utf-8")
        meta = dict(meta or {})
        last = ""
        t_start = time.monotonic()
        for attempt in range(1, self.max_retries + 2):
            t0 = time.monotonic()
            retry_after: float | None = None
            rec: dict[str, Any] = {
                "ts": round(time.time(), 3),
                "model": self.model,
                **meta,
                "attempt": attempt,
                "status": None,
                "latency_s": 0.0,
                "prompt_tokens": 0,
                "completion_tokens": 0,
                "total_tokens": 0,
                "error": "",
            }
            obj: dict[str, Any] | None = None
            with self._sem:
                with self._lock:
                    self._in_flight += 1
                    self.max_in_flight = max(self.max_in_flight, self._in_flight)
                try:
                    status, obj = self._post(payload)
                except _Transient as e:
                    rec.update(status=e.status, latency_s=round(time.monotonic() - t0, 4), error=e.detail[:300])
                    self._record(rec, ())
                    last = f"{e.status} {e.detail[:120]}"
                    retry_after = e.retry_after
                except ChatClientError as e:
                    rec.update(status="client_error", latency_s=round(time.monotonic() - t0, 4), error=self.redact(str(e))[:300])
                    self._record(rec, ())
                    raise
                finally:
                    with self._lock:
                        self._in_flight -= 1
            if obj is not None:
                usage = obj.get("usage") or {}
                u = {k: _int(usage.get(k)) for k in _USAGE_KEYS}
                text = message_text(obj)
                extra = annotate(text) if annotate is not None else {}
                rec.update(status=status, latency_s=round(time.monotonic() - t0, 4), **u, **extra)
                self._record(rec, tuple(extra))
                return ChatReply(text, u, attempt, time.monotonic() - t_start)
            if attempt <= self.max_retries:
                self._sleep(self._backoff(attempt, retry_after))
        raise ChatUnavailable(
            f"{self.name} endpoint {self.base_url} failed {self.max_retries + 1} times; last: {self.redact(last)}"
        )


def _int(v: Any) -> int:
    try:
        return int(v or 0)
    except (TypeError, ValueError):
        return 0
