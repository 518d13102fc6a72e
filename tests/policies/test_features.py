"""Feature and action encoding of the default policy: a chosen element's tap reads back as that element."""

import numpy as np
import pytest

from digirl.core.actions import Action
from digirl.core.types import Observation, UIElement
from digirl.envs.registry import make
from digirl.policies.features import (
    KINDS,
    FeatureSpec,
    decode_action,
    element_under,
    encode_actions,
    featurize,
    mask_to_text,
    tap_point,
    text_to_mask,
    words,
)

# The element list MiniWoB's click-option page gives (label text elements and their radio buttons,
# whose boxes, margins included, overlap the label's left half).
CLICK_OPTION = (
    UIElement(kind="text", text="Select Pp1d and click Submit.", bounds=(0.0, 0.0, 1.0, 0.238)),
    UIElement(kind="text", text="Eh", bounds=(0.013, 0.281, 0.264, 0.333)),
    UIElement(kind="radio", text="off", bounds=(0.044, 0.262, 0.169, 0.324)),
    UIElement(kind="text", text="Pp1d", bounds=(0.013, 0.367, 0.333, 0.419)),
    UIElement(kind="radio", text="off", bounds=(0.044, 0.348, 0.169, 0.41)),
    UIElement(kind="button", text="Submit", bounds=(0.013, 0.729, 0.609, 0.876)),
)


def test_a_label_whose_centre_lies_on_its_radio_is_tapped_beside_it():
    label = 1
    cx, cy = CLICK_OPTION[label].center
    assert element_under(CLICK_OPTION, cx, cy) == 2  # the centre reads back as the radio button
    x, y = tap_point(CLICK_OPTION, label)
    assert element_under(CLICK_OPTION, x, y) == label
    assert CLICK_OPTION[label].contains(x, y) and not CLICK_OPTION[2].contains(x, y)
    # an element whose centre is free keeps the centre
    assert tap_point(CLICK_OPTION, 5) == CLICK_OPTION[5].center


def test_an_element_covered_by_smaller_ones_falls_back_to_its_centre():
    els = (
        UIElement(kind="container", text="", bounds=(0.0, 0.0, 0.2, 0.2)),
        UIElement(kind="button", text="a", bounds=(0.0, 0.0, 0.2, 0.1)),
        UIElement(kind="button", text="b", bounds=(0.0, 0.1, 0.2, 0.2)),
    )
    assert tap_point(els, 0) == els[0].center


# A search result card as the simulator's shops draw it: a clickable list item whose name, stars and
# price are non-clickable labels on top of it.
RESULT_CARD = (
    UIElement(kind="list_item", text="", bounds=(0.0, 0.29, 1.0, 0.44)),
    UIElement(kind="text", text="JBL Xbox Wireless Controller", bounds=(0.33, 0.30, 0.97, 0.35), clickable=False),
    UIElement(kind="text", text="(5,199)", bounds=(0.33, 0.36, 0.97, 0.38), clickable=False),
    UIElement(kind="text", text="$455.37", bounds=(0.33, 0.39, 0.97, 0.42), clickable=False),
    UIElement(kind="text", text="10:27", bounds=(0.03, 0.0, 0.22, 0.03), clickable=False),
)


def test_a_tap_on_a_label_of_a_clickable_card_names_the_card():
    # wherever the tap lands on the card (its name, stars, price or background), one target
    for label in range(4):
        assert element_under(RESULT_CARD, *RESULT_CARD[label].center) == 0
    # nothing clickable under the point: the smallest element, as before (the clock the expert taps to wait)
    assert element_under(RESULT_CARD, *RESULT_CARD[4].center) == 4
    assert element_under(RESULT_CARD, 0.5, 0.5) is None
    # the card's own tap point reads back as the card; a label that no tap can name keeps its centre
    assert element_under(RESULT_CARD, *tap_point(RESULT_CARD, 0)) == 0
    assert tap_point(RESULT_CARD, 1) == RESULT_CARD[1].center


def test_a_tap_on_a_label_encodes_as_the_card():
    obs = Observation(screenshot=np.zeros((8, 4, 3), np.uint8), instruction="select the first entry", elements=RESULT_CARD)
    spec = FeatureSpec()
    taps = [Action.tap(0.6, 0.37), Action.tap(0.6, 0.32), Action.tap(0.1, 0.4)]  # stars, name, background
    batch = featurize([obs] * len(taps), spec)
    targets = encode_actions(batch, [obs] * len(taps), taps, spec)
    assert list(targets.element) == [0, 0, 0] and targets.valid.all()


def _round_trip(obs, spec):
    """Decode a tap on every element of ``obs`` and encode it back; returns how many were checked."""
    batch = featurize([obs], spec)
    els = batch.elements[0]
    checked = 0
    for e in range(len(els)):
        action = decode_action(KINDS.index("tap_element"), e, 0, np.zeros(1), els, [], spec)
        back = encode_actions(batch, [obs], [action], spec)
        if element_under(els, *tap_point(els, e)) != e:
            continue  # covered entirely by smaller elements: no tap can name it
        assert back.element[0] == e, (obs.instruction, els[e], action)
        checked += 1
    return checked


def test_policy_taps_round_trip_on_simulator_screens():
    spec = FeatureSpec()
    checked = 0
    for env_id in ("digirl/sim-general-v0", "digirl/sim-webshop-v0"):
        env = make(env_id)
        for seed in range(4):
            obs, _ = env.reset(seed=seed)
            for _ in range(6):
                checked += _round_trip(obs, spec)
                action = env.cheat()
                if action is None:
                    break
                obs, _, term, trunc, _ = env.step(action)
                if term or trunc:
                    break
    assert checked > 100


@pytest.mark.parametrize("taskset", ["general", "webshop"])
def test_every_search_query_is_typeable_from_its_instruction(taskset: str) -> None:
    """The default policy types instruction words only: every task's search must succeed with them."""
    from digirl.sim.content import terms_in
    from digirl.sim.predicates import query_terms
    from digirl.sim.tasks.parser import parse_instruction
    from digirl.sim.tasks.tasksets import load_taskset

    spec = FeatureSpec()
    checked, missing = 0, []
    for split in ("train", "test"):
        for task in load_taskset(taskset, split):
            intent = parse_instruction(task.instruction)
            if intent is None or "query" not in intent.slots:
                continue
            ws = words(task.instruction)[: spec.max_instruction_words]
            typed = mask_to_text(text_to_mask(intent.slots["query"], ws), ws)
            checked += 1
            if not terms_in(query_terms(intent), typed):
                missing.append((task.instruction, typed, query_terms(intent)))
    assert checked > 300 and not missing, missing[:5]


def test_a_textless_clickable_row_reads_as_its_labels() -> None:
    from digirl.policies.features import element_texts

    els = (
        UIElement(kind="list_item", text="", bounds=(0.0, 0.3, 1.0, 0.4), clickable=True),
        UIElement(kind="text", text="Apps", bounds=(0.2, 0.31, 0.9, 0.35), clickable=False),
        UIElement(kind="text", text="Recent apps", bounds=(0.2, 0.35, 0.9, 0.39), clickable=False),
        UIElement(kind="list_item", text="", bounds=(0.0, 0.4, 1.0, 0.5), clickable=True),
        UIElement(kind="text", text="Battery", bounds=(0.2, 0.41, 0.9, 0.45), clickable=False),
        UIElement(kind="button", text="OK", bounds=(0.2, 0.6, 0.4, 0.7), clickable=True),
        UIElement(kind="icon", text="", bounds=(0.5, 0.6, 0.6, 0.7), clickable=True),  # nothing inside: stays empty
    )
    assert element_texts(els) == ["Apps Recent apps", "Apps", "Recent apps", "Battery", "Battery", "OK", ""]
    obs = Observation(np.zeros((20, 10, 3), np.uint8), "Check the settings for Apps", elements=els)
    b = featurize([obs], FeatureSpec(label_rows=True))
    assert b.elem_num[0, 0, 6] > 0 and b.elem_num[0, 3, 6] == 0  # word overlap with the instruction: Apps row only
    assert b.elements[0] == els  # the elements themselves are unchanged
    assert featurize([obs], FeatureSpec()).elem_num[0, 0, 6] == 0  # off by default: the row has no words


def test_the_experts_scrolls_are_swipes_the_policy_can_make() -> None:
    """Demos that scroll a list must use the default policy's own swipe: an exact-length expert swipe
    decodes to a different list position, and behaviour cloning then never learned app_settings."""
    from digirl.sim.tasks.tasksets import load_taskset

    spec = FeatureSpec()
    env = make("digirl/sim-general-v0")
    tasks = [t for t in load_taskset("general", "test") if t.family in ("app_settings", "app_notifications")][:6]
    swipes = 0
    for i, task in enumerate(tasks):
        obs, _ = env.reset(seed=i, options={"task": task})
        reward, done = 0.0, False
        while not done:
            a = env.cheat()
            assert a is not None
            if a.is_swipe:
                b = featurize([obs], spec)
                t = encode_actions(b, [obs], [a], spec)
                back = decode_action(int(t.kind[0]), -1, -1, t.type_mask[0], b.elements[0], b.instr_words[0], spec)
                assert back == a, (task.instruction, a, back)
                swipes += 1
            obs, reward, term, trunc, _ = env.step(a)
            done = term or trunc
        assert reward == 1.0, task.instruction
    assert swipes >= 3
