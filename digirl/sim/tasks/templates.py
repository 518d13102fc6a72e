"""Phrasing templates of the shipped task sets: phrasing families (groups) with ``{pool}`` slots
drawn from :mod:`.entities`, their AitW-like weights, and held-out test phrasings.

``general`` and ``webshop`` mirror DigiRL's AitW task files; ``phone`` poses the on-device families
(settings, clock, calls, messages, contacts, calendar, camera, photos, YouTube, Play Store, Chrome,
mail, notifications) with the same train/test conventions.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GENERAL_GROUPS", "PHONE_GROUPS", "SHOP_SITES_ORDER", "Group", "render_slot"]


@dataclass(frozen=True)
class Group:
    """One phrasing family: templates with ``{pool}`` slots, a family and an AitW-like weight."""

    name: str
    family: str
    weight: int
    templates: tuple[str, ...]
    test_templates: tuple[str, ...] = ()


# Weights are line counts per phrasing family in a 545-line General train set (AitW-like mix).
GENERAL_GROUPS: tuple[Group, ...] = (
    Group("news_country", "web_search", 40, ("What's the news in {country}?",)),
    Group(
        "news_topic",
        "web_search",
        12,
        ("What's the latest news in {news_topic}?", "What's the latest {news_topic} news?"),
    ),
    Group("news_when", "web_search", 7, ("What's the news {news_when}?",)),
    Group("news_subject", "web_search", 5, ("What's the news about {news_subject}?",)),
    Group(
        "flights",
        "web_search",
        37,
        ("Search for flights from {world_city} to {world_city2}",),
        ("Find flights from {world_city} to {world_city2}",),
    ),
    Group(
        "price",
        "web_search",
        34,
        (
            "How much does the {product} cost?",
            "What's the price of the {product}?",
            "What's the price of the {product} on eBay?",
            "What is the price of a {hardware_item} at {home_store}?",
            "How much does a {hardware_item} cost at {home_store}?",
        ),
    ),
    Group(
        "restaurant_city",
        "web_search",
        20,
        ("What's a good restaurant in {us_city}?",),
        ("Find a good restaurant in {us_city}",),
    ),
    Group(
        "restaurant_cuisine",
        "web_search",
        12,
        (
            "Search for good {cuisine} restaurants",
            "Search for the best {cuisine} restaurants",
            "Search for top rated {cuisine} restaurants",
        ),
    ),
    Group("wallpapers", "web_search", 5, ("Show me some nice {wallpaper_kind} for my {device}",)),
    Group("buy", "web_search", 10, ("Where can I buy a nice {outdoor_item}?",)),
    Group(
        "cosmetics",
        "web_search",
        12,
        ("Search for a new {cosmetic}", "Search for a new {cosmetic} on Sephora"),
    ),
    Group("best_selling", "web_search", 2, ("What are the best selling {appliance} at {home_store}?",)),
    Group("new_products", "web_search", 2, ("What are the new products by {brand}?",)),
    Group("look_like", "web_search", 2, ("What does the {product} look like?",)),
    Group(
        "capital",
        "web_search",
        30,
        ("What is the capital of {country}?", "Google the capital of {country}"),
        ("What's the capital city of {country}?",),
    ),
    Group("rent", "web_search", 29, ("How much does a {bedrooms} bedroom apartment rent for in {us_city}?",)),
    Group("hotels", "web_search", 23, ("Search for hotels in {world_city}",), ("Find hotels in {world_city}",)),
    Group("menu", "web_search", 19, ("What's on the menu at {restaurant_chain}?",)),
    Group(
        "weather",
        "web_search",
        19,
        ("What's the weather like in {world_city}?",),
        ("What's the weather forecast for {world_city}?",),
    ),
    Group("time", "web_search", 14, ("What time is it in {world_city}?", "What's the time in {world_city}?")),
    Group("speed", "web_search", 12, ("What is the speed of {moving_thing}?",), ("How fast is {moving_thing}?",)),
    Group("exchange", "web_search", 11, ("What's the US dollar exchange rate against the {currency}?",)),
    Group("size", "web_search", 9, ("How big is {big_thing}?",)),
    Group("person", "web_search", 4, ("Who is the {role_place}?",)),
    Group(
        "youtube_new",
        "youtube_play",
        14,
        ("Play the new {artist} video on YouTube",),
        ("Watch the new {artist} video on YouTube",),
    ),
    Group(
        "youtube_latest",
        "youtube_play",
        12,
        ("Play the latest video from {channel}", "What's the latest video from {channel}?"),
    ),
    Group(
        "app_settings",
        "app_settings",
        21,
        ("Check the settings for the {app} app",),
        ("Open the settings for the {app} app",),
    ),
    Group(
        "directions",
        "maps_directions",
        21,
        ("How do I get to the nearest {store_chain}?",),
        ("Give me directions to the nearest {store_chain}",),
    ),
    Group("install", "install_app", 20, ("Install the {app} app",), ("Download the {app} app",)),
    Group("open_app", "open_app", 20, ("Open the {system_app}", "Open the {system_app} app")),
    Group(
        "maps_search",
        "maps_search",
        19,
        (
            "Find {maps_place} on Maps",
            "Search for {maps_place} on Google Maps",
            "Search for top rated {cuisine} restaurants on Maps",
        ),
    ),
    Group("browser_tab", "browser_tab", 17, ("Open a new {tab_phrase}",)),
    Group("alarm", "set_alarm", 15, ("Set an alarm for {alarm_time}",), ("Wake me up at {alarm_time}",)),
    Group("open_site", "open_site", 8, ("Go to {site}", "Open {site}"), ("Visit {site}",)),
    Group(
        "email",
        "check_email",
        4,
        ("Check my email", "Check my gmail inbox", "Check my inbox", "Check my email inbox"),
    ),
    Group(
        "notifications",
        "app_notifications",
        4,
        (
            "Turn on notifications for the {app} app",
            "Turn off notifications for the {app} app",
            "Toggle notifications for the {app} app",
        ),
    ),
)

SHOP_SITES_ORDER = ("costco.com", "bestbuy.com", "target.com", "walmart.com", "newegg.com", "ebay.com")
_SHOP_TRIPLE = (
    "Go to {site}",
    "Go to {site}, search for {q}",
    "Go to {site}, search for {q}, and select the first entry",
)
# Held-out Web Shopping phrasings (test split only).
_SHOP_TRIPLE_TEST = (
    "Open {site}",
    "Go to {site} and search for {q}",
    "Go to {site}, search for {q}, and click on the first result",
)


# Weights are line counts per phrasing family in the 450-line phone train set.
PHONE_GROUPS: tuple[Group, ...] = (
    Group(
        "toggle_on",
        "toggle_setting",
        26,
        ("Turn on {setting_on}", "Enable {setting_on}", "Switch on {setting_on}"),
        ("Can you turn {setting_on} on?", "Please enable {setting_on}"),
    ),
    Group(
        "toggle_off",
        "toggle_setting",
        26,
        ("Turn off {setting_off}", "Disable {setting_off}", "Switch off {setting_off}"),
        ("Turn {setting_off} off please", "Could you disable {setting_off}?"),
    ),
    Group("toggle_flip", "toggle_setting", 8, ("Toggle {setting_on}",), ("Flip {setting_on}",)),
    Group(
        "brightness",
        "set_brightness",
        15,
        ("Set the brightness to {level}", "Turn the brightness {level_dir}", "Set screen brightness to {level}"),
        ("Make the screen brighter", "Dim the screen", "Change the brightness to {level}"),
    ),
    Group(
        "volume",
        "set_volume",
        15,
        ("Set the volume to {level}", "Turn the volume {level_dir}", "Set media volume to {level}"),
        ("Turn {level_dir} the volume", "Mute the volume", "Change the volume to {level}"),
    ),
    Group(
        "settings_page",
        "settings_page",
        25,
        ("Open {settings_page} settings", "Go to {settings_page} settings", "Show me the {settings_page} settings"),
        ("Take me to {settings_page} settings", "Check my battery level", "How much storage is left on my phone?"),
    ),
    Group(
        "timer",
        "start_timer",
        20,
        ("Set a timer for {timer_duration}", "Start a timer for {timer_duration}"),
        ("Timer for {timer_duration}", "Count down {timer_duration}"),
    ),
    Group("stopwatch", "start_stopwatch", 8, ("{stopwatch_phrase}",)),
    Group(
        "delete_alarm",
        "delete_alarm",
        15,
        ("Delete the {alarm_time} alarm", "Remove my alarm for {alarm_time}"),
        ("Cancel my {alarm_time} alarm", "Get rid of the alarm at {alarm_time}"),
    ),
    Group(
        "disable_alarm",
        "disable_alarm",
        15,
        ("Turn off my {alarm_time} alarm", "Disable the alarm at {alarm_time}"),
        ("Switch off the {alarm_time} alarm", "Turn off all my alarms"),
    ),
    Group(
        "call",
        "make_call",
        25,
        ("Call {contact}", "Dial {phone_number}", "Phone {contact}"),
        ("Give {contact} a call", "Ring {contact}", "Make a call to {phone_number}"),
    ),
    Group(
        "text",
        "send_message",
        30,
        ("Text {contact} saying {message_body}", "Send a message to {contact} saying {message_body}"),
        ("Message {contact}: {message_body}", "Send a text to {phone_number} saying {message_body}"),
    ),
    Group(
        "add_contact",
        "add_contact",
        15,
        ("Add a new contact named {contact} with number {phone_number}", "Save {phone_number} as {contact}"),
        ("Create a contact for {contact}", "Add {contact} to my contacts"),
    ),
    Group(
        "view_contact",
        "view_contact",
        15,
        ("Show me {contact}'s contact info", "What's {contact}'s phone number?"),
        ("Find {contact} in my contacts", "Look up {contact} in contacts"),
    ),
    Group(
        "event",
        "create_event",
        30,
        ("Add {event_title} to my calendar {event_when}", "Create a calendar event called {event_title} {event_when}"),
        ("Schedule {event_title} {event_when}", "Put {event_title} on my calendar {event_when}"),
    ),
    Group("photo", "take_photo", 15, ("{photo_phrase}",)),
    Group(
        "view_photo",
        "view_photo",
        12,
        ("{latest_photo_phrase}", "Show me my photos of {photo_subject}"),
        ("Find the pictures of {photo_subject} in my gallery",),
    ),
    Group(
        "youtube_video",
        "youtube_video",
        25,
        ("Play {video_query} on YouTube", "Watch {video_query} on YouTube"),
        ("Search YouTube for {video_query} and play it", "On YouTube, play {video_query}"),
    ),
    Group(
        "subscribe",
        "youtube_subscribe",
        15,
        ("Subscribe to {channel} on YouTube", "Subscribe to the {channel} channel"),
        ("Follow {channel} on YouTube",),
    ),
    Group(
        "uninstall",
        "uninstall_app",
        15,
        ("Uninstall {app}", "Uninstall the {app} app"),
        ("Remove the {app} app from my phone", "Delete the {app} app"),
    ),
    Group(
        "update",
        "update_app",
        15,
        ("Update {app}", "Update the {app} app", "Update all my apps"),
        ("Check for updates for {app} in the Play Store",),
    ),
    Group("close_tabs", "close_tabs", 10, ("{tabs_phrase}",)),
    Group(
        "bookmark",
        "bookmark_site",
        12,
        ("Bookmark {site}", "Add {site} to my bookmarks"),
        ("Save {site} as a bookmark in Chrome",),
    ),
    Group("browser_page", "browser_page", 8, ("{browser_page_phrase}",)),
    Group(
        "email",
        "send_email",
        20,
        ("Send an email to {email_address} about {email_topic}", "Email {contact} about {email_topic}"),
        ("Write an email to {email_address} saying {message_body}",),
    ),
    Group("show_notifications", "show_notifications", 8, ("{shade_phrase}",)),
    Group("clear_notifications", "clear_notifications", 7, ("{clear_phrase}",)),
)


# --------------------------------------------------------------------------- rendering
def _article(x: str) -> str:
    return ("an " if x[:1].lower() in "aeiou" else "a ") + x


def _alarm_text(hhmm: str) -> str:
    h, m = (int(v) for v in hhmm.split(":"))
    h12 = h % 12 or 12
    ampm = "am" if h < 12 else "pm"
    return f"{h12}{ampm}" if m == 0 else f"{h12}:{m:02d}{ampm}"


def render_slot(pool: str, value: str) -> str:
    """How an entity of ``pool`` is written in an instruction."""
    if pool == "moving_thing":
        return _article(value)
    if pool == "alarm_time":
        return _alarm_text(value)
    if pool == "system_app":
        return value.split("=")[0]
    if pool == "role_place":
        role, place = value.split("=")
        return f"{role} of {place}"
    return value
