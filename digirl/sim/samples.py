"""A few hand-written tasks per family, used when the task-set module is not installed
(``digirl.sim.tasks``) and by the simulator's own tests. The real task sets (AitW General and Web
Shopping phrasing) come from :func:`digirl.sim.tasks.tasksets.load_taskset`."""

from __future__ import annotations

from digirl.core.types import TaskSpec
from digirl.sim.intents import HORIZONS, Intent

__all__ = ["SAMPLE_INTENTS", "sample_tasks", "spec_for"]

SAMPLE_INTENTS: tuple[tuple[str, Intent], ...] = (
    (
        "What's the weather like in Paris?",
        Intent("web_search", {"query": "weather in paris", "key_terms": "weather paris", "answer": "weather"}),
    ),
    (
        "What is the capital of Peru?",
        Intent("web_search", {"query": "capital of peru", "key_terms": "capital peru", "answer": "capital"}),
    ),
    (
        "Search for hotels in Chicago",
        Intent("web_search", {"query": "hotels in chicago", "key_terms": "hotels chicago", "answer": "hotels"}),
    ),
    ("Open the calculator app", Intent("open_app", {"app": "calculator"})),
    ("Open Instagram", Intent("open_app", {"app": "Instagram"})),
    ("Open the settings for Spotify", Intent("app_settings", {"app": "Spotify"})),
    ("Turn off notifications for YouTube", Intent("app_notifications", {"app": "YouTube", "state": "off"})),
    ("Install the Duolingo app", Intent("install_app", {"app": "Duolingo"})),
    ("Play the latest video by Taylor Swift", Intent("youtube_play", {"channel": "Taylor Swift", "kind": "latest"})),
    ("Search for coffee shops in Seattle on Google Maps", Intent("maps_search", {"query": "coffee shops in seattle"})),
    ("Get directions to the nearest gas station", Intent("maps_directions", {"destination": "nearest gas station"})),
    ("Set an alarm for 7:30 pm", Intent("set_alarm", {"time": "19:30"})),
    ("Open a new incognito tab in Chrome", Intent("browser_tab", {"mode": "incognito_tab"})),
    ("Check my email", Intent("check_email", {})),
    ("Go to reddit.com", Intent("open_site", {"site": "reddit.com"})),
    ("Go to newegg.com", Intent("shop_goto", {"site": "newegg.com"})),
    ("Go to costco.com, search for 'bose headphones'", Intent("shop_search", {"site": "costco.com", "query": "bose headphones"})),
    (
        "Go to bestbuy.com, search for 'usb-c cable', and select the first entry",
        Intent("shop_select", {"site": "bestbuy.com", "query": "usb-c cable"}),
    ),
    (
        "Go to walmart.com, search for 'razer blade', and select the first entry",
        Intent("shop_select", {"site": "walmart.com", "query": "razer blade"}),
    ),
    ("Go to ebay.com, search for 'lego star wars'", Intent("shop_search", {"site": "ebay.com", "query": "lego star wars"})),
    (
        "Go to target.com, search for 'coffee maker', and select the first entry",
        Intent("shop_select", {"site": "target.com", "query": "coffee maker"}),
    ),
    # Phone families (the ``phone`` task set).
    ("Turn off Wi-Fi", Intent("toggle_setting", {"setting": "wifi", "state": "off"})),
    ("Turn on the flashlight", Intent("toggle_setting", {"setting": "flashlight", "state": "on"})),
    ("Set the brightness to 30%", Intent("set_brightness", {"level": "30"})),
    ("Turn the volume up", Intent("set_volume", {"level": "up"})),
    ("How much storage is left?", Intent("settings_page", {"page": "storage"})),
    ("Set a timer for 5 minutes", Intent("start_timer", {"seconds": "300"})),
    ("Start the stopwatch", Intent("start_stopwatch", {})),
    ("Delete my 7am alarm", Intent("delete_alarm", {"time": "07:00"})),
    ("Turn off all my alarms", Intent("disable_alarm", {"time": "all"})),
    ("Call Mom", Intent("make_call", {"contact": "Mom"})),
    ("Text Alex Kim saying see you at 7", Intent("send_message", {"contact": "Alex Kim", "body": "see you at 7"})),
    ("Save 555-222-3333 as Ben Ito", Intent("add_contact", {"name": "Ben Ito", "number": "5552223333"})),
    ("What's Julia's phone number?", Intent("view_contact", {"name": "Julia"})),
    (
        "Add a dentist appointment to my calendar on Friday at 3pm",
        Intent("create_event", {"title": "Dentist appointment", "date": "2024-06-07", "time": "15:00"}),
    ),
    ("Take a selfie", Intent("take_photo", {"mode": "selfie"})),
    ("Show me my photos from the beach", Intent("view_photo", {"query": "beach"})),
    (
        "Play Bohemian Rhapsody on YouTube",
        Intent("youtube_video", {"query": "Bohemian Rhapsody", "key_terms": "bohemian rhapsody", "action": "play"}),
    ),
    ("Subscribe to Veritasium on YouTube", Intent("youtube_subscribe", {"channel": "Veritasium"})),
    ("Uninstall TikTok", Intent("uninstall_app", {"app": "TikTok"})),
    ("Update all my apps", Intent("update_app", {"app": "all"})),
    ("Close all tabs in Chrome", Intent("close_tabs", {"scope": "all"})),
    ("Bookmark wikipedia.org", Intent("bookmark_site", {"site": "wikipedia.org"})),
    ("Open my browsing history", Intent("browser_page", {"page": "history"})),
    (
        "Email anna@example.com about the meeting tomorrow",
        Intent("send_email", {"to": "anna@example.com", "subject": "the meeting tomorrow", "body": ""}),
    ),
    ("Show me my notifications", Intent("show_notifications", {})),
    ("Clear all notifications", Intent("clear_notifications", {})),
)


def spec_for(instruction: str, intent: Intent, *, split: str = "", task_id: str = "") -> TaskSpec:
    """A TaskSpec for ``intent`` with the task-set conventions (horizons of :data:`~digirl.sim.intents.HORIZONS`)."""
    ts = intent.taskset
    return TaskSpec(
        instruction=instruction,
        task_id=task_id or f"sim-sample-{intent.family}",
        family=intent.family,
        split=split,
        horizon=HORIZONS[ts],
        env_id=f"digirl/sim-{ts}-v0",
        params={"intent": intent.to_dict()},
    )


def sample_tasks(taskset: str = "general") -> list[TaskSpec]:
    """The sample tasks of one task set ("general", "webshop" or "phone")."""
    return [
        spec_for(text, it, task_id=f"sim-sample-{i:02d}") for i, (text, it) in enumerate(SAMPLE_INTENTS) if it.taskset == taskset
    ]
