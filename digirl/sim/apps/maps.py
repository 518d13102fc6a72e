"""A Maps-like app: map view, place search with suggestions, results, place page, directions."""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from digirl.sim import ui
from digirl.sim.apps.base import FIELD_FILL, tab_label
from digirl.sim.apps.search import ScreenStackApp, SearchFlow
from digirl.sim.content import Place, places, stable_rng

__all__ = ["TRAVEL_MODES", "Maps", "place_number", "place_query"]

#: The directions screen's travel modes.
TRAVEL_MODES = ("Drive", "Transit", "Walk", "Bike")

_LAND = (232, 234, 237)
_ROAD = (255, 255, 255)
_WATER = (170, 218, 255)
_PARK = (197, 232, 197)


def _route_end(y: float, text: str, *, ref: str) -> ui.View:
    """A read-only box of the directions header: where the route starts or ends."""
    return ui.input_field(
        (52, y, 348, y + 40),
        text,
        placeholder="",
        focused=False,
        on_tap=None,
        ref=ref,
        icon="",
        radius=8,
        fill=FIELD_FILL,
        border=None,
        size=14,
    )


def place_number(p: Place) -> str:
    """A place's phone number: ten digits, the same for its name in every episode."""
    return "415555" + f"{stable_rng('place-phone', p.name).randrange(10000):04d}"


def place_query(q: str) -> str:
    """Strip "nearest"/"closest"/"near me" so a place search names the kind of place."""
    q = re.sub(r"\b(the|a|an|nearest|closest|nearby|near me|near here|around here|directions to)\b", " ", q.lower())
    return re.sub(r"\s+", " ", q).strip()


def _map(y0: float, y1: float, seed: str, pins: int = 0) -> ui.View:
    r = stable_rng("map", seed)
    m = ui.box((0, y0, 360, y1), _LAND, ref="maps.map")
    m.children.append(ui.box((r.randint(180, 260), y0, 360, y0 + r.randint(60, 140)), _WATER))
    m.children.append(ui.box((20, y1 - r.randint(120, 200), r.randint(100, 160), y1 - 60), _PARK, radius=10))
    for _ in range(4):
        y = r.randint(int(y0) + 20, int(y1) - 20)
        m.children.append(ui.box((0, y, 360, y + 8), _ROAD))
        x = r.randint(10, 340)
        m.children.append(ui.box((x, y0, x + 8, y1), _ROAD))
    for _i in range(pins):
        x, y = r.randint(40, 320), r.randint(int(y0) + 40, int(y1) - 40)
        m.children.append(ui.View((x - 12, y - 24, x + 12, y), kind="icon", icon="pin", icon_color=(234, 67, 53), element=False))
    return m


class Maps(ScreenStackApp, key="maps", label="Maps", icon="pin", color=(52, 168, 83), rates=True):
    search_flow = SearchFlow("maps", back_ref="maps.back", placeholder="Search here")

    def init_state(self) -> None:
        self.stack: list[tuple[str, object]] = [("home", None)]
        self.travel = "Drive"  # the directions' travel mode (chosen on the newer directions screen)

    def screen(self) -> str:
        return self.top[0]

    def state(self) -> dict[str, object]:
        s, arg = self.top
        return {"screen": s, "arg": arg.name if isinstance(arg, Place) else arg, "focused": self.focused}

    @property
    def query(self) -> str:
        """The query of the results (or place/directions reached from them) on screen."""
        for s, arg in reversed(self.stack):
            if s == "results":
                return str(arg)
        return ""

    def start_search(self) -> None:
        self.push("search")
        self.fields["q"] = self.query if self.top[0] == "results" else ""
        self.focus("q")

    def run_query(self, q: str) -> None:
        del self.stack[1:]  # a place search starts again from the map
        super().run_query(q)

    def results(self) -> list[Place]:
        q = self.query
        items = places(place_query(q) or q, self.phone.dyn.world_version)
        return [items[j] for j in self.phone.dyn.order(len(items), "maps", q.lower())]

    def build_screen(self, s: str, arg: object) -> list[ui.View]:
        if s == "place" and isinstance(arg, Place):
            return self._place(arg)
        if s == "directions" and isinstance(arg, Place):
            return self._directions(arg)
        return self._home()

    def _searchbox(self, text: str) -> ui.View:
        return self.search_box(
            (12, ui.TOP + 8, 348, ui.TOP + 56), text, ref="maps.search", icon="pin", fill=ui.WHITE, border=ui.FAINT, radius=24
        )

    def _home(self) -> list[ui.View]:
        views = [_map(ui.TOP, ui.BOTTOM, "home", pins=3), self._searchbox("")]
        for i, chip in enumerate(("Restaurants", "Gas", "Coffee", "Hotels")):
            x = 12 + 86 * i
            views.append(
                ui.button(
                    (x, ui.TOP + 64, x + 80, ui.TOP + 96),
                    chip,
                    partial(self.run_query, chip.lower()),
                    ref=f"maps.chip.{chip.lower()}",
                    style="outlined",
                    color=ui.TEXT,
                    size=12,
                    radius=16,
                )
            )
        views.append(
            ui.icon_button(
                (290, ui.BOTTOM - 80, 346, ui.BOTTOM - 24),
                "directions",
                None,
                ref="maps.go",
                desc="Directions",
                color=(26, 115, 232),
                fill=ui.WHITE,
                radius=28,
            )
        )
        return views

    def _results(self, q: str) -> list[ui.View]:
        rows: list[ui.View] = []
        y = 8.0 + self.phone.dyn.list_offset * 0.5
        for i, p in enumerate(self.results()):
            row = ui.box(
                (0, y, 360, y + 104), ui.WHITE, ref=f"maps.result.{i}", on_tap=partial(self.push, "place", p), kind="list_item"
            )
            row.children.append(ui.label((16, y + 8, 250, y + 32), p.name, size=16, bold=True))
            row.children.append(
                ui.label((16, y + 32, 250, y + 52), f"{p.rating} ★ · {p.category} · {p.distance}", size=12, fg=ui.SUBTLE)
            )
            row.children.append(ui.label((16, y + 52, 250, y + 72), f"{p.address} · {p.detail}", size=12, fg=ui.SUBTLE))
            row.children.append(
                ui.button(
                    (256, y + 20, 348, y + 56),
                    self.phone.dyn.text("directions", "Directions"),
                    partial(self.push, "directions", p),
                    ref=f"maps.result.{i}.directions",
                    size=12,
                    radius=18,
                    icon="directions",
                )
            )
            row.children.append(ui.box((16, y + 103, 344, y + 104), ui.FAINT))
            rows.append(row)
            y += 104
        return [
            _map(ui.TOP, ui.TOP + 260, q, pins=5),
            ui.scroll_list(
                self.search_flow.results_scroll, (0, ui.TOP + 260, 360, ui.BOTTOM), rows, self.phone.scroll, fill=ui.WHITE
            ),
            self._searchbox(q),
        ]

    def call(self, p: Place) -> None:
        """Call the place from the Phone app (its number is stable for its name)."""
        dialer: Any = self.phone.apps["phone"]
        self.phone.launch("phone")
        dialer.call(place_number(p), p.name)

    def _place(self, p: Place) -> list[ui.View]:
        views = [_map(ui.TOP, ui.TOP + 300, p.name, pins=1), self._searchbox(self.query)]
        sheet = ui.box((0, ui.TOP + 290, 360, ui.BOTTOM), ui.WHITE, radius=16, ref="maps.place")
        sheet.children.append(ui.label((16, ui.TOP + 304, 344, ui.TOP + 336), p.name, size=21, bold=True, ref="maps.place.name"))
        sheet.children.append(
            ui.label((16, ui.TOP + 338, 344, ui.TOP + 358), f"{p.rating} ★ · {p.category} · {p.distance}", size=13, fg=ui.SUBTLE)
        )
        sheet.children.append(ui.label((16, ui.TOP + 360, 344, ui.TOP + 380), f"{p.address} · {p.detail}", size=13, fg=ui.SUBTLE))
        sheet.children.append(
            ui.button(
                (16, ui.TOP + 396, 130, ui.TOP + 436),
                self.phone.dyn.text("directions", "Directions"),
                lambda: self.push("directions", p),
                ref="maps.place.directions",
                radius=20,
                size=13,
                icon="directions",
            )
        )
        sheet.children.append(
            ui.button(
                (138, ui.TOP + 396, 232, ui.TOP + 436),
                "Start",
                lambda: self.push("directions", p),
                ref="maps.place.start",
                style="outlined",
                radius=20,
                size=13,
            )
        )
        newer = self.phone.surfaces  # the newer place sheet calls the place instead of saving it
        sheet.children.append(
            ui.button(
                (240, ui.TOP + 396, 344, ui.TOP + 436),
                "Call" if newer else "Save",
                partial(self.call, p) if newer else lambda: None,
                ref="maps.place.call" if newer else "maps.place.save",
                style="outlined",
                radius=20,
                size=13,
                icon="phone" if newer else "",
            )
        )
        views.append(sheet)
        return views

    def _directions(self, p: Place) -> list[ui.View]:
        r = stable_rng("route", p.name)
        views = [_map(ui.TOP + 120, ui.BOTTOM, "route" + p.name, pins=1)]
        head = ui.box((0, ui.TOP, 360, ui.TOP + 120), ui.WHITE, blocker=True, ref="maps.directions")
        head.children.append(self.back_button((4, ui.TOP + 8, 44, ui.TOP + 48), ref="maps.directions.back"))
        head.children.append(_route_end(ui.TOP + 8, "Your location", ref="maps.from"))
        head.children.append(_route_end(ui.TOP + 56, p.name, ref="maps.to"))
        newer = self.phone.surfaces  # the newer chips choose the travel mode (the pinned ones are drawn only)
        for i, mode in enumerate(TRAVEL_MODES):
            head.children.append(
                tab_label(
                    (52 + 74 * i, ui.TOP + 98, 120 + 74 * i, ui.TOP + 118), mode, mode == (self.travel if newer else "Drive"),
                    ui.BLUE, size=12, ref=f"maps.mode.{mode.lower()}" if newer else "",
                    on_tap=partial(setattr, self, "travel", mode) if newer else None,
                )
            )  # fmt: skip
        views.append(head)
        mins = r.randint(3, 40) * ({"Walk": 5, "Bike": 2, "Transit": 2}.get(self.travel, 1) if newer else 1)
        sheet = ui.box((0, ui.BOTTOM - 150, 360, ui.BOTTOM), ui.WHITE, radius=16, ref="maps.route")
        sheet.children.append(
            ui.label(
                (16, ui.BOTTOM - 138, 344, ui.BOTTOM - 106),
                f"{mins} min ({p.distance})",
                size=20,
                bold=True,
                fg=(24, 128, 56),
                ref="maps.route.eta",
            )
        )
        sheet.children.append(
            ui.label((16, ui.BOTTOM - 104, 344, ui.BOTTOM - 84), f"Fastest route to {p.name}", size=13, fg=ui.SUBTLE)
        )
        sheet.children.append(
            ui.button(
                (16, ui.BOTTOM - 72, 160, ui.BOTTOM - 28),
                "Start",
                lambda: None,
                ref="maps.route.start",
                radius=22,
                icon="directions",
            )
        )
        views.append(sheet)
        return views
