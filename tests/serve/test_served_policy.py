"""What ``digirl serve`` answers (issue 43, finding 6): the documented model id, the greedy
log-probability, pixels-only policies and policies that need UI elements."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import torch

from digirl.core.actions import ActionType
from digirl.core.codecs import action_from_dict
from digirl.core.types import Observation, UIElement
from tests.serve.conftest import ELEMENTS, post, raw_request, request_body


def _policy(use_elements: bool = True, seed: int = 0) -> Any:
    from digirl.policies.config import EncoderConfig
    from digirl.policies.default import DefaultPolicy

    return DefaultPolicy(EncoderConfig(dim=32, layers=1, heads=2, use_elements=use_elements), seed=seed)


def _serve(policy: Any, **kw: Any) -> Any:
    from digirl.serve.server import PolicyServer, ServeConfig

    return PolicyServer(policy, ServeConfig(port=0, model_id=kw.pop("model_id", "tiny"), max_wait_s=0.0, **kw))


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Any, Any]]:
    p = _policy()
    with _serve(p, model_id="runs-quickstart") as s:
        yield s, p


# ------------------------------------------------------------------------------------ the model id


def test_the_documented_model_id_is_accepted_besides_the_folder_name(served: tuple[Any, Any]) -> None:
    server, _ = served
    for model in ("runs-quickstart", "digirl"):
        status, body = post(server.address, request_body(model=model))
        assert status == 200 and body["model"] == model, body
    status, err = post(server.address, request_body(model="gpt-4o"))
    assert status == 404 and "'runs-quickstart' or 'digirl'" in err["error"]["message"]
    listed = json.loads(raw_request(server.address, "GET", "/v1/models")[2])
    assert [m["id"] for m in listed["data"]] == ["runs-quickstart", "digirl"]
    assert raw_request(server.address, "GET", "/v1/models/digirl")[0] == 200


def test_a_server_named_digirl_lists_it_once() -> None:
    with _serve(_policy(), model_id="digirl") as s:
        assert s.model_ids == ("digirl",)


# ------------------------------------------------------------------------------------ greedy log-prob


def _typing_policy() -> Any:
    """A policy whose mode is TYPE with every word's logit negative, so the typed word is forced on:
    the case that read -1231.7 at temperature 0 (the forced word scored at temperature 1e-4)."""
    from digirl.policies.features import KIND_INDEX

    p = _policy(seed=3)
    with torch.no_grad():
        last = p.net.kind_head[-1]
        last.bias.zero_()
        last.bias[KIND_INDEX["type"]] = 20.0
        p.net.type_head[-1].bias.fill_(-0.3)
    return p


def _observations() -> list[Observation]:
    rng = np.random.default_rng(0)
    els = tuple(UIElement.from_dict(e) for e in ELEMENTS)
    texts = ["search for hiking boots", "type hello", "open the settings app", "find cheap flights to Rome"]
    return [
        Observation(rng.integers(0, 256, (120, 54, 3), dtype=np.uint8), t, elements=els if i % 2 else None)
        for i, t in enumerate(texts)
    ]


@pytest.mark.parametrize("which", ["plain", "forced-typed-word"])
def test_greedy_log_prob_is_the_policys_own_at_any_temperature(which: str) -> None:
    policy = _typing_policy() if which == "forced-typed-word" else _policy()
    obs = _observations()
    with torch.no_grad():
        ref_actions = [o.action for o in policy.act(obs, greedy=True)]
        scored = policy.log_prob(obs, ref_actions).tolist()
    if which == "forced-typed-word":
        assert all(a.type is ActionType.TYPE for a in ref_actions)
    for t in (1e-6, 1e-4, 0.3, 1.0, 2.0):
        out = policy.act(obs, greedy=True, temperature=t)
        assert [o.action for o in out] == ref_actions  # the mode does not depend on the temperature
        assert [o.log_prob for o in out] == pytest.approx(scored, abs=1e-4), t


def test_greedy_log_prob_over_http_matches_the_policy() -> None:
    policy = _typing_policy()
    with _serve(policy) as server:
        status, body = post(server.address, request_body("type hello world", temperature=0))
    assert status == 200, body
    got = body["choices"][0]["message"]["digirl"]
    action = action_from_dict(got["action"])
    from digirl.serve.protocol import Limits, parse_request

    obs = parse_request(request_body("type hello world"), "tiny", Limits()).observation
    with torch.no_grad():
        expected = float(policy.log_prob([obs], [action])[0])
    assert action.type is ActionType.TYPE and got["log_prob"] == pytest.approx(expected, abs=1e-4)
    assert -20 < got["log_prob"] < 0  # once -1231.7


# ------------------------------------------------------------------------------------ elements or pixels


def test_a_pixels_only_policy_is_served_from_a_screenshot_alone() -> None:
    pixels = _policy(use_elements=False)
    assert pixels.uses_elements is False
    with _serve(pixels) as server:
        status, body = post(server.address, request_body(elements=None))
        with_elements = post(server.address, request_body(temperature=0))[1]
        without = post(server.address, request_body(elements=None, temperature=0))[1]
    assert status == 200 and body["choices"][0]["message"]["digirl"]["valid"] is True
    assert with_elements["choices"][0]["message"]["digirl"] == without["choices"][0]["message"]["digirl"]  # ignored


def test_a_policy_that_reads_elements_says_so_when_none_are_sent(served: tuple[Any, Any]) -> None:
    server, policy = served
    assert policy.uses_elements is True and server.needs_elements is True
    status, err = post(server.address, request_body(elements=None, model="digirl"))
    assert status == 400 and err["error"]["code"] == "elements_required" and err["error"]["param"] == "digirl.elements"
    assert "send them as digirl.elements" in err["error"]["message"]
    assert post(server.address, request_body(elements=[], model="digirl"))[0] == 200  # a screen without elements is fine


def test_missing_elements_can_be_allowed() -> None:
    with _serve(_policy(), require_elements=False) as server:
        assert post(server.address, request_body(elements=None))[0] == 200


# ------------------------------------------------------------------------------------ the CLI's new flags


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        (["--max-inflight-mb", "0"], "--max-inflight-mb > 0"),
        (["--max-connections", "0"], "--max-connections and --max-batch must be >= 1"),
    ],
)
def test_serve_flags_are_checked_before_the_policy_loads(
    tmp_path: Any, capsys: pytest.CaptureFixture[str], flags: list[str], needle: str
) -> None:
    from digirl.cli.main import main

    missing = tmp_path / "no-such-policy"  # never opened: the flags fail first
    assert main(["serve", str(missing), "--port", "0", *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and needle in err and len(err.strip().splitlines()) == 1


def test_large_frees_go_back_to_the_os_unless_the_user_chose(monkeypatch: pytest.MonkeyPatch) -> None:
    import platform

    from digirl.cli.serve import return_large_frees_to_os

    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "1048576")
    assert return_large_frees_to_os() is False  # the user's own setting stands
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_")
    assert return_large_frees_to_os() is (platform.system() == "Linux" and platform.libc_ver()[0] == "glibc")
