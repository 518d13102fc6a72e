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

The HTTP side (retries, concurrency, call log, key handling) is the shared
:class:`~digirl.utils.openai_chat.ChatClient`, which the API-served policy uses too.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from digirl.core.actions import Action
from digirl.core.types import TaskSpec
from digirl.judge.base import BaseJudge, JudgeError, JudgeQuery, JudgeUnavailable, JudgeVerdict
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
from digirl.utils.openai_chat import ChatClient, ChatClientError, ChatUnavailable

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from digirl.utils.openai_chat import ChatClientOptions

__all__ = ["SIM_EXAMPLE_ENVS", "VLMJudge"]

log = logging.getLogger(__name__)

#: Env ids used for screenshot few-shot examples when ``examples="auto"``.
SIM_EXAMPLE_ENVS = {"general": "digirl/sim-general-v0", "webshop": "digirl/sim-webshop-v0"}


class VLMJudge(BaseJudge):
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
        votes: int = 1,
        temperature: float = 0.0,
        vote_temperature: float = 0.7,
        max_tokens: int = 200,
        cache_size: int = 4096,
        image_max_side: int | None = 768,
        send_previous: bool = True,
        examples: str | ExampleProvider = "auto",
        **client: Unpack[ChatClientOptions],
    ) -> None:
        if votes < 1:
            raise ValueError("votes must be >= 1")
        self.client = ChatClient(base_url, model, name="judge", **client)
        self.base_url = self.client.base_url
        self.model = model
        self.api_key_env = self.client.api_key_env
        self.votes = votes
        self.temperature = temperature
        self.vote_temperature = vote_temperature
        self.max_tokens = max_tokens
        self.image_max_side = image_max_side
        self.send_previous = send_previous
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, str, str], JudgeVerdict] = OrderedDict()
        self._cache_size = cache_size
        self._episodes: OrderedDict[str, tuple[str, JudgeVerdict]] = OrderedDict()
        self._examples_src = examples
        self._example_cache: dict[str, list[tuple[FewShotExample, str | None]]] = {}
        self._counts = {"judged": 0, "cache_hits": 0, "unchanged_skips": 0, "undecided": 0}

    def __repr__(self) -> str:
        return f"VLMJudge(base_url={self.base_url!r}, model={self.model!r}, api_key_env={self.api_key_env!r}, votes={self.votes})"

    def config(self) -> dict[str, Any]:
        """Settings safe to save with a run (the key's variable name, never its value)."""
        return {
            "base_url": self.base_url,
            "model": self.model,
            "api_key_env": self.api_key_env,
            "max_concurrency": self.client.max_concurrency,
            "max_retries": self.client.max_retries,
            "timeout_s": self.client.timeout_s,
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
        return self.client.call_log

    @property
    def max_in_flight(self) -> int:
        """The most requests that were in flight at once."""
        return self.client.max_in_flight

    def stats(self) -> dict[str, Any]:
        """Counters and totals over the call log."""
        with self._lock:
            counts = dict(self._counts)
        return {**counts, **self.client.stats()}

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
    def _ask_once(
        self, messages: list[dict[str, Any]], temperature: float, meta: dict[str, Any]
    ) -> tuple[str, dict[str, int], int]:
        """One answer with retries. Returns (text, usage, requests made)."""

        def verdict_of(text: str) -> dict[str, Any]:
            verdict, _ = parse_answer(text)
            return {"verdict": "undecided" if verdict is None else ("success" if verdict else "failure")}

        try:
            reply = self.client.complete(
                messages,
                temperature=temperature,
                max_tokens=self.max_tokens,
                meta={**meta, "verdict": None},
                annotate=verdict_of,
            )
        except ChatUnavailable as e:
            raise JudgeUnavailable(str(e)) from None
        except ChatClientError as e:
            raise JudgeError(str(e)) from None
        return reply.text, reply.usage, reply.attempts

    # ------------------------------------------------------------------ judging
    def _verdict(self, query: JudgeQuery) -> JudgeVerdict:
        """Whether the query's screenshot shows its task accomplished. Thread-safe."""
        task, screenshot, episode_id = query.task, query.screenshot, query.episode_id
        instruction = query.instruction
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
        verdict = self._judge_uncached(instruction, family, screenshot, query.previous, query.actions, task, episode_id)
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
