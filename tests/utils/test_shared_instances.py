"""SharedInstances: one live instance per key, closed by its owner when the last holder lets go."""

from __future__ import annotations

from digirl.utils.shared import SharedInstances


class _Thing:
    def __init__(self, key: str) -> None:
        self.key = key
        self.closed = False


def test_one_instance_per_key_until_the_last_release() -> None:
    shared: SharedInstances[str, _Thing] = SharedInstances()
    a, b = shared.acquire("x", _Thing), shared.acquire("x", _Thing)
    assert a is b and a.key == "x"
    assert shared.acquire("y", _Thing) is not a
    assert shared.release("x", a) is False  # one holder left
    assert shared.release("x", a) is True  # the last: the owner closes it
    assert shared.acquire("x", _Thing) is not a  # a fresh one after that


def test_a_closed_instance_is_replaced_and_still_counts_its_own_holders() -> None:
    shared: SharedInstances[str, _Thing] = SharedInstances()
    old = shared.acquire("x", _Thing)
    old.closed = True  # closed some other way (e.g. a crash)
    new = shared.acquire("x", _Thing)
    assert new is not old
    assert shared.release("x", old) is True  # old's only holder; new stays the live one
    assert shared.acquire("x", _Thing) is new


def test_release_of_an_instance_never_acquired_says_close_it() -> None:
    shared: SharedInstances[str, _Thing] = SharedInstances()
    assert shared.release("x", _Thing("x")) is True
