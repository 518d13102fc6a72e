"""The AitW instruction parser: every phrasing family, typos, near-misses, key terms, real-line coverage."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from digirl.sim.intents import FAMILIES, Intent
from digirl.sim.tasks.parser import (
    canonical_app,
    canonical_shop_site,
    key_terms_match,
    parse_instruction,
    parse_time,
    query_terms,
)

AITW = Path(__file__).resolve().parents[2].parent / "shared" / "aitw"

# (instruction, family, expected slot subset) — entities deliberately not all from AitW.
CASES = [
    ("What's the news in Mongolia?", "web_search", {"answer": "news", "key_terms": "mongolia news"}),
    ("What's the news this morning?", "web_search", {"answer": "news", "key_terms": "news"}),
    ("What's the latest news in quantum computing?", "web_search", {"key_terms": "quantum computing news"}),
    ("What's the latest robotics news?", "web_search", {"key_terms": "robotics news"}),
    ("How much does the Steam Deck cost?", "web_search", {"answer": "price", "key_terms": "steam deck"}),
    (
        "What's the price of the Pixel 7 on eBay?",
        "web_search",
        {"answer": "price", "key_terms": "pixel 7 ebay"},
    ),
    (
        "Search for flights from Lima to Oslo",
        "web_search",
        {"answer": "flights", "key_terms": "flights lima oslo"},
    ),
    ("Search for hotels in Kyoto", "web_search", {"answer": "hotels", "key_terms": "hotels kyoto"}),
    (
        "What's a good restaurant in Boise?",
        "web_search",
        {"answer": "restaurants", "key_terms": "restaurant boise"},
    ),
    (
        "Search for good Peruvian restaurants",
        "web_search",
        {"answer": "restaurants", "key_terms": "peruvian restaurants"},
    ),
    (
        "What's the weather like in Reykjavik?",
        "web_search",
        {"answer": "weather", "query": "weather in Reykjavik"},
    ),
    ("What time is it in Nairobi?", "web_search", {"answer": "time", "key_terms": "time nairobi"}),
    (
        "What's the US dollar exchange rate against the Thai Baht?",
        "web_search",
        {"answer": "exchange", "key_terms": "dollar thai baht"},
    ),
    ("Google the capital of Mongolia", "web_search", {"answer": "capital", "key_terms": "capital mongolia"}),
    ("What is the capital of Kenya?", "web_search", {"answer": "capital"}),
    (
        "How much does a 2 bedroom apartment rent for in Omaha?",
        "web_search",
        {"answer": "rent", "key_terms": "2 bedroom omaha"},
    ),
    (
        "What's on the menu at Waffle House?",
        "web_search",
        {"answer": "menu", "key_terms": "waffle house menu"},
    ),
    ("What is the speed of a falcon?", "web_search", {"answer": "speed", "key_terms": "speed falcon"}),
    ("How big is a hippo?", "web_search", {"answer": "size", "key_terms": "hippo"}),
    (
        "Who is the prime minister of Japan?",
        "web_search",
        {"answer": "person", "key_terms": "prime minister japan"},
    ),
    ("Where can I buy a nice hammock?", "web_search", {"key_terms": "hammock"}),
    ("Show me some nice wallpapers for my monitor", "web_search", {"key_terms": "wallpapers monitor"}),
    ("Search for a new concealer on Sephora", "web_search", {"key_terms": "concealer sephora"}),
    ("Check the settings for the Duolingo app", "app_settings", {"app": "Duolingo"}),
    ("Check the settings for the Google Maps app", "app_settings", {"app": "Maps"}),
    ("Turn on notifications for the Slack app", "app_notifications", {"app": "Slack", "state": "on"}),
    ("Turn off notifications for the Zoom app", "app_notifications", {"app": "Zoom", "state": "off"}),
    ("Toggle notifications for the Waze app", "app_notifications", {"app": "Waze", "state": "toggle"}),
    ("Install the Strava app", "install_app", {"app": "Strava"}),
    ("Play the new Dua Lipa video on YouTube", "youtube_play", {"channel": "Dua Lipa", "kind": "new"}),
    ("Play the latest video from the Verge", "youtube_play", {"channel": "Verge", "kind": "latest"}),
    ("What's the latest video from Veritasium?", "youtube_play", {"channel": "Veritasium", "kind": "latest"}),
    ("How do I get to the nearest Trader Joe's?", "maps_directions", {"destination": "Trader Joe's"}),
    ("Find coffee shops on Maps", "maps_search", {"key_terms": "coffee shops"}),
    (
        "Search for top rated ramen restaurants on Google Maps",
        "maps_search",
        {"key_terms": "ramen restaurants"},
    ),
    (
        "Find the nearest pharmacy that's open now",
        "maps_search",
        {"query": "pharmacy open now", "key_terms": "pharmacy"},
    ),
    ("Set an alarm for 6pm", "set_alarm", {"time": "18:00"}),
    ("Set an alarm for 7:45am", "set_alarm", {"time": "07:45"}),
    ("Open a new Chrome incognito tab", "browser_tab", {"mode": "incognito_tab"}),
    ("Open a new private window in the chrome app", "browser_tab", {"mode": "incognito_window"}),
    ("Open a new tab in Chrome", "browser_tab", {"mode": "tab"}),
    ("Open a new Chrome window", "browser_tab", {"mode": "window"}),
    ("Check my gmail inbox", "check_email", {}),
    ("Open the calculator", "open_app", {"app": "Calculator"}),
    ("Open the SMS app", "open_app", {"app": "Messages"}),
    ("Open the Google play store app", "open_app", {"app": "Play Store"}),
    ("What's on my calendar for the rest of the week?", "open_app", {"app": "Calendar"}),
    ("Go to Reddit", "open_site", {"site": "reddit.com"}),
    ("What's the top post on reddit today?", "open_site", {"site": "reddit.com"}),
    ("Go to wikipedia.org", "open_site", {"site": "wikipedia.org"}),
    ("Go to newegg.com", "shop_goto", {"site": "newegg.com"}),
    (
        'Go to bestbuy.com, search for "sony wh-1000xm4"',
        "shop_search",
        {"site": "bestbuy.com", "query": "sony wh-1000xm4"},
    ),
    (
        "Go to walmart.com, search for 'hdmi cable', and select the first entry",
        "shop_select",
        {"site": "walmart.com", "query": "hdmi cable"},
    ),
    ("Go to Best Buy and search for 'usb hub'", "shop_search", {"site": "bestbuy.com", "query": "usb hub"}),
    (
        'Go to https://www.target.com/, search for "lamp", and click on the first result',
        "shop_select",
        {"site": "target.com", "query": "lamp"},
    ),
]


@pytest.mark.parametrize("text,family,slots", CASES)
def test_phrasing_families(text: str, family: str, slots: dict[str, str]) -> None:
    intent = parse_instruction(text)
    assert intent is not None, text
    assert intent.family == family
    for k, v in slots.items():
        assert intent.slots.get(k) == v, (k, intent.slots)


def test_every_family_is_exercised() -> None:
    assert {f for _, f, _ in CASES} == set(FAMILIES)


@pytest.mark.parametrize(
    "text,family,slots",
    [
        ("What's the weather like inToronto?", "web_search", {"key_terms": "weather toronto"}),
        ("What's a goodrestaurant in Austin?", "web_search", {"key_terms": "restaurant austin"}),
        ("Set an alarmfor 5pm", "set_alarm", {"time": "17:00"}),
        ("Searchfor good French restaurants", "web_search", {"key_terms": "french restaurants"}),
        ("Checkthe settings for the Amazon Prime Music app", "app_settings", {"app": "Amazon Prime Music"}),
        (
            "What's the US dollar exchange rateagainst the Swiss Franc?",
            "web_search",
            {"key_terms": "dollar swiss franc"},
        ),
        (
            "How much does a3 bedroom apartment rent for in Portland?",
            "web_search",
            {"key_terms": "3 bedroom portland"},
        ),
        ("What's the news in theFalkland Islands?", "web_search", {"key_terms": "falkland islands news"}),
        ("How much does the HisenseTV cost?", "web_search", {"key_terms": "hisense tv"}),
        (
            "WHat are the new products by Samsung on eBay?",
            "web_search",
            {"key_terms": "samsung products ebay"},
        ),
        ("what's the weather like in paris", "web_search", {"key_terms": "weather paris"}),
        ('"Set an alarm for 6pm"', "set_alarm", {"time": "18:00"}),
        ("  Install the   Yelp app . ", "install_app", {"app": "Yelp"}),
        ("Open the calculator app'", "open_app", {"app": "Calculator"}),
        ("WHATS THE NEWS IN PERU?!", "web_search", {"key_terms": "peru news"}),
    ],
)
def test_typos_case_and_punctuation(text: str, family: str, slots: dict[str, str]) -> None:
    intent = parse_instruction(text)
    assert intent is not None and intent.family == family, (text, intent)
    for k, v in slots.items():
        assert intent.slots.get(k) == v


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "Take a selfie",
        "Send a text message to Mom",
        "Call my mom",
        "Turn on wifi",
        "Set a timer for 5 minutes",
        "Set an alarm for 25pm",
        "Set an alarm for 7",  # am or pm?
        "Uninstall the Uber app",
        "Open the door",
        "Go to the kitchen",
        "Play some music on YouTube",
        "Search for cat videos on YouTube",
        "Show me my notifications",
        "Open a new Firefox tab",
        "Go to ebay.com, and select the first entry",
        "What is the speed of a bicycle?Search for hotels in Washington DC",
        "What is love",
    ],
)
def test_near_misses_are_none(text: str) -> None:
    assert parse_instruction(text) is None


def test_non_string_input_is_none() -> None:
    assert parse_instruction(None) is None  # type: ignore[arg-type]


def test_key_terms_are_words_of_the_query_and_discriminate() -> None:
    intent = parse_instruction("What's the weather like inToronto?")
    assert intent is not None and intent.family == "web_search"
    terms = intent.slots["key_terms"].split()
    assert "weather" in terms and "toronto" in terms
    assert all(t == t.lower() and t in query_terms(intent.slots["query"]) for t in terms)
    assert key_terms_match("toronto weather today", intent.slots["key_terms"])
    assert not key_terms_match("weather in montreal", intent.slots["key_terms"])
    assert not key_terms_match("toronto hotels", intent.slots["key_terms"])
    price = parse_instruction("What is the price of a 12' ladder at Lowe's?")
    assert price is not None
    assert key_terms_match("Lowes 12 ft ladders price", price.slots["key_terms"])
    assert not key_terms_match("12 ft ladder home depot", price.slots["key_terms"])


def test_new_entities_in_known_phrasings() -> None:
    a = parse_instruction("Play the new Xylophonic Dreams video on YouTube")
    assert a == Intent("youtube_play", {"channel": "Xylophonic Dreams", "kind": "new"})
    b = parse_instruction("Check the settings for the Zorbleflux app")
    assert b == Intent("app_settings", {"app": "Zorbleflux"})
    c = parse_instruction("What's the news in Atlantis?")
    assert c is not None and c.slots["key_terms"] == "atlantis news"


def test_helpers() -> None:
    assert (
        parse_time("12am") == "00:00" and parse_time("12pm") == "12:00" and parse_time("6:05 p.m.") == "18:05"
    )
    assert parse_time("18:30") == "18:30" and parse_time("7") is None and parse_time("13pm") is None
    assert canonical_app("the chrome app") == "Chrome" and canonical_app("Spotify") == "Spotify"
    assert (
        canonical_shop_site("www.BestBuy.com/") == "bestbuy.com" and canonical_shop_site("amazon.com") is None
    )


def test_parser_is_fast_and_deterministic() -> None:
    texts = [c[0] for c in CASES] * 20
    t0 = time.perf_counter()
    first = [parse_instruction(t) for t in texts]
    per_line = (time.perf_counter() - t0) / len(texts)
    assert per_line < 2e-3, f"{per_line * 1e6:.0f} µs per line"
    assert first == [parse_instruction(t) for t in texts]


@pytest.mark.skipif(not AITW.is_dir(), reason="AitW reference lines not present (/work/shared/aitw)")
@pytest.mark.parametrize("subset", ["general", "webshop"])
def test_parse_coverage_on_real_aitw_lines(subset: str) -> None:
    lines: list[str] = []
    for split in ("train", "test"):
        lines += [s for s in (AITW / f"{subset}_{split}.txt").read_text().splitlines() if s.strip()]
    intents = [parse_instruction(s) for s in lines]
    failed = sorted({s for s, i in zip(lines, intents) if i is None})
    rate = 1 - sum(i is None for i in intents) / len(lines)
    assert rate >= 0.98, f"{subset}: {rate:.1%} parsed; failing: {failed}"
    for s, i in zip(lines, intents):
        if i is not None and subset == "webshop":
            assert i.taskset == "webshop", s
        if i is not None and "key_terms" in i.slots:
            assert i.slots["key_terms"] and key_terms_match(i.slots["query"], i.slots["key_terms"]), s
