"""Mutated requests never crash validation: every one either parses or is a 4xx ``RequestError``."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

from digirl.core.actions import Action
from digirl.core.codecs import action_to_dict
from digirl.serve.body import decode_json
from digirl.serve.protocol import Limits, RequestError, parse_request
from tests.serve.conftest import png_url, request_body

#: What a value is swapped for: every JSON type, edge numbers, deep and wide values.
REPLACEMENTS: list[Any] = [
    None,
    True,
    0,
    -1,
    10**400,
    1e308,
    -0.0,
    "",
    "x" * 20_000,
    [],
    {},
    [[[[[]]]]],
    {"a": {"b": {"c": 1}}},
    [None],
    {"type": "text"},
    {"url": 1},
    "data:image/png;base64,",
    "data:image/png;base64,iVBORw0KGgo=",
    ["user"],
    {"role": "user"},
]


def _paths(v: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(v, dict):
        for k, x in v.items():
            out += _paths(x, (*path, k))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            out += _paths(x, (*path, i))
    return out


def _set(v: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    parent = v
    for k in path[:-1]:
        parent = parent[k]
    parent[path[-1]] = new
    return v


def _base() -> dict[str, Any]:
    body = request_body(temperature=0.7, n=2)
    body["messages"].insert(0, {"role": "assistant", "content": '{"type": "PRESS_HOME"}'})
    body["messages"][-1]["content"].insert(1, {"type": "image_url", "image_url": {"url": png_url(seed=1)}})
    body["digirl"]["history"] = [action_to_dict(Action.tap(0.5, 0.5)), action_to_dict(Action.home())]
    body["digirl"]["step"] = 2
    return body


def test_a_thousand_mutated_requests_are_parsed_or_refused_with_a_4xx() -> None:
    rng = random.Random(0)
    base = _base()
    paths = _paths(base)
    limits = Limits(max_image_pixels=300 * 300)
    outcomes = {"parsed": 0, "refused": 0}
    for _ in range(1000):
        body = copy.deepcopy(base)
        for _ in range(rng.choice((1, 1, 2, 3))):
            path = rng.choice(paths)
            try:
                body = _set(body, path, copy.deepcopy(rng.choice(REPLACEMENTS)))
            except (KeyError, IndexError, TypeError):  # an earlier mutation removed the path
                pass
        raw = json.dumps(body).encode()
        try:
            parse_request(decode_json(raw, limits), ["tiny"], limits, needs_elements=True)
            outcomes["parsed"] += 1
        except RequestError as e:
            assert 400 <= e.status < 500, (e.status, e.message)
            outcomes["refused"] += 1
    assert outcomes["parsed"] >= 20 and outcomes["refused"] >= 500, outcomes  # both paths exercised (37 and 963 today)
