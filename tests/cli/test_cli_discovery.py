"""Finding what exists: ``digirl tasks list|show``, filters on ``envs list`` and ``config keys``."""

from __future__ import annotations

import json

import pytest

from digirl.cli.main import main
from digirl.sim.tasks.tasksets import SIZES, TASKSET_DIR


def _json(capsys: pytest.CaptureFixture[str]) -> dict:  # type: ignore[type-arg]
    return json.loads(capsys.readouterr().out)


def _shipped(ts: str) -> dict[str, int]:
    return {s: n for (t, s), n in SIZES.items() if t == ts and (TASKSET_DIR / f"{t}_{s}.txt").exists()}


# --------------------------------------------------------------------------- tasks
def test_tasks_list_gives_split_sizes_families_and_slots(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tasks", "list", "--json"]) == 0
    sets = {t["name"]: t for t in _json(capsys)["tasksets"]}
    assert list(sets)[:3] == ["general", "webshop", "phone"]  # then any other task set (compound)
    for name, ts in sets.items():
        if name in ("general", "webshop", "phone"):
            assert ts["sizes"] == _shipped(name)  # every shipped split, at its documented size
        # the families' lines add up to the split sizes
        for split, size in ts["sizes"].items():
            assert sum(f["counts"][split] for f in ts["families"]) == size
    assert sets["general"]["horizon"] == 10 and sets["webshop"]["horizon"] == 20 and sets["phone"]["horizon"] == 15
    assert sets["general"]["env_ids"]["test"] == "digirl/sim-general-test-v0"
    shop = {f["name"]: f for f in sets["webshop"]["families"]}
    assert sorted(shop) == ["shop_goto", "shop_search", "shop_select"]
    assert list(shop["shop_search"]["slots"]) == ["site", "query"]
    assert main(["tasks", "list", "--taskset", "webshop"]) == 0
    out = capsys.readouterr().out
    assert "webshop: 3 families, horizon 20; train 438, test 360" in out and "general" not in out


def test_tasks_show_family(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tasks", "show", "set_alarm", "-n", "2", "--json"]) == 0
    fam = _json(capsys)["family"]
    assert fam["taskset"] == "general" and list(fam["slots"]) == ["time"]
    assert fam["counts"]["train"] == 15 and fam["counts"]["test"] == 12
    assert fam["examples"]["train"] == ["Set an alarm for 2:45am", "Set an alarm for 6:45pm"]
    assert all(len(v) <= 2 for v in fam["examples"].values())
    assert main(["tasks", "show", "set_alarm", "-n", "1", "--split", "test"]) == 0
    out = capsys.readouterr().out
    assert "family set_alarm (task set general)" in out and "test (first 1 of 12):" in out and "train (" not in out


def test_tasks_show_taskset_and_task_id(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tasks", "show", "webshop", "-n", "1", "--json"]) == 0
    ts = _json(capsys)
    assert (
        ts["sizes"] == _shipped("webshop")
        and ts["examples"]["train"] == (TASKSET_DIR / "webshop_train.txt").read_text().splitlines()[:1]
    )
    assert ts["families"]["shop_select"]["train"] == 146
    assert main(["tasks", "show", "general-test-0007", "--json"]) == 0
    task = _json(capsys)
    assert task["instruction"] == "Open a new private window in Chrome" and task["env_id"] == "digirl/sim-general-test-v0"
    assert task["intent"] == {"family": "browser_tab", "slots": {"mode": "incognito_window"}}


def test_tasks_show_a_family_with_no_shipped_lines(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tasks", "show", "go_home"]) == 0
    out = capsys.readouterr().out
    assert "family go_home (task set phone)" in out and "none in the shipped task sets" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["tasks", "show", "nope"], "no task set, family or task id 'nope'"),
        (["tasks", "show", "webshop", "--split", "dev"], "no split 'dev' here"),
        (["tasks", "list", "--taskset", "shopping"], "unknown task set 'shopping'"),
        (["tasks", "show", "general-test-9999"], "no task set, family or task id"),
    ],
)
def test_tasks_bad_names_are_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


# --------------------------------------------------------------------------- envs list filters
def test_envs_list_filters_by_backend_and_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["envs", "list", "--backend", "sim", "--json"]) == 0
    data = _json(capsys)
    ids = {e["id"] for e in data["envs"]}
    assert {f"digirl/sim-{ts}{t}-v0" for ts in ("general", "webshop", "phone") for t in ("", "-test")} <= ids
    assert all(i.startswith("digirl/sim-") for i in ids) and {e["backend"] for e in data["envs"]} == {"sim"}
    assert data["count"] == len(ids) and data["total"] > 100
    assert main(["envs", "list", "WEBSHOP", "--backend", "sim", "--json"]) == 0  # any case; id or description
    assert sorted(e["id"] for e in _json(capsys)["envs"]) == [
        "digirl/sim-webshop-devices-test-v0",
        "digirl/sim-webshop-devices-v0",
        "digirl/sim-webshop-test-v0",
        "digirl/sim-webshop-v0",
    ]
    assert main(["envs", "list", "toy-"]) == 0
    out = capsys.readouterr().out
    assert "digirl/toy-tap-v0" in out and "digirl/sim-general-v0" not in out and "3 of " in out
    assert main(["envs", "list", "no-such-env-anywhere"]) == 1
    assert "no environment matches" in capsys.readouterr().out


def test_env_spec_backend() -> None:
    from digirl.envs.registry import spec

    assert spec("digirl/sim-general-v0").backend == "sim"
    assert spec("digirl/toy-tap-v0").backend == "toy"
    assert spec("digirl/miniwob.click-button-v0").backend == "browser"
    assert spec("digirl/android-general-v0").backend == "android"


# --------------------------------------------------------------------------- config keys filter
def test_config_keys_filter_and_search(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "keys", "train", "--json"]) == 0
    total = len(_json(capsys)["keys"])
    assert main(["config", "keys", "train", "EVAL.", "--json"]) == 0
    data = _json(capsys)
    keys = [k["key"] for k in data["keys"]]
    assert keys and all(k.lower().startswith("eval.") or ".eval." in k for k in keys) and "eval.test_tasks" in keys
    assert data["total"] == total > len(keys)
    assert main(["config", "keys", "train", "-s", "temperature", "--json"]) == 0
    found = {k["key"]: k["help"] for k in _json(capsys)["keys"]}
    assert "policy.temperature" in found and all("temperature" in (k + h).lower() for k, h in found.items())
    assert main(["config", "keys", "train", "eval.test"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("eval.test_tasks") and f"1 of {total} keys" in out
    assert main(["config", "keys", "train", "no_such_key"]) == 2
    assert "'train' has no key with 'no_such_key' in its name" in capsys.readouterr().err
