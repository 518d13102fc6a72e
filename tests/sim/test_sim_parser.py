"""The instruction parser: every phrasing family, typos, politeness, near-misses with reasons, key terms,
the web-search fallback for questions, real-line coverage."""

from __future__ import annotations

import time

import pytest

from digirl.sim.intents import FAMILIES, Intent
from digirl.sim.tasks.parser import (
    canonical_app,
    canonical_shop_site,
    explain_instruction,
    key_terms_match,
    parse_instruction,
    parse_time,
    query_terms,
)
from tests.sim.conftest import aitw_dir

AITW = aitw_dir()

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
    # phone families (written for this test, not taken from the held-out set)
    ("Switch off Bluetooth", "toggle_setting", {"setting": "bluetooth", "state": "off"}),
    ("Put the phone in flight mode", "toggle_setting", {"setting": "airplane_mode", "state": "on"}),
    ("Toggle dark theme", "toggle_setting", {"setting": "dark_mode", "state": "toggle"}),
    ("Set screen brightness to 70%", "set_brightness", {"level": "70"}),
    ("Turn the volume all the way down", "set_volume", {"level": "0"}),
    ("Show me the sound settings", "settings_page", {"page": "sound"}),
    ("Start a 20 minute timer", "start_timer", {"seconds": "1200"}),
    ("Time my run", "start_stopwatch", {}),
    ("Remove the alarm at 5:15am", "delete_alarm", {"time": "05:15"}),
    ("Switch off the 9pm alarm", "disable_alarm", {"time": "21:00"}),
    ("Give Uncle Joe a call", "make_call", {"contact": "Uncle Joe"}),
    ("Send a message to Priya saying the car is ready", "send_message", {"contact": "Priya", "body": "the car is ready"}),
    ("Add Kenji to my contacts with number 555 010 2233", "add_contact", {"name": "Kenji", "number": "5550102233"}),
    ("Find Rosa in my contacts", "view_contact", {"name": "Rosa"}),
    ("Schedule a haircut next Tuesday at 11am", "create_event", {"title": "Haircut", "date": "2024-06-11", "time": "11:00"}),
    ("Record a short video", "take_photo", {"mode": "video"}),
    ("Show me my most recent photo", "view_photo", {"query": ""}),
    ("Put on Take On Me on YouTube", "youtube_video", {"query": "Take On Me"}),
    ("Subscribe to the NASA channel", "youtube_subscribe", {"channel": "NASA"}),
    ("Uninstall the Hulu app", "uninstall_app", {"app": "Hulu"}),
    ("Update the Slack app", "update_app", {"app": "Slack"}),
    ("Close this tab", "close_tabs", {"scope": "current"}),
    ("Add github.com to my bookmarks", "bookmark_site", {"site": "github.com"}),
    ("Show my Chrome downloads", "browser_page", {"page": "downloads"}),
    ("Write an email to li.wei@example.org saying the invoice is attached", "send_email", {"to": "li.wei@example.org"}),
    ("Pull down the notification shade", "show_notifications", {}),
    ("Dismiss all my notifications", "clear_notifications", {}),
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
    "text,why",
    [
        ("", "empty"),
        ("   ", "empty"),
        ("Set an alarm for 25pm", "not a time"),
        ("Set an alarm for 3", "not a time"),  # a nap or the night? (5–11 read as the morning)
        ("Open the door", "no task family"),
        ("Go to the kitchen", "no task family"),
        ("Open a new Firefox tab", "no task family"),
        ("Go to ebay.com, and select the first entry", "no task family"),
        ("What is the speed of a bicycle?Search for hotels in Washington DC", "two requests"),
        ("Turn on the living room lights", "not a setting"),
        ("Uninstall Chrome", "system app"),
        ("Call", "names no contact"),
        ("Mow the lawn", "no task family"),
        ("qwrtzpsdfg", "unreadable"),
    ],
)
def test_unplaceable_lines_are_rejected_with_a_reason(text: str, why: str) -> None:
    found = explain_instruction(text)
    assert found.intent is None and parse_instruction(text) is None
    assert why in found.reason, found.reason


@pytest.mark.parametrize(
    "text,family,slots",
    [
        ("Take a selfie", "take_photo", {"mode": "selfie"}),
        ("Send a text message to Mom", "send_message", {"contact": "Mom", "body": ""}),
        ("Call my mom", "make_call", {"contact": "Mom"}),
        ("Turn on wifi", "toggle_setting", {"setting": "wifi", "state": "on"}),
        ("Set a timer for 5 minutes", "start_timer", {"seconds": "300"}),
        ("Uninstall the Uber app", "uninstall_app", {"app": "Uber"}),
        ("Play some music on YouTube", "youtube_video", {"query": "music", "action": "play"}),
        ("Search for cat videos on YouTube", "youtube_video", {"query": "cat", "action": "search"}),
        ("Show me my notifications", "show_notifications", {}),
        ("What is love", "web_search", {"key_terms": "love"}),
    ],
)
def test_former_near_misses_now_have_families(text: str, family: str, slots: dict[str, str]) -> None:
    intent = parse_instruction(text)
    assert intent is not None and intent.family == family, (text, intent)
    assert all(intent.slots.get(k) == v for k, v in slots.items()), intent


@pytest.mark.parametrize(
    "text,key_terms",
    [
        ("Who won the World Cup in 2018?", "world cup 2018"),
        ("define 'ubiquitous'", "ubiquitous"),
        ('Translate "good morning" into Spanish', "good morning spanish"),
        ("What is 15% of 80?", "15% 80"),
        ("How do I make lasagna?", "lasagna"),
        ("Tell me about the Great Wall of China", "great wall china"),
        ("news today", "news"),
    ],
)
def test_questions_become_web_searches_with_their_key_words(text: str, key_terms: str) -> None:
    found = explain_instruction(text)
    assert found.intent is not None and found.intent.family == "web_search" and found.how == "question"
    assert found.intent.slots["key_terms"] == key_terms


@pytest.mark.parametrize(
    "text,family,slots",
    [
        ("Could you please turn wifi off for me, thanks", "toggle_setting", {"setting": "wifi", "state": "off"}),
        ("Hey Google, call dad please", "make_call", {"contact": "Dad"}),
        ("TURN ON BLUETOOTH!!", "toggle_setting", {"setting": "bluetooth", "state": "on"}),
        ("Turn of the flashlight", "toggle_setting", {"setting": "flashlight", "state": "off"}),
        ("set an alarn for 6am", "set_alarm", {"time": "06:00"}),
        ("Opne the calender app", "open_app", {"app": "Calendar"}),
        ("I want to install the Notion app", "install_app", {"app": "Notion"}),
    ],
)
def test_politeness_typos_and_shouting(text: str, family: str, slots: dict[str, str]) -> None:
    intent = parse_instruction(text)
    assert intent is not None and intent.family == family, (text, intent)
    assert all(intent.slots.get(k) == v for k, v in slots.items()), intent


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
    assert parse_time("12am") == "00:00" and parse_time("12pm") == "12:00" and parse_time("6:05 p.m.") == "18:05"
    assert parse_time("18:30") == "18:30" and parse_time("7") is None and parse_time("13pm") is None
    assert canonical_app("the chrome app") == "Chrome" and canonical_app("Spotify") == "Spotify"
    assert canonical_shop_site("www.BestBuy.com/") == "bestbuy.com" and canonical_shop_site("amazon.com") == "amazon.com"
    assert canonical_shop_site("reddit.com") is None


def test_parser_is_fast_and_deterministic() -> None:
    texts = [c[0] for c in CASES] * 20
    t0 = time.perf_counter()
    first = [parse_instruction(t) for t in texts]
    per_line = (time.perf_counter() - t0) / len(texts)
    assert per_line < 2e-3, f"{per_line * 1e6:.0f} µs per line"
    assert first == [parse_instruction(t) for t in texts]


@pytest.mark.skipif(AITW is None, reason="AitW reference lines not present (../shared/aitw or $DIGIRL_AITW_DIR)")
@pytest.mark.parametrize("subset", ["general", "webshop"])
def test_parse_coverage_on_real_aitw_lines(subset: str) -> None:
    assert AITW is not None
    lines: list[str] = []
    for split in ("train", "test"):
        lines += [s for s in (AITW / f"{subset}_{split}.txt").read_text().splitlines() if s.strip()]
    intents = [parse_instruction(s) for s in lines]
    failed = sorted({s for s, i in zip(lines, intents) if i is None})
    rate = 1 - sum(i is None for i in intents) / len(lines)
    assert rate >= 0.995, f"{subset}: {rate:.1%} parsed; failing: {failed}"
    for s, i in zip(lines, intents):
        if i is not None and subset == "webshop":
            assert i.taskset == "webshop", s
        if i is not None and "key_terms" in i.slots:
            assert i.slots["key_terms"] and key_terms_match(i.slots["query"], i.slots["key_terms"]), s
