"""The shipped train and test task files are pinned byte for byte (a new split is additive: adding the
validation split, or anything else, must not move one train or test line of an existing set id)."""

from __future__ import annotations

import hashlib

import pytest

from digirl.sim.tasks.tasksets import TASKSET_DIR, generate_taskset

# sha256 (first 16 hex) of each shipped file, taken before the validation split was added.
PINNED = {
    ("general", "train"): "6bd27dfd4c4d5c3f",
    ("general", "test"): "212540095adaecad",
    ("webshop", "train"): "0e021dd0247d1734",
    ("webshop", "test"): "b2ca65bd262e9f3f",
    ("phone", "train"): "10cc7da6dc3db5ca",
    ("phone", "test"): "e114647387331c2a",
}
# A sample of exact lines (index: text), so a failure shows what moved.
SAMPLES = {
    ("general", "train"): {0: "Install the Credit Karma app", 1: "What's on the menu at Whataburger?"},
    ("general", "test"): {0: "Set an alarm for 8pm", 1: "What's the news in Honduras?"},
    ("webshop", "train"): {1: "Go to ebay.com, search for 'blue yeti'"},
    ("webshop", "test"): {2: 'Go to target.com, search for "xbox wireless controller", and select the first entry'},
    ("phone", "train"): {0: "Switch on flight mode", 2: "Show me Nadia's contact info"},
    ("phone", "test"): {0: "Start a timer for 3 hours"},
}


@pytest.mark.parametrize("name,split", sorted(PINNED))
def test_shipped_train_and_test_files_are_unchanged(name: str, split: str) -> None:
    data = (TASKSET_DIR / f"{name}_{split}.txt").read_bytes()
    assert hashlib.sha256(data).hexdigest()[:16] == PINNED[(name, split)], f"{name}_{split}.txt changed"
    lines = data.decode("utf-8").splitlines()
    for i, text in SAMPLES[(name, split)].items():
        assert lines[i] == text


@pytest.mark.parametrize("name,split", sorted(PINNED))
def test_generator_still_writes_the_pinned_files(name: str, split: str) -> None:
    text = "\n".join(generate_taskset(name, split)) + "\n"
    assert hashlib.sha256(text.encode("utf-8")).hexdigest()[:16] == PINNED[(name, split)]
