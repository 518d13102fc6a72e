"""Camera (photo, video and portrait modes, front/back camera, shutter; a shot lands in the gallery)
and Photos (the gallery newest first, search by what is on a photo, a full-screen viewer)."""

from __future__ import annotations

from functools import partial
from typing import Any

from digirl.sim import ui
from digirl.sim.apps.base import App, app_bar, person_row, tab_label
from digirl.sim.apps.messages import Msg
from digirl.sim.device import Photo, find_contacts

__all__ = ["Camera", "Photos", "photo_matches"]

_MODES = ("Photo", "Video", "Portrait")
#: The newer camera's modes (Phone.surfaces): (mode, its label on the mode row).
MORE_MODES = (
    ("Night", "NIGHT"),
    ("Portrait", "PORTRAIT"),
    ("Photo", "PHOTO"),
    ("Video", "VIDEO"),
    ("Slow motion", "SLO-MO"),
    ("Panorama", "PANO"),
)
#: The self-timer's settings in seconds, in the order a tap cycles them.
TIMER_STEPS = (0, 3, 10)


def mode_ref(mode: str) -> str:
    """The element ref of a camera mode ("Slow motion" → ``camera.mode.slow_motion``)."""
    return "camera.mode." + mode.lower().replace(" ", "_")


def photo_matches(p: Photo, query: str) -> bool:
    """Whether the photo shows what ``query`` names (any of its words is a tag, plurals folded)."""
    words = [w.rstrip("s") for w in query.lower().split() if len(w) > 2]
    tags = {t.rstrip("s") for tag in p.tags for t in tag.split()}
    return bool(words) and any(w in tags for w in words)


class Camera(App, key="camera", label="Camera", icon="camera", color=(60, 64, 67), bg=(0, 0, 0)):
    def init_state(self) -> None:
        self.mode = "Photo"
        self.front = False
        self.recording = False
        self.shots = 0
        self.timer = 0  # self-timer seconds (newer surfaces)

    def screen(self) -> str:
        return "recording" if self.recording else "viewfinder"

    def state(self) -> dict[str, object]:
        return {"screen": self.screen(), "mode": self.mode, "front": self.front, "shots": self.shots}

    def back(self) -> bool:
        if self.recording:
            self._stop()
            return True
        return False

    def _save(self, kind: str) -> None:
        self.shots += 1
        tags: tuple[str, ...] = ("selfie", "me") if self.front else ("camera",)
        if self.mode not in ("Photo", "Video"):
            tags += (self.mode.lower(),)  # "portrait", "night", "panorama", "slow motion"
        if self.timer and kind == "photo":
            tags += (f"timer {self.timer}s",)
        self.phone.gallery.insert(0, Photo(f"c{self.shots}", kind, tags, self.front, "Just now", (92, 100, 84)))

    def _stop(self) -> None:
        self.recording = False
        self._save("video")

    def shutter(self) -> None:
        if self.mode in ("Video", "Slow motion"):
            if self.recording:
                self._stop()
            else:
                self.recording = True
        else:
            self._save("photo")

    def set_mode(self, mode: str) -> None:
        if not self.recording:
            self.mode = mode

    def cycle_timer(self) -> None:
        self.timer = TIMER_STEPS[(TIMER_STEPS.index(self.timer) + 1) % len(TIMER_STEPS)]

    def flip(self) -> None:
        if not self.recording:
            self.front = not self.front

    def _mode_row(self) -> list[ui.View]:
        """The row of modes under the viewfinder; the newer camera has six and a self-timer button."""
        if not self.phone.surfaces:
            modes, x0, w = [(m, m.upper()) for m in _MODES], 30.0, 100.0
        else:
            modes, x0, w = list(MORE_MODES), 3.0, 59.0
        views = [
            tab_label(
                (x0 + w * i, ui.TOP + 552, x0 + w * (i + 1), ui.TOP + 592),
                label,
                m == self.mode,
                (255, 213, 79),
                idle=ui.WHITE,
                ref=mode_ref(m),
                on_tap=partial(self.set_mode, m),
                size=13 if not self.phone.surfaces else 11,
            )
            for i, (m, label) in enumerate(modes)
        ]
        if self.phone.surfaces:
            timer = ui.icon_button(
                (300, ui.TOP + 8, 344, ui.TOP + 52),
                "timer",
                self.cycle_timer,
                ref="camera.timer",
                desc=f"Self-timer {self.timer}s" if self.timer else "Self-timer off",
                color=(255, 213, 79) if self.timer else ui.WHITE,
            )
            views.append(timer)
            if self.timer:
                views.append(
                    ui.label((250, ui.TOP + 18, 298, ui.TOP + 42), f"{self.timer}s", size=14, fg=(255, 213, 79), align="right")
                )
        return views

    def _last(self) -> None:
        photos = self.phone.apps["photos"]
        self.phone.launch("photos")
        photos.view(0)  # type: ignore[attr-defined]

    def build(self) -> list[ui.View]:
        scene = (120, 110, 100) if self.front else (92, 100, 84)
        views = [
            ui.box((0, ui.TOP, 360, ui.BOTTOM), (0, 0, 0)),
            ui.box((0, ui.TOP + 60, 360, ui.TOP + 540), (58, 66, 62), ref="camera.viewfinder"),
            ui.box((40, ui.TOP + 300, 320, ui.TOP + 540), scene),
        ]
        if self.front:
            views.append(ui.box((130, ui.TOP + 180, 230, ui.TOP + 300), (200, 170, 150), radius=50))
        if self.recording:
            views.append(
                ui.label((0, ui.TOP + 16, 360, ui.TOP + 44), "● REC 00:01", size=14, fg=ui.RED, align="center", ref="camera.rec")
            )
        views += self._mode_row()
        views.append(
            ui.View(
                (145, ui.TOP + 610, 215, ui.TOP + 680),
                kind="button",
                fill=ui.RED if self.mode in ("Video", "Slow motion") else ui.WHITE,
                radius=35 if not self.recording else 12,
                ref="camera.shutter",
                on_tap=self.shutter,
                placeholder="Stop recording"
                if self.recording
                else ("Record" if self.mode in ("Video", "Slow motion") else "Shutter"),
            )
        )
        views.append(
            ui.icon_button(
                (276, ui.TOP + 620, 326, ui.TOP + 670), "flip", self.flip, ref="camera.flip", desc="Switch camera", color=ui.WHITE
            )
        )
        if self.phone.gallery:
            views.append(
                ui.box(
                    (40, ui.TOP + 622, 86, ui.TOP + 668),
                    self.phone.gallery[0].color,
                    radius=23,
                    ref="camera.last",
                    on_tap=self._last,
                )
            )
        return views


#: The Photos app's albums (newer surfaces), and which photos each holds.
ALBUMS = ("Camera", "Screenshots", "Favorites", "Videos")
_FAVORITE_TAGS = frozenset({"pet", "friends"})


def in_album(p: Photo, album: str) -> bool:
    """Whether photo ``p`` is in ``album`` (one of :data:`ALBUMS`)."""
    shot = "screenshot" in p.tags
    if album == "Screenshots":
        return shot
    if album == "Videos":
        return p.kind == "video"
    if album == "Favorites":
        return bool(_FAVORITE_TAGS & set(p.tags))
    return not shot  # Camera


class Photos(App, key="photos", label="Photos", icon="photos", color=ui.WHITE):
    def init_state(self) -> None:
        #: With the newer surfaces: the albums list is open, or one album's photos are shown.
        self.albums_open = False
        self.album: str | None = None
        self.viewing: Photo | None = None
        #: Photos deleted in this episode, each with the gallery as it was just before.
        self.binned: list[tuple[Photo, tuple[Photo, ...]]] = []
        #: The viewer's "Send to" picker is open (newer surfaces); photos sent in this episode:
        #: (photo, the gallery just before, the contact's name).
        self.sharing = False
        self.shared: list[tuple[Photo, tuple[Photo, ...], str]] = []

    @property
    def bg(self) -> ui.Color:  # type: ignore[override]
        return (0, 0, 0) if self.viewing is not None else ui.WHITE

    def screen(self) -> str:
        if self.viewing is not None:
            return "share" if self.sharing else "viewer"
        if self.album is None and self.albums_open:
            return "albums"
        return "search" if self.fields.get("q") else ("album" if self.album else "grid")

    def state(self) -> dict[str, object]:
        v = self.viewing
        return {"screen": self.screen(), "viewing": v.pid if v else None, "query": self.fields.get("q", "")}

    def back(self) -> bool:
        if self.sharing:
            self.sharing = False
            self.blur()
            return True
        if self.viewing is not None:
            self.viewing = None
            return True
        if self.clear_query():
            return True
        if self.album is not None:  # an album, then the albums list, then the photos
            self.album = None
            return True
        if self.albums_open:
            self.albums_open = False
            return True
        return False

    def open_albums(self) -> None:
        self.albums_open, self.album = True, None
        self.blur()

    def open_album(self, name: str) -> None:
        self.album = name
        self.fields["q"] = ""

    def shown(self) -> list[Photo]:
        q = self.fields.get("q", "").strip()
        album = self.album
        return [p for p in self.phone.gallery if (album is None or in_album(p, album)) and (not q or photo_matches(p, q))]

    def view(self, i: int) -> None:
        shown = self.shown()
        if 0 <= i < len(shown):
            self.viewing = shown[i]
            self.blur()

    def submit(self, name: str) -> None:
        self.blur()

    def build(self) -> list[ui.View]:
        if self.viewing is not None:
            return self._viewer(self.viewing)
        if self.albums_open and self.album is None:
            return self._albums()
        rows: list[ui.View] = []
        shown = self.shown()
        for i, p in enumerate(shown):
            x, y = 2 + 119 * (i % 3), 30 + 119 * (i // 3)
            tile = ui.box((x, y, x + 117, y + 117), p.color, ref=f"photos.{i}", on_tap=partial(self.view, i))
            tile.kind = "list_item"
            tile.placeholder = f"{p.kind.title()}: {', '.join(p.tags[:2])} · {p.when}"
            if p.kind == "video":
                tile.children.append(
                    ui.View((x + 44, y + 44, x + 74, y + 74), kind="icon", icon="play", icon_color=ui.WHITE, element=False)
                )
            rows.append(tile)
        q = self.fields.get("q", "")
        rows.append(ui.label((12, 0, 300, 28), f"Results for {q!r}" if q else "Recent", size=15, bold=True))
        if not shown:
            rows.append(ui.label((12, 40, 344, 70), "No photos match", size=14, fg=ui.SUBTLE, ref="photos.none"))
        head = ui.box((0, ui.TOP, 360, ui.TOP + 120), ui.WHITE, blocker=True)
        if self.album is not None:  # an album's photos (newer surfaces)
            head.children.append(app_bar(self.album, back=self.phone.key_back, ref="photos.album"))
        elif self.phone.surfaces:
            albums = ui.icon_button((0, 0, 0, 0), "image", self.open_albums, ref="photos.albums", desc="Albums", color=ui.TEXT)
            head.children.append(app_bar("Photos", ref="photos.bar", actions=[albums]))
        else:
            head.children.append(app_bar("Photos", ref="photos.bar"))
        head.children.append(
            self.text_input(
                (12, ui.TOP + 60, 348, ui.TOP + 108), "q", placeholder="Search your photos", ref="photos.search", filled=True
            )
        )
        return self.list_page("photos", 120, rows, head)

    def _albums(self) -> list[ui.View]:
        """The albums (newer surfaces): each with its number of items; a tap shows its photos."""
        rows = [
            ui.list_row(
                72.0 * i,
                72,
                name,
                sub=f"{sum(in_album(p, name) for p in self.phone.gallery)} items",
                icon="photos" if name != "Videos" else "video",
                icon_color=ui.BLUE,
                ref=f"photos.album.{i}",
                on_tap=partial(self.open_album, name),
            )
            for i, name in enumerate(ALBUMS)
        ]
        return [
            *self.form_page("Albums", ref="photos.albumlist"),
            ui.scroll_list("photos.albums.list", (0, ui.TOP + 56, 360, ui.BOTTOM), rows, self.phone.scroll),
        ]

    def _viewer(self, p: Photo) -> list[ui.View]:
        views: list[ui.View] = [ui.box((0, ui.TOP, 360, ui.BOTTOM), (0, 0, 0), ref="photos.viewer")]
        views.append(ui.box((0, ui.TOP + 140, 360, ui.TOP + 520), p.color, ref="photos.viewer.image"))
        if p.kind == "video":
            views.append(
                ui.View((150, ui.TOP + 300, 210, ui.TOP + 360), kind="icon", icon="play", icon_color=ui.WHITE, element=False)
            )
        views.append(
            ui.label(
                (16, ui.TOP + 540, 344, ui.TOP + 566),
                f"{p.when} · {', '.join(p.tags)}",
                size=14,
                fg=ui.WHITE,
                ref="photos.viewer.info",
            )
        )
        views.append(self.back_button((4, ui.TOP + 8, 48, ui.TOP + 52), ref="photos.viewer.back", color=ui.WHITE))
        if self.phone.surfaces:  # the pinned viewer has no share or trash button
            for x, icon, fn, ref, desc in (
                (256, "send", self.start_share, "photos.viewer.share", "Share"),
                (308, "trash", self.delete_viewed, "photos.viewer.delete", "Delete"),
            ):
                views.append(ui.icon_button((x, ui.TOP + 8, x + 44, ui.TOP + 52), icon, fn, ref=ref, desc=desc, color=ui.WHITE))
            if self.sharing:
                views += self._share_views()
        return views

    def start_share(self) -> None:
        self.sharing = True
        self.fields["to"] = ""
        self.focus("to")

    def send_to(self, name: str) -> None:
        """Send the photo on screen to a contact in Messages (its conversation opens with it)."""
        if self.viewing is None:
            return
        self.shared.append((self.viewing, tuple(self.phone.gallery), name))
        messages: Any = self.phone.apps["messages"]
        messages.threads.setdefault(name, []).append(Msg(f"Photo · {', '.join(self.viewing.tags[:2])}", True, new=True))
        self.sharing = False
        self.blur()
        self.phone.launch("messages")
        messages.open_thread(name)
        messages.blur()

    def _share_views(self) -> list[ui.View]:
        """The "Send to" sheet over the viewer: a name field and the contacts that match it (children of
        the sheet, so their text is drawn on its white)."""
        sheet = ui.box((0, ui.TOP + 300, 360, ui.BOTTOM), ui.WHITE, radius=20, blocker=True, ref="photos.share")
        sheet.children.append(ui.label((20, ui.TOP + 312, 340, ui.TOP + 340), "Send to", size=17, bold=True))
        sheet.children.append(
            self.text_input((16, ui.TOP + 346, 344, ui.TOP + 394), "to", placeholder="Name or number", ref="photos.share.to")
        )
        for i, c in enumerate(find_contacts(self.phone.contacts, self.fields.get("to", ""))[:4]):
            tap = partial(self.send_to, c.name)
            sheet.children.append(person_row(ui.TOP + 400 + 56.0 * i, 56, c.name, ref=f"photos.share.result.{i}", on_tap=tap))
        return [sheet]

    def delete_viewed(self) -> None:
        """Move the photo on screen to the bin (it leaves the gallery) and go back to the grid."""
        if self.viewing is not None:
            self.binned.append((self.viewing, tuple(self.phone.gallery)))
            self.phone.gallery[:] = [p for p in self.phone.gallery if p.pid != self.viewing.pid]
            self.viewing = None
            self.phone.invalidate()
