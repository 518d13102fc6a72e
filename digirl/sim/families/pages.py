"""``app_page`` kinds of the surfaces added in round 3's last pass (issue 42), merged into
:data:`digirl.sim.families.surface.APP_PAGE_KINDS`: Gmail's folders (through the navigation drawer,
which the shipped screens already had), the Play Store's "Manage apps", Contacts' favourites tab and
YouTube's bottom tabs (:mod:`digirl.sim.apps.yttabs`,
shown with ``phone.surfaces``). Each kind: its page names, the page shown (``""`` while a dialog,
a mail or a pushed screen hides the pages), the ref to tap next, and the task's start state."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from digirl.sim.apps.camera import ALBUMS
from digirl.sim.apps.yttabs import YT_TABS

if TYPE_CHECKING:
    import numpy as np

__all__ = ["CONTACT_TABS", "MAIL_FOLDERS", "PHOTO_PAGES", "STORE_PAGES", "SURFACE_PAGE_KINDS"]

#: Gmail's drawer folders an ``app_page`` task may ask for.
MAIL_FOLDERS = ("Inbox", "Starred", "Snoozed", "Sent", "Drafts", "Spam", "Trash")


def _mail_current(a: Any) -> str:
    return str(a.folder) if a.screen() in ("inbox", "folder") else ""


def _mail_ref(a: Any, page: str) -> str:
    return f"gmail.folder.{page.lower()}" if a.drawer else "gmail.menu"


def _mail_setup(a: Any, page: str, rng: np.random.Generator) -> None:
    """Gmail opens on the inbox; a task for the inbox starts in another folder."""
    if page == "Inbox":
        others = MAIL_FOLDERS[1:]
        a.folder = others[int(rng.integers(len(others)))]


def _yt_current(a: Any) -> str:
    return str(a.tab) if a.phone.surfaces and len(a.stack) == 1 else ""


def _yt_setup(a: Any, page: str, rng: np.random.Generator) -> None:
    """YouTube opens on Home; a task for Home starts on another tab."""
    if page == "Home":
        others = YT_TABS[1:]
        a.tab = others[int(rng.integers(len(others)))]


#: The Play Store's pages an ``app_page`` task may ask for: its home and "Manage apps" (my apps, updates).
STORE_PAGES = ("Home", "Manage")


def _store_current(a: Any) -> str:
    return {"home": "Home", "manage": "Manage"}.get(a.top[0], "") if a.confirm is None else ""


def _store_setup(a: Any, page: str, rng: np.random.Generator) -> None:
    """The Play Store opens on its home; a task for the home starts on "Manage apps"."""
    if page == "Home":
        a.push("manage")


#: Contacts' list tabs (with the newer surfaces).
CONTACT_TABS = ("All", "Favourites")


def _contacts_current(a: Any) -> str:
    return str(a.tab) if a.page == "list" and a.phone.surfaces else ""


def _contacts_setup(a: Any, page: str, rng: np.random.Generator) -> None:
    """Contacts open on All; a Favourites task starts with two contacts starred (something to show)."""
    a.tab = "All"
    if page == "Favourites":
        a.favorites = [c.name for c in a.phone.contacts[:2]]
    else:
        a.tab = "Favourites"


#: The Photos app's pages (newer surfaces): the albums list and each album.
PHOTO_PAGES = ("Albums", *ALBUMS)


def _photos_current(a: Any) -> str:
    if a.viewing is not None or not a.phone.surfaces:
        return ""
    return str(a.album) if a.album else ("Albums" if a.albums_open else "")


def _photos_ref(a: Any, page: str) -> str:
    if a.viewing is not None:
        return "photos.viewer.back"
    if a.album is not None:  # another album, or the list asked for: back to the list
        return "photos.album.back"
    if not a.albums_open:
        return "photos.albums"
    return f"photos.album.{ALBUMS.index(page)}"


def _photos_setup(a: Any, page: str, rng: np.random.Generator) -> None:
    """Photos opens on all the photos; the album asked for is not empty (a screenshot, a video)."""
    from digirl.sim.apps.camera import in_album
    from digirl.sim.device import Photo

    a.albums_open, a.album = False, None
    if page in ALBUMS and not any(in_album(p, page) for p in a.phone.gallery):
        kind, tags = ("video", ("park", "walk")) if page == "Videos" else ("photo", ("screenshot", "chrome"))
        a.phone.gallery.insert(0, Photo(f"a{int(rng.integers(1000))}", kind, tags, False, "Yesterday", (210, 214, 222)))


SURFACE_PAGE_KINDS: dict[str, dict[str, Any]] = {
    "photos": {"pages": PHOTO_PAGES, "current": _photos_current, "ref": _photos_ref, "setup": _photos_setup},
    "gmail": {"pages": MAIL_FOLDERS, "current": _mail_current, "ref": _mail_ref, "setup": _mail_setup},
    "youtube": {
        "pages": YT_TABS,
        "current": _yt_current,
        "ref": lambda a, p: f"yt.tab.{p.lower()}",
        "setup": _yt_setup,
    },
    "contacts": {
        "pages": CONTACT_TABS,
        "current": _contacts_current,
        "ref": lambda a, p: f"contacts.tab.{p.lower()}",
        "setup": _contacts_setup,
    },
    # the account button opens "Manage apps"; any other screen goes back towards the home
    "playstore": {
        "pages": STORE_PAGES,
        "current": _store_current,
        "ref": lambda a, p: "store.account" if p == "Manage" and a.top[0] == "home" else "store.back",
        "setup": _store_setup,
    },
}
