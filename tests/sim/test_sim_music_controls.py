"""Playback controls of the music player (issue 42, session 24): ``music_control`` (pause, resume, skip,
shuffle) parsed from everyday phrasings and solved by the expert, each predicate wanting exactly the
state its control leaves; "play some X" plays X in Music."""

from __future__ import annotations

from typing import Any

import pytest

from digirl.core.actions import Action
from digirl.core.errors import UnsupportedInstructionError
from digirl.sim.env import SimEnv
from digirl.sim.intents import Intent
from digirl.sim.samples import spec_for
from tests.sim.conftest import assert_expert_solves, plan_steps


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        ("pause the music", [("music_control", {"app": "", "action": "pause"})]),
        ("stop the song on spotify", [("music_control", {"app": "Spotify", "action": "pause"})]),
        ("resume the music", [("music_control", {"app": "", "action": "resume"})]),
        ("skip this song", [("music_control", {"app": "", "action": "skip"})]),
        ("play the next song on spotify", [("music_control", {"app": "Spotify", "action": "skip"})]),
        ("turn on shuffle", [("music_control", {"app": "", "action": "shuffle"})]),
        (
            "shuffle my liked songs",
            [("play_music", {"app": "Music", "query": "liked"}), ("music_control", {"app": "Music", "action": "shuffle"})],
        ),
        (
            "play Taylor Swift on spotify, then turn on shuffle, then skip to the next song",
            [
                ("play_music", {"app": "Spotify", "query": "Taylor Swift"}),
                ("music_control", {"app": "Spotify", "action": "shuffle"}),
                ("music_control", {"app": "Spotify", "action": "skip"}),
            ],
        ),
        ("put on some jazz", [("play_music", {"app": "Music", "query": "jazz"})]),
        ("play some taylor swift", [("play_music", {"app": "Music", "query": "taylor swift"})]),
        ("play some music", [("play_music", {"app": "Music", "query": ""})]),
        (
            "pause the music and turn on do not disturb",
            [
                ("music_control", {"app": "", "action": "pause"}),
                ("toggle_setting", {"setting": "do_not_disturb", "state": "on"}),
            ],
        ),
    ],
)
def test_music_phrasings_parse_and_the_expert_solves_them(text: str, steps: list[tuple[str, dict[str, str]]]) -> None:
    assert plan_steps(text) == [{"family": f, "slots": s} for f, s in steps]
    assert_expert_solves(text)


def _player(action: str) -> tuple[SimEnv, Any]:
    env = SimEnv(taskset="phone", perturbation=0)
    env.reset(seed=0, options={"task": spec_for("t", Intent("music_control", {"app": "Spotify", "action": action}), task_id="t")})
    return env, env.phone.apps["x.spotify"].player


def _reward(env: SimEnv) -> float:
    _, reward, *_ = env.step(Action.tap(0.05, 0.01))  # the status bar's clock: nothing reacts
    return float(reward)


def test_each_control_counts_only_the_state_it_leaves() -> None:
    env, st = _player("pause")
    assert st.playing and not st.paused  # the request presumes music playing
    st.skip()
    assert _reward(env) == 0.0  # skipping is not pausing
    st.toggle_pause()
    assert _reward(env) > 0

    env, st = _player("resume")
    assert st.paused
    st.skip()  # plays again, but another track
    assert _reward(env) == 0.0
    env, st = _player("resume")
    st.toggle_pause()
    assert _reward(env) > 0

    env, st = _player("skip")
    first = st.playing
    st.toggle_pause()
    st.skip()  # a skip plays on
    assert st.playing != first and not st.paused and _reward(env) > 0

    env, st = _player("shuffle")
    st.toggle_shuffle()
    st.toggle_pause()
    assert _reward(env) == 0.0  # shuffled but paused
    st.toggle_pause()
    assert _reward(env) > 0


def test_a_control_needs_a_known_action_and_a_music_app() -> None:
    with pytest.raises(UnsupportedInstructionError, match="action is one of"):
        _player("rewind")
    env = SimEnv(taskset="phone", perturbation=0)
    with pytest.raises(UnsupportedInstructionError, match="not a music app"):
        env.reset(
            seed=0, options={"task": spec_for("t", Intent("music_control", {"app": "Gmail", "action": "pause"}), task_id="t")}
        )
