"""Procedural content: everything a page shows is generated from its query, deterministically.

Generators take the query (any city, product, country, channel ...) and the ``world_version`` salt
and return plain dataclasses. They use :func:`stable_rng` (blake2b-seeded ``random.Random``), never
the process hash, so the same query gives the same page in every process and run.
"""

from __future__ import annotations

import functools
import hashlib
import random
import re
from dataclasses import dataclass, field

from digirl.sim.memo import memo_list

__all__ = [
    "STOPWORDS",
    "Card",
    "Place",
    "Product",
    "StoreApp",
    "Video",
    "WebResult",
    "answer_card",
    "card_kind",
    "channel_videos",
    "key_terms",
    "norm_name",
    "places",
    "products",
    "site_headlines",
    "stable_rng",
    "store_apps",
    "suggestions",
    "terms_in",
    "title_case",
    "web_results",
    "youtube_results",
]

STOPWORDS = frozenset(
    "a an the of for in on at to and or is are what whats what's how me my i show find search google "
    "please up look near nearest closest with by from about can you do does this that it be get".split()
)
_WORD = re.compile(r"[a-z0-9$€£¥%°.]+")


def stable_rng(*parts: object) -> random.Random:
    """A ``random.Random`` seeded from ``parts`` through blake2b (stable across processes)."""
    h = hashlib.blake2b("\x1f".join(str(p) for p in parts).encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(h, "little"))


def words(text: str) -> list[str]:
    return [w.strip(".") for w in _WORD.findall(text.lower()) if w.strip(".")]


def _stem(w: str) -> str:
    return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w


def key_terms(text: str) -> list[str]:
    """Content words of ``text`` (lower-case, stop words removed), in order, without repeats."""
    out: list[str] = []
    for w in words(text):
        if w not in STOPWORDS and w not in out:
            out.append(w)
    return out


def terms_in(terms: list[str] | str, text: str) -> bool:
    """Whether every term occurs as a word of ``text`` (plural-insensitive)."""
    if isinstance(terms, str):
        terms = terms.split()
    have = {_stem(w) for w in words(text)}
    joined = " ".join(words(text))
    for t in terms:
        t = t.lower().strip()
        if not t:
            continue
        if _stem(t) not in have and not (" " in t and t in joined):
            return False
    return True


def norm_name(name: str) -> str:
    """Canonical form of an app/channel name for comparisons: lower-case alphanumerics only."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def title_case(text: str) -> str:
    return " ".join(w if w.isupper() and len(w) > 1 else w[:1].upper() + w[1:] for w in text.split())


# ---------------------------------------------------------------- search engine
@dataclass(frozen=True)
class Card:
    """An answer card on the results page."""

    kind: str
    title: str
    headline: str
    lines: tuple[str, ...] = ()


@dataclass(frozen=True)
class WebResult:
    title: str
    url: str
    snippet: str


_CARD_RULES: tuple[tuple[str, str], ...] = (
    ("weather", r"\b(weather|forecast|temperature|rain|snow)\b"),
    ("exchange", r"\b(exchange|convert|usd|eur|gbp|jpy|inr|dollars?|euros?|pounds?|yen|rupees?|currency)\b.*\b(to|in)\b"),
    ("time", r"\b(what time|time in|time is it|local time|time zone|current time)\b"),
    ("capital", r"\bcapital\b"),
    ("news", r"\b(news|headlines)\b"),
    ("flights", r"\bflights?\b"),
    ("hotels", r"\b(hotels?|motels?)\b"),
    ("rent", r"\b(rent|rental|apartments?)\b"),
    ("menu", r"\bmenu\b"),
    ("restaurants", r"\b(restaurants?|cafes?|coffee|pizza|food|bars?|places|burgers?|sushi|bakery|diner)\b"),
    ("speed", r"\b(speed|how fast|mph)\b"),
    ("size", r"\b(size|how big|how tall|how large|area|height|population|dimensions|how long)\b"),
    ("price", r"\b(price|prices|cost|how much|cheapest)\b"),
    ("person", r"\b(who is|who was|who's|ceo|president|founder|born|wife|husband)\b"),
)
_FILLER = re.compile(
    r"\b(what|whats|what's|is|the|current|today|todays|today's|right now|now|in|for|of|at|near me|near|"
    r"weather|forecast|temperature|time|capital|news|latest|price|cost|how much|how big|how fast|size|speed|"
    r"flights?|hotels?|rent|menu|restaurants?|who|was|search|google|show|me|find|check|does|a|an|to|"
    r"average|top|best|cheap|cheapest|local)\b"
)
_CAPITALS = {
    "france": "Paris",
    "germany": "Berlin",
    "japan": "Tokyo",
    "italy": "Rome",
    "spain": "Madrid",
    "canada": "Ottawa",
    "australia": "Canberra",
    "brazil": "Brasília",
    "india": "New Delhi",
    "china": "Beijing",
    "mexico": "Mexico City",
    "egypt": "Cairo",
    "kenya": "Nairobi",
    "peru": "Lima",
    "russia": "Moscow",
    "united states": "Washington, D.C.",
    "usa": "Washington, D.C.",
    "united kingdom": "London",
    "uk": "London",
    "england": "London",
    "argentina": "Buenos Aires",
    "norway": "Oslo",
    "sweden": "Stockholm",
    "turkey": "Ankara",
    "greece": "Athens",
    "chile": "Santiago",
    "nigeria": "Abuja",
    "south korea": "Seoul",
    "thailand": "Bangkok",
    "vietnam": "Hanoi",
    "portugal": "Lisbon",
    "ireland": "Dublin",
    "poland": "Warsaw",
    "netherlands": "Amsterdam",
    "switzerland": "Bern",
    "austria": "Vienna",
    "belgium": "Brussels",
    "colombia": "Bogotá",
}
_CURRENCIES = {
    "usd": "US Dollar",
    "dollar": "US Dollar",
    "dollars": "US Dollar",
    "eur": "Euro",
    "euro": "Euro",
    "euros": "Euro",
    "gbp": "British Pound",
    "pound": "British Pound",
    "pounds": "British Pound",
    "jpy": "Japanese Yen",
    "yen": "Japanese Yen",
    "inr": "Indian Rupee",
    "rupee": "Indian Rupee",
    "rupees": "Indian Rupee",
    "cad": "Canadian Dollar",
    "aud": "Australian Dollar",
    "chf": "Swiss Franc",
    "mxn": "Mexican Peso",
    "peso": "Mexican Peso",
    "pesos": "Mexican Peso",
    "cny": "Chinese Yuan",
}
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_DAYNAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_SKY = ("Sunny", "Partly cloudy", "Cloudy", "Light rain", "Showers", "Clear", "Windy", "Thunderstorms")


def card_kind(query: str) -> str:
    """Which answer card a query gets (``generic`` when no rule matches)."""
    q = query.lower()
    for kind, pat in _CARD_RULES:
        if re.search(pat, q):
            return kind
    return "generic"


def _subject(query: str) -> str:
    s = re.sub(r"\s+", " ", _FILLER.sub(" ", query.lower())).strip(" ?.,!")
    return title_case(s) if s else "Your area"


@functools.lru_cache(maxsize=1024)
def answer_card(query: str, world_version: int = 0) -> Card:
    """The answer card for ``query``: its kind from keywords, its figures from a stable hash."""
    kind = card_kind(query)
    r = stable_rng("card", query.lower().strip(), world_version)
    subj = _subject(query)
    if kind in _LOOKUP_CARDS:
        return _LOOKUP_CARDS[kind](query, subj, r)
    if kind in ("restaurants", "hotels"):
        return Card(
            kind,
            f"{subj} nearby" if kind == "restaurants" else f"Hotels · {subj}",
            "Places",
            tuple(f"{p.name} · {p.rating}★ · {p.detail}" for p in places(query, world_version)[:3]),
        )
    return _listing_card(kind, subj, r)


def _weather_card(query: str, subj: str, r: random.Random) -> Card:
    t = r.randint(28, 95)
    sky = r.choice(_SKY)
    days = "  ".join(f"{d} {r.randint(t - 9, t + 9)}°" for d in _DAYS[:5])
    return Card(
        "weather",
        subj,
        f"{t}°F  {sky}",
        (f"Precipitation {r.randint(0, 90)}%  Humidity {r.randint(20, 95)}%", f"Wind {r.randint(1, 25)} mph", days),
    )


def _time_card(query: str, subj: str, r: random.Random) -> Card:
    h, m = r.randint(1, 12), r.randint(0, 59)
    return Card(
        "time",
        f"Local time in {subj}",
        f"{h}:{m:02d} {r.choice(('AM', 'PM'))}",
        (f"{r.choice(_DAYNAMES)}, GMT{r.randint(-10, 12):+d}",),
    )


def _exchange_card(query: str, subj: str, r: random.Random) -> Card:
    found = [c for c in words(query) if c in _CURRENCIES]
    a = _CURRENCIES[found[0]] if found else "US Dollar"
    b = _CURRENCIES[found[1]] if len(found) > 1 else ("Euro" if a != "Euro" else "US Dollar")
    amt = next((float(w) for w in words(query) if re.fullmatch(r"\d+(\.\d+)?", w)), 1.0)
    rate = round(r.uniform(0.05, 150.0) if "Yen" in b or "Rupee" in b else r.uniform(0.5, 1.6), 4)
    return Card("exchange", f"{amt:g} {a} equals", f"{amt * rate:,.2f} {b}", (f"1 {a} = {rate} {b}", "Market data · Disclaimer"))


def _capital_card(query: str, subj: str, r: random.Random) -> Card:
    country = re.sub(r".*capital (city )?of ", "", query.lower()).strip(" ?.!") or subj.lower()
    cap = _CAPITALS.get(country) or title_case(
        r.choice(("port ", "san ", "new ", "")) + country.split()[0][:5] + r.choice(("ia", "ville", "ton", "burg", "o"))
    )
    return Card("capital", f"Capital of {title_case(country)}", cap, (f"{cap} is the capital and largest city.",))


def _news_card(query: str, subj: str, r: random.Random) -> Card:
    topics = ("Markets rally as", "Officials announce", "Storm expected in", "New study on", "Election update:")
    return Card(
        "news",
        f"Top stories · {subj}",
        f"{r.choice(topics)} {subj}",
        tuple(f"{r.choice(topics)} {subj} · {r.randint(1, 23)}h ago" for _ in range(3)),
    )


#: The kinds whose card reads the query itself (a place, a currency pair, a country, a topic).
_LOOKUP_CARDS = {
    "weather": _weather_card,
    "time": _time_card,
    "exchange": _exchange_card,
    "capital": _capital_card,
    "news": _news_card,
}


def _listing_card(kind: str, subj: str, r: random.Random) -> Card:
    """The cards drawn from the subject alone: fares, rents, dishes, figures, prices, a person."""
    if kind == "flights":
        # the draws keep their order: the lowest fare, the airlines, then each one's time and fare
        lowest = f"from ${r.randint(89, 1400)}"
        airlines = r.sample(("United", "Delta", "American", "JetBlue", "Alaska", "Lufthansa"), 3)
        fares = tuple(f"{al} · {r.randint(1, 14)}h {r.randint(0, 59)}m · ${r.randint(89, 1600)}" for al in airlines)
        return Card(kind, f"Flights · {subj}", lowest, fares)
    if kind == "rent":
        average = f"${r.randint(700, 4200):,}/mo"
        by_size = f"1 bedroom ${r.randint(600, 3000):,}  2 bedroom ${r.randint(900, 4800):,}"
        return Card(kind, f"Average rent · {subj}", average, (by_size,))
    if kind == "menu":
        dishes = ("Burger", "Caesar Salad", "Pad Thai", "Margherita Pizza", "Tacos", "Ramen", "Pancakes", "Wrap")
        menu = tuple(f"{d}  ${r.randint(5, 24)}.{r.choice(('00', '49', '99'))}" for d in r.sample(dishes, 4))
        return Card(kind, f"Menu · {subj}", "Popular dishes", menu)
    if kind == "speed":
        return Card(kind, subj, f"{r.randint(20, 750)} mph", ("Top speed", f"0–60 mph in {r.uniform(2.5, 12):.1f} s"))
    if kind == "size":
        figure = f"{r.randint(2, 9000):,} {r.choice(('sq mi', 'ft', 'in', 'km²', 'million people'))}"
        return Card(kind, subj, figure, ("Source: Wikipedia",))
    if kind == "price":
        price = f"${r.randint(2, 1999)}.{r.choice(('00', '49', '99'))}"
        shops = tuple(f"{s} · ${r.randint(2, 1999)}" for s in r.sample(("Walmart", "Target", "Best Buy", "Amazon"), 3))
        return Card(kind, f"{subj} price", price, shops)
    if kind == "person":
        role = r.choice(("American businessman", "Singer-songwriter", "Actor", "Politician", "Athlete", "Author"))
        born = f"Born: {r.choice(('March', 'June', 'October'))} {r.randint(1, 28)}, {r.randint(1940, 2001)}"
        return Card(kind, subj, role, (born,))
    return Card("generic", subj, "", ())


@memo_list
def web_results(query: str, world_version: int = 0, n: int = 8) -> list[WebResult]:
    """Organic results: encyclopedia, news and topical sites named after the query."""
    q = query.strip() or "search"
    subj = _subject(q)
    slug = "-".join(key_terms(q)[:4]) or "home"
    r = stable_rng("web", q.lower(), world_version)
    sites = [
        ("en.wikipedia.org", f"{subj} - Wikipedia", f"{subj} is a topic covered in this article …"),
        ("www.reddit.com", f"{q} : r/{slug.split('-')[0]}", "Discussion and answers from the community …"),
        ("www.youtube.com", f"{subj} - YouTube", "Watch videos about " + q),
        ("www.nytimes.com", f"{subj}: What to Know", "The latest coverage and analysis …"),
        ("www.tripadvisor.com", f"THE 10 BEST {subj}", "Reviews, photos and tips …"),
        ("www.yelp.com", f"Top 10 Best {subj} - Yelp", "Find the best " + q + " near you …"),
        ("www.britannica.com", f"{subj} | Britannica", "Facts, history and overview …"),
        ("www.cnn.com", f"{subj} news - CNN", "Breaking news and latest updates …"),
        ("www.bbc.com", f"{subj} - BBC", "Everything you need to know …"),
        ("www.quora.com", f"What is {q}? - Quora", "Answers from people who know …"),
    ]
    r.shuffle(sites)
    return [WebResult(t, f"{d}/{slug}", s) for d, t, s in sites[:n]]


@memo_list
def suggestions(prefix: str, n: int = 5) -> list[str]:
    """Query completions for what has been typed so far (the prefix itself first)."""
    p = prefix.strip().lower()
    if not p:
        return ["weather", "news", "restaurants near me", "translate", "sports scores"][:n]
    r = stable_rng("suggest", p)
    tails = [
        "near me",
        "today",
        "price",
        "reviews",
        "open now",
        "map",
        "2024",
        "tickets",
        "hours",
        "app",
        "youtube",
        "meaning",
        "vs",
        "deals",
    ]
    out = [p] + [f"{p} {t}" for t in r.sample(tails, n - 1)]
    return out[:n]


# ---------------------------------------------------------------- places (maps, restaurants, hotels)
@dataclass(frozen=True)
class Place:
    name: str
    category: str
    address: str
    rating: float
    distance: str
    detail: str


_STREETS = ("Main St", "Oak Ave", "Market St", "5th Ave", "Elm St", "Broadway", "Pine St", "Lake Dr", "Mission St")
_OWNERS = (
    "Joe's",
    "Golden",
    "Blue Door",
    "Corner",
    "Sunset",
    "Union",
    "Riverside",
    "Little",
    "Green Leaf",
    "Metro",
    "Shell",
    "Chevron",
    "Lucky",
    "Harbor",
    "City",
    "Maple",
)


@memo_list
def places(query: str, world_version: int = 0, n: int = 6) -> list[Place]:
    """Places matching ``query``; their category is the query's subject, so any kind works."""
    cat = _subject(query)
    if cat == "Your area":
        cat = "Places"
    r = stable_rng("places", query.lower().strip(), world_version)
    out = []
    for i in range(n):
        owner = r.choice(_OWNERS)
        name = f"{owner} {cat}" if r.random() < 0.7 else f"{cat} {r.choice(('Express', 'Center', 'House', 'Co.'))}"
        d = round(0.2 + i * r.uniform(0.2, 0.9), 1)
        out.append(
            Place(
                name,
                cat,
                f"{r.randint(10, 2999)} {r.choice(_STREETS)}",
                round(r.uniform(3.4, 4.9), 1),
                f"{d} mi",
                r.choice(("Open now", "Closes 9 PM", "Open 24 hours", "Opens 7 AM")),
            )
        )
    return out


# ---------------------------------------------------------------- shopping
@dataclass(frozen=True)
class Product:
    pid: str
    title: str
    price: float
    rating: float
    reviews: int
    seller: str = ""


_BRANDS = (
    "Samsung",
    "Sony",
    "LG",
    "Apple",
    "HP",
    "Dell",
    "Lenovo",
    "Logitech",
    "JBL",
    "Bose",
    "Anker",
    "Philips",
    "KitchenAid",
    "Dyson",
    "Nike",
    "Adidas",
    "Asus",
    "Acer",
    "Corsair",
    "Razer",
    "Canon",
    "Nikon",
    "Cuisinart",
)
_VARIANTS = ("Pro", "Plus", "Max", "Lite", "2-Pack", "Wireless", "Black", "Silver", "XL", "Gen 3", "Deluxe", "Mini")


@memo_list
def products(site: str, query: str, world_version: int = 0, n: int = 10) -> list[Product]:
    """A site's search results for ``query``, in the site's canonical order."""
    q = " ".join(key_terms(query)) or query.lower().strip() or "deals"
    r = stable_rng("shop", site, q, world_version)
    base = r.uniform(8, 600)
    out = []
    for i in range(n):
        brand = r.choice(_BRANDS)
        title = f"{brand} {title_case(q)} {r.choice(_VARIANTS)}"
        if r.random() < 0.4:
            title += f" {r.choice(('(2024)', '- 128GB', '- 15 in', '- Refurbished', '- Bundle'))}"
        price = round(max(1.99, base * r.uniform(0.5, 1.8)), 2)
        out.append(
            Product(
                f"{i:02d}{r.randint(1000, 9999)}",
                title,
                price,
                round(r.uniform(3.0, 5.0), 1),
                r.randint(3, 9000),
                r.choice(("Sold by " + site.split(".")[0].title(), "Marketplace seller")),
            )
        )
    return out


# ---------------------------------------------------------------- youtube
@dataclass(frozen=True)
class Video:
    vid: str
    title: str
    channel: str
    age_days: int
    views: str


def _views(r: random.Random) -> str:
    v = r.randint(1_000, 90_000_000)
    return f"{v / 1e6:.1f}M views" if v >= 1e6 else f"{v // 1000}K views"


def _age(days: int) -> str:
    if days < 1:
        return "hours ago"
    if days < 7:
        return f"{days} day{'s' if days > 1 else ''} ago"
    if days < 60:
        return f"{days // 7} weeks ago"
    return f"{days // 30} months ago"


def video_age(v: Video) -> str:
    return _age(v.age_days)


@memo_list
def channel_videos(channel: str, world_version: int = 0, n: int = 8) -> list[Video]:
    """A channel's uploads, newest first."""
    name = title_case(channel.strip()) or "Channel"
    r = stable_rng("chan", norm_name(channel), world_version)
    kinds = ("Official Video", "Live", "Behind the Scenes", "Lyric Video", "Q&A", "Vlog", "Highlights", "Trailer")
    days = sorted(r.sample(range(0, 400), n))
    things = ("New Song", "Tour Diary", "Studio Session", "Interview", "Acoustic Set", "Update", "Challenge", "Remix")
    return [
        Video(f"{norm_name(channel)[:8]}{i}", f"{name} - {r.choice(things)} ({r.choice(kinds)})", name, d, _views(r))
        for i, d in enumerate(days)
    ]


@memo_list
def youtube_results(query: str, world_version: int = 0) -> list[Video]:
    """Video results for ``query``: some uploads of the matching channel and others *about* it."""
    own = channel_videos(query, world_version)
    r = stable_rng("ytq", query.lower().strip(), world_version)
    name = title_case(query.strip()) or "Video"
    others = ["MusicReacts", "TopTenz", "Daily Mix", "Fan Edits", "Late Night Show", "NewsNow"]
    about = [
        Video(f"x{i}{r.randint(100, 999)}", f"{t} {name}", r.choice(others), r.randint(0, 300), _views(r))
        for i, t in enumerate(("Reacting to", "Top 10 moments:", "The story of", "Best of"))
    ]
    picks = own[1:4] + about
    r.shuffle(picks)
    return picks


# ---------------------------------------------------------------- play store
@dataclass(frozen=True)
class StoreApp:
    name: str
    developer: str
    rating: float
    size: str
    downloads: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)


@memo_list
def store_apps(query: str, world_version: int = 0, n: int = 6) -> list[StoreApp]:
    """Store results: the app named like the query first, then related apps."""
    name = title_case(query.strip()) or "App"
    r = stable_rng("store", norm_name(query), world_version)
    suffixes = ("Lite", "Pro", "Helper", "for Android", "Plus", "Guide", "Widgets")
    out = [
        StoreApp(
            name,
            f"{name.split()[0]} Inc.",
            round(r.uniform(3.6, 4.8), 1),
            f"{r.randint(8, 180)} MB",
            f"{r.choice((10, 50, 100, 500))}M+",
        )
    ]
    for _ in range(n - 1):
        out.append(
            StoreApp(
                f"{name} {r.choice(suffixes)}",
                r.choice(("Appy Labs", "Mobile Tools", "Bright Apps")),
                round(r.uniform(2.5, 4.7), 1),
                f"{r.randint(3, 90)} MB",
                f"{r.choice((1, 5, 10))}M+",
            )
        )
    return out


@memo_list
def site_headlines(domain: str, world_version: int = 0, n: int = 8) -> list[tuple[str, str]]:
    """(headline, meta) pairs for a generic site's front page."""
    r = stable_rng("site", domain, world_version)
    topics = ("Breaking:", "Opinion:", "Guide:", "Review:", "Update:", "Analysis:", "Live:", "Photos:")
    nouns = (
        "the economy",
        "new phones",
        "summer travel",
        "local elections",
        "the playoffs",
        "AI tools",
        "housing prices",
        "space launch",
        "healthy recipes",
        "climate talks",
        "the box office",
    )
    return [
        (f"{r.choice(topics)} what to know about {r.choice(nouns)}", f"{r.randint(1, 23)}h ago · {r.randint(3, 900)} comments")
        for _ in range(n)
    ]
