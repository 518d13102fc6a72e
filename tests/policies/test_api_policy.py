"""kind=api against a local fake OpenAI-compatible server: requests, parsing, retries, order, secrecy, CLI."""

from __future__ import annotations

import json
import logging
import random
import re
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from digirl.config.core import config_to_yaml, load_config
from digirl.core.actions import Action, ActionType
from digirl.core.codecs import format_action
from digirl.core.errors import ConfigError
from digirl.core.types import Observation
from digirl.policies.api import APIPolicy
from digirl.policies.base import ActingPolicy, is_trainable
from digirl.policies.config import APIPolicyConfig, PolicyConfig
from digirl.policies.registry import build_policy, load_policy
from digirl.testing.fake_openai import FakeOpenAI
from digirl.utils.openai_chat import ChatClientError, ChatUnavailable

KEY = "sk-policy-test-DO-NOT-LEAK-0987654321"
KEY_ENV = "DIGIRL_TEST_POLICY_KEY"
TAP = format_action(Action.tap(0.25, 0.75), "json")


class Sleeps(list[float]):
    def __call__(self, s: float) -> None:
        self.append(s)


@pytest.fixture
def server() -> Any:
    with FakeOpenAI(default=("text", TAP)) as srv:
        yield srv


def obs(i: int = 0, *, history: tuple[Action, ...] = (), prev: bool = False) -> Observation:
    img = np.full((64, 32, 3), 200, np.uint8)
    img[5:15, 5:25] = (i * 37 % 256, 20, 90)
    return Observation(
        img,
        f"Open app number {i}",
        step=len(history),
        history=history,
        previous_screenshot=np.zeros_like(img) if prev else None,
    )


def make(server: FakeOpenAI, *, sleep: Any = None, **kw: Any) -> APIPolicy:
    kw.setdefault("timeout_s", 5.0)
    cfg = APIPolicyConfig(base_url=server.base_url, model="fake-vlm", api_key_env=KEY_ENV, **kw)
    return APIPolicy(cfg, sleep=sleep if sleep is not None else Sleeps(), seed=0)


def test_request_shape_and_parsed_actions(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    p = make(server, history_len=2)
    assert isinstance(p, ActingPolicy) and not is_trainable(p)
    hist = (Action.tap(0.1, 0.2), Action(ActionType.PRESS_BACK), Action.type_text("milk"))
    out = p.act([obs(1, history=hist)], greedy=True)
    assert out[0].action == Action.tap(0.25, 0.75) and out[0].text == TAP and out[0].log_prob is None
    req = server.requests[0]
    assert req["model"] == "fake-vlm" and req["temperature"] == 0.0 and req["max_tokens"] == 256
    assert server.auth_headers[0] == f"Bearer {KEY}"
    system, user = req["messages"]
    assert system["role"] == "system" and '"STATUS_TASK_COMPLETE"' in system["content"]
    image, text = user["content"]
    assert image["image_url"]["url"].startswith("data:image/png;base64,")
    # the instruction and the last two actions (oldest first, numbered by step), in the codec's text
    assert "Task: Open app number 1" in text["text"] and "step 3" in text["text"]
    assert "2. " + format_action(hist[1], "json") in text["text"] and "3. " + format_action(hist[2], "json") in text["text"]
    assert format_action(hist[0], "json") not in text["text"]
    p.act([obs(2)], temperature=0.7)
    assert (
        server.requests[1]["temperature"] == 0.7
        and "Previous actions:\nnone" in server.requests[1]["messages"][1]["content"][1]["text"]
    )


def test_jpeg_previous_screenshot_and_other_templates(server: FakeOpenAI) -> None:
    p = make(server, image_format="jpeg", send_previous=True, image_max_side=16)
    p.act([obs(1, prev=True)])
    parts = server.requests[0]["messages"][-1]["content"]
    assert [q["type"] for q in parts] == ["image_url", "image_url", "text"]
    assert all(q["image_url"]["url"].startswith("data:image/jpeg;base64,") for q in parts[:2])
    # Auto-UI codec: its own prompt text and no system message; the answer read as Auto-UI text
    server.script.append(("text", format_action(Action(ActionType.PRESS_HOME), "autoui")))
    a = make(server, codec="autoui", history_len=1).act([obs(3, history=(Action.tap(0.5, 0.5),))])[0]
    msgs = server.requests[-1]["messages"]
    assert a.action == Action(ActionType.PRESS_HOME) and len(msgs) == 1
    assert msgs[0]["content"][-1]["text"] == (
        'Previous Actions: "action_type": "DUAL_POINT", "touch_point": "[0.5000, 0.5000]", '
        '"lift_point": "[0.5000, 0.5000]", "typed_text": "" Goal: Open app number 3</s>'
    )
    # CogAgent: the grounding question; a custom user template keeps JSON braces as they are
    server.script.append(("text", "Grounded Operation: tap [[500,250]]"))
    c = make(server, codec="cogagent").act([obs(4)])[0]
    assert c.action == Action.tap(0.5, 0.25)
    assert (
        server.requests[-1]["messages"][-1]["content"][-1]["text"]
        == 'What steps do I need to take to "Open app number 4"?(with grounding)'
    )
    make(server, system_prompt="", user_template='Goal={instruction} {"x": 1} step {step}').act([obs(5)])
    msgs = server.requests[-1]["messages"]
    assert len(msgs) == 1 and msgs[0]["content"][-1]["text"] == 'Goal=Open app number 5 {"x": 1} step 0'


def test_garbage_is_an_invalid_action_with_its_raw_text(server: FakeOpenAI) -> None:
    server.script.extend(["garbage", ("text", '{"type": "FLY"}')])
    out = make(server, max_concurrency=1).act([obs(1), obs(2)])
    assert [o.action.type for o in out] == [ActionType.INVALID, ActionType.INVALID]
    assert out[0].text == "I like turtles. Maybe?" and out[0].action.text == "I like turtles. Maybe?"
    assert "unknown action type 'FLY'" in out[1].action.error


def test_retries_500_then_success_and_429_retry_after(server: FakeOpenAI) -> None:
    sleeps = Sleeps()
    p = make(server, sleep=sleeps, backoff_base_s=0.5)
    server.script.extend([500, (429, "7"), "badjson"])
    out = p.act([obs(1)])
    assert out[0].action == Action.tap(0.25, 0.75)
    assert [c["status"] for c in p.client.call_log] == ["500", "429", "bad_json", 200]
    assert len(sleeps) == 3 and sleeps[1] >= 7.0  # Retry-After honoured
    assert 0.0 <= sleeps[0] <= 0.5 and 0.0 <= sleeps[2] <= 2.0  # exponential backoff with jitter
    st = p.stats()
    assert st["requests"] == 4 and st["retries"] == 3 and st["failed_actions"] == 0


def test_timeout_is_retried() -> None:
    with FakeOpenAI(default=("text", TAP), hang_s=1.0) as srv:
        srv.script.append("timeout")
        p = make(srv, timeout_s=0.2)
        assert p.act([obs(1)])[0].action == Action.tap(0.25, 0.75)
    assert [c["status"] for c in p.client.call_log] == ["timeout", 200]


def test_exhausted_retries_raise_or_become_invalid(server: FakeOpenAI) -> None:
    server.default = 503
    with pytest.raises(ChatUnavailable, match="failed 3 times"):
        make(server, max_retries=2).act([obs(1)])
    p = make(server, max_retries=1, on_error="invalid")
    out = p.act([obs(1), obs(2)])
    assert all(o.action.type is ActionType.INVALID and "endpoint failure" in o.action.error for o in out)
    assert p.stats()["failed_actions"] == 2
    server.default = 400  # a request the endpoint refuses: no retry; invalid when asked to go on
    assert make(server, on_error="invalid").act([obs(1)])[0].action.type is ActionType.INVALID
    server.default = 401  # a wrong key is a configuration error: it always stops the run
    n = len(server.requests)
    with pytest.raises(ChatClientError, match="HTTP 401"):
        make(server, on_error="invalid").act([obs(1)])
    assert len(server.requests) == n + 1


def test_outputs_keep_the_order_of_observations_under_concurrency() -> None:
    rng = random.Random(0)
    delays = [rng.uniform(0.0, 0.08) for _ in range(12)]

    def answer_for(req: dict[str, Any]) -> Any:
        i = int(re.search(r"Open app number (\d+)", req["messages"][-1]["content"][-1]["text"]).group(1))
        time.sleep(delays[i])  # later observations often finish first
        return ("text", format_action(Action.tap(i / 20, 0.5), "json"))

    with FakeOpenAI(default=answer_for) as srv:
        p = make(srv, max_concurrency=4)
        out = p.act([obs(i) for i in range(12)])
    assert [o.action for o in out] == [Action.tap(i / 20, 0.5) for i in range(12)]
    assert 2 <= srv.max_in_flight <= 4 and p.client.max_in_flight <= 4


def test_key_is_never_logged_or_saved(
    server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    server.default = "echo_auth"  # the error body echoes the Authorization header, key included
    log_path = tmp_path / "calls.jsonl"
    p = make(server, max_retries=1, on_error="invalid", call_log=str(log_path))
    with caplog.at_level(logging.DEBUG):
        out = p.act([obs(1)])
        with pytest.raises(ChatUnavailable) as ei:
            make(server, max_retries=0).act([obs(2)])
        server.default = ("text", TAP)
        p.act([obs(3)])
    assert server.auth_headers[-1] == f"Bearer {KEY}"  # it was sent...
    p.save(tmp_path / "pol")
    cfg = load_config(PolicyConfig, overrides=["kind=api", f"api.api_key_env={KEY_ENV}", "api.model=m"])
    texts = [
        caplog.text,
        json.dumps(p.client.call_log),
        log_path.read_text(),
        (tmp_path / "pol" / "policy.json").read_text(),
        config_to_yaml(cfg),
        repr(p),
        repr(p.client),
        out[0].action.error,
        str(ei.value),
    ]
    for t in texts:  # ...and written nowhere
        assert KEY not in t
    assert "***" in p.client.call_log[0]["error"] and KEY_ENV in (tmp_path / "pol" / "policy.json").read_text()


def test_save_load_and_command_line_overrides(server: FakeOpenAI, tmp_path: Path) -> None:
    p = make(server, codec="cogagent", history_len=2)
    p.save(tmp_path / "pol")
    q = load_policy(tmp_path / "pol")
    assert isinstance(q, APIPolicy) and q.cfg == p.cfg
    cfg = load_config(PolicyConfig, overrides=[f"init={tmp_path / 'pol'}", "api.max_concurrency=2"])
    r = build_policy(cfg, seed=0)
    assert isinstance(r, APIPolicy) and r.cfg.max_concurrency == 2 and r.cfg.codec == "cogagent"
    (tmp_path / "pol" / "policy.json").write_text(json.dumps({"kind": "api", "config": {"nope": 1}}))
    with pytest.raises(Exception, match="unknown keys"):
        load_policy(tmp_path / "pol")


def test_clear_configuration_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"policy\.api\.model is empty"):
        build_policy(load_config(PolicyConfig, overrides=["kind=api"]), seed=0)
    with pytest.raises(ConfigError, match="base_url"):
        load_config(PolicyConfig, overrides=["kind=api", "api.base_url=ftp://x"])
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "weights.bin").write_bytes(b"x")
    with pytest.raises(ConfigError, match=r"holds files but no policy\.json"):
        build_policy(load_config(PolicyConfig, overrides=["kind=api", "api.model=m", f"init={tmp_path / 'full'}"]), seed=0)


def test_eval_and_collect_from_the_command_line_and_learners_refuse(server: FakeOpenAI, tmp_path: Path, capsys: Any) -> None:
    from digirl.cli.main import main

    toy = ["env.id=digirl/toy-tap-v0", "env.runner=inline", "env.num_envs=2"]
    seen: list[int] = []

    def count(req: dict[str, Any]) -> Any:
        seen.append(1)
        return ("text", '{"type": "STATUS_TASK_COMPLETE"}')

    server.default = count
    pol = tmp_path / "gpt" / "policy"
    pol.mkdir(parents=True)
    api = [
        "policy.kind=api",
        f"policy.api.base_url={server.base_url}",
        "policy.api.model=fake-vlm",
        f"policy.api.api_key_env={KEY_ENV}",
    ]
    assert main(["eval", str(pol), *toy, *api, "eval.test_tasks=0", "eval.train_tasks=3", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert rep["train"]["episodes"] == 3 and len(seen) == 3  # one answer per episode (it stops at once)
    assert (tmp_path / "gpt" / "eval" / "eval.json").is_file()
    # the settings were saved in the empty folder: evaluating it again needs no overrides
    assert json.loads((pol / "policy.json").read_text())["config"]["model"] == "fake-vlm"
    assert main(["eval", str(pol), *toy, "eval.test_tasks=0", "eval.train_tasks=2", "--json"]) == 0
    assert len(seen) == 5
    capsys.readouterr()
    assert main(["collect", str(tmp_path / "data"), *toy, f"policy.init={pol}", "trajectories=2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["trajectories"] == 2
    assert main(["train", str(tmp_path / "run"), *toy, f"policy.init={pol}", "mode=online"]) == 2
    assert "only acts" in capsys.readouterr().err
    assert main(["sft", str(tmp_path / "sft"), *toy, f"policy.init={pol}", "sft.demos=1", "sft.steps=1"]) == 2
    assert "only acts" in capsys.readouterr().err


def test_many_threads_share_one_policy(server: FakeOpenAI) -> None:
    p = make(server, max_concurrency=3)
    results: list[list[Any]] = []
    threads = [threading.Thread(target=lambda i=i: results.append(p.act([obs(i), obs(i + 1)]))) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4 and all(o.action == Action.tap(0.25, 0.75) for r in results for o in r)
    assert p.client.max_in_flight <= 3
