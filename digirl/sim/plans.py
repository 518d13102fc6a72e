"""The scripted expert's means: :class:`ExpertStep` (what every family's plan gets) and the plans of
the AitW families (:data:`PLANS`); :func:`digirl.sim.expert.expert_action` picks the family's plan.

Each call looks at what is on screen now (pop-up? loading? keyboard over the target? wrong
app?) and returns one action, so it recovers from perturbations and from noisy actions taken
in between. It never changes state: it reads the phone's (cached) view tree and app state only.
Taps go to element centres, optionally jittered by a hash of (salt, step, element) — pure too.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from digirl.core.actions import Action
from digirl.sim.apps.clock import fmt_compact
from digirl.sim.content import norm_name, stable_rng
from digirl.sim.family_registry import keyed
from digirl.sim.goals import TaskContext, destination_terms, query_terms, site_domain, wanted_notifications
from digirl.sim.intents import parse_time
from digirl.sim.ui import H, View, W, flatten, scroll_amount

if TYPE_CHECKING:
    from digirl.sim.apps.base import App
    from digirl.sim.phone import Phone

__all__ = ["PLANS", "ExpertStep", "in_app", "maps_to_results", "on_youtube_channel", "to_app_info", "to_site"]


class ExpertStep:
    """One expert decision: the phone, the task, and tap helpers (what every family's plan gets)."""

    def __init__(self, phone: Phone, ctx: TaskContext, jitter: float, salt: int) -> None:
        self.phone, self.ctx, self.intent = phone, ctx, ctx.intent
        self.jitter, self.salt = jitter, salt
        self.tree = phone.tree()

    # ---------------------------------------------------------------- primitives
    def tap(self, v: View) -> Action:
        r = v.visible_rect() or v.rect
        cx, cy = (r[0] + r[2]) / 2, (r[1] + r[3]) / 2
        if self.jitter > 0:
            g = stable_rng("jitter", self.salt, self.phone.step_no, v.ref)
            cx += (g.random() * 2 - 1) * self.jitter * (r[2] - r[0]) / 2
            cy += (g.random() * 2 - 1) * self.jitter * (r[3] - r[1]) / 2
        return Action.tap(min(max(cx / W, 0.0), 1.0), min(max(cy / H, 0.0), 1.0))

    def wait(self) -> Action:
        """A harmless action: tap the status bar clock (nothing there reacts)."""
        v = self.phone.find("status.clock")
        assert v is not None
        return self.tap(v)

    def goto(self, ref: str) -> Action | None:
        """Tap the view ``ref``, scrolling to it or hiding the keyboard first; None if it is nowhere."""
        v = self.phone.find(ref)
        if v is not None and v.visible_rect() is not None:
            hit = self.phone.hit(*v.center())
            if hit is v or (hit is not None and hit in list(flatten(v))):
                return self.tap(v)
            if self.phone.keyboard_visible():
                return Action.back()
        for s in (n.scroll for n in self.phone.nodes() if n.scroll is not None):
            if ref not in s.rows:
                continue
            top, bot = s.rows[ref]
            x0, y0, x1, y1 = s.rect
            vh = y1 - y0
            up = bot > s.offset + vh - 8
            # The default policy has one swipe per direction (Action.scroll's): use it, repeated, where
            # it starts inside this list and cannot carry the row past the viewport, so demos show
            # list positions the policy's own swipes reach (exact lengths taught ones they never do).
            canon = Action.scroll("up" if up else "down")
            assert canon.touch is not None
            sx, sy = canon.touch[0] * W, canon.touch[1] * H
            if x0 <= sx <= x1 and y0 <= sy <= y1 and scroll_amount(canon.gesture_length) <= vh - (bot - top) - 16:
                return canon
            need = (bot - (s.offset + vh) + 24) if up else (s.offset - top + 24)
            length = min(max(need / (1.2 * H), 0.08), (vh - 40) / H)
            cx = (x0 + x1) / 2 / W
            a, b = (y1 - 20) / H, (y1 - 20) / H - length
            if not up:
                a, b = (y0 + 20) / H, (y0 + 20) / H + length
            return Action.swipe((cx, a), (cx, b))
        return None

    def obstacle(self) -> Action | None:
        p = self.phone
        if p.loading > 0:
            return self.wait()
        if p.fg == "lock" and self.intent.family != "lock_screen":  # locked (newer surfaces): unlock first
            return Action.swipe((0.5, 0.8), (0.5, 0.3))
        if p.popup is not None:
            return self.goto("popup.dismiss") or Action.back()
        if self.phone.find("interstitial.close") is not None:
            return self.goto("interstitial.close")
        if self.phone.find("cookie.dismiss") is not None:
            return self.goto("cookie.dismiss")
        return None

    def open_app(self, key: str) -> Action | None:
        """None when ``key`` is in front; else the next step to get there."""
        p = self.phone
        if p.fg == key:
            return None
        if p.fg != "launcher":
            return Action.home()
        launcher: Any = p.apps["launcher"]
        if launcher.page == "home":
            return self.goto(f"home.app.{key}") or Action.scroll("up", center=(0.5, 0.6), length=0.4)
        if launcher.fields.get("drawer"):
            return self.goto("drawer.search.clear") or Action.back()
        return self.goto(f"drawer.app.{key}") or Action.home()

    def type_into(self, app: App, field: str, ref: str, target: str, *, submit: bool = True) -> Action:
        """Focus the field, make its text ``target``, then press enter."""
        if app.focused != field:
            return self.goto(ref) or Action.back()
        text = app.fields.get(field, "")
        if field in app.selected:
            return Action.type_text(target) if target else (self.goto(ref + ".clear") or Action.back())
        if text.strip().lower() == target.strip().lower():
            return Action.enter() if submit else self.wait()
        if text and target.lower().startswith(text.lower()):
            return Action.type_text(target[len(text) :])
        if not text:
            return Action.type_text(target)
        return self.goto(ref + ".clear") or Action.back()


# ---------------------------------------------------------------- plans, one per family
Plan = Callable[[ExpertStep], Action]


def after(first: Callable[[ExpertStep], Action | None]) -> Callable[[Plan], Plan]:
    """A plan that acts once ``first`` has nothing left to do (returns None); until then, ``first``'s steps."""

    def wrap(plan: Plan) -> Plan:
        @functools.wraps(plan)
        def run(e: ExpertStep) -> Action:
            step = first(e)
            return step if step is not None else plan(e)

        return run

    return wrap


def in_app(key: str) -> Callable[[Plan], Plan]:
    """A plan that acts once app ``key`` is in front; until then its steps are the ones that open it."""
    return after(lambda e: e.open_app(key))


#: The AitW families' plans, by family (each function is keyed by the families it does).
PLANS: dict[str, Callable[[ExpertStep], Action]] = {}


def _arrived(e: ExpertStep) -> Action:
    """The last step of a plan whose goal is the screen its first steps reach (a plan built with :func:`after`)."""
    return Action.complete()


@keyed(PLANS, "web_search")
def _web_search(e: ExpertStep) -> Action:
    p, q = e.phone, e.intent.get("query") or " ".join(query_terms(e.intent))
    if p.fg == "google":
        g: Any = p.apps["google"]
        if g.focused == "q":
            return e.type_into(g, "q", "gapp.box", q)
        return e.goto("gapp.box") or Action.back()
    if p.fg == "launcher" and p.apps["launcher"].screen() == "home":
        # the widget, or (a world without it) the Google app's icon
        return e.goto("home.search") or e.goto("home.app.google") or Action.home()
    return Action.home()


@keyed(PLANS, "open_app")
def _open_app(e: ExpertStep) -> Action:
    from digirl.sim.phone import resolve_app

    return e.open_app(resolve_app(e.intent.get("app"))) or Action.back()


def to_app_info(e: ExpertStep) -> Action | None:
    """Steps to Settings › Apps › <app>; None when there."""
    from digirl.sim.phone import resolve_app

    key = resolve_app(e.intent.get("app"))
    step = e.open_app("settings")
    if step is not None:
        return step
    s: Any = e.phone.apps["settings"]
    screen, arg = s.top
    if screen == "app_info" and arg == key:
        return None
    if screen == "main":
        return e.goto("settings.apps")
    if screen == "apps":
        return e.goto(f"settings.app.{key}") or Action.back()
    return Action.back()


@keyed(PLANS, "app_notifications")
@after(to_app_info)
def _app_notifications(e: ExpertStep) -> Action:
    from digirl.sim.phone import resolve_app

    key = resolve_app(e.intent.get("app"))
    if e.phone.notifications.get(key, True) != wanted_notifications(e.intent, e.ctx):
        return e.goto("settings.appinfo.notifications.switch") or e.wait()
    return Action.complete()


def _searched(e: ExpertStep, app: str, name: str, refs: tuple[str, str], found: Callable[[Any], Action]) -> Action | None:
    """A step of looking ``name`` up in app ``app``'s search: type it on the search screen (field
    ``refs[0]``); on the results for it, ``found(query)``; on other results, tap ``refs[1]`` to search
    again. ``None`` on the app's other screens."""
    a: Any = e.phone.apps[app]
    screen, arg = a.top
    if screen == "search":
        return e.type_into(a, "q", refs[0], name)
    if screen != "results":
        return None
    if norm_name(str(arg)) == norm_name(name):
        return found(arg)
    return e.goto(refs[1]) or Action.back()


@keyed(PLANS, "install_app")
@in_app("playstore")
def _install_app(e: ExpertStep) -> Action:
    name = e.intent.get("app")

    def install(query: Any) -> Action:
        from digirl.sim.content import store_apps

        names = [norm_name(a.name) for a in store_apps(str(query), e.phone.dyn.world_version)]
        i = names.index(norm_name(name)) if norm_name(name) in names else 0
        return e.goto(f"store.result.{i}.install") or e.wait()

    step = _searched(e, "playstore", name, ("store.query", "store.search"), install)
    if step is not None:
        return step
    store: Any = e.phone.apps["playstore"]
    screen, arg = store.top
    if screen == "app":
        if norm_name(arg.name) == norm_name(name):
            return e.goto("store.app.install") or e.wait()
        return Action.back()
    return e.goto("store.search") or Action.back()


@keyed(PLANS, "youtube_play")
@in_app("youtube")
def _youtube_play(e: ExpertStep) -> Action:
    return on_youtube_channel(e, e.intent.get("channel"), "yt.chvideo.0")


def on_youtube_channel(e: ExpertStep, channel: str, target: str) -> Action:
    """In YouTube: search for ``channel``, open its page, then tap ``target`` there."""
    step = _searched(e, "youtube", channel, ("yt.query", "yt.query"), lambda _: e.goto("yt.channel_result") or Action.back())
    if step is not None:
        return step
    yt: Any = e.phone.apps["youtube"]
    screen, arg = yt.top
    if screen == "channel" and norm_name(str(arg)) == norm_name(channel):
        return e.goto(target) or Action.back()
    if screen in ("watch", "channel"):
        return Action.back()
    return e.goto("yt.search") or Action.back()


def maps_to_results(e: ExpertStep, query: str, terms: list[str]) -> Action | None:
    """Steps until Maps shows results for ``query``; None when it does."""
    from digirl.sim.content import terms_in

    step = e.open_app("maps")
    if step is not None:
        return step
    m: Any = e.phone.apps["maps"]
    screen = m.top[0]
    if screen == "search":
        return e.type_into(m, "q", "maps.query", query)
    if screen == "results" and terms_in(terms, m.query):
        return None
    if screen in ("place", "directions") and terms_in(terms, m.query):
        return Action.back() if screen == "directions" else None
    return e.goto("maps.search") or Action.back()


@keyed(PLANS, "maps_search")
def _maps_search(e: ExpertStep) -> Action:
    q = e.intent.get("query")
    step = maps_to_results(e, q, query_terms(e.intent))
    if step is not None:
        return step
    return Action.back() if e.phone.apps["maps"].screen() != "results" else Action.complete()


@keyed(PLANS, "maps_directions")
def _maps_directions(e: ExpertStep) -> Action:
    from digirl.sim.apps.maps import place_query
    from digirl.sim.content import terms_in

    terms, mode, m = destination_terms(e.intent), e.intent.get("mode"), e.phone.apps["maps"]
    if e.phone.fg == "maps" and m.screen() == "directions" and mode and m.travel != mode:  # type: ignore[attr-defined]
        place = m.top[1]  # type: ignore[attr-defined]
        if terms_in(terms, f"{place.category} {place.name}"):  # the right route: its travel mode (newer surfaces)
            return e.goto(f"maps.mode.{mode.lower()}") or Action.back()
    step = maps_to_results(e, place_query(e.intent.get("destination")) or e.intent.get("destination"), terms)
    if step is not None:
        return step
    if m.screen() == "place":
        return e.goto("maps.place.directions") or Action.back()
    return e.goto("maps.result.0.directions") or Action.back()


@keyed(PLANS, "set_alarm")
def _set_alarm(e: ExpertStep) -> Action:
    h, m = parse_time(e.intent.get("time"))
    step = e.open_app("clock")
    if step is not None:
        return step
    c: Any = e.phone.apps["clock"]
    if c.picker is not None:
        want_h, want_m, want_pm = f"{(h % 12) or 12:02d}", f"{m:02d}", h >= 12
        hour, minute = c.fields.get("hour", ""), c.fields.get("minute", "")
        if hour != want_h or minute != want_m or c.picker.pm != want_pm:
            if c.focused in ("hour", "minute"):
                # the time as instructions write it ("6:45pm", "12am"): one word of the instruction
                return Action.type_text(fmt_compact(h, m))
            return e.goto("clock.picker.hour") or Action.back()
        if c.picker.pm != want_pm:
            return e.goto("clock.picker.pm" if want_pm else "clock.picker.am") or Action.back()
        return e.goto("clock.picker.ok") or Action.back()
    if c.tab != "Alarm":
        return e.goto("clock.tab.alarm") or Action.back()
    for i, a in enumerate(c.alarms):
        if a.hour == h and a.minute == m and not a.enabled:
            return e.goto(f"clock.alarm.{i}.switch") or Action.back()
    for i, a in enumerate(c.alarms):
        if a.hour == h and a.minute == m and (e.intent.get("label") or e.intent.get("days")):
            return _alarm_details(e, c, i)
    return e.goto("clock.add") or Action.back()


def _alarm_details(e: ExpertStep, c: Any, i: int) -> Action:
    """The label, then the repeat days, of alarm ``i`` (the newer alarm card)."""
    label, days = e.intent.get("label"), e.intent.get("days")
    a = c.alarms[i]
    if label and (a.label.strip().lower() != label.strip().lower() or c.focused == "label"):
        return e.type_into(c, "label", f"clock.alarm.{i}.label", label)
    want = {int(d) for d in days} if days else set(a.days)
    for d in sorted(want ^ set(a.days)):
        return e.goto(f"clock.alarm.{i}.day.{d}") or Action.back()
    return Action.complete()


@keyed(PLANS, "browser_tab")
def _browser_tab(e: ExpertStep) -> Action:
    mode = e.intent.get("mode", "tab").lower()
    step = e.open_app("chrome")
    if step is not None:
        return step
    b: Any = e.phone.apps["chrome"]
    if b.mode == "menu":
        item = {
            "tab": "new_tab",
            "incognito_tab": "new_incognito_tab",
            "window": "new_window",
            "incognito_window": "new_incognito_window",
        }.get(mode, "new_tab")
        return e.goto(f"chrome.menu.{item}") or Action.back()
    if b.mode != "page":
        return Action.back()
    return e.goto("chrome.menu") or Action.back()


@keyed(PLANS, "check_email")
@in_app("gmail")
def _check_email(e: ExpertStep) -> Action:
    g: Any = e.phone.apps["gmail"]
    if g.screen() == "drawer":
        return e.goto("gmail.folder.inbox") or Action.back()
    return Action.back() if g.screen() != "inbox" else Action.complete()


def to_site(e: ExpertStep, domain: str) -> Action | None:
    """Steps until the browser shows a page of ``domain``; None when it does."""
    step = e.open_app("chrome")
    if step is not None:
        return step
    b: Any = e.phone.apps["chrome"]
    if b.mode == "urlbar":
        return e.type_into(b, "url", "chrome.url", domain)
    if b.mode != "page":
        return Action.back()
    if b.page.domain == domain:
        return None
    return e.goto("chrome.url") or Action.back()


@keyed(PLANS, "open_site", "shop_goto")
def _open_site(e: ExpertStep) -> Action:
    domain = site_domain(e.intent.get("site"))
    step = to_site(e, domain)
    if step is not None:
        return step
    b: Any = e.phone.apps["chrome"]
    if b.focused is not None:
        return Action.back()
    return e.goto("chrome.url") or Action.back()  # on the site but not its front page: retype it


def to_shop_results(e: ExpertStep) -> Action | None:
    from digirl.sim.content import terms_in

    domain = site_domain(e.intent.get("site"))
    step = to_site(e, domain)
    if step is not None:
        return step
    b: Any = e.phone.apps["chrome"]
    page = b.page
    terms = query_terms(e.intent)
    if b.focused == "site":
        return e.type_into(b, "site", "site.search", e.intent.get("query") or " ".join(terms))
    if b.focused is not None:
        return Action.back()
    if page.kind == "shop_results" and terms_in(terms, page.query):
        return None
    if page.kind == "product" and terms_in(terms, page.query):
        return Action.back()
    return e.goto("site.search") or Action.back()


def sort_step(e: ExpertStep, sort: str) -> Action | None:
    """On a shop's results, the steps to the order ``sort`` (a key of ``apps.web.SORTS``; "" is the
    site's own); None once they show it."""
    b: Any = e.phone.apps["chrome"]
    if e.phone.fg != "chrome" or b.mode != "page" or b.page.kind != "shop_results" or b.page.sort == sort:
        return None
    return e.goto(f"site.sort.{sort or 'featured'}") or e.goto("site.sort") or Action.scroll("down")


@keyed(PLANS, "shop_select")
@after(to_shop_results)
def _shop_select(e: ExpertStep) -> Action:
    return sort_step(e, e.intent.get("sort")) or e.goto("product.0") or Action.back()


# Families whose goal is a screen: once their first steps are done, the task is.
PLANS["app_settings"] = after(to_app_info)(_arrived)
PLANS["shop_search"] = after(to_shop_results)(_arrived)
