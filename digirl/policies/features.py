"""Turn observations into fixed-size numpy arrays for the default policy and critics.

Text is tokenized into words and hashed into buckets (no vocabulary file, no download), so
unseen entities still get an embedding slot and, more usefully, exact word-overlap features
between the instruction and each UI element — the signal that generalizes to held-out tasks.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from digirl.core.actions import Action, ActionType, SwipeDirection
from digirl.core.types import Observation, UIElement
from digirl.policies.regions import CROP_SIZE as REGION_CROP
from digirl.policies.regions import region_crops, region_elements
from digirl.policies.screens import shrink_many

# Words keep inner dots, hyphens and apostrophes ("bestbuy.com", "wi-fi", "what's") so typed text
# rebuilt from instruction words is what a person would type (a URL must stay one token).
_WORD = re.compile(r"[A-Za-z0-9]+(?:(?:['.\-]|(?<=\d):(?=\d))[A-Za-z0-9]+)*")  # "6:45pm" is one word
_CAMEL_TYPO = re.compile(r"\b([a-z]{2,})([A-Z][a-z])")  # "inToronto" → "in Toronto" (AitW typos); "PlayStation" stays one word

#: Action kinds the default policy chooses between (the first head).
KINDS = (
    "tap_element",
    "tap_grid",
    "swipe_up",
    "swipe_down",
    "swipe_left",
    "swipe_right",
    "type",
    "back",
    "home",
    "enter",
    "complete",
    "impossible",
)
KIND_INDEX = {k: i for i, k in enumerate(KINDS)}
ELEMENT_KINDS = ("view", "button", "text", "input", "icon", "list_item", "image", "switch", "tab", "link", "dialog")
_SWIPE_KIND = {
    SwipeDirection.UP: "swipe_up",
    SwipeDirection.DOWN: "swipe_down",
    SwipeDirection.LEFT: "swipe_left",
    SwipeDirection.RIGHT: "swipe_right",
}
_SIMPLE_KIND = {
    ActionType.PRESS_BACK: "back",
    ActionType.PRESS_HOME: "home",
    ActionType.PRESS_ENTER: "enter",
    ActionType.STATUS_TASK_COMPLETE: "complete",
    ActionType.STATUS_TASK_IMPOSSIBLE: "impossible",
}


def words(text: str) -> list[str]:
    """Words of a text as a person would type them (case kept, punctuation dropped)."""
    return _WORD.findall(_CAMEL_TYPO.sub(r"\1 \2", text))


@lru_cache(maxsize=65536)
def word_id(word: str, buckets: int) -> int:
    """Stable hash bucket of a lower-cased word; 0 is reserved for padding."""
    return 1 + zlib.crc32(word.lower().encode()) % (buckets - 1)


@dataclass(frozen=True)
class FeatureSpec:
    image_width: int = 48
    image_height: int = 104
    frame_stack: int = 1
    max_instruction_words: int = 24
    max_elements: int = 40
    max_element_words: int = 6
    history_len: int = 4
    buckets: int = 4096
    grid_cols: int = 6
    grid_rows: int = 12
    #: Whether the UI element list (text + boxes) is an input; False = screenshot only (taps on the grid).
    use_elements: bool = True
    #: Whether a clickable element without text reads as its labels (:func:`element_texts`).
    label_rows: bool = False
    #: Screenshot only: the elements are boxes detected from the pixels (:mod:`digirl.policies.regions`).
    pixel_regions: bool = False

    @property
    def grid_size(self) -> int:
        return self.grid_cols * self.grid_rows


@dataclass
class Batch:
    """Arrays for a batch of B observations (numpy; the model moves them to torch)."""

    image: np.ndarray  # [B, 3*frame_stack, H, W] float32 in [0, 1]
    instr: np.ndarray  # [B, L] int64 word ids (0 = pad)
    elem_words: np.ndarray  # [B, K, T] int64
    elem_num: np.ndarray  # [B, K, 9] float32: bounds(4), clickable, focused, overlap(2), has_text
    elem_kind: np.ndarray  # [B, K] int64
    elem_mask: np.ndarray  # [B, K] bool (True = real element)
    history: np.ndarray  # [B, history_len] int64 kind ids + 1 (0 = none)
    instr_words: list[list[str]]  # the original words, for decoding typed text
    elements: list[tuple[UIElement, ...]]
    #: [B, K, 3, h, w] uint8 pixel crops of the elements (``pixel_regions`` only; else None).
    elem_pixels: np.ndarray | None = None


def action_kind(action: Action, obs: Observation | None = None) -> str | None:
    """The policy kind an action falls under (``None`` for INVALID)."""
    if action.type is ActionType.DUAL_POINT:
        if action.is_swipe:
            d = action.swipe_direction
            assert d is not None
            return _SWIPE_KIND[d]
        assert action.touch is not None
        if obs is not None and element_under(obs.elements or (), *action.touch) is not None:
            return "tap_element"
        return "tap_grid"
    if action.type is ActionType.TYPE:
        return "type"
    return _SIMPLE_KIND.get(action.type)


def element_under(elements: Sequence[UIElement], x: float, y: float, limit: int | None = None) -> int | None:
    """Index of the element a tap at (x, y) acts on, among the first ``limit`` elements.

    That is the smallest *clickable* element containing the point, else (nothing clickable there)
    the smallest element. A tap on a product's name or price inside its result card selects the
    card, so it is one target whichever of the card's labels the tap hits: with the smallest element
    of any kind, the same choice was spread over several labels that share no words or position.
    """
    best, best_area, best_clickable = None, float("inf"), False
    for i, el in enumerate(elements[:limit] if limit else elements):
        if el.contains(x, y):
            x0, y0, x1, y1 = el.bounds
            area = (x1 - x0) * (y1 - y0)
            if (el.clickable, -area) > (best_clickable, -best_area):
                best, best_area, best_clickable = i, area, el.clickable
    return best


def element_texts(elements: Sequence[UIElement]) -> list[str]:
    """Each element's text, where a clickable element without text of its own reads as the texts
    of the non-clickable elements centred inside it, in list order.

    A settings row or a result card is a clickable box whose labels are separate elements, and a
    tap on it encodes as the box (:func:`element_under`). Without its labels' words the pointer
    cannot tell "Apps" from "Battery", and every such row looked the same. Used when
    ``FeatureSpec.label_rows`` is on (off by default: Web Shopping's result cards all share the
    query's words, and "select the first entry" was learned worse with them).
    """
    labels = [(el.center, el.text) for el in elements if not el.clickable and el.text.strip()]
    out = []
    for el in elements:
        if el.clickable and not el.text.strip() and labels:
            x0, y0, x1, y1 = el.bounds
            out.append(" ".join(t for (cx, cy), t in labels if x0 <= cx <= x1 and y0 <= cy <= y1))
        else:
            out.append(el.text)
    return out


# Points inside a box, as fractions of its size, nearest the centre first (the centre is the first).
_FRACTIONS = sorted(
    ((fx / 10, fy / 10) for fx in range(1, 10) for fy in range(1, 10)),
    key=lambda f: (f[0] - 0.5) ** 2 + (f[1] - 0.5) ** 2,
)


def tap_point(elements: Sequence[UIElement], index: int) -> tuple[float, float]:
    """Where to tap so that the tap reads back as ``elements[index]`` under ``element_under``.

    The centre when no other element takes a tap there (a smaller one, clickable unless nothing
    clickable is under the point), else the interior point nearest the centre that reads back as
    this element (e.g. a label whose centre lies on its own radio button): a tap the policy chose
    must encode back to the same choice, or training on its own trajectories teaches it a different
    action. Falls back to the centre when smaller elements cover the whole element.
    """
    el = elements[index]
    x0, y0, x1, y1 = el.bounds
    for fx, fy in _FRACTIONS:
        x, y = round(x0 + fx * (x1 - x0), 4), round(y0 + fy * (y1 - y0), 4)
        if element_under(elements, x, y) == index:
            return x, y
    return el.center


def featurize(observations: Sequence[Observation], spec: FeatureSpec) -> Batch:
    """Arrays for a batch. Screenshots are shrunk through :func:`digirl.policies.screens.shrink_many`
    (cached, exact, on a few threads); the words of instructions and element texts are hashed
    once per text."""
    b = len(observations)
    L, K, T = spec.max_instruction_words, spec.max_elements, spec.max_element_words
    image = np.zeros((b, 3 * spec.frame_stack, spec.image_height, spec.image_width), np.float32)
    instr = np.zeros((b, L), np.int64)
    elem_words = np.zeros((b, K, T), np.int64)
    elem_num = np.zeros((b, K, 9), np.float32)
    elem_kind = np.zeros((b, K), np.int64)
    elem_mask = np.zeros((b, K), bool)
    history = np.zeros((b, spec.history_len), np.int64)
    elem_pixels = np.zeros((b, K, 3, *REGION_CROP), np.uint8) if spec.pixel_regions else None
    all_words: list[list[str]] = []
    all_elems: list[tuple[UIElement, ...]] = []
    frames: list[tuple[np.ndarray, np.ndarray | None]] = []
    for obs in observations:
        prev = obs.previous_screenshot
        frames.append((obs.screenshot, prev))
        if spec.frame_stack > 1 and prev is not None:
            frames.append((prev, None))
    shrunk = iter(shrink_many(frames, spec.image_width, spec.image_height))
    for i, obs in enumerate(observations):
        image[i, :3] = next(shrunk)
        if spec.frame_stack > 1 and obs.previous_screenshot is not None:
            image[i, 3:6] = next(shrunk)
        ws, ids, lower_instr = _instruction(obs.instruction, L, spec.buckets)
        all_words.append(list(ws))
        instr[i, : len(ids)] = ids
        if spec.pixel_regions:
            els = region_elements(obs.screenshot, K)
            if elem_pixels is not None and els:
                elem_pixels[i, : len(els)] = region_crops(obs.screenshot, els)
        else:
            els = tuple(obs.elements or ())[:K] if spec.use_elements else ()
        all_elems.append(els)
        if els:
            n_instr = max(1, len(lower_instr))
            num, word_rows, kinds = [], [], []
            for el, text in zip(els, element_texts(els) if spec.label_rows else [el.text for el in els]):
                padded, ew, n_ew = _element_words(text, spec.buckets, T)
                common = sum(1 for x in ew if x in lower_instr)
                num.append(
                    (*el.bounds, float(el.clickable), float(el.focused), common / max(1, n_ew), common / n_instr, float(n_ew > 0))
                )
                word_rows.append(padded)
                kinds.append(_ELEMENT_KIND_ID.get(el.kind, 0))
            n = len(els)
            elem_words[i, :n] = word_rows
            elem_num[i, :n] = num
            elem_kind[i, :n] = kinds
            elem_mask[i, :n] = True
        hist = [KIND_INDEX.get(action_kind(a) or "", -1) + 1 for a in obs.history[-spec.history_len :]]
        if hist:
            history[i, -len(hist) :] = hist
    return Batch(image, instr, elem_words, elem_num, elem_kind, elem_mask, history, all_words, all_elems, elem_pixels)


_ELEMENT_KIND_ID = {k: i + 1 for i, k in enumerate(ELEMENT_KINDS)}


@lru_cache(maxsize=4096)
def _instruction(text: str, max_words: int, buckets: int) -> tuple[tuple[str, ...], tuple[int, ...], frozenset[str]]:
    """(words kept, their ids, the lower-cased word set) of an instruction."""
    ws = tuple(words(text)[:max_words])
    return ws, tuple(word_id(x, buckets) for x in ws), frozenset(x.lower() for x in ws)


@lru_cache(maxsize=65536)
def _element_words(text: str, buckets: int, max_words: int) -> tuple[tuple[int, ...], tuple[str, ...], int]:
    """(ids of the first ``max_words`` words padded with 0, all lower-cased words, their count)."""
    ew = tuple(x.lower() for x in words(text))
    ids = [word_id(x, buckets) for x in ew[:max_words]]
    return (*ids, *([0] * (max_words - len(ids)))), ew, len(ew)


@dataclass
class ActionTargets:
    """Training targets for the policy heads; ``valid`` is False for actions it cannot express."""

    kind: np.ndarray  # [B] int64
    element: np.ndarray  # [B] int64 (-1 when not a tap on an element)
    cell: np.ndarray  # [B] int64 (-1 when not a grid tap)
    type_mask: np.ndarray  # [B, L] float32 (which instruction words to type)
    valid: np.ndarray  # [B] bool


def encode_actions(
    batch: Batch, observations: Sequence[Observation], actions: Sequence[Action], spec: FeatureSpec
) -> ActionTargets:
    b = len(actions)
    kind = np.zeros(b, np.int64)
    element = np.full(b, -1, np.int64)
    cell = np.full(b, -1, np.int64)
    type_mask = np.zeros((b, spec.max_instruction_words), np.float32)
    valid = np.ones(b, bool)
    for i, a in enumerate(actions):
        k = action_kind(a)
        if k is None:
            valid[i] = False
            continue
        if a.type is ActionType.DUAL_POINT and not a.is_swipe:
            assert a.touch is not None
            x, y = a.touch
            e = element_under(batch.elements[i], x, y, spec.max_elements)
            if e is not None:
                k, element[i] = "tap_element", e
            else:
                k = "tap_grid"
                cx = min(spec.grid_cols - 1, int(x * spec.grid_cols))
                cy = min(spec.grid_rows - 1, int(y * spec.grid_rows))
                cell[i] = cy * spec.grid_cols + cx
        elif a.type is ActionType.TYPE:
            mask = text_to_mask(a.text, batch.instr_words[i])
            if not mask.any():
                valid[i] = False  # the text shares no word with the instruction: not expressible
            type_mask[i, : len(mask)] = mask
        kind[i] = KIND_INDEX[k]
    return ActionTargets(kind, element, cell, type_mask, valid)


def text_to_mask(text: str, instr_words: Sequence[str]) -> np.ndarray:
    """Which instruction words the typed text uses (first occurrence of each; order-free).

    Typed text is rebuilt in instruction order, so "Zambia news" for "What's the news in Zambia?"
    becomes "news Zambia": the same search, expressible by the pointer.
    """
    mask = np.zeros(len(instr_words), np.float32)
    wanted = {w.lower() for w in words(text)}
    seen: set[str] = set()
    for k, w in enumerate(instr_words):
        lw = w.lower()
        if lw in wanted and lw not in seen:
            mask[k] = 1.0
            seen.add(lw)
    return mask


def mask_to_text(mask: np.ndarray, instr_words: Sequence[str]) -> str:
    return " ".join(w for w, m in zip(instr_words, mask) if m > 0.5)


def decode_action(
    kind: int,
    element: int,
    cell: int,
    type_mask: np.ndarray,
    elements: Sequence[UIElement],
    instr_words: Sequence[str],
    spec: FeatureSpec,
) -> Action:
    name = KINDS[kind]
    if name == "tap_element" and 0 <= element < len(elements):
        return Action.tap(*tap_point(elements, element))
    if name in ("tap_element", "tap_grid"):
        c = max(cell, 0)
        cx, cy = c % spec.grid_cols, c // spec.grid_cols
        return Action.tap((cx + 0.5) / spec.grid_cols, (cy + 0.5) / spec.grid_rows)
    if name.startswith("swipe_"):
        return Action.scroll(name.removeprefix("swipe_"))
    if name == "type":
        text = mask_to_text(type_mask, instr_words)
        return Action.type_text(text) if text else Action.invalid("", "empty typed text")
    return {
        "back": Action.back,
        "home": Action.home,
        "enter": Action.enter,
        "complete": Action.complete,
        "impossible": Action.impossible,
    }[name]()
