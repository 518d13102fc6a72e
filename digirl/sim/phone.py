"""The phone itself: system bars, app stack, keyboard, pop-ups, loading and input dispatch.

:class:`Phone` owns the apps and turns device actions into UI events: a tap hits the top-most
clickable view under the finger (dialogs, app bars and the keyboard block what is below), a
swipe scrolls the list under the finger (finger up reveals what is below) or goes to the app,
TYPE goes to the focused input, BACK closes a pop-up, then the keyboard, then goes back in the
app, then leaves it; HOME returns to the launcher; ENTER submits the focused input.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from digirl.core.actions import Action, ActionType, SwipeDirection
from digirl.sim.apps import BUILTIN, EXTRA_APPS, SYSTEM_UI, GenericApp, resolve_app
from digirl.sim.apps.base import App, SystemScreen, dialog
from digirl.sim.device import DEFAULT_CONTACTS, DeviceSettings, default_gallery, default_notices
from digirl.sim.keyboard import keyboard_view
from digirl.sim.perturb import Dynamics
from digirl.sim.ui import (
    BOTTOM,
    STATUS_H,
    TEXT,
    TOP,
    Color,
    H,
    SystemTap,
    View,
    W,
    box,
    icon_button,
    label,
    nodes,
    scroll_amount,
    shared_view,
)

__all__ = ["Phone", "Popup", "resolve_app"]

_NAV_BG = (242, 242, 246)


@dataclass
class Popup:
    """A system-level modal (rate-this-app, permission request). ``dismiss`` closes it harmlessly."""

    kind: str
    title: str
    body: str
    buttons: list[tuple[str, str, Callable[[], None]]] = field(default_factory=list)


class Phone:
    """A simulated phone. Build one per episode (cheap) with the episode's :class:`Dynamics`."""

    #: The surfaces added after the shipped task sets were pinned (search in Gmail and Settings,
    #: YouTube's tabs: :mod:`digirl.sim.apps.insearch`). Off, the screens are the pinned ones; the
    #: env turns it on for tasks of families outside the shipped sets.
    surfaces = False

    def __init__(
        self,
        dyn: Dynamics | None = None,
        *,
        clock: tuple[int, int] = (9, 41),
        battery: int = 87,
        extra_apps: tuple[str, ...] = EXTRA_APPS,
    ) -> None:
        self.dyn = dyn or Dynamics()
        self.clock = clock
        self.battery = battery
        self.wifi, self.bluetooth, self.airplane = True, False, False
        # Shared device state (digirl.sim.device): settings, contacts, gallery, shade notifications.
        self.settings = DeviceSettings()
        self.contacts = list(DEFAULT_CONTACTS)
        self.gallery = default_gallery()
        self.notices = default_notices()
        self.apps: dict[str, App] = {k: cls(self) for k, cls in BUILTIN.items()}
        self.apps.update({k: cls(self) for k, cls in SYSTEM_UI.items()})
        self.shade_from = "launcher"
        self.installed: list[str] = [k for k in BUILTIN if k != "launcher"]
        self.notifications: dict[str, bool] = {k: True for k in self.installed}
        #: Apps used in the episode, oldest first (the overview of recent apps shows them newest first).
        self.recent: list[str] = []
        for name in extra_apps:
            self.install(name)
        self.fg = "launcher"
        self.popup: Popup | None = None
        #: Every interruption shown this episode, in order (pop-up kinds, "cookie", "interstitial").
        self.interruptions: list[str] = []
        self.scroll: dict[str, float] = {}
        self.loading = 0
        self.loading_fresh = False
        self.step_no = 0
        self._tree: View | None = None
        self._nodes_of: View | None = None  # the tree that _nodes and _refs index
        self._nodes: list[View] = []
        self._refs: dict[str, View] | None = None

    def release(self) -> None:
        """Drop everything the phone holds (apps, view tree, pop-up, settings); it is unusable after.

        Its apps, its views' taps and its pop-up's buttons point back at it, so a phone that is
        only dropped is freed by the cycle collector: ~330 objects of cyclic garbage per episode,
        whose collections were ~10% of a step. With these references gone it is freed at once."""
        self.__dict__.clear()

    def __getstate__(self) -> dict[str, Any]:
        # Copies (digiq's forks, pickling) leave the node index behind: it is rebuilt on demand.
        state = dict(self.__dict__)
        state.update(_nodes_of=None, _nodes=[], _refs=None)
        return state

    # ---------------------------------------------------------------- apps
    def install(self, name: str) -> str:
        """Install an app by name (builtin apps are always there); returns its key."""
        key = resolve_app(name)
        if key not in self.apps:
            self.apps[key] = GenericApp(self, name)
        if key not in self.installed:
            self.installed.append(key)
        self.notifications.setdefault(key, True)
        return key

    def uninstall(self, name: str) -> None:
        key = resolve_app(name)
        if key.startswith("x."):
            self.installed = [k for k in self.installed if k != key]

    def is_installed(self, name: str) -> bool:
        return resolve_app(name) in self.installed

    def app(self, key: str) -> App:
        return self.apps[key]

    @property
    def current(self) -> App:
        return self.apps[self.fg]

    def launch(self, key: str) -> None:
        if key not in self.apps or (key != "launcher" and key not in self.installed):
            return
        app = self.apps[key]
        first = not app.launched
        self.blur_all()
        self.fg = key
        if key != "launcher":
            self.recent = [*(k for k in self.recent if k != key), key]
        app.launched = True
        app.on_launch()
        if first and app.rates and self.dyn.chance(self.dyn.rating_p):
            self.show_popup(
                Popup(
                    "rating",
                    f"Enjoying {app.label}?",
                    "Tap a star to rate it on Google Play.",
                    [
                        (self.dyn.text("not_now", "Not now"), "popup.dismiss", self.close_popup),
                        ("Rate", "popup.rate", self.close_popup),
                    ],
                )
            )
        elif first and key != "launcher" and self.dyn.chance(self.dyn.permission_p):
            self.show_popup(
                Popup(
                    "permission",
                    f"Allow {app.label} to send you notifications?",
                    "",
                    [("Don't allow", "popup.deny", self.close_popup), ("Allow", "popup.dismiss", self.close_popup)],
                )
            )
        elif first and key != "launcher" and self.dyn.chance(self.dyn.update_p):
            self.show_popup(
                Popup(
                    "update",
                    "System update available",
                    "Android 15 is ready to install. Your phone will restart.",
                    [("Later", "popup.dismiss", self.close_popup), ("Install now", "popup.install", self.close_popup)],
                )
            )
        self.invalidate()

    def open_shade(self) -> None:
        """Pull down the notification shade (quick settings and notifications) over the current app."""
        if self.fg not in ("shade", "lock") and self.loading == 0 and self.popup is None:
            self.blur_all()
            self.shade_from = self.fg
            self.fg = "shade"
            self.apps["shade"].on_launch()
            self.invalidate()

    def lock(self) -> None:
        """Lock the phone (newer surfaces): the lock screen until a swipe up."""
        if self.surfaces and self.fg != "lock":
            back_to = self.shade_from if self.fg == "shade" else self.fg
            self.blur_all()
            self.popup = None
            self._system("lock").show_over(back_to)

    def unlock(self) -> None:
        if self.fg == "lock":
            self._system("lock").leave()

    def _system(self, key: str) -> SystemScreen:
        screen = self.apps[key]
        assert isinstance(screen, SystemScreen), key
        return screen

    def open_overview(self) -> None:
        """The overview of recent apps (the navigation bar's square button; newer surfaces only)."""
        if self.surfaces and self.fg not in ("overview", "lock") and self.loading == 0 and self.popup is None:
            self.blur_all()
            self._system("overview").show_over(self.fg)

    def close_shade(self) -> None:
        if self.fg == "shade":
            self.fg = self.shade_from if self.shade_from in self.apps else "launcher"
            self.invalidate()

    def go_home(self) -> None:
        if self.fg == "lock":  # locked: home waits for the unlock
            return
        self.blur_all()
        self.popup = None
        self.fg = "launcher"
        self.apps["launcher"].on_launch()
        self.loading = 0
        self.invalidate()

    def blur_all(self) -> None:
        for a in self.apps.values():
            a.blur()

    # ---------------------------------------------------------------- pop-ups, loading
    def show_popup(self, p: Popup) -> None:
        self.popup = p
        self.interruptions.append(p.kind)
        self.invalidate()

    def close_popup(self) -> None:
        self.popup = None
        self.invalidate()

    def start_loading(self, steps: int) -> None:
        """The page shows "Loading…" for ``steps`` more steps (taps on it do nothing)."""
        if steps > 0:
            self.loading = steps
            self.loading_fresh = True
            self.invalidate()

    def toggle_notifications(self, key: str) -> None:
        self.notifications[key] = not self.notifications.get(key, True)
        self.invalidate()

    # ---------------------------------------------------------------- view tree
    def invalidate(self) -> None:
        self._tree = None

    def tree(self) -> View:
        if self._tree is None:
            self._tree = self._build()
        return self._tree

    def nodes(self) -> list[View]:
        """The current tree's nodes in paint order (kept with the tree: taps, swipes and the expert
        all search it)."""
        tree = self.tree()
        if self._nodes_of is not tree:
            self._nodes = nodes(tree)
            self._refs = None
            self._nodes_of = tree
        return self._nodes

    def find(self, ref: str) -> View | None:
        """The first view (paint order) of the current tree with this ``ref``; = ``tree().find(ref)``."""
        all_nodes = self.nodes()
        refs = self._refs
        if refs is None:
            refs = {}
            for v in all_nodes:
                if v.ref and v.ref not in refs:
                    refs[v.ref] = v
            self._refs = refs
        return refs.get(ref)

    def keyboard_visible(self) -> bool:
        return self.current.focused is not None and self.loading == 0

    def _build(self) -> View:
        app = self.current
        root = box((0, 0, W, H), app.bg)
        if self.loading > 0:
            root.children.append(self._loading_view(app))
        else:
            root.children.extend(app.build())
        if self.popup is not None:
            p = self.popup
            root.children.append(dialog(p.title, p.body, p.buttons, ref=f"popup.{p.kind}", height=180))
        elif self.keyboard_visible():
            root.children.append(_keyboard(app.keyboard_action()))
        root.children.append(_status_bar(app.status_color, self.clock, self.battery, self.wifi, self.bluetooth, self.airplane))
        root.children.append(_nav_bar(self.surfaces))
        return root

    def _loading_view(self, app: App) -> View:
        lv = box((0, TOP, W, BOTTOM), (255, 255, 255), blocker=True, ref="loading")
        top = getattr(app, "loading_header", None)
        if callable(top):
            lv.children.extend(top())
        lv.children.append(box((0, TOP + 56, W * 0.35, TOP + 59), (26, 115, 232)))
        lv.children.append(icon_button((156, 330, 204, 378), "history", None, ref="loading.spinner", desc="Loading"))
        lv.children.append(label((0, 384, W, 414), "Loading…", size=15, fg=(95, 99, 104), align="center", ref="loading.text"))
        return lv

    # ---------------------------------------------------------------- input
    def apply(self, action: Action) -> dict[str, Any]:
        """Apply one device action; returns info about what happened."""
        info: dict[str, Any] = {}
        t = action.type
        if t is ActionType.DUAL_POINT:
            assert action.touch is not None and action.lift is not None
            if action.is_tap:
                info["tapped"] = self.tap(action.touch[0] * W, action.touch[1] * H)
            else:
                d = action.swipe_direction
                assert d is not None
                self.swipe(action.touch[0] * W, action.touch[1] * H, d, action.gesture_length)
        elif t is ActionType.TYPE:
            if self.current.focused is None or self.loading > 0:
                info["no_focus"] = True
            else:
                self.current.type_text(action.text)
                self.invalidate()
        elif t is ActionType.PRESS_BACK:
            self.key_back()
        elif t is ActionType.PRESS_HOME:
            self.go_home()
        elif t is ActionType.PRESS_ENTER:
            app = self.current
            if app.focused is not None and self.loading == 0 and self.popup is None:
                app.submit(app.focused)
                self.invalidate()
            else:
                info["no_focus"] = True
        return info

    def end_step(self) -> None:
        """Advance time by one step (loading screens, installs)."""
        self.step_no += 1
        if self.loading > 0 and not self.loading_fresh:
            self.loading -= 1
            self.invalidate()
        self.loading_fresh = False
        for a in list(self.apps.values()):
            if a.launched:
                a.tick()

    def hit(self, x: float, y: float) -> View | None:
        """The view a tap at logical (x, y) lands on: the top-most clickable one, unless a blocker is above."""
        for v in reversed(self.nodes()):
            if not (v.on_tap is not None or v.blocker):
                continue  # neither hit nor stops the search: skip the rectangle test
            if v.contains(x, y):
                return v if v.on_tap is not None else None
        return None

    def tap(self, x: float, y: float) -> str:
        v = self.hit(x, y)
        if v is None or v.on_tap is None:
            return ""
        if self.loading > 0 and not v.ref.startswith("nav."):
            return ""
        fn = v.on_tap
        if type(fn) is SystemTap:  # a view shared by all phones: this phone does what it stands for
            target = self.apps[fn.app] if fn.app else self
            getattr(target, fn.method)(*(() if fn.arg is None else (fn.arg,)))
        else:
            fn()
        self.invalidate()
        return v.ref

    def swipe(self, x: float, y: float, direction: SwipeDirection, length: float) -> None:
        if self.popup is not None or self.loading > 0:
            return
        if self.fg == "lock":  # a swipe up unlocks; nothing else moves on the lock screen
            if direction is SwipeDirection.UP:
                self.unlock()
            return
        if direction is SwipeDirection.DOWN and y <= STATUS_H:  # from the status bar: the shade
            self.open_shade()
            return
        if direction in (SwipeDirection.UP, SwipeDirection.DOWN):
            for v in reversed(self.nodes()):
                if v.scroll is not None and v.contains(x, y):
                    s = v.scroll
                    amount = scroll_amount(length)
                    new = s.offset + (amount if direction is SwipeDirection.UP else -amount)
                    new = min(max(0.0, new), s.max_offset)
                    if new != s.offset:
                        self.scroll[s.key] = new
                        self.invalidate()
                        return
                    break
        on_swipe = getattr(self.current, "on_swipe", None)
        if callable(on_swipe):
            on_swipe(direction)
            self.invalidate()

    def press_key(self, code: str) -> None:
        """A key of the on-screen keyboard (``kb.<code>``)."""
        self.current.press_key(code)
        self.invalidate()

    def key_back(self) -> None:
        if self.popup is not None:
            self.close_popup()
            return
        app = self.current
        if app.focused is not None:
            app.blur()
            self.invalidate()
            return
        if self.fg == "launcher" or not app.back():
            self.go_home()
        self.invalidate()

    # ---------------------------------------------------------------- debug
    def summary(self) -> dict[str, Any]:
        return {
            "app": self.fg,
            "screen": self.current.screen(),
            "popup": self.popup.kind if self.popup else None,
            "loading": self.loading,
            "keyboard": self.keyboard_visible(),
            "wifi": self.wifi,
            "bluetooth": self.bluetooth,
            "airplane": self.airplane,
            "settings": dict(vars(self.settings)),
            "app_state": self.current.state(),
        }


# System views (status bar, navigation bar, keyboards) hold no phone (their taps are SystemTap), so
# every phone shares them: the renderer's layer and element caches then hit across episodes.
def _keyboard(action: str) -> View:
    return shared_view(("kb", action), lambda: keyboard_view(action))


def _status_bar(bg: Color, clock: tuple[int, int], battery: int, wifi: bool, bluetooth: bool, airplane: bool) -> View:
    return shared_view(
        ("status", bg, clock, battery, wifi, bluetooth, airplane),
        partial(_make_status_bar, bg, clock, battery, wifi, bluetooth, airplane),
    )


def _make_status_bar(bg: Color, clock: tuple[int, int], battery: int, wifi: bool, bluetooth: bool, airplane: bool) -> View:
    dark = sum(bg) < 380
    fg = (255, 255, 255) if dark else TEXT
    sb = box((0, 0, W, STATUS_H), bg, blocker=True, ref="statusbar")
    h, m = clock
    sb.children.append(label((12, 0, 80, STATUS_H), f"{h}:{m:02d}", size=12, fg=fg, ref="status.clock"))
    x = W - 12.0
    sb.children.append(label((x - 34, 0, x, STATUS_H), f"{battery}%", size=11, fg=fg, align="right"))
    x -= 36
    sb.children.append(View((x - 14, 5, x, STATUS_H - 5), kind="icon", icon="battery", icon_color=fg, element=False))
    x -= 18
    for on, icon in ((wifi and not airplane, "wifi"), (bluetooth, "bluetooth"), (airplane, "plane")):
        if on:
            sb.children.append(View((x - 14, 5, x, STATUS_H - 5), kind="icon", icon=icon, icon_color=fg, element=False))
            x -= 18
    return sb


def _nav_bar(newer: bool = False) -> View:
    """The navigation bar; with the newer surfaces its square button opens the overview of recent apps."""
    return shared_view("nav.newer", partial(_make_nav_bar, True)) if newer else shared_view("nav", _make_nav_bar)


def _make_nav_bar(newer: bool = False) -> View:
    nb = box((0, BOTTOM, W, H), _NAV_BG, blocker=True, ref="navbar")
    for i, (icon, ref, fn, desc) in enumerate(
        (
            ("navback", "nav.back", SystemTap("key_back"), "Back"),
            ("home", "nav.home", SystemTap("go_home"), "Home"),
            ("recents", "nav.recents", SystemTap("open_overview") if newer else None, "Overview"),
        )
    ):
        cx = W * (0.25 + 0.25 * i)
        nb.children.append(icon_button((cx - 30, BOTTOM + 4, cx + 30, H - 4), icon, fn, ref=ref, desc=desc, color=(60, 64, 67)))
    return nb
