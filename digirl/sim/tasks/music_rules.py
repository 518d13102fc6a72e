"""Music phrasings (issue 42): playing something in Music or a music service ("play some jazz on
Spotify", "play my Discover Weekly playlist", "play taylor swift", "play X by Y") and the player's
controls ("pause the music", "skip this song", "shuffle my liked songs"). Split from :mod:`.newer_rules`,
which imports this module where the section stood, so the rules keep their place in the tables.
"""

from __future__ import annotations

import functools
import re

from digirl.sim.content import title_case
from digirl.sim.intents import Intent
from digirl.sim.tasks.app_rules import APPS_EARLY, APPS_LATE, unquote

__all__ = ["WHAT_PLAYS", "music_request"]

_MUSIC_APP = (
    "(?P<app>spotify|pandora|soundcloud|apple~music|amazon~music|deezer|tidal|youtube~music|(?:the~)?music(?:~app|~player)?)"
)


def music_request(app: str, said: str) -> Intent:
    """``play_music`` for "play <said> on <app>": "some jazz" → "jazz", "my Discover Weekly" →
    "Discover Weekly", "music" / "a song" → anything."""
    q = re.sub(r"^(?:(?:some|my|the|a|an)\s+)+", "", unquote(said).strip(), flags=re.I)
    q = re.sub(r"\s+(?:music|songs?|tunes|playlist)$", "", q, flags=re.I)
    name = re.sub(r"^the\s+|\s+(?:app|player)$", "", app.strip(), flags=re.I)
    name = "Music" if name.lower() == "music" else title_case(name)
    if re.fullmatch(r"next(?:\s+(?:song|track|tune))?", q, re.I):  # "play the next song on spotify"
        return Intent("music_control", {"app": name, "action": "skip"})
    if q.lower() in ("music", "song", "songs", "something", "tunes", "anything", "some", ""):
        q = ""
    return Intent("play_music", {"app": name, "query": q})


_SHUFFLED = "(?:on~shuffle(?:~mode)?|shuffled|in~shuffle(?:~mode)?|with~shuffle(?:~on)?)"
_IN_APP = f"(?:on|in|using|with|from|through)~{_MUSIC_APP}"


@APPS_EARLY.rule(
    f"(?:open|launch|go~to)~{_MUSIC_APP}~and~(?:play|put~on|listen~to|start)~{{q}}~{_SHUFFLED}",
    f"(?:play|put~on|listen~to|start)~{{q}}~{_SHUFFLED}~{_IN_APP}",
    f"(?:play|put~on|listen~to|start)~{{q}}~{_IN_APP}~{_SHUFFLED}",
    f"(?:play|put~on|listen~to|start)~{{q}}~{_SHUFFLED}",
)
def _play_shuffled(g: dict[str, str]) -> Intent | None:
    """ "play my liked songs on shuffle", "open spotify and play my X playlist on shuffle": that list played,
    then shuffle turned on (without this rule "on shuffle" ended up inside the query)."""
    from digirl.sim.families.compound import compound_intent
    from digirl.sim.tasks.rules import reparse

    app = f" on {g['app']}" if g.get("app") else ""
    play = reparse(f"play {g['q']}{app}")
    if play is None or play.family != "play_music":
        said = reparse(f"shuffle {g['q']}{app}")  # "play my liked songs on shuffle": as "shuffle my liked songs"
        return said if said is not None and said.family == "compound" else None
    return compound_intent([play, Intent("music_control", {"app": play.get("app"), "action": "shuffle"})])


@APPS_EARLY.rule(
    f"(?:play|put~on|listen~to|start|shuffle|stream)~{{q}}~(?:on|in|using|with|from|through)~{_MUSIC_APP}",
    f"(?:open|launch|go~to)~{_MUSIC_APP}~and~(?:play|put~on|listen~to|shuffle)~{{q}}",
)
def _play_music(g: dict[str, str]) -> Intent | None:
    """ "play some jazz on Spotify", "open spotify and play my discover weekly"."""
    return music_request(g["app"], g["q"])


@APPS_EARLY.rule("(?:play|put~on)~(?:some~)?(?P<q>[\\w' -]+?)~music", "(?:play|put~on)~(?P<q>music|some~music)")
def _play_some_music(g: dict[str, str]) -> Intent | None:
    """ "play some relaxing music", "play music": the Music app."""
    return music_request("Music", g["q"])


@APPS_EARLY.rule("(?:play|put~on)~some~(?P<q>(?!music$)[\\w' -]+)")
def _play_some(g: dict[str, str]) -> Intent | None:
    """ "play some taylor swift", "put on some jazz": the Music app (a video says "video" or YouTube)."""
    if re.search(r"\b(?:videos?|youtube|podcasts?|games?)\b", g["q"], re.I):
        return None
    return music_request("Music", g["q"])


@APPS_EARLY.rule(
    "(?:play|put~on|start|shuffle|listen~to)~my~(?P<q>(?!music\\b)[\\w' &-]+?)~playlist",
    "(?:play|put~on|listen~to)~(?:the~song~|the~track~)?(?P<q>(?!some~|my~|the~next\\b)[\\w' &-]+?)~by~(?P<by>[\\w' &.-]+)",
)
def _play_mine(g: dict[str, str]) -> Intent | None:
    """ "play my Discover Weekly playlist", "play Bohemian Rhapsody by Queen": the Music app."""
    said = f"{g['q']} {g.get('by') or ''}"
    if re.search(r"\b(?:videos?|youtube|podcasts?|games?|on|in|from|at|via)\b", said, re.I):  # "… by Toto on YouTube"
        return None
    return music_request("Music", said.strip())


#: What "play X" names when it is not music: a game, a video, a show, the radio (then another rule, or none).
_NOT_MUSIC = re.compile(
    r"\b(?:games?|chess|checkers|sudoku|solitaire|wordle|minecraft|roblox|fortnite|candy\s+crush|pok[eé]mon|clash|among\s+us"
    r"|pubg|call\s+of\s+duty|genshin|subway\s+surfers|angry\s+birds|tetris|videos?|youtube|podcasts?|radio|episodes?|movies?"
    r"|shows?|tv|netflix|trailer|clip|cards?|ball|catch|tag|outside|along|dead|fair|it|that|this|them|music)\b",
    re.I,
)


@APPS_LATE.rule(
    "(?:play|put~on|blast)~(?P<q>(?!(?:a|an|the|my|some|me|us|something|anything)\\b)[\\w' &.-]+?)(?:~(?:now|please|pls))?"
)
def _play_artist(g: dict[str, str]) -> Intent | None:
    """ "play taylor swift", "put on Bad Bunny": the Music app plays it (a game, a video or an app is not)."""
    from digirl.sim.tasks.compound_rules import _known_app

    q = g["q"].strip()
    if len(q.split()) > 4 or _NOT_MUSIC.search(q) or _known_app(q):
        return None
    return music_request("Music", q)


_TRACK = "(?:the~|this~|my~)?(?:music|song|track|tune|playback|audio|playlist)"
_ON_APP = f"(?:~(?:on|in)~{_MUSIC_APP})?"


def _control(action: str, g: dict[str, str]) -> Intent:
    """``music_control``; ``app`` empty when none is said (Music, or in a compound the player just used)."""
    app = music_request(g["app"], "").get("app") if g.get("app") else ""
    return Intent("music_control", {"app": app, "action": action})


#: Phrasings of each playback control ("pause the music", "unpause spotify", "skip this song", "play the next track").
_CONTROL_PHRASES = {
    "pause": (f"(?:pause|stop)~{_TRACK}{_ON_APP}", f"pause~{_MUSIC_APP}", "pause~(?:it|playback)"),
    "resume": (
        f"(?:resume|unpause|continue)~{_TRACK}{_ON_APP}",
        f"(?:resume|unpause)~{_MUSIC_APP}",
        "(?:keep~playing|play~the~music~again)",
    ),
    "skip": (
        f"(?:skip|next)~(?:this~|the~)?(?:song|track|tune){_ON_APP}",
        f"(?:play|go~to)~the~next~(?:song|track|tune){_ON_APP}",
        f"skip~(?:to~the~)?next~(?:song|track|tune){_ON_APP}",
    ),
}
for _action, _templates in _CONTROL_PHRASES.items():
    APPS_EARLY.rule(*_templates)(functools.partial(_control, _action))


#: What is already playing, as a shuffle's object ("shuffle it", "shuffle the music").
WHAT_PLAYS = re.compile(r"(?:it|this|that|them|these|(?:the|this)\s+(?:music|songs?|playlist|queue))", re.I)


@APPS_EARLY.rule(
    f"(?:turn~on|enable|switch~on|put~on)~shuffle{_ON_APP}",
    f"shuffle~(?:on|mode~on){_ON_APP}",
    f"shuffle~(?:my~)?(?P<q>[\\w' -]+?){_ON_APP}",
)
def _shuffle(g: dict[str, str]) -> Intent | None:
    """ "turn on shuffle", "shuffle my liked songs" (that list played, shuffled)."""
    from digirl.sim.families.compound import compound_intent

    shuffle = _control("shuffle", g)
    if not g.get("q") or WHAT_PLAYS.fullmatch(g["q"].strip()):  # "shuffle it": what is playing, not a song called "it"
        return shuffle
    play = music_request(g.get("app") or "Music", g["q"])
    return compound_intent([play, Intent("music_control", {**shuffle.slots, "app": play.get("app")})])
