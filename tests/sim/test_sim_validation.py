"""The validation split of every shipped task set: its own entities (disjoint from train and test, by what
they denote), built like the test split (held-out phrasings too), loadable, solvable by the expert."""

from __future__ import annotations

from collections import Counter

import pytest

from digirl.sim.coverage import coverage_report
from digirl.sim.env import SimEnv
from digirl.sim.tasks.entities import POOLS, SHARED_POOLS, split_pool
from digirl.sim.tasks.parser import parse_instruction
from digirl.sim.tasks.tasksets import TASKSETS, _generate, generate_taskset, load_taskset
from digirl.sim.tasks.validation_entities import VALIDATION_POOLS
from tests.sim.test_sim_tasksets import _entity_keys

SPLITS3 = ("train", "test", "validation")


def _denotes(pool: str, value: str) -> str:
    return value.split("=")[-1].lower()  # "downloads=Files" names the Files app


def test_every_entity_pool_has_validation_entities_of_its_own() -> None:
    assert set(VALIDATION_POOLS) == set(POOLS) - SHARED_POOLS
    for pool, values in VALIDATION_POOLS.items():
        assert values and len(set(values)) == len(values), pool
        assert split_pool(pool, "validation") == values
        seen = {_denotes(pool, v) for v in POOLS[pool]}
        assert not seen & {_denotes(pool, v) for v in values}, (pool, sorted(seen & {_denotes(pool, v) for v in values}))
    assert split_pool("news_when", "validation") == POOLS["news_when"]  # closed vocabularies are shared
    with pytest.raises(ValueError, match="'train', 'test' or 'validation'"):
        split_pool("country", "dev")


@pytest.mark.parametrize("name", TASKSETS)
def test_validation_names_no_train_or_test_entity(name: str) -> None:
    keys = {s: set().union(*(_entity_keys(parse_instruction(t)) for t, _ in _generate(name, s))) for s in SPLITS3}
    assert len(keys["validation"]) >= 24, name  # webshop: its 24 products
    assert not keys["validation"] & keys["train"], sorted(keys["validation"] & keys["train"])[:10]
    assert not keys["validation"] & keys["test"], sorted(keys["validation"] & keys["test"])[:10]
    # A validation line equal to a train or test line names no entity ("Check my email", "Go to ebay.com").
    other = {t for s in ("train", "test") for t, _ in _generate(name, s)}
    shared = [t for t, _ in _generate(name, "validation") if t in other]
    assert all(not _entity_keys(parse_instruction(t)) for t in shared), shared


@pytest.mark.parametrize("name", TASKSETS)
def test_validation_is_built_like_test(name: str) -> None:
    val, test = _generate(name, "validation"), _generate(name, "test")
    for text, family in val:
        intent = parse_instruction(text)
        assert intent is not None and intent.family == family and intent.taskset == name, text
    assert set(Counter(f for _, f in val)) == set(Counter(f for _, f in test))
    if name == "general":  # held-out phrasings, as in test
        assert any(t.startswith(("Wake me up", "Download the")) for t, _ in val)
    if name == "webshop":
        assert any("click on the first result" in t for t, _ in val)
        assert [f for _, f in val[:3]] == ["shop_goto", "shop_search", "shop_select"]
    assert generate_taskset(name, "validation") == generate_taskset(name, "validation", seed=0)
    assert generate_taskset(name, "validation") != generate_taskset(name, "validation", seed=1)


def test_load_validation_split() -> None:
    specs = load_taskset("general", "validation")
    assert len(specs) == 216
    assert specs[0].task_id == "general-validation-0000" and specs[0].split == "validation"
    assert specs[0].instruction == generate_taskset("general", "validation")[0]
    assert {s.env_id for s in load_taskset("webshop", "validation")} == {"digirl/sim-webshop-v0"}
    env = SimEnv(taskset="phone", split="validation")
    try:
        assert [t.task_id for t in env.tasks()[:2]] == ["phone-validation-0000", "phone-validation-0001"]
    finally:
        env.close()
    with pytest.raises(ValueError, match="unknown split 'dev'"):
        load_taskset("general", "dev")


@pytest.mark.parametrize("name", TASKSETS)
def test_expert_solves_every_validation_line(name: str) -> None:
    lines = generate_taskset(name, "validation")
    r = coverage_report(lines, perturbation=1, seeds=(0,))
    assert r["solved"] == r["lines"] == len(lines), r["failures"][:10]


@pytest.mark.slow
@pytest.mark.parametrize("level", [0, 2])
@pytest.mark.parametrize("name", TASKSETS)
def test_expert_solves_every_validation_line_at_every_level(name: str, level: int) -> None:
    r = coverage_report(generate_taskset(name, "validation"), perturbation=level, seeds=(0, 1))
    assert r["solved"] == r["lines"], r["failures"][:10]
