"""A Play-Store-like app: search, results with Install buttons, app page (install progress, Open,
Update, Uninstall with a confirmation), and "Manage apps" with pending updates and "Update all"."""

from __future__ import annotations

from functools import partial

from digirl.sim import ui
from digirl.sim.apps.base import dialog, letter_tile, tab_label
from digirl.sim.apps.search import ScreenStackApp, SearchFlow
from digirl.sim.content import StoreApp, norm_name, stable_rng, store_apps

__all__ = ["PlayStore"]

_ACCENT = (1, 135, 95)


def _app_tile(x0: float, y0: float, size: float, name: str) -> ui.View:
    col = stable_rng("appcol", norm_name(name)).choice(
        ((66, 133, 244), (234, 67, 53), (251, 140, 0), (52, 168, 83), (142, 36, 170), (0, 172, 193))
    )
    return letter_tile(
        (x0, y0, x0 + size, y0 + size), name[:1].upper(), col, radius=int(size * 0.22), size=int(size * 0.42), bold=True
    )


class PlayStore(ScreenStackApp, key="playstore", label="Play Store", icon="store", color=ui.WHITE, rates=True):
    search_flow = SearchFlow("store", back_ref="store.back", placeholder="Search for apps & games")

    def init_state(self) -> None:
        self.stack: list[tuple[str, object]] = [("home", None)]
        #: app name → steps of download left.
        self.installing: dict[str, int] = {}
        #: Installed apps with an update available (names), and updates in progress (name → steps left).
        self.pending: list[str] = ["Spotify", "WhatsApp", "Instagram"]
        self.updating: dict[str, int] = {}
        #: The app whose "Uninstall?" confirmation is open.
        self.confirm: StoreApp | None = None

    def back(self) -> bool:
        if self.confirm is not None:
            self.confirm = None
            return True
        return super().back()

    def has_update(self, name: str) -> bool:
        return any(norm_name(n) == norm_name(name) for n in self.pending)

    def update(self, name: str) -> None:
        if self.has_update(name) and name not in self.updating:
            self.updating[name] = 2 + self.phone.dyn.load_steps()

    def update_all(self) -> None:
        for n in list(self.pending):
            self.update(n)

    def ask_uninstall(self, a: StoreApp) -> None:
        self.confirm = a

    def uninstall(self) -> None:
        a, self.confirm = self.confirm, None
        if a is not None:
            self.phone.uninstall(a.name)
            self.pending = [n for n in self.pending if norm_name(n) != norm_name(a.name)]

    def screen(self) -> str:
        return self.top[0]

    def state(self) -> dict[str, object]:
        s, arg = self.top
        return {
            "screen": s,
            "arg": arg.name if isinstance(arg, StoreApp) else arg,
            "installing": dict(self.installing),
            "pending_updates": list(self.pending),
            "updating": dict(self.updating),
        }

    def tick(self) -> None:
        done = []
        for name in list(self.installing):
            self.installing[name] -= 1
            if self.installing[name] <= 0:
                done.append(name)
        for name in done:
            del self.installing[name]
            self.phone.install(name)
            self.pending = [n for n in self.pending if norm_name(n) != norm_name(name)]
            self.phone.invalidate()
        if self.installing:
            self.phone.invalidate()
        for name in list(self.updating):
            self.updating[name] -= 1
            if self.updating[name] <= 0:
                del self.updating[name]
                self.pending = [n for n in self.pending if norm_name(n) != norm_name(name)]
            self.phone.invalidate()

    def install(self, a: StoreApp) -> None:
        if not self.phone.is_installed(a.name) and a.name not in self.installing:
            self.installing[a.name] = 2 + self.phone.dyn.load_steps()

    def _action_button(self, a: StoreApp, rect: tuple[float, float, float, float], ref: str, size: int = 13) -> ui.View:
        if self.phone.is_installed(a.name) and (a.name in self.updating or self.has_update(a.name)):
            if a.name in self.updating:
                v = ui.box(rect, ui.WHITE, radius=18, border=ui.FAINT, ref=ref + ".progress")
                v.children.append(ui.label(rect, "Updating…", size=size - 1, fg=_ACCENT, align="center"))
                return v
            return ui.button(
                rect, "Update", lambda: self.update(a.name), ref=ref + ".update", color=_ACCENT, size=size, radius=18
            )
        if self.phone.is_installed(a.name):
            from digirl.sim.apps import resolve_app

            return ui.button(
                rect,
                "Open",
                lambda: self.phone.launch(resolve_app(a.name)),
                ref=ref + ".open",
                color=_ACCENT,
                size=size,
                radius=18,
            )
        if a.name in self.installing:
            left = self.installing[a.name]
            v = ui.box(rect, ui.WHITE, radius=18, border=ui.FAINT, ref=ref + ".progress")
            v.children.append(
                ui.label(rect, f"Installing… {max(5, 100 - 45 * left)}%", size=size - 1, fg=_ACCENT, align="center")
            )
            return v
        return ui.button(
            rect,
            self.phone.dyn.text("install", "Install"),
            lambda: self.install(a),
            ref=ref + ".install",
            color=_ACCENT,
            size=size,
            radius=18,
        )

    def build_screen(self, s: str, arg: object) -> list[ui.View]:
        if s == "app" and isinstance(arg, StoreApp):
            views = self._app(arg)
        elif s == "manage":
            views = self._manage()
        else:
            views = self._home()
        if self.confirm is not None:
            views.append(
                dialog(
                    f"Uninstall {self.confirm.name}?",
                    "Do you want to uninstall this app?",
                    [("Cancel", "store.confirm.cancel", self.back_confirm), ("Uninstall", "store.confirm.ok", self.uninstall)],
                    ref="store.confirm",
                    height=170,
                )
            )
        return views

    def back_confirm(self) -> None:
        self.confirm = None

    def open_manage(self) -> None:
        self.push("manage")

    def _searchbar(self, text: str) -> ui.View:
        bar = self.search_box(
            (12, ui.TOP + 8, 348, ui.TOP + 56), text, ref="store.search", icon="search", fill=(241, 243, 244), border=None
        )
        bar.children.append(
            ui.icon_button(
                (300, ui.TOP + 12, 340, ui.TOP + 52),
                "person",
                self.open_manage,
                ref="store.account",
                desc="Manage apps & device",
                color=_ACCENT,
            )
        )
        return bar

    def _home(self) -> list[ui.View]:
        rows: list[ui.View] = []
        y = 8.0
        rows.append(ui.label((16, y, 344, y + 28), "Recommended for you", size=17, bold=True))
        y += 36
        for i, name in enumerate(("Spotify", "Duolingo", "Zoom", "Pinterest", "Uber", "Waze", "Canva", "Tiktok")):
            x = 16 + 84 * (i % 4)
            yy = y + 110 * (i // 4)
            tile = ui.View(
                (x, yy, x + 76, yy + 104),
                kind="list_item",
                ref=f"store.rec.{i}",
                placeholder=name,
                on_tap=partial(self.push, "app", store_apps(name, self.phone.dyn.world_version)[0]),
            )
            tile.add(_app_tile(x + 6, yy, 64, name), ui.label((x, yy + 68, x + 76, yy + 88), name, size=12, align="center"))
            rows.append(tile)
        views: list[ui.View] = [
            ui.scroll_list("store.home", (0, ui.TOP + 108, 360, ui.BOTTOM), rows, self.phone.scroll, fill=ui.WHITE)
        ]
        head = ui.box((0, ui.TOP, 360, ui.TOP + 108), ui.WHITE, blocker=True)
        head.children.append(self._searchbar(""))
        for i, t in enumerate(("For you", "Top charts", "Kids", "Categories")):
            head.children.append(
                tab_label(
                    (8 + 88 * i, ui.TOP + 64, 92 + 88 * i, ui.TOP + 104),
                    t,
                    i == 0,
                    _ACCENT,
                    ref=f"store.tab.{i}",
                    on_tap=lambda: None,
                )
            )
        views.append(head)
        return views

    def _results(self, q: str) -> list[ui.View]:
        rows: list[ui.View] = []
        y = 8.0 + self.phone.dyn.list_offset * 0.5
        for i, a in enumerate(store_apps(q, self.phone.dyn.world_version)):
            row = ui.box(
                (0, y, 360, y + 88), ui.WHITE, ref=f"store.result.{i}", on_tap=partial(self.push, "app", a), kind="list_item"
            )
            row.children.append(_app_tile(16, y + 12, 60, a.name))
            row.children.append(ui.label((88, y + 12, 250, y + 34), a.name, size=15, bold=True))
            row.children.append(ui.label((88, y + 34, 250, y + 52), a.developer, size=12, fg=ui.SUBTLE))
            row.children.append(ui.label((88, y + 52, 250, y + 72), f"{a.rating} ★ · {a.size}", size=12, fg=ui.SUBTLE))
            row.children.append(self._action_button(a, (256, y + 26, 348, y + 62), f"store.result.{i}", size=12))
            rows.append(row)
            y += 92
        return [
            ui.scroll_list(
                self.search_flow.results_scroll, (0, ui.TOP + 64, 360, ui.BOTTOM), rows, self.phone.scroll, fill=ui.WHITE
            ),
            ui.box((0, ui.TOP, 360, ui.TOP + 64), ui.WHITE, blocker=True, children=[self._searchbar(q)]),
        ]

    def _app(self, a: StoreApp) -> list[ui.View]:
        views: list[ui.View] = [ui.box((0, ui.TOP, 360, ui.BOTTOM), ui.WHITE)]
        bar = ui.box((0, ui.TOP, 360, ui.TOP + 56), ui.WHITE, blocker=True)
        bar.children.append(self.back_button((4, ui.TOP + 8, 44, ui.TOP + 48), ref="store.app.back", desc="Navigate up"))
        bar.children.append(self.search_button((308, ui.TOP + 8, 352, ui.TOP + 48), ref="store.app.search"))
        views.append(bar)
        views.append(_app_tile(20, ui.TOP + 70, 76, a.name))
        views.append(ui.label((110, ui.TOP + 72, 344, ui.TOP + 102), a.name, size=21, bold=True, ref="store.app.name"))
        views.append(ui.label((110, ui.TOP + 104, 344, ui.TOP + 124), a.developer, size=13, fg=_ACCENT))
        views.append(ui.label((110, ui.TOP + 124, 344, ui.TOP + 144), "Contains ads · In-app purchases", size=11, fg=ui.SUBTLE))
        for i, (top, bottom) in enumerate(
            ((f"{a.rating} ★", "reviews"), (a.size, "size"), (a.downloads, "Downloads"), ("E", "Everyone"))
        ):
            x = 16 + 84 * i
            views.append(ui.label((x, ui.TOP + 164, x + 80, ui.TOP + 184), top, size=14, bold=True, align="center"))
            views.append(ui.label((x, ui.TOP + 184, x + 80, ui.TOP + 202), bottom, size=11, fg=ui.SUBTLE, align="center"))
        if self.phone.is_installed(a.name) and not self._system(a.name):
            views.append(
                ui.button(
                    (16, ui.TOP + 220, 172, ui.TOP + 264),
                    "Uninstall",
                    lambda: self.ask_uninstall(a),
                    ref="store.app.uninstall",
                    style="outlined",
                    color=_ACCENT,
                    size=15,
                    radius=18,
                )
            )
            views.append(self._action_button(a, (188, ui.TOP + 220, 344, ui.TOP + 264), "store.app", size=15))
        else:
            views.append(self._action_button(a, (16, ui.TOP + 220, 344, ui.TOP + 264), "store.app", size=15))
        installing = a.name in self.installing
        if installing:
            views.append(
                ui.box(
                    (16, ui.TOP + 272, 344, ui.TOP + 276),
                    ui.FAINT,
                    children=[
                        ui.box(
                            (16, ui.TOP + 272, 16 + 328 * max(0.05, 1 - 0.45 * self.installing[a.name]), ui.TOP + 276), ui.GREEN
                        )
                    ],
                )
            )
        views.append(ui.label((16, ui.TOP + 290, 344, ui.TOP + 314), "About this app", size=16, bold=True))
        views.append(
            ui.label(
                (16, ui.TOP + 316, 344, ui.TOP + 380),
                f"{a.name} brings you the best experience on your phone. Fast, simple and secure.",
                size=13,
                fg=ui.SUBTLE,
                lines=3,
            )
        )
        for i in range(3):
            views.append(ui.box((16 + 112 * i, ui.TOP + 392, 120 + 112 * i, ui.TOP + 580), (236, 239, 244), radius=10))
        return views

    def _system(self, name: str) -> bool:
        from digirl.sim.apps import resolve_app

        return not resolve_app(name).startswith("x.")

    def _manage(self) -> list[ui.View]:
        from digirl.sim.content import store_apps

        wv = self.phone.dyn.world_version
        rows: list[ui.View] = [
            ui.label((16, 8, 250, 36), f"Updates available ({len(self.pending)})", size=16, bold=True, ref="store.manage.title")
        ]
        if self.pending:
            rows.append(
                ui.button((252, 4, 348, 40), "Update all", self.update_all, ref="store.manage.update_all", color=_ACCENT, size=13)
            )
        y = 48.0
        for i, name in enumerate(self.pending):
            a = store_apps(name, wv)[0]
            row = ui.box(
                (0, y, 360, y + 80), ui.WHITE, ref=f"store.manage.app.{i}", on_tap=partial(self.push, "app", a), kind="list_item"
            )
            row.children.append(_app_tile(16, y + 10, 56, name))
            row.children.append(ui.label((84, y + 14, 240, y + 38), name, size=15, bold=True))
            row.children.append(ui.label((84, y + 40, 240, y + 60), f"{a.size} · update", size=12, fg=ui.SUBTLE))
            row.children.append(self._action_button(a, (252, y + 22, 348, y + 58), f"store.manage.{i}", size=12))
            rows.append(row)
            y += 84
        if not self.pending:
            rows.append(
                ui.label((16, 52, 344, 80), "All apps are up to date", size=14, fg=ui.SUBTLE, ref="store.manage.uptodate")
            )
        bar = ui.box((0, ui.TOP, 360, ui.TOP + 56), ui.WHITE, blocker=True)
        bar.children.append(self.back_button((4, ui.TOP + 8, 44, ui.TOP + 48), ref="store.manage.back", desc="Navigate up"))
        bar.children.append(ui.label((56, ui.TOP, 344, ui.TOP + 56), "Manage apps & device", size=19, ref="store.manage.bar"))
        return self.list_page("store.manage", 56, rows, bar)
