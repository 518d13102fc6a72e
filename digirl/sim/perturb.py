"""In-the-wild dynamics, seeded: pop-ups, ads, shuffled results, slow loads, layout and world changes.

A :class:`Dynamics` is drawn once per episode from the ``np.random.Generator`` passed to reset;
events during the episode (does this page show a cookie banner?) draw from its own generator,
so the same seed and the same actions give the same episode. ``level`` 0 is a calm phone,
1 the default wild phone, 2 a hostile one. ``world_version`` shifts layouts and content the way
a website redesign or an app update does (DigiRL's non-stationarity experiment).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from digirl.sim.content import stable_rng
from digirl.sim.intents import SHOP_SITES

__all__ = ["LEVELS", "Dynamics"]

#: Per level: cookie-banner, app-rating pop-up, permission pop-up and ad probabilities,
#: extra loading steps (min, max), max list offset (dp), shuffle results, shuffle home icons.
LEVELS: dict[int, dict[str, object]] = {
    0: dict(cookie=0.0, rating=0.0, permission=0.0, ads=0.0, load=(0, 0), offset=0, shuffle=False, home=False),
    1: dict(cookie=0.35, rating=0.15, permission=0.0, ads=0.5, load=(0, 1), offset=16, shuffle=True, home=False),
    2: dict(cookie=0.7, rating=0.3, permission=0.25, ads=0.85, load=(1, 2), offset=40, shuffle=True, home=True),
}

# Renamed buttons per world version (an app update); index = world_version % len.
_RENAMES: tuple[dict[str, str], ...] = (
    {},
    {"install": "Get", "add_to_cart": "Add to basket", "accept": "I agree", "not_now": "Maybe later",
     "search_apps": "Search apps", "directions": "Route"},
    {"install": "Install app", "add_to_cart": "Add", "accept": "OK", "not_now": "No thanks",
     "search_apps": "Search for apps", "directions": "Go"},
)


@dataclass
class Dynamics:
    """What varies per episode. Build with :meth:`sample`."""

    level: int = 0
    world_version: int = 0
    cookie_p: float = 0.0
    rating_p: float = 0.0
    permission_p: float = 0.0
    ads_p: float = 0.0
    load_range: tuple[int, int] = (0, 0)
    list_offset: int = 0
    shuffle: bool = False
    home_shuffle: bool = False
    #: 0: search box in the header; 1: search box under the header (per shop site).
    site_layout: dict[str, int] = field(default_factory=dict)
    #: Home screen search widget at the bottom (above the dock) instead of the top.
    search_widget_bottom: bool = False
    salt: int = 0
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0))

    @classmethod
    def sample(cls, level: int, world_version: int, rng: np.random.Generator) -> Dynamics:
        if level not in LEVELS:
            raise ValueError(f"perturbation level must be 0, 1 or 2, got {level!r}")
        cfg = LEVELS[level]
        salt = int(rng.integers(0, 2**31))
        load = cfg["load"]
        assert isinstance(load, tuple)
        d = cls(level=level, world_version=int(world_version), cookie_p=float(cfg["cookie"]),  # type: ignore[arg-type]
                rating_p=float(cfg["rating"]), permission_p=float(cfg["permission"]),  # type: ignore[arg-type]
                ads_p=float(cfg["ads"]), load_range=(int(load[0]), int(load[1])),  # type: ignore[arg-type]
                list_offset=int(rng.integers(0, int(cfg["offset"]) + 1)),  # type: ignore[call-overload]
                shuffle=bool(cfg["shuffle"]), home_shuffle=bool(cfg["home"]), salt=salt,
                rng=np.random.default_rng(salt))
        for i, site in enumerate(SHOP_SITES):
            base = (world_version + i) % 2 if world_version else 0
            d.site_layout[site] = base if level < 2 else int(rng.integers(0, 2))
        d.search_widget_bottom = bool(world_version % 2) if level < 2 else bool(rng.integers(0, 2))
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
        idx = list(range(n))
        if self.shuffle and n > 1:
            # Mostly keep the order but swap a few entries, like a ranking that changed a little.
            r = stable_rng("order", self.salt, *key)
            for _ in range(max(1, n // 3)):
                i, j = r.randrange(n), r.randrange(n)
                idx[i], idx[j] = idx[j], idx[i]
        return idx

    def has_ad(self, *key: object) -> bool:
        """Whether a results page shows a sponsored banner (fixed per episode and page)."""
        return self.ads_p > 0 and stable_rng("ad", self.salt, *key).random() < self.ads_p

    def text(self, key: str, default: str) -> str:
        """A button label, possibly renamed in this world version."""
        return _RENAMES[self.world_version % len(_RENAMES)].get(key, default)
