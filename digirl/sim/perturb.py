"""In-the-wild dynamics, seeded: pop-ups, ads, shuffled results, slow loads, layout and world changes.

A :class:`Dynamics` is drawn once per episode from the ``np.random.Generator`` passed to reset;
events during the episode (does this page show a cookie banner?) draw from its own generator,
so the same seed and the same actions give the same episode. ``level`` 0 is a calm phone,
1 the default wild phone, 2 a hostile one. ``world_version`` shifts layouts and content the way
a website redesign or an app update does (DigiRL's non-stationarity experiment): renamed buttons,
shop sites with the search box moved, the home search widget at the bottom (odd versions) or gone,
replaced by a Google app icon (versions 2, 5, ...), other search results and products.

Versions 0, 1 and 2 are pinned (golden digests and recorded results use them). From
:data:`DRIFT_FROM` (3) on, versions are a timeline of app updates, ``stage = version - 2``: stage
``s`` has version ``s``'s changes above and, cumulatively, the updates of :data:`UPDATES` up to
``s`` (the Google app opening on its feed, icons moved, Settings reordered and renamed, result
cards redesigned), so a frozen policy meets more that it relied on the further the world moves.
"""

from __future__ import annotations

import colorsys
from dataclasses import dataclass, field

import numpy as np

from digirl.sim.content import stable_rng
from digirl.sim.intents import SHOP_SITES

__all__ = ["DEVICE_POOLS", "DRIFT_FROM", "LEVELS", "UPDATES", "Device", "Dynamics", "Level", "dark_theme", "drift_stage"]


@dataclass(frozen=True)
class Level:
    """What one perturbation level turns on (probabilities per event, ranges in steps or dp)."""

    cookie: float
    rating: float
    permission: float
    ads: float
    load: tuple[int, int]  # extra "Loading…" steps per page load (min, max)
    offset: int  # max top offset of result lists, dp
    shuffle: bool  # shuffle result orders a little
    home: bool  # shuffle home-screen icons, move the search widget


LEVELS: dict[int, Level] = {
    0: Level(0.0, 0.0, 0.0, 0.0, (0, 0), 0, False, False),
    1: Level(0.35, 0.15, 0.0, 0.5, (0, 1), 16, True, False),
    2: Level(0.7, 0.3, 0.25, 0.85, (1, 2), 40, True, True),
}

# Renamed buttons per world version (an app update); index = world_version % len.
_RENAMES: tuple[dict[str, str], ...] = (
    {},
    {
        "install": "Get",
        "add_to_cart": "Add to basket",
        "accept": "I agree",
        "not_now": "Maybe later",
        "search_apps": "Search apps",
        "directions": "Route",
    },
    {
        "install": "Install app",
        "add_to_cart": "Add",
        "accept": "OK",
        "not_now": "No thanks",
        "search_apps": "Search for apps",
        "directions": "Go",
    },
)


#: The first world version of the app-update timeline (versions below it keep their pinned behaviour).
DRIFT_FROM = 3

#: What each stage of the timeline adds (cumulative: stage s has every update up to s).
UPDATES: tuple[tuple[int, str], ...] = (
    (1, "Google app update: the home search widget (now 'Ask Google') opens the app's feed; its search box is one tap more"),
    (1, "launcher update: the home-screen icons are rearranged (a new fixed order per stage)"),
    (1, "Settings redesign: the main menu is reordered and its entries renamed ('Apps' -> 'Apps & notifications', ...)"),
    (1, "search results redesign: the title leads each result card, with a site badge; cards are taller"),
    (2, "shopping sites redesign: a sort/filter bar above the results, product cards with the picture on the right"),
    (2, "more renamed buttons (the stage's rename set) and Settings entries"),
    (3, "Settings moves toggles to other pages: Hotspot to Connected devices, Use location to Security & privacy"),
)

# Settings entries renamed by the Settings redesign, per stage (the later stage extends the former).
_SETTINGS_RENAMES: tuple[dict[str, str], ...] = (
    {},
    {
        "settings.apps": "Apps & notifications",
        "settings.display": "Display & brightness",
        "settings.network": "Connections",
        "settings.sound": "Sounds",
    },
    {
        "settings.apps": "Applications",
        "settings.display": "Screen & display",
        "settings.network": "Network",
        "settings.sound": "Sounds & vibration",
        "settings.battery": "Battery & power",
        "settings.storage": "Storage & memory",
        "settings.connected": "Bluetooth & devices",
    },
)


#: Per-device variation: ``device_variation`` pool -> the device ids an episode draws from. Ids
#: ``= 4 (mod 5)`` are held out of the train pool, so a policy trained on ``train`` devices is
#: evaluated on layouts, wallpapers and themes it never saw.
DEVICE_POOLS: dict[str, tuple[int, ...]] = {
    "train": tuple(i for i in range(1000) if i % 5 != 4),
    "test": tuple(i for i in range(1000) if i % 5 == 4),
}
#: Locale-style date formats of the home screen (strftime-like, filled by the launcher).
DATE_FORMATS: tuple[str, ...] = (
    "{wd}, {mon} {d}",
    "{wd} {d} {mon}",
    "{mm}/{dd}",
    "{d}.{m}.",
    "{d} {mon}",
    "{weekday}, {mon} {d}",
)


@dataclass(frozen=True)
class Device:
    """One phone's look: how its owner arranged the home screen and what theme it runs. Everything
    follows from ``id`` (:meth:`build`), so a device id names the same phone in every process."""

    id: int
    #: Home-grid and dock apps in this owner's order (a permutation of the factory order).
    home_seed: int
    wallpaper: tuple[int, int, int]
    #: A system-wide dark theme (the screenshot's lightness inverted, hues kept: Android's forced dark).
    dark: bool
    #: One of :data:`DATE_FORMATS`.
    date_format: str
    #: The dock's apps in this owner's order (indexes into the factory dock).
    dock: tuple[int, ...]

    @classmethod
    def build(cls, device_id: int) -> Device:
        r = stable_rng("device", device_id)
        h, s, v = r.random(), 0.35 + 0.4 * r.random(), 0.25 + 0.35 * r.random()
        rgb = tuple(round(255 * c) for c in colorsys.hsv_to_rgb(h, s, v))
        dock = [0, 1, 2, 3]
        r.shuffle(dock)
        return cls(
            id=int(device_id),
            home_seed=r.randrange(1 << 30),
            wallpaper=(rgb[0], rgb[1], rgb[2]),
            dark=r.random() < 0.35,
            date_format=r.choice(DATE_FORMATS),
            dock=tuple(dock),
        )


def dark_theme(frame: np.ndarray) -> np.ndarray:
    """A screenshot in the dark theme: each pixel's HSL lightness inverted, hue and saturation kept
    (white pages turn near-black, text light, a blue button stays blue). In place; returns ``frame``."""
    f = frame.astype(np.int16)
    shift = 255 - f.max(axis=2, keepdims=True) - f.min(axis=2, keepdims=True)
    np.add(f, shift, out=f)
    np.clip(f, 0, 255, out=f)
    frame[...] = f
    return frame


def drift_stage(world_version: int) -> int:
    """The app-update stage of a world version (0 for the pinned versions 0-2)."""
    return world_version - (DRIFT_FROM - 1) if world_version >= DRIFT_FROM else 0


@dataclass
class Dynamics:
    """What varies per episode. Build with :meth:`sample`."""

    level: int = 0
    world_version: int = 0
    cookie_p: float = 0.0
    rating_p: float = 0.0
    permission_p: float = 0.0
    ads_p: float = 0.0
    #: A full-screen interstitial ad over a web page after it loads (the ``interruptions`` knob only).
    interstitial_p: float = 0.0
    #: A "System update available" notice on an app's first launch (the ``interruptions`` knob only).
    update_p: float = 0.0
    #: Whether the env reports interruptions in each step's info (set by the ``interruptions`` knob).
    count_interruptions: bool = False
    #: This episode's device (per-device variation), None for the factory phone.
    device: Device | None = None
    load_range: tuple[int, int] = (0, 0)
    list_offset: int = 0
    shuffle: bool = False
    home_shuffle: bool = False
    #: 0: search box in the header; 1: search box under the header (per shop site).
    site_layout: dict[str, int] = field(default_factory=dict)
    #: The home screen's search widget: ``top``, ``bottom`` (above the dock) or ``none`` (world
    #: versions 2, 5, 8 ... replace it with a Google app icon, a launcher update).
    search_widget: str = "top"
    #: Button labels of this world (key -> label; :meth:`text`): the world version's rename set.
    renames: dict[str, str] = field(default_factory=dict)
    #: The app-update stage (:func:`drift_stage`; 0: none of :data:`UPDATES`). The fields below follow it.
    stage: int = 0
    #: The home search widget opens the Google app's feed instead of its search screen.
    widget_opens_feed: bool = False
    #: The home search widget's text.
    widget_hint: str = "Search"
    #: 0: the factory order of the home icons; else the seed of a fixed rearrangement (a launcher update).
    home_layout: int = 0
    #: 0: the Settings menu in its factory order; else the seed of a fixed reordering.
    settings_layout: int = 0
    #: Search result cards: 0 classic (site, title, snippet), 1 redesigned (title first, site badge, taller).
    serp_cards: int = 0
    #: Shopping result pages: 0 classic, 1 redesigned (sort/filter bar, picture on the right, taller cards).
    shop_cards: int = 0
    #: Settings toggles an update moved to another page: setting name -> Settings page key.
    moved_settings: dict[str, str] = field(default_factory=dict)
    salt: int = 0
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0))
    #: order() and has_ad() answers: pages ask again on every rebuild, and each answer seeds a
    #: stable-hash RNG (both depend only on their arguments and on salt, shuffle and ads_p).
    _orders: dict[tuple[object, ...], tuple[int, ...]] = field(default_factory=dict, init=False, repr=False, compare=False)
    _ads: dict[tuple[object, ...], bool] = field(default_factory=dict, init=False, repr=False, compare=False)

    @classmethod
    def sample(
        cls,
        level: int,
        world_version: int,
        rng: np.random.Generator,
        interruptions: float | None = None,
        devices: str = "off",
    ) -> Dynamics:
        """This episode's dynamics. ``interruptions`` (0..1), when given, replaces the level's rates of
        cookie banners, rating prompts and permission dialogs and turns on interstitial ads and system
        update notices, each at that rate per opportunity; the env then counts them in each step's info.
        ``devices`` (off, train or test): the episode's phone is a device drawn from that pool of
        :data:`DEVICE_POOLS` (one more draw from ``rng``, after all the others)."""
        if devices != "off" and devices not in DEVICE_POOLS:
            raise ValueError(f"device_variation must be off, {' or '.join(DEVICE_POOLS)}, got {devices!r}")
        if level not in LEVELS:
            raise ValueError(f"perturbation level must be 0, 1 or 2, got {level!r}")
        if interruptions is not None and not 0.0 <= interruptions <= 1.0:
            raise ValueError(f"interruptions must be a rate in [0, 1], got {interruptions!r}")
        cfg = LEVELS[level]
        salt = int(rng.integers(0, 2**31))
        d = cls(
            level=level,
            world_version=int(world_version),
            cookie_p=cfg.cookie,
            rating_p=cfg.rating,
            permission_p=cfg.permission,
            ads_p=cfg.ads,
            load_range=cfg.load,
            list_offset=int(rng.integers(0, cfg.offset + 1)),
            shuffle=cfg.shuffle,
            home_shuffle=cfg.home,
            salt=salt,
            rng=np.random.default_rng(salt),
        )
        stage = drift_stage(int(world_version))
        # A stage of the timeline repeats the pinned version of its number (renames, widget, site
        # layouts), then adds the updates. The draws below are the same for every version.
        legacy = stage or int(world_version)
        for i, site in enumerate(SHOP_SITES[:6]):  # the shipped six; amazon.com draws last (below)
            base = (legacy + i) % 2 if legacy else 0
            d.site_layout[site] = base if level < 2 else int(rng.integers(0, 2))
        # amazon.com (a shop added later) draws from its own stream: the draws above stay as they were
        d.site_layout["amazon.com"] = (
            (legacy % 2 if legacy else 0) if level < 2 else int(np.random.default_rng([salt, 7]).integers(0, 2))
        )
        bottom = bool(legacy % 2) if level < 2 else bool(rng.integers(0, 2))
        d.search_widget = "none" if legacy % 3 == 2 else "bottom" if bottom else "top"
        d.renames = dict(_RENAMES[legacy % len(_RENAMES)])
        if stage:
            d.stage = stage
            d.widget_opens_feed = True
            d.widget_hint = "Ask Google"
            d.home_layout = d.settings_layout = stage
            d.serp_cards = 1
            d.shop_cards = int(stage >= 2)
            if stage >= 3:
                d.moved_settings = {"hotspot": "connected", "location": "security"}
            d.renames.update(_SETTINGS_RENAMES[min(stage, len(_SETTINGS_RENAMES) - 1)])
        if devices != "off":
            pool = DEVICE_POOLS[devices]
            d.device = Device.build(pool[int(rng.integers(len(pool)))])
        if interruptions is not None:
            p = float(interruptions)
            d.cookie_p = d.rating_p = d.permission_p = d.interstitial_p = d.update_p = p
            d.count_interruptions = True
        return d

    # ---------------------------------------------------------------- events
    def chance(self, p: float) -> bool:
        """A Bernoulli(p) event from the episode generator (no draw when p is 0)."""
        return p > 0 and float(self.rng.random()) < p

    def load_steps(self) -> int:
        lo, hi = self.load_range
        return lo if hi <= lo else int(self.rng.integers(lo, hi + 1))

    def order(self, n: int, *key: object) -> list[int]:
        """A permutation of ``range(n)`` fixed for this episode and ``key`` (identity when calm)."""
        mk = (n, key, self.shuffle, self.salt)
        hit = self._orders.get(mk)
        if hit is not None:
            return list(hit)
        idx = list(range(n))
        if self.shuffle and n > 1:
            # Mostly keep the order but swap a few entries, like a ranking that changed a little.
            r = stable_rng("order", self.salt, *key)
            for _ in range(max(1, n // 3)):
                i, j = r.randrange(n), r.randrange(n)
                idx[i], idx[j] = idx[j], idx[i]
        self._orders[mk] = tuple(idx)
        return idx

    def has_ad(self, *key: object) -> bool:
        """Whether a results page shows a sponsored banner (fixed per episode and page)."""
        mk = (key, self.ads_p, self.salt)
        hit = self._ads.get(mk)
        if hit is None:
            hit = self.ads_p > 0 and stable_rng("ad", self.salt, *key).random() < self.ads_p
            self._ads[mk] = hit
        return hit

    def text(self, key: str, default: str) -> str:
        """A button label, possibly renamed in this world version."""
        return self.renames.get(key, default)
