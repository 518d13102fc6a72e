"""The ``compound`` task set: instructions of two or three sub-goals, composed from single-family lines.

Two kinds of line are generated for a split (train / validation / test):

- **joined** lines: two or three single-step lines of *different* families, taken from that split's
  sources (so train, validation and test name disjoint entities, as the shipped sets do) and joined
  by a connective ("A and B", "A, then B", "A, B and C", ...);
- **chains**: in-app sequences built from one line's intent by :data:`CHAINS` ("go to S, search for
  Q and open the first result", "open YouTube and search for Q", "open settings, then wifi, then
  turn it off", ...).

Every generated line is kept only if the parser reads it back as the compound of exactly the
intended sub-intents, in order. Sources are the shipped task sets' lines of each family; a user
adds a family of their own with :func:`register_compound_source` (its lines per split), and it is
composed with the rest. The shipped files (``digirl/sim/tasks/compound_sets/``) are regenerated with
``python -m digirl.sim.tasks.compose --write``; ``--check`` says whether they are current.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from digirl.core.types import TaskSpec
from digirl.sim.intents import Intent
from digirl.sim.tasks.taskfile import report_stale

__all__ = [
    "CHAINS",
    "COMPOUND_DIR",
    "COMPOUND_SIZES",
    "compound_tasks",
    "generate_compound",
    "load_compound_lines",
    "register_compound_source",
    "unregister_compound_source",
]

COMPOUND_DIR = Path(__file__).resolve().parent / "compound_sets"
COMPOUND_SPLITS = ("train", "validation", "test")
COMPOUND_SIZES = {"train": 300, "validation": 120, "test": 150}
#: Share of chains (in-app sequences) among a split's lines; the rest join lines of different families.
CHAIN_SHARE = 0.35
_JOIN2 = ("{a} and {b}", "{a}, then {b}", "{a} and then {b}", "{a}, and after that {b}", "{a}. Then {b}")
_JOIN3 = ("{a}, {b} and {c}", "{a}, then {b}, then {c}", "{a}, {b}, and then {c}", "{a} and {b}, then {c}")
#: First words that are verbs (lower-cased when a line is not the first of a compound).
_VERBS = re.compile(
    r"^(?:open|launch|start|turn|switch|set|call|text|send|play|watch|install|uninstall|update|add|take|show|check|"
    r"go|search|find|look|delete|remove|disable|enable|create|record|email|message|close|clear|bookmark|navigate|"
    r"get|subscribe|mute|save|make|dial|phone|put|view|download|book)\b",
    re.I,
)
_USER_SOURCES: dict[str, dict[str, list[str]]] = {}

Chain = Callable[[Intent, random.Random], "tuple[str, list[Intent]] | None"]


# ---------------------------------------------------------------- chains
def _shop_chain(i: Intent, r: random.Random) -> tuple[str, list[Intent]] | None:
    if i.family != "shop_search":
        return None
    site, q = i.get("site"), i.get("query")
    go, find = Intent("shop_goto", {"site": site}), Intent("shop_search", {"site": site, "query": q})
    sel, cart = Intent("shop_select", {"site": site, "query": q}), Intent("add_to_cart", {"site": site, "query": q})
    return r.choice(
        (
            (f"Go to {site}, search for {q} and open the first result", [go, find, sel]),
            (f"Go to {site} and search for {q}, then add the first one to the cart", [go, find, cart]),
            (f"Open {site}, look for {q}, open the first result and add it to the cart", [go, find, sel, cart]),
            (f"Search {site} for {q} and open the first item", None),
        )
    )  # type: ignore[return-value]


def _youtube_chain(i: Intent, r: random.Random) -> tuple[str, list[Intent]] | None:
    if i.family != "youtube_video":
        return None
    q = i.get("query")
    yt = Intent("open_app", {"app": "YouTube"})
    play = Intent("youtube_video", {**i.slots, "action": "play"})
    i = Intent("youtube_video", {**i.slots, "action": "search"})
    return r.choice(
        (
            (f"Open YouTube and search for {q}", [yt, i]),
            (f"Open YouTube, search for {q} and play the first video", [yt, i, play]),
        )
    )


def _maps_chain(i: Intent, r: random.Random) -> tuple[str, list[Intent]] | None:
    if i.family != "maps_search":
        return None
    q = i.get("query")
    maps = Intent("open_app", {"app": "Maps"})
    if "restaurant" in q.lower():
        # Directions to "<cuisine> restaurants" are not solvable in today's Maps (a place's name and
        # category do not carry the cuisine's adjectives); search only (see docs/tasks.md).
        return (f"Open Google Maps and search for {q}", [maps, Intent("maps_search", {"query": q})])
    return r.choice(
        (
            (f"Open Google Maps and search for {q}", [maps, Intent("maps_search", {"query": q})]),
            (
                f"Open Maps, search for {q}, then get directions to the first result",
                [maps, Intent("maps_search", {"query": q}), Intent("maps_directions", {"destination": q})],
            ),
        )
    )


_PAGE_WORD = {"network": "network", "connected": "bluetooth", "display": "display", "sound": "sound", "battery": "battery"}


def _settings_chain(i: Intent, r: random.Random) -> tuple[str, list[Intent]] | None:
    if i.family != "toggle_setting" or i.get("state") not in ("on", "off"):
        return None
    from digirl.sim.families.device import TOGGLE_PAGE

    name, state = i.get("setting"), i.get("state")
    page = TOGGLE_PAGE.get(name)
    if page not in _PAGE_WORD:
        return None
    settings = Intent("open_app", {"app": "Settings"})
    word = name.replace("_", " ")
    where = word if name in ("wifi", "bluetooth") else _PAGE_WORD[page]
    return r.choice(
        (
            (f"Open settings, then {where}, then turn {word} {state}", [settings, Intent("settings_page", {"page": page}), i]),
            (f"Open settings and turn {state} {word}", [settings, i]),
        )
    )


def _install_chain(i: Intent, r: random.Random) -> tuple[str, list[Intent]] | None:
    if i.family != "install_app":
        return None
    app = i.get("app")
    return (f"Install {app} and open it", [i, Intent("open_app", {"app": app})])


def _contact_chain(i: Intent, r: random.Random) -> tuple[str, list[Intent]] | None:
    if i.family != "make_call" or not i.get("contact")[:1].isalpha():
        return None
    who = i.get("contact")
    text = Intent("send_message", {"contact": who, "body": "on my way"})
    return r.choice(((f"Call {who} and then text them saying on my way", [i, text]),))


#: Chain builders: (a single line's intent, rng) → (instruction, the sub-intents it means) or None.
CHAINS: list[Chain] = [_shop_chain, _youtube_chain, _maps_chain, _settings_chain, _install_chain, _contact_chain]


# ---------------------------------------------------------------- sources
def register_compound_source(family: str, lines: Mapping[str, Sequence[str]]) -> None:
    """Compose ``family`` into the compound set: its single-step ``lines`` per split ("train",
    "validation", "test"). Each line must parse to ``family`` (checked when composing)."""
    bad = set(lines) - set(COMPOUND_SPLITS)
    if bad:
        raise ValueError(f"unknown split(s) {sorted(bad)}; known: {', '.join(COMPOUND_SPLITS)}")
    _USER_SOURCES[family] = {k: [str(x) for x in v] for k, v in lines.items()}


def unregister_compound_source(family: str) -> None:
    _USER_SOURCES.pop(family, None)


def _sources(split: str, *, single: bool = True) -> dict[str, list[tuple[str, Intent]]]:
    """Lines of ``split`` by family: imperatives with no connective (``single``) to join, or every
    line a phrasing places (chains use only their intents: "Go to costco.com, search for …")."""
    from digirl.sim.tasks.parser import explain_instruction
    from digirl.sim.tasks.tasksets import TASKSET_DIR

    by_family: dict[str, list[tuple[str, Intent]]] = {}
    texts: list[str] = []
    for ts in ("general", "webshop", "phone"):
        path = TASKSET_DIR / f"{ts}_{split}.txt"
        texts += [x.strip() for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    for fam_lines in _USER_SOURCES.values():
        texts += fam_lines.get(split, [])
    for text in texts:
        found = explain_instruction(text)
        # Imperatives only: a question ("What's the weather in Oslo?") does not chain as a request.
        if found.intent is None or found.how not in ("rule", "normalized"):
            continue
        if single and (text.endswith("?") or re.search(r"[,;]|\b(?:and|then)\b", text, re.I)):
            continue
        by_family.setdefault(found.intent.family, []).append((text.rstrip("."), found.intent))
    return by_family


def _lower_first(text: str) -> str:
    """A line's first letter lower-cased when it continues a sentence (not "I", "YouTube", "ESPN")."""
    first = text.split(" ", 1)[0]
    if first == "I" or any(c.isupper() for c in first[1:]):
        return text
    return text[:1].lower() + text[1:]


def _parts_of(text: str) -> list[Intent] | None:
    from digirl.sim.families.compound import plan_parts
    from digirl.sim.tasks.parser import explain_instruction

    found = explain_instruction(text)
    if found.intent is None or found.intent.family != "compound":
        return None
    return list(plan_parts(found.intent))


def generate_compound(split: str, n: int | None = None, seed: int = 0) -> list[str]:
    """``n`` compound instructions for ``split`` (default :data:`COMPOUND_SIZES`), each read back by the
    parser as exactly the sub-intents it was built from."""
    if split not in COMPOUND_SPLITS:
        raise ValueError(f"unknown split {split!r}; known: {', '.join(COMPOUND_SPLITS)}")
    n = COMPOUND_SIZES[split] if n is None else n
    # Splits come in order, each avoiding the lines of those before it (settings and app names are
    # shared by every split, so the same line could otherwise be drawn twice).
    earlier: set[str] = set()
    for before in COMPOUND_SPLITS[: COMPOUND_SPLITS.index(split)]:
        earlier |= set(generate_compound(before, seed=seed))
    r = random.Random(f"digirl-sim-compound-{split}-{seed}")
    src = _sources(split)
    families = sorted(src)
    if len(families) < 3:
        raise ValueError(f"need lines of at least 3 families to compose, have {families}")
    for lines in src.values():
        r.shuffle(lines)
    seen: set[str] = set(earlier)
    out: list[str] = []
    n_chain = round(n * CHAIN_SHARE)
    every = _sources(split, single=False)
    chain_src = [x for f in sorted(every) for x in every[f]]
    r.shuffle(chain_src)
    for _text, intent in chain_src:
        if len(out) >= n_chain:
            break
        for build in r.sample(CHAINS, len(CHAINS)):
            got = build(intent, r)
            if got is None:
                continue
            line, want = got
            if line not in seen and want is not None and _parts_of(line) == want:
                seen.add(line)
                out.append(line)
            break
    tries = 0
    while len(out) < n and tries < 50 * n:
        tries += 1
        k = 3 if r.random() < 0.3 else 2
        fams = r.sample(families, k)
        picks = [r.choice(src[f]) for f in fams]
        texts = [picks[0][0]] + [_lower_first(t) for t, _ in picks[1:]]
        tpl = r.choice(_JOIN3 if k == 3 else _JOIN2)
        line = tpl.format(**dict(zip("abc", texts)))
        if line in seen:
            continue
        if _parts_of(line) == [i for _, i in picks]:
            seen.add(line)
            out.append(line)
    if len(out) < n:
        raise ValueError(f"composed only {len(out)} of {n} compound lines for {split}")
    r.shuffle(out)
    return out


def load_compound_lines(split: str) -> list[str]:
    """The shipped compound lines of ``split``."""
    if split not in COMPOUND_SPLITS:
        raise ValueError(f"unknown split {split!r}; known: {', '.join(COMPOUND_SPLITS)}")
    path = COMPOUND_DIR / f"compound_{split}.txt"
    return [x for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def compound_tasks(split: str) -> list[TaskSpec]:
    """The shipped compound lines of ``split`` as task specs (``task_id`` = ``compound-<split>-<i:04d>``),
    run by ``digirl/sim-compound-v0`` (horizon: each plan's, :func:`~digirl.sim.families.compound.plan_horizon`)."""
    from digirl.core.errors import UnsupportedInstructionError
    from digirl.sim.families.compound import plan_horizon
    from digirl.sim.tasks.parser import parse_instruction

    specs = []
    for i, text in enumerate(load_compound_lines(split)):
        intent = parse_instruction(text)
        if intent is None or intent.family != "compound":  # the shipped files are tested to parse; this guards hand edits
            raise UnsupportedInstructionError(f"compound_{split}.txt: line {i + 1} is not a compound task: {text!r}")
        specs.append(
            TaskSpec(
                instruction=text,
                task_id=f"compound-{split}-{i:04d}",
                family="compound",
                split=split,
                horizon=plan_horizon(intent),
                env_id="digirl/sim-compound-v0",
                params={"intent": intent.to_dict()},
            )
        )
    return specs


def _main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m digirl.sim.tasks.compose", description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"(re)write the shipped compound files in {COMPOUND_DIR}")
    args = ap.parse_args(argv)
    if args.write:
        COMPOUND_DIR.mkdir(parents=True, exist_ok=True)
        for split in COMPOUND_SPLITS:
            path = COMPOUND_DIR / f"compound_{split}.txt"
            path.write_text("\n".join(generate_compound(split)) + "\n", encoding="utf-8")
            sys.stdout.write(f"wrote {path}\n")
        return 0
    stale = [s for s in COMPOUND_SPLITS if load_compound_lines(s) != generate_compound(s)]
    return report_stale(stale, "digirl.sim.tasks.compose", "compound")


if __name__ == "__main__":
    sys.exit(_main())
