"""Photos' albums (issue 42, session 24): an Albums button in Photos' bar (newer surfaces only) opens the
albums (Camera, Screenshots, Favorites, Videos), each a grid of its photos; ``app_page`` of Photos asks
for the list or an album; parsed from everyday phrasings and solved by the expert."""

from __future__ import annotations

from typing import Any

import pytest

from digirl.sim.apps.camera import ALBUMS, in_album
from digirl.sim.env import SimEnv
from digirl.sim.intents import Intent
from digirl.sim.phone import Phone
from digirl.sim.samples import spec_for
from tests.sim.conftest import assert_expert_solves, plan_steps


@pytest.mark.parametrize(
    ("text", "pages"),
    [
        ("open the Screenshots album", ["Screenshots"]),
        ("Show the Screenshots album.", ["Screenshots"]),
        ("open my screenshots album", ["Screenshots"]),
        ("open the Favorites album", ["Favorites"]),
        ("open the Camera album", ["Camera"]),
        ("open my albums", ["Albums"]),
        ("open google photos, go to albums and open Camera", ["Albums", "Camera"]),
    ],
)
def test_album_phrasings_parse_and_the_expert_solves_them(text: str, pages: list[str]) -> None:
    got = [s for s in plan_steps(text) if s["family"] == "app_page"]
    assert got == [{"family": "app_page", "slots": {"app": "photos", "page": p}} for p in pages]
    assert_expert_solves(text)


def test_albums_hold_their_photos_and_an_asked_album_is_never_empty() -> None:
    phone = Phone()
    gallery = phone.gallery
    assert sum(in_album(p, "Camera") for p in gallery) == len(gallery)  # no screenshot yet
    assert all(in_album(p, "Favorites") == bool({"pet", "friends"} & set(p.tags)) for p in gallery)
    for album in ALBUMS:
        env = SimEnv(taskset="phone", perturbation=0)
        env.reset(seed=0, options={"task": spec_for("t", Intent("app_page", {"app": "photos", "page": album}), task_id="t")})
        assert any(in_album(p, album) for p in env.phone.gallery), album


def _refs(views: list[Any]) -> set[str]:
    out: set[str] = set()
    for v in views:
        out |= ({v.ref} if v.ref else set()) | _refs(v.children)
    return out


def test_the_album_pages_come_and_go_by_tap_and_back_with_the_newer_surfaces_only() -> None:
    phone = Phone()
    photos: Any = phone.apps["photos"]
    assert "photos.albums" not in _refs(photos.build())  # the pinned Photos has no albums
    phone.surfaces = True
    assert "photos.albums" in _refs(photos.build())
    photos.open_albums()
    assert photos.screen() == "albums" and "photos.album.1" in _refs(photos.build())
    photos.open_album("Favorites")
    assert photos.screen() == "album" and all(in_album(p, "Favorites") for p in photos.shown())
    assert photos.back() and photos.screen() == "albums"
    assert photos.back() and photos.screen() == "grid"
