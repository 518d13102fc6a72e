"""VLMJudge against a local fake OpenAI endpoint: answers, retries, votes, caching, concurrency, secrecy."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from digirl.core.actions import Action
from digirl.core.errors import EnvFailure
from digirl.core.types import TaskSpec
from digirl.judge import JudgeError, JudgeUnavailable, VLMJudge
from digirl.judge.prompts import FewShotExample
from digirl.testing.fake_openai import USAGE, FakeOpenAI

KEY = "sk-test-DO-NOT-LEAK-1234567890"
TASK = TaskSpec("What's the weather in Paris?", task_id="t1", family="web_search")


def screen(v: int, h: int = 80, w: int = 40) -> np.ndarray:
    img = np.full((h, w, 3), 240, np.uint8)
    img[10:30, 5:35] = (v * 37 % 256, 100, 50)
    return img


class Sleeps(list[float]):
    def __call__(self, s: float) -> None:
        self.append(s)


@pytest.fixture
def server() -> Any:
    with FakeOpenAI() as srv:
        yield srv


def make(server: FakeOpenAI, **kw: Any) -> VLMJudge:
    kw.setdefault("examples", "text")
    kw.setdefault("sleep", Sleeps())
    kw.setdefault("timeout_s", 5.0)
    return VLMJudge(server.base_url, "fake-vlm", api_key_env="DIGIRL_TEST_JUDGE_KEY", **kw)


def test_answers_tokens_and_request_shape(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIGIRL_TEST_JUDGE_KEY", KEY)
    judge = make(server)
    server.script.extend(["success", "failure"])
    v = judge.judge(TASK, screen(1), previous=screen(0), actions=[Action.tap(0.5, 0.2), "type('paris')"])
    assert v.success is True and v.label == "success" and not v.cached and v.calls == 1
    assert v.prompt_tokens == USAGE["prompt_tokens"] and "results page" in v.reason
    assert judge.judge(TASK, screen(2)).success is False
    req = server.requests[0]
    assert req["model"] == "fake-vlm" and req["temperature"] == 0.0
    assert server.auth_headers[0] == f"Bearer {KEY}"
    last = req["messages"][-1]["content"]
    urls = [p["image_url"]["url"] for p in last if p["type"] == "image_url"]
    assert len(urls) == 2 and all(u.startswith("data:image/png;base64,") for u in urls)
    assert "tap(0.5000, 0.2000)" in last[0]["text"] and "Paris" in last[0]["text"]
    # Few-shot turns (text examples of the general family) precede the question.
    assert [m["role"] for m in req["messages"][:3]] == ["system", "user", "assistant"]


def test_retry_after_429_and_5xx_then_success(server: FakeOpenAI) -> None:
    sleeps = Sleeps()
    judge = make(server, sleep=sleeps, backoff_base_s=0.5, seed=0)
    server.script.extend([(429, "7"), 500, 409, "badjson", "success"])
    v = judge.judge(TASK, screen(1))
    assert v.success is True and v.calls == 5
    assert sleeps[0] >= 7.0  # Retry-After honoured
    assert all(0.0 <= s <= 0.5 * 2**i for i, s in enumerate(sleeps[1:], start=1))  # jittered backoff
    statuses = [c["status"] for c in judge.call_log]
    assert statuses == ["429", "500", "409", "bad_json", 200]
    assert [c["attempt"] for c in judge.call_log] == [1, 2, 3, 4, 5]


def test_gives_up_after_max_retries_and_client_errors_fail_fast(server: FakeOpenAI) -> None:
    judge = make(server, max_retries=2)
    server.default = 503
    with pytest.raises(JudgeUnavailable, match="failed 3 times"):
        judge.judge(TASK, screen(1))
    assert len(server.requests) == 3 and issubclass(JudgeUnavailable, EnvFailure)
    server.default = 401
    with pytest.raises(JudgeError, match="HTTP 401"):
        judge.judge(TASK, screen(2))
    assert len(server.requests) == 4  # no retry on 401


def test_timeout_is_retried() -> None:
    with FakeOpenAI(hang_s=1.0) as srv:
        judge = make(srv, timeout_s=0.2)
        srv.script.extend(["timeout", "success"])
        v = judge.judge(TASK, screen(1))
    assert v.success is True and v.calls == 2
    assert judge.call_log[0]["status"] == "timeout"


def test_garbage_is_undecided_recorded_and_not_cached(server: FakeOpenAI) -> None:
    judge = make(server)
    server.script.extend(["garbage", "success"])
    v = judge.judge(TASK, screen(1), episode_id="e1")
    assert v.success is None and v.undecided and v.label == "undecided" and "turtles" in v.raw
    assert judge.call_log[0]["verdict"] == "undecided" and judge.stats()["undecided"] == 1
    # Undecided answers are asked again, even for an unchanged screen.
    assert judge.judge(TASK, screen(1), episode_id="e1").success is True
    assert len(server.requests) == 2


def test_votes_majority_and_early_stop(server: FakeOpenAI) -> None:
    judge = make(server, votes=3)
    server.script.extend(["success", "failure", "success"])
    v = judge.judge(TASK, screen(1))
    assert v.success is True and v.votes == (True, False, True) and v.calls == 3
    assert server.requests[0]["temperature"] == 0.7
    server.script.extend(["failure", "failure"])
    v = judge.judge(TASK, screen(2))
    assert v.success is False and v.votes == (False, False) and len(server.requests) == 5
    server.script.extend(["success", "garbage", "failure"])
    assert judge.judge(TASK, screen(3)).success is None  # a tie is undecided


def test_cache_hits_and_unchanged_screen_skips(server: FakeOpenAI) -> None:
    judge = make(server)
    server.default = "failure"
    a = judge.judge(TASK, screen(1), episode_id="ep")
    b = judge.judge(TASK, screen(1).copy(), episode_id="ep")  # unchanged screen: no call
    c = judge.judge(TASK, screen(1), episode_id="other")  # same (task, screen): LRU hit
    d = judge.judge(TASK, screen(2), episode_id="ep")  # changed: a call
    e = judge.judge(TaskSpec("Open the settings"), screen(1))  # another task: a call
    assert len(server.requests) == 3
    assert (a.cached, b.cached, c.cached, d.cached, e.cached) == (False, True, True, False, False)
    st = judge.stats()
    assert st["unchanged_skips"] == 1 and st["cache_hits"] == 1 and st["requests"] == 3


def test_concurrency_is_bounded() -> None:
    with FakeOpenAI(delay_s=0.15) as srv:
        judge = make(srv, max_concurrency=2)
        threads = [threading.Thread(target=judge.judge, args=(TASK, screen(i))) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(srv.requests) == 6
    assert srv.max_in_flight == 2 and judge.max_in_flight == 2


def test_api_key_never_logged_or_saved(
    server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    monkeypatch.setenv("DIGIRL_TEST_JUDGE_KEY", KEY)
    log_path = tmp_path / "calls.jsonl"
    judge = make(server, call_log_path=log_path, max_retries=1)
    server.default = "echo_auth"  # the error body contains the key
    with caplog.at_level(logging.DEBUG), pytest.raises(JudgeUnavailable) as ei:
        judge.judge(TASK, screen(1))
    server.default = "success"
    with caplog.at_level(logging.DEBUG):
        judge.judge(TASK, screen(2))
    assert server.auth_headers[-1] == f"Bearer {KEY}"  # it was sent...
    texts = [
        caplog.text,
        json.dumps(judge.call_log),
        log_path.read_text(),
        repr(judge),
        json.dumps(judge.config()),
        str(ei.value),
    ]
    for t in texts:  # ...and never written anywhere
        assert KEY not in t
    assert "***" in judge.call_log[0]["error"] and len(log_path.read_text().splitlines()) == 3


def test_missing_key_calls_without_authorization(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DIGIRL_TEST_JUDGE_KEY", raising=False)
    assert make(server).judge(TASK, screen(1)).success is True
    assert server.auth_headers == [None]


def test_example_provider_with_images(server: FakeOpenAI) -> None:
    seen: list[str] = []

    def provider(family: str) -> list[FewShotExample]:
        seen.append(family)
        return [
            FewShotExample("Go to ebay.com", True, "ebay front page", image=screen(9)),
            FewShotExample("Go to ebay.com", False, "home screen", image=screen(8)),
        ]

    judge = make(server, examples=provider)
    shop = TaskSpec("Go to costco.com", family="shop_goto")
    judge.judge(shop, screen(1))
    judge.judge(shop, screen(2))
    assert seen == ["webshop"]  # built once per family, lazily
    msgs = server.requests[0]["messages"]
    assert "product page of the first search result" in msgs[0]["content"]
    n_images = sum(1 for m in msgs if isinstance(m["content"], list) for p in m["content"] if p["type"] == "image_url")
    assert n_images == 3 and msgs[2]["content"].endswith("Status: success")


def test_bad_configuration() -> None:
    with pytest.raises(ValueError):
        VLMJudge("ftp://x", "m")
    with pytest.raises(ValueError):
        VLMJudge("http://127.0.0.1:1/v1", "m", votes=0)
