"""Camera, Photos, YouTube (play a video, subscribe) and Play Store (uninstall, update) families."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from digirl.core.actions import Action
from digirl.sim.apps.camera import photo_matches
from digirl.sim.content import norm_name, store_apps, terms_in, youtube_results
from digirl.sim.device import Photo
from digirl.sim.family_registry import builtin_family
from digirl.sim.goals import TaskContext, query_terms
from digirl.sim.intents import Intent
from digirl.sim.plans import ExpertStep, in_app, on_youtube_channel

if TYPE_CHECKING:
    import numpy as np

    from digirl.sim.phone import Phone


def _app(phone: Phone, key: str) -> Any:
    return phone.apps[key]


# ---- camera ------------------------------------------------------------------------------
#: The newer camera's styles (``take_photo``'s ``style`` slot) and the mode each is shot in.
STYLES = {"portrait": "Portrait", "night": "Night", "panorama": "Panorama", "slow motion": "Slow motion"}


def _shot(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    mode, style, timer = intent.get("mode", "photo"), intent.get("style"), intent.get("timer")
    old = ctx.initial.get("photos", set())
    new = [p for p in phone.gallery if p.pid not in old]
    cam = _app(phone, "camera")
    if mode == "video" or style == "slow motion":
        want = STYLES.get(style or "", "Video")
        return any(p.kind == "video" and (not style or style in p.tags) for p in new) or bool(cam.recording and cam.mode == want)
    return any(
        p.kind == "photo"
        and (p.front or mode != "selfie")
        and (not style or style in p.tags)
        and (not timer or f"timer {timer}s" in p.tags)
        for p in new
    )


def _gallery_before(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    from digirl.sim.apps.camera import TIMER_STEPS

    if intent.get("mode", "photo") not in ("photo", "selfie", "video"):
        raise ValueError(f"camera mode must be photo, selfie or video, got {intent.get('mode')!r}")
    if intent.get("style") and intent.get("style") not in STYLES:
        raise ValueError(f"camera style must be one of {sorted(STYLES)}, got {intent.get('style')!r}")
    if intent.get("timer") and int(intent.get("timer")) not in TIMER_STEPS:
        raise ValueError(f"the self-timer has {TIMER_STEPS[1:]} seconds, not {intent.get('timer')!r}")
    ctx.initial["photos"] = {p.pid for p in phone.gallery}


@builtin_family(
    "take_photo", "phone", predicate=_shot, setup=_gallery_before, doc="a new photo / selfie / video is in the gallery"
)
@in_app("camera")
def _photo_plan(e: ExpertStep) -> Action:
    from digirl.sim.apps.camera import mode_ref

    cam, mode, style = _app(e.phone, "camera"), e.intent.get("mode", "photo"), e.intent.get("style")
    if (mode == "selfie") != cam.front and not cam.recording:
        return e.goto("camera.flip") or Action.back()
    if style:
        if cam.mode != STYLES[style]:
            return e.goto(mode_ref(STYLES[style])) or Action.back()
    else:
        want = "Video" if mode == "video" else "Photo"
        if (cam.mode == "Video") != (want == "Video"):
            return e.goto(mode_ref(want)) or Action.back()
    if int(e.intent.get("timer") or 0) != cam.timer and not cam.recording:
        return e.goto("camera.timer") or Action.back()
    return e.goto("camera.shutter") or Action.back()


def _lens_shown(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    cam = _app(phone, "camera")
    return phone.fg == "camera" and not cam.recording and bool(cam.front) == (intent.get("lens") == "front")


def _other_lens(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    if intent.get("lens") not in ("front", "back"):
        raise ValueError(f"camera lens must be front or back, got {intent.get('lens')!r}")
    _app(phone, "camera").front = intent.get("lens") != "front"


@builtin_family(
    "camera_lens", "phone", predicate=_lens_shown, setup=_other_lens, doc="the camera shows that lens (front: selfie)"
)
@in_app("camera")
def _lens_plan(e: ExpertStep) -> Action:
    cam = _app(e.phone, "camera")
    if cam.recording:
        return e.goto("camera.shutter") or Action.back()
    return e.goto("camera.flip") or Action.back()


# ---- photos ------------------------------------------------------------------------------
def _viewing(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    v = _app(phone, "photos").viewing
    if phone.fg != "photos" or v is None:
        return False
    q = intent.get("query")
    return photo_matches(v, q) if q else bool(phone.gallery) and v.pid == phone.gallery[0].pid


def _photo_exists(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    q = intent.get("query")
    if q and not any(photo_matches(p, q) for p in phone.gallery):
        tags = tuple(w for w in q.lower().split() if len(w) > 2) or (q.lower(),)
        phone.gallery.insert(min(3, len(phone.gallery)), Photo("q0", "photo", tags, False, "May 30", (120, 160, 190)))


@builtin_family(
    "view_photo", "phone", predicate=_viewing, setup=_photo_exists, doc="Photos shows the latest photo (or one of what was asked)"
)
@in_app("photos")
def _view_photo_plan(e: ExpertStep) -> Action:
    ph, q = _app(e.phone, "photos"), e.intent.get("query")
    if ph.viewing is not None:
        return Action.back()
    if q and ph.fields.get("q", "").strip().lower() != q.lower():
        return e.type_into(ph, "q", "photos.search", q)
    if not q and ph.fields.get("q"):
        return e.goto("photos.search.clear") or Action.back()
    if ph.focused is not None:
        return Action.back()
    return e.goto("photos.0") or Action.back()


def _target_photo(gallery: Sequence[Photo], intent: Intent) -> Photo | None:
    """The photo a task is about: the newest, or the newest that shows what ``query`` names."""
    q = intent.get("query")
    return next((p for p in gallery if not q or photo_matches(p, q)), None)


def _deleted(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    """One photo was deleted, and it was the one the task is about when it was deleted (so "take a
    photo, then delete the newest" means the new one)."""
    binned = _app(phone, "photos").binned
    return len(binned) == 1 and _target_photo(binned[0][1], intent) is binned[0][0]


def _to_photo(e: ExpertStep, target: Photo | None) -> Action:
    """Steps from the Photos grid to the viewer on ``target`` (searching as view_photo does)."""
    ph = _app(e.phone, "photos")
    shown = ph.shown()
    if target in shown and ph.focused is None:
        return e.goto(f"photos.{shown.index(target)}") or Action.back()
    return _view_photo_plan(e)


@builtin_family(
    "delete_photo", "phone", predicate=_deleted, setup=_photo_exists, doc="the newest photo (or one of what was asked) is deleted"
)
@in_app("photos")
def _delete_photo_plan(e: ExpertStep) -> Action:
    ph = _app(e.phone, "photos")
    target = _target_photo(e.phone.gallery, e.intent)
    if ph.viewing is not None:
        return (e.goto("photos.viewer.delete") if ph.viewing is target else None) or Action.back()
    return _to_photo(e, target)


def _photo_sent(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    """One photo was sent, to that contact, and it was the one the task is about when it was sent."""
    from digirl.sim.device import same_person

    shared = _app(phone, "photos").shared
    return (
        len(shared) == 1
        and same_person(shared[0][2], intent.get("contact"))
        and _target_photo(shared[0][1], intent) is shared[0][0]
    )


def _contact_and_photo(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    from digirl.sim.families.comms import ensure_contact

    ensure_contact(phone, intent.get("contact"), rng)
    _photo_exists(phone, intent, ctx, rng)


@builtin_family(
    "send_photo", "phone", predicate=_photo_sent, setup=_contact_and_photo, doc="the photo asked for went to the contact"
)
@in_app("photos")
def _send_photo_plan(e: ExpertStep) -> Action:
    from digirl.sim.device import find_contacts, same_person

    ph, want = _app(e.phone, "photos"), e.intent.get("contact")
    target = _target_photo(e.phone.gallery, e.intent)
    if ph.sharing:
        hits = find_contacts(e.phone.contacts, ph.fields.get("to", ""))[:4]
        for i, c in enumerate(hits):
            if ph.fields.get("to") and same_person(c.name, want):
                return e.goto(f"photos.share.result.{i}") or Action.back()
        return e.type_into(ph, "to", "photos.share.to", want, submit=False)
    if ph.viewing is not None:
        return (e.goto("photos.viewer.share") if ph.viewing is target else None) or Action.back()
    return _to_photo(e, target)


# ---- music ------------------------------------------------------------------------------
def _music_key(intent: Intent) -> str:
    from digirl.sim.apps import resolve_app

    return resolve_app(intent.get("app") or "Music")


def _music_app_ready(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    from digirl.sim.apps.player import MUSIC_SERVICES

    key = _music_key(intent)
    if key != "music" and key not in MUSIC_SERVICES:
        raise ValueError(f"{intent.get('app')!r} is not a music app of the simulated phone")
    if key != "music":
        phone.install(intent.get("app"))


def _music_playing(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    """The app is in front, playing something; with a ``query``, something whose title has its words."""
    key = _music_key(intent)
    if phone.fg != key:
        return False
    playing = _app(phone, key).player.playing
    terms = query_terms(intent) if intent.get("query") else []
    return bool(playing) and terms_in(terms, playing)


@builtin_family("play_music", "phone", predicate=_music_playing, setup=_music_app_ready, doc="a music app plays what was asked")
def _music_plan(e: ExpertStep) -> Action:
    key, q = _music_key(e.intent), e.intent.get("query")
    step = e.open_app(key)
    if step is not None:
        return step
    app = _app(e.phone, key)
    st, terms = app.player, query_terms(e.intent) if q else []
    if st.results_for is None and app.focused != "q":
        mine = [i for i, t in enumerate(st.library) if terms_in(terms, t)]
        if mine:  # "play my Discover Weekly", or anything for "play some music"
            return e.goto(f"{key}.lib.{mine[0]}") or Action.back()
    if st.results_for is not None and terms_in(terms, st.results_for):
        return e.goto(f"{key}.result.0") or Action.back()
    return e.type_into(app, "q", f"{key}.search", q)


#: What a playback control does, by ``music_control``'s ``action``: the player's state it leaves.
_CONTROLS = ("pause", "resume", "skip", "shuffle")


def _music_on(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    """The music app is playing a track of its library (paused, for "resume"), as the request presumes."""
    if intent.get("action") not in _CONTROLS:
        raise ValueError(f"music_control's action is one of {', '.join(_CONTROLS)}, not {intent.get('action')!r}")
    _music_app_ready(phone, intent, ctx, rng)
    st = _app(phone, _music_key(intent)).player
    st.play(st.library[int(rng.integers(len(st.library)))], st.library)
    st.paused = intent.get("action") == "resume"
    ctx.initial["track"] = st.playing


def _music_controlled(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    st, act = _app(phone, _music_key(intent)).player, intent.get("action")
    if act == "pause":
        return bool(st.paused)
    if act == "skip":
        return st.skips > 0 and not st.paused and st.playing != ctx.initial.get("track")
    if act == "shuffle":
        return st.shuffle and not st.paused
    return not st.paused and st.playing == ctx.initial.get("track")  # resume: the same track plays again


_CONTROL_DOC = "the music app's playback was paused / resumed / skipped to the next track / shuffled"


@builtin_family("music_control", "phone", predicate=_music_controlled, setup=_music_on, doc=_CONTROL_DOC)
def _music_control_plan(e: ExpertStep) -> Action:
    key = _music_key(e.intent)
    step = e.open_app(key)
    if step is not None:
        return step
    app = _app(e.phone, key)
    if app.focused is not None:
        return Action.back()  # the keyboard hides the player bar
    ref = {"pause": "pp", "resume": "pp", "skip": "next", "shuffle": "shuffle"}[e.intent.get("action")]
    return e.goto(f"{key}.{ref}") or Action.back()


# ---- YouTube ------------------------------------------------------------------------------
def _watched(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    if phone.fg != "youtube":
        return False
    y, terms = _app(phone, "youtube"), query_terms(intent)
    v = y.playing
    if v is not None and terms_in(terms, v.title):
        return True
    return intent.get("action") == "search" and y.top[0] == "results" and terms_in(terms, str(y.top[1]))


@builtin_family(
    "youtube_video", "phone", predicate=_watched, doc="YouTube plays a video matching the query (or shows its results)"
)
@in_app("youtube")
def _video_plan(e: ExpertStep) -> Action:
    y, q, terms = _app(e.phone, "youtube"), e.intent.get("query"), query_terms(e.intent)
    screen, arg = y.top
    if screen == "search":
        return e.type_into(y, "q", "yt.query", q)
    if screen == "results" and terms_in(terms, str(arg)):
        vids = youtube_results(str(arg), e.phone.dyn.world_version)
        for i, j in enumerate(e.phone.dyn.order(len(vids), "yt", str(arg).lower())):
            if terms_in(terms, vids[j].title):
                return e.goto(f"yt.result.{i}") or Action.back()
        return Action.back()
    if screen in ("watch", "channel"):
        return Action.back()
    return e.goto("yt.query" if screen == "results" else "yt.search") or Action.back()


def _subscribed(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    return norm_name(intent.get("channel")) in _app(phone, "youtube").subscriptions


def _channel_shown(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    screen, arg = _app(phone, "youtube").top
    return phone.fg == "youtube" and screen == "channel" and norm_name(str(arg)) == norm_name(intent.get("channel"))


@builtin_family("youtube_channel", "phone", predicate=_channel_shown, doc="YouTube shows that channel's page")
@in_app("youtube")
def _channel_plan(e: ExpertStep) -> Action:
    return on_youtube_channel(e, e.intent.get("channel"), "yt.channel.name")


@builtin_family("youtube_subscribe", "phone", predicate=_subscribed, doc="subscribed to that channel")
@in_app("youtube")
def _subscribe_plan(e: ExpertStep) -> Action:
    return on_youtube_channel(e, e.intent.get("channel"), "yt.channel.subscribe")


# ---- Play Store -----------------------------------------------------------------------------
def _uninstalled(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    return not phone.is_installed(intent.get("app"))


def _installed_app(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    from digirl.sim.phone import resolve_app

    name = intent.get("app")
    if name != "all":
        if intent.family == "uninstall_app" and not resolve_app(name).startswith("x."):
            raise ValueError(f"{name} is a system app: it cannot be uninstalled")
        phone.install(name)


def _store_to_app(e: ExpertStep, name: str) -> Action | None:
    """Steps until the Play Store shows ``name``'s page; None when it does."""
    step = e.open_app("playstore")
    if step is not None:
        return step
    s = _app(e.phone, "playstore")
    screen, arg = s.top
    if screen == "app" and norm_name(arg.name) == norm_name(name):
        return None
    if screen == "search":
        return e.type_into(s, "q", "store.query", name)
    if screen == "results" and norm_name(str(arg)) == norm_name(name):
        names = [norm_name(a.name) for a in store_apps(str(arg), e.phone.dyn.world_version)]
        i = names.index(norm_name(name)) if norm_name(name) in names else 0
        return e.goto(f"store.result.{i}") or Action.back()
    if screen in ("app", "manage"):
        return Action.back()
    return e.goto("store.search") or Action.back()


@builtin_family("uninstall_app", "phone", predicate=_uninstalled, setup=_installed_app, doc="the app is no longer installed")
def _uninstall_plan(e: ExpertStep) -> Action:
    s = _app(e.phone, "playstore")
    if e.phone.fg == "playstore" and s.confirm is not None:
        return e.goto("store.confirm.ok") or Action.back()
    return _store_to_app(e, e.intent.get("app")) or e.goto("store.app.uninstall") or Action.back()


def _updated(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    s, name = _app(phone, "playstore"), intent.get("app")
    if name == "all":
        return not s.pending and not s.updating
    return phone.is_installed(name) and not s.has_update(name)


def _update_pending(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    s, name = _app(phone, "playstore"), intent.get("app")
    if name != "all":
        phone.install(name)
        if not s.has_update(name):
            s.pending.insert(int(rng.integers(len(s.pending) + 1)), name)


@builtin_family("update_app", "phone", predicate=_updated, setup=_update_pending, doc="the app (or every app) is up to date")
@in_app("playstore")
def _update_plan(e: ExpertStep) -> Action:
    s, name = _app(e.phone, "playstore"), e.intent.get("app")
    screen = s.top[0]
    if screen != "manage":
        if screen in ("home", "results"):
            return e.goto("store.account") or Action.back()
        return Action.back()
    if name == "all":
        return e.wait() if s.updating else (e.goto("store.manage.update_all") or Action.back())
    for i, n in enumerate(s.pending):
        if norm_name(n) == norm_name(name):
            return e.wait() if n in s.updating else (e.goto(f"store.manage.{i}.update") or Action.back())
    return e.wait()
