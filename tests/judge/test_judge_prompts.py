"""Answer parsing and prompt families."""

from __future__ import annotations

import pytest

from digirl.core.types import TaskSpec
from digirl.judge.prompts import build_messages, parse_answer, task_family, text_examples


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Reason: the page is open.\nStatus: success", True),
        ("Reason: nope.\nStatus: failure", False),
        ("status: **Success**", True),
        ("Status - not complete", False),
        ("Status: incomplete", False),
        ("Status: success ... wait, no.\nStatus: failure", False),  # the last status wins
        ('{"success": true, "reason": "ok"}', True),
        ('Here: {"status": "failure"}', False),
        ("The task looks done to me", None),
        ("Status: maybe", None),
        ("", None),
        ('{"success": "perhaps"}', None),
    ],
)
def test_parse_answer(text: str, expected: bool | None) -> None:
    assert parse_answer(text)[0] is expected


def test_reason_is_extracted() -> None:
    assert parse_answer("Reason: settings page shown\nStatus: success")[1] == "settings page shown"


def test_task_family() -> None:
    assert task_family("free text") == "general"
    assert task_family(TaskSpec("x", family="shop_select")) == "webshop"
    assert task_family(TaskSpec("x", env_id="digirl/android-webshop-v0")) == "webshop"
    assert task_family(TaskSpec("x", env_id="digirl/miniwob.click-button-v0")) == "webapp"
    assert task_family(TaskSpec("x", family="web_search")) == "general"
    assert task_family(TaskSpec("x", family="webapp")) == "webapp"


def test_messages_without_images_describe_the_examples() -> None:
    exs = [(e, None) for e in text_examples("general")]
    msgs = build_messages("Open Chrome", "general", "data:image/png;base64,AAA", examples=exs)
    assert len(msgs) == 1 + 2 * len(exs) + 1
    assert "Screen (described):" in msgs[1]["content"][0]["text"]
    assert msgs[-1]["content"][-1]["image_url"]["url"] == "data:image/png;base64,AAA"


def test_screenshot_examples_from_the_simulator() -> None:
    from digirl.envs.registry import make
    from digirl.judge.prompts import env_example_provider

    try:
        make("digirl/sim-general-v0").close()
    except (KeyError, ModuleNotFoundError) as e:
        pytest.skip(f"the simulator is not available: {e}")
    exs = env_example_provider({"general": "digirl/sim-general-v0"}, per_family=2)("general")
    assert [e.success for e in exs] == [True, False]
    assert all(e.image is not None and e.image.dtype.name == "uint8" for e in exs)
    assert exs[0].image is not None and exs[1].image is not None
    assert exs[0].image.shape == exs[1].image.shape
