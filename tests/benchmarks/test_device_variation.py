"""``benchmarks/studies/device_variation.py`` (issue 42): the smoke preset end to end, its JSON, that
(a) and (b) play the same tasks and seeds on devices of different pools, resuming, and the budget."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.studies.device_variation import main
from digirl.sim.perturb import DEVICE_POOLS


def _episodes(out: Path, cond: str, split: str) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = json.loads((out / "seed0" / "eval" / f"{cond}.json").read_text())["splits"][split]["episodes"]
    return rows


@pytest.mark.slow
def test_smoke_preset_end_to_end_and_resumed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "dv"
    assert main(["--preset", "smoke", "--out", str(out)]) == 0
    s = json.loads((out / "device_variation.json").read_text())
    assert (out / "device_variation.md").read_text().startswith("# Device variation, pixels only")
    assert s["observation"] == "screenshot" and s["selection_split"] == "validation"
    assert s["cpu_count"] >= 1 and s["gpu_model"] and s["machine"]["cpus"] == s["cpu_count"] and s["git_revision"]
    assert s["command_line"] == f"python benchmarks/studies/device_variation.py --preset smoke --out {out}"
    assert s["finished_seeds"] == [0] and s["unfinished"] == []
    (row,) = s["per_seed"]
    for key in ("test_train_devices", "test_heldout_devices", "test_default_device", "validation_train_devices"):
        assert 0.0 <= row[key] <= 1.0 and s["means"][key]["per_seed"] == [row[key]]
    assert set(row["stage_s"]) == {"sft", "collect", "train", "evaluate"}
    for split, n in (("test", 6), ("validation", 4)):
        p = s["paired"][split]
        assert p["same_tasks_and_seeds"] and p["tasks"] == n and p["bootstrap"]["pairs"] == n
        assert p["bootstrap"]["difference_ci95"][0] <= p["bootstrap"]["difference"] <= p["bootstrap"]["difference_ci95"][1]
        assert p["mcnemar_exact"]["pairs"] == n and p["bar"]["ratio_needed"] == 0.9
        assert s["paired"][split]["seed_level_t"] is None  # one seed: no interval over seeds

    # (a) and (b): the same tasks and env seeds, each episode on a device of its own pool, never the same one
    for split in ("test", "validation"):
        a, b = _episodes(out, "train_devices", split), _episodes(out, "heldout_devices", split)
        assert [(e["task_id"], e["seed"]) for e in a] == [(e["task_id"], e["seed"]) for e in b]
        assert all(e["device_id"] in DEVICE_POOLS["train"] for e in a)
        assert all(e["device_id"] in DEVICE_POOLS["test"] for e in b)
        assert all(ea["device_id"] != eb["device_id"] for ea, eb in zip(a, b))
        assert all(e["replay_matches"] for e in a + b)  # the replayed reset showed the episode's own first screen
    assert all(e["device_id"] is None for e in _episodes(out, "default_device", "test"))
    assert "validation" not in json.loads((out / "seed0" / "eval" / "default_device.json").read_text())["splits"]
    d = s["device_check"]
    assert d["train_heldout_shared_devices"] == 0 and d["pairs_on_different_devices"] == 1.0
    assert d["train_devices"]["in_its_pool"] and d["heldout_devices"]["in_its_pool"] and d["default_device"]["in_its_pool"]

    # resumed: every stage is read back, none runs again, and the figures are the same
    stamps = {p.name: p.stat().st_mtime_ns for p in (out / "seed0").glob("stage_*.json")}
    capsys.readouterr()
    assert main(["--preset", "smoke", "--out", str(out)]) == 0
    again = json.loads((out / "device_variation.json").read_text())
    assert {p.name: p.stat().st_mtime_ns for p in (out / "seed0").glob("stage_*.json")} == stamps
    assert again["per_seed"] == s["per_seed"] and again["paired"] == s["paired"]


def test_no_stage_starts_past_the_budget(tmp_path: Path) -> None:
    out = tmp_path / "dv"
    assert main(["--preset", "smoke", "--out", str(out), "--seeds", "0", "1", "--budget-s", "0"]) == 0
    s = json.loads((out / "device_variation.json").read_text())
    assert s["finished_seeds"] == [] and s["per_seed"] == [] and s["paired"] == {}
    assert [u["seed"] for u in s["unfinished"]] == [0, 1]
    assert all(u["stages_done"] == [] and "--budget-s" in u["stopped"] for u in s["unfinished"])
    assert not list(out.glob("seed*/stage_*.json"))
