"""A success judge backed by any OpenAI-compatible chat-completions endpoint (stdlib HTTP only).

:class:`VLMJudge` sends the task and the latest screenshot (optionally the previous one and the
last actions) with a few-shot prompt per task family (:mod:`digirl.judge.prompts`), and returns a
:class:`~digirl.judge.base.JudgeVerdict`. What it does about cost and flakiness:

* **No call** when the screen did not change since the episode's last judged screen, or when the
  same (task, screen hash) was judged before (LRU cache). Undecided verdicts are not reused.
* **Bounded concurrency** (a semaphore around each HTTP request).
* **Retries** with exponential backoff and full jitter on 408/409/429/5xx, timeouts and
  connection errors, honouring ``Retry-After``; other 4xx raise :class:`JudgeError` at once.
  When every retry fails it raises :class:`JudgeUnavailable` (an ``EnvFailure``).
* **k-vote majority** (``votes``), stopping as soon as one side has a majority.
* **A call log** (memory, optional JSONL file, and ``logging``) with latency, token counts,
  status and attempt of every request. The API key is read from the environment variable named
  by ``api_key_env`` at each request, and is never stored, logged or put in a repr or config.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import logging
import os
import random
import threading
import time
import urllib.error
import urllib.request
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from digirl.core.actions import Action
from digirl.core.types import TaskSpec
from digirl.judge.base import JudgeError, JudgeUnavailable, JudgeVerdict
from digirl.judge.images import png_data_url, screen_hash
from digirl.judge.prompts import (
    ExampleProvider,
    FewShotExample,
    build_messages,
    env_example_provider,
    parse_answer,
    task_family,
    text_examples,
)

__all__ = ["SIM_EXAMPLE_ENVS", "VLMJudge"]

log = logging.getLogger(__name__)

_RETRY_STATUS = {408, 409, 425, 429}
#: Env ids used for screenshot few-shot examples when ``examples="auto"``.
SIM_EXAMPLE_ENVS = {"general": "digirl/sim-general-v0", "webshop": "digirl/sim-webshop-v0"}


class _Transient(Exception):
    def __init__(self, status: str, retry_after: float | None = None, detail: str = "") -> None:
        super().__init__(status)
        self.status = status
        self.retry_after = retry_after
        self.detail = detail


def _parse_retry_after(value: str | None) -> float | None:
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


class VLMJudge:
    """Judge task success from screenshots with a VLM behind ``{base_url}/chat/completions``.

    ``base_url`` includes the API version (``https://api.openai.com/v1``, ``http://localhost:8000/v1``).
    ``examples``: ``"auto"`` (screenshot examples from the simulator when it is available, else
    text), ``"text"``, ``"none"``, or an :data:`ExampleProvider`.
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
        votes: int = 1,
        temperature: float = 0.0,
        vote_temperature: float = 0.7,
        max_tokens: int = 200,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 60.0,
        retry_after_max_s: float = 300.0,
        cache_size: int = 4096,
        image_max_side: int | None = 768,
        send_previous: bool = True,
        examples: str | ExampleProvider = "auto",
        call_log_path: str | os.PathLike[str] | None = None,
        call_log_size: int = 10_000,
        seed: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        if votes < 1 or max_concurrency < 1 or max_retries < 0:
            raise ValueError("votes and max_concurrency must be >= 1, max_retries >= 0")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.max_concurrency = max_concurrency
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self.votes = votes
        self.temperature = temperature
        self.vote_temperature = vote_temperature
        self.max_tokens = max_tokens
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self.retry_after_max_s = retry_after_max_s
        self.image_max_side = image_max_side
        self.send_previous = send_previous
        self.call_log_path = Path(call_log_path) if call_log_path else None
        self._sleep = sleep
        self._rng = random.Random(seed)
        self._sem = threading.BoundedSemaphore(max_concurrency)
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, str, str], JudgeVerdict] = OrderedDict()
        self._cache_size = cache_size
        self._episodes: OrderedDict[str, tuple[str, JudgeVerdict]] = OrderedDict()
        self._calls: deque[dict[str, Any]] = deque(maxlen=call_log_size)
        self._examples_src = examples
        self._example_cache: dict[str, list[tuple[FewShotExample, str | None]]] = {}
        self._in_flight = 0
        self.max_in_flight = 0
        self._counts = {"judged": 0, "cache_hits": 0, "unchanged_skips": 0, "undecided": 0}
        self._warned_no_key = False

    def __repr__(self) -> str:
        return f"VLMJudge(base_url={self.base_url!r}, model={self.model!r}, api_key_env={self.api_key_env!r}, votes={self.votes})"

    def config(self) -> dict[str, Any]:
        """Settings safe to save with a run (the key's variable name, never its value)."""
        return {
            "base_url": self.base_url,
            "model": self.model,
            "api_key_env": self.api_key_env,
            "max_concurrency": self.max_concurrency,
            "max_retries": self.max_retries,
            "timeout_s": self.timeout_s,
            "votes": self.votes,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "image_max_side": self.image_max_side,
            "send_previous": self.send_previous,
            "examples": self._examples_src if isinstance(self._examples_src, str) else "custom",
        }

    # ------------------------------------------------------------------ call log and stats
    @property
    def call_log(self) -> list[dict[str, Any]]:
        """Every HTTP request made (most recent ``call_log_size``)."""
        with self._lock:
            return list(self._calls)

    def stats(self) -> dict[str, Any]:
        """Counters and totals over the call log."""
        calls = self.call_log
        ok = [c for c in calls if c["status"] == 200]
        lat = sorted(c["latency_s"] for c in calls)
        with self._lock:
            counts = dict(self._counts)
        return {
            **counts,
            "requests": len(calls),
            "requests_ok": len(ok),
            "retries": sum(1 for c in calls if c["attempt"] > 1),
            "prompt_tokens": sum(c["prompt_tokens"] for c in calls),
            "completion_tokens": sum(c["completion_tokens"] for c in calls),
            "latency_mean_s": round(sum(lat) / len(lat), 4) if lat else 0.0,
            "latency_p50_s": round(lat[len(lat) // 2], 4) if lat else 0.0,
            "latency_p95_s": round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 4) if lat else 0.0,
            "max_in_flight": self.max_in_flight,
        }

    def _record(self, rec: dict[str, Any]) -> None:
        with self._lock:
            self._calls.append(rec)
            if self.call_log_path is not None:
                self.call_log_path.parent.mkdir(parents=True, exist_ok=True)
                with self.call_log_path.open("a") as f:
                    f.write(json.dumps(rec) + "\n")
        lvl = logging.DEBUG if rec["status"] == 200 else logging.WARNING
        log.log(
            lvl,
            "judge call model=%s status=%s attempt=%d latency=%.3fs tokens=%d/%d verdict=%s %s",
            rec["model"],
            rec["status"],
            rec["attempt"],
            rec["latency_s"],
            rec["prompt_tokens"],
            rec["completion_tokens"],
            rec["verdict"],
            rec["error"],
        )

    # ------------------------------------------------------------------ examples
    def _examples(self, family: str) -> list[tuple[FewShotExample, str | None]]:
        with self._lock:
            if family in self._example_cache:
                return self._example_cache[family]
        src = self._examples_src
        if src == "none":
            exs: Sequence[FewShotExample] = ()
        elif src == "text":
            exs = text_examples(family)
        elif src == "auto":
            exs = env_example_provider(SIM_EXAMPLE_ENVS)(family)
        elif callable(src):
            exs = src(family)
        else:
            raise ValueError(f"examples must be 'auto', 'text', 'none' or a provider, got {src!r}")
        pairs = [(e, png_data_url(e.image, self.image_max_side) if e.image is not None else None) for e in exs]
        with self._lock:
            self._example_cache[family] = pairs
        return pairs

    # ------------------------------------------------------------------ HTTP
    def _post(self, payload: bytes) -> tuple[int, dict[str, Any]]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(self.api_key_env, "")
        if key:
            headers["Authorization"] = "Bearer " + key
        elif not self._warned_no_key:
            self._warned_no_key = True
            log.warning("environment variable %s is not set; calling the judge without an API key", self.api_key_env)
        req = urllib.request.Request(self.base_url + "/chat/completions", data=payload, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                body = resp.read()
                status = int(resp.status)
        except urllib.error.HTTPError as e:
            detail = self._redact(e.read()[:300].decode("utf-8", errors="replace"))
            if e.code in _RETRY_STATUS or e.code >= 500:
                raise _Transient(str(e.code), _parse_retry_after(e.headers.get("Retry-After")), detail) from None
            raise JudgeError(f"judge endpoint {self.base_url} answered HTTP {e.code}: {detail}") from None
        except TimeoutError as e:
            raise _Transient("timeout", None, repr(e)) from None
        except (urllib.error.URLError, ConnectionError, http.client.HTTPException, OSError) as e:
            raise _Transient("connection_error", None, self._redact(repr(e))) from None
        try:
            obj = json.loads(body)
        except ValueError:
            raise _Transient("bad_json", None, self._redact(body[:200].decode("utf-8", errors="replace"))) from None
        if not isinstance(obj, dict):
            raise _Transient("bad_json", None, "response is not a JSON object")
        return status, obj

    def _redact(self, s: str) -> str:
        key = os.environ.get(self.api_key_env, "")
        return s.replace(key, "***") if key and len(key) >= 4 else s

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        delay = self._rng.uniform(0.0, min(self.backoff_max_s, self.backoff_base_s * 2 ** (attempt - 1)))
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.retry_after_max_s))
        return delay

    def _ask_once(
        self, messages: list[dict[str, Any]], temperature: float, meta: dict[str, Any]
    ) -> tuple[str, dict[str, int], int]:
        """One answer with retries. Returns (text, usage, requests made)."""
        payload = json.dumps(
            {
                "model": self.model,
                "messages": messages,
                "temperature": temperature,
                "max_tokens": self.max_tokens,
            }
        ).encode("utf-8")
        last = ""
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
                "verdict": None,
                "error": "",
            }
            with self._sem:
                with self._lock:
                    self._in_flight += 1
                    self.max_in_flight = max(self.max_in_flight, self._in_flight)
                try:
                    status, obj = self._post(payload)
                except _Transient as e:
                    rec.update(status=e.status, latency_s=round(time.monotonic() - t0, 4), error=e.detail[:300])
                    self._record(rec)
                    last = f"{e.status} {e.detail[:120]}"
                    retry_after = e.retry_after
                    status = -1
                except JudgeError as e:
                    rec.update(status="client_error", latency_s=round(time.monotonic() - t0, 4), error=str(e)[:300])
                    self._record(rec)
                    raise
                finally:
                    with self._lock:
                        self._in_flight -= 1
            if status != -1:
                usage = obj.get("usage") or {}
                u = {k: int(usage.get(k) or 0) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
                text = _message_text(obj)
                verdict, _ = parse_answer(text)
                rec.update(
                    status=status,
                    latency_s=round(time.monotonic() - t0, 4),
                    **u,
                    verdict="undecided" if verdict is None else ("success" if verdict else "failure"),
                )
                self._record(rec)
                return text, u, attempt
            if attempt <= self.max_retries:
                self._sleep(self._backoff(attempt, retry_after))
        raise JudgeUnavailable(f"judge endpoint {self.base_url} failed {self.max_retries + 1} times; last: {last}")

    # ------------------------------------------------------------------ judging
    def judge(
        self,
        task: TaskSpec | str,
        screenshot: np.ndarray,
        *,
        previous: np.ndarray | None = None,
        actions: Sequence[Action | str] = (),
        episode_id: str | None = None,
    ) -> JudgeVerdict:
        """Judge whether ``screenshot`` shows ``task`` accomplished. Thread-safe."""
        instruction = task if isinstance(task, str) else task.instruction
        family = task_family(task)
        h = screen_hash(screenshot)
        key = (family, instruction, h)
        with self._lock:
            if episode_id is not None and episode_id in self._episodes:
                last_h, last_v = self._episodes[episode_id]
                if last_h == h and last_v.success is not None:
                    self._counts["unchanged_skips"] += 1
                    return _as_cached(last_v)
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                self._counts["cache_hits"] += 1
                if episode_id is not None:
                    self._remember(episode_id, h, hit)
                return _as_cached(hit)
        verdict = self._judge_uncached(instruction, family, screenshot, previous, actions, task, episode_id)
        with self._lock:
            self._counts["judged"] += 1
            if verdict.success is None:
                self._counts["undecided"] += 1
            else:
                self._cache[key] = verdict
                self._cache.move_to_end(key)
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
            if episode_id is not None:
                self._remember(episode_id, h, verdict)
        return verdict

    def _remember(self, episode_id: str, h: str, v: JudgeVerdict) -> None:
        self._episodes[episode_id] = (h, v)
        self._episodes.move_to_end(episode_id)
        while len(self._episodes) > max(1024, self._cache_size):
            self._episodes.popitem(last=False)

    def end_episode(self, episode_id: str) -> None:
        with self._lock:
            self._episodes.pop(episode_id, None)

    def _judge_uncached(
        self,
        instruction: str,
        family: str,
        screenshot: np.ndarray,
        previous: np.ndarray | None,
        actions: Sequence[Action | str],
        task: TaskSpec | str,
        episode_id: str | None,
    ) -> JudgeVerdict:
        messages = build_messages(
            instruction,
            family,
            png_data_url(screenshot, self.image_max_side),
            previous_url=png_data_url(previous, self.image_max_side) if (previous is not None and self.send_previous) else None,
            actions=[str(a) for a in actions],
            examples=self._examples(family),
        )
        meta = {
            "family": family,
            "task_id": task.task_id if isinstance(task, TaskSpec) else "",
            "episode_id": episode_id or "",
        }
        t0 = time.monotonic()
        votes: list[bool | None] = []
        answers: list[tuple[bool | None, str, str]] = []
        calls = ptok = ctok = 0
        need = self.votes // 2 + 1
        for v in range(self.votes):
            temp = self.temperature if self.votes == 1 else self.vote_temperature
            text, usage, n = self._ask_once(messages, temp, {**meta, "vote": v})
            calls += n
            ptok += usage["prompt_tokens"]
            ctok += usage["completion_tokens"]
            ok, reason = parse_answer(text)
            votes.append(ok)
            answers.append((ok, reason, text))
            if votes.count(True) >= need or votes.count(False) >= need:
                break  # the majority is settled; later votes cannot change it
        yes, no = votes.count(True), votes.count(False)
        success: bool | None = True if yes > no else False if no > yes else None
        pick = next((a for a in answers if a[0] == success), answers[-1])
        return JudgeVerdict(
            success=success,
            reason=pick[1],
            raw=pick[2],
            cached=False,
            votes=tuple(votes) if self.votes > 1 else (),
            calls=calls,
            latency_s=time.monotonic() - t0,
            prompt_tokens=ptok,
            completion_tokens=ctok,
        )


def _as_cached(v: JudgeVerdict) -> JudgeVerdict:
    return JudgeVerdict(success=v.success, reason=v.reason, raw=v.raw, cached=True, votes=v.votes)


def _message_text(obj: dict[str, Any]) -> str:
    """The assistant text of a chat-completions response ('' when missing or malformed)."""
    try:
        content = obj["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""
