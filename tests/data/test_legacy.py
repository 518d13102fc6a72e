"""Importing DigiRL / Digi-Q released trajectory files: the layout round-trips into a dataset that
training reads, and no crafted pickle ever runs code (a marker file proves it)."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from digirl.cli.main import main
from digirl.core.actions import Action, ActionType
from digirl.core.codecs import AutoUICodec
from digirl.core.errors import DataError
from digirl.data.legacy import LegacyFileError, import_legacy, instruction_from_prompt, load_legacy_file
from digirl.data.store import TrajectoryStore

torch = pytest.importorskip("torch")

CODEC = AutoUICodec()
ACTIONS = [Action.tap(0.3, 0.6), Action.type_text("wireless mouse"), Action.enter(), Action.complete()]
GOALS = ["Search for a wireless mouse on amazon", "Open the settings"]


def _img(seed: int, w: int = 40, h: int = 72) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)


def _write_images(root: Path, n_traj: int, n_steps: int) -> None:
    from PIL import Image

    for t in range(n_traj):
        for s in range(n_steps + 1):
            sub = root / f"run{t % 2}"  # nested folders: matched by file name
            sub.mkdir(parents=True, exist_ok=True)
            Image.fromarray(_img(100 * t + s)).save(sub / f"ep{t}_{s}.png")


def legacy_data(n_traj: int = 3, n_steps: int = 4, *, digiq: bool = False, task_field: bool = True) -> list[list[dict[str, Any]]]:
    """Trajectories in the released layout: prompt text, Auto-UI action text, image paths of another machine."""
    trajs = []
    for t in range(n_traj):
        goal = GOALS[t % 2]
        steps = []
        history = ""
        for s in range(n_steps):
            last = s == n_steps - 1
            text = "nonsense model output" if (t == 1 and s == 0) else CODEC.format(ACTIONS[s % len(ACTIONS)])
            d: dict[str, Any] = {
                "observation": f"Previous Actions: {history}Goal: {goal}</s>",
                "next_observation": f"Previous Actions: {history}{text}Goal: {goal}</s>",
                "action": text,
                "reward": np.float64(1.0 if (last and t != 2) else 0.0),
                "done": last and t != 2,
                "mc_return": torch.tensor(0.95 ** (n_steps - 1 - s)),
                "trajectory_reward": 1.0 if t != 2 else 0.0,
                "image_path": f"/home/someone/aitw/images/run{t % 2}/ep{t}_{s}.png",
                "next_image_path": f"/home/someone/aitw/images/run{t % 2}/ep{t}_{s + 1}.png",
                "image_features": np.zeros((2, 1408), np.float32),
                "next_image_features": np.zeros((2, 1408), np.float32),
            }
            if task_field:
                d["task"] = goal
            if digiq:
                cands = [text, CODEC.format(Action.back()), CODEC.format(Action.tap(0.9, 0.1))]
                d |= {"action_list": "<split>".join(cands), "q_rep_out": torch.zeros(3, 8), "traj_id": t, "step_id": s}
            steps.append(d)
            history += text + " "
        trajs.append(steps)
    return trajs


@pytest.fixture
def images(tmp_path: Path) -> Path:
    root = tmp_path / "images"
    _write_images(root, 3, 4)
    return root


def test_torch_save_file_round_trips_into_a_dataset(tmp_path: Path, images: Path) -> None:
    f = tmp_path / "general_offline.pt"
    torch.save(legacy_data(digiq=True), f)
    rep = import_legacy(f, images, tmp_path / "ds", family="general", split="train")
    assert (rep.trajectories_in_file, rep.imported, rep.steps, rep.invalid_actions, rep.with_candidates) == (3, 3, 12, 1, 3)
    assert {"image_features", "next_image_features", "q_rep_out"} <= set(rep.dropped_keys)
    store = TrajectoryStore(tmp_path / "ds", create=False)
    assert store.info["legacy_format"] == "digiq" and not store.check()
    trajs = store.load()
    t0, t1, t2 = trajs
    assert t0.traj_id == "general_offline-000000" and t0.task.instruction == GOALS[0] and t0.task.family == "general"
    assert [s.action for s in t0.steps] == ACTIONS and t0.success and t0.terminated
    assert np.array_equal(t0.steps[2].observation.screenshot, _img(2))
    assert np.array_equal(t0.final_observation.screenshot, _img(4))
    assert t0.steps[3].observation.history == tuple(ACTIONS[:3])
    assert t1.steps[0].action.type is ActionType.INVALID and t1.steps[0].action_text == "nonsense model output"
    assert not t2.success and t2.truncated
    info = t0.steps[0].info
    assert info["mc_return"] == pytest.approx(0.95**3) and info["trajectory_reward"] == 1.0
    assert info["candidates"][1] == {"action": {"type": "PRESS_BACK"}, "text": CODEC.format(Action.back())}
    assert t0.metadata["legacy_traj_id"] == "0"


def test_instruction_from_the_prompt_when_there_is_no_task_field(tmp_path: Path, images: Path) -> None:
    assert instruction_from_prompt("Previous Actions: x Goal: Open  the settings</s>") == "Open the settings"
    assert instruction_from_prompt("no goal here") == ""
    f = tmp_path / "d.pt"
    torch.save(legacy_data(task_field=False), f)
    import_legacy(f, images, tmp_path / "ds")
    assert [t.task.instruction for t in TrajectoryStore(tmp_path / "ds").load(load_images=False)] == [
        GOALS[0],
        GOALS[1],
        GOALS[0],
    ]


def test_missing_images_skip_or_blank(tmp_path: Path, images: Path) -> None:
    (images / "run1" / "ep1_2.png").unlink()
    f = tmp_path / "d.pt"
    torch.save(legacy_data(), f)
    rep = import_legacy(f, images, tmp_path / "skip")
    assert (rep.imported, rep.skipped_missing_images) == (2, 1) and rep.missing_images == [
        "/home/someone/aitw/images/run1/ep1_2.png"
    ]
    rep = import_legacy(f, images, tmp_path / "blank", on_missing="blank")
    assert (rep.imported, rep.blank_images) == (3, 1)
    t1 = TrajectoryStore(tmp_path / "blank").load()[1]
    assert not t1.steps[2].observation.screenshot.any() and t1.steps[1].observation.screenshot.any()


def test_old_formats_numpy1_names_and_plain_pickles(tmp_path: Path) -> None:
    data = [[{"action": "x", "image_features": np.arange(3, dtype=np.float32), "reward": np.float32(1.0), "s": {1, 2}}]]
    legacy = tmp_path / "legacy.pt"
    torch.save(data, legacy, _use_new_zipfile_serialization=False, pickle_protocol=2)
    raw = legacy.read_bytes()
    assert b"numpy._core.multiarray" in raw or b"numpy.core.multiarray" in raw
    legacy.write_bytes(raw.replace(b"numpy._core.multiarray", b"numpy.core.multiarray"))  # as numpy 1.x wrote it
    for path in (legacy, _plain(tmp_path / "p2.pkl", data, 2), _plain(tmp_path / "p5.pkl", data, 5)):
        got = load_legacy_file(path)
        assert np.array_equal(got[0][0]["image_features"], np.arange(3)) and got[0][0]["s"] == {1, 2}, path


def _plain(path: Path, obj: Any, protocol: int) -> Path:
    path.write_bytes(pickle.dumps(obj, protocol=protocol))
    return path


class _Evil:
    """Unpickling this runs a shell command that creates the marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.marker}",))


class _EvilEval:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (eval, (f"open({str(self.marker)!r}, 'w')",))


@pytest.mark.parametrize("writer", ["torch-zip", "torch-legacy", "pickle"])
@pytest.mark.parametrize("payload", [_Evil, _EvilEval])
def test_malicious_pickles_are_refused_and_nothing_runs(tmp_path: Path, writer: str, payload: type) -> None:
    marker = tmp_path / "PWNED"
    data = [[{"action": "x", "image_path": "a.png", "extra": payload(marker)}]]
    f = tmp_path / "evil.pt"
    if writer == "pickle":
        f.write_bytes(pickle.dumps(data))
    else:
        torch.save(data, f, _use_new_zipfile_serialization=writer == "torch-zip")
    with pytest.raises(LegacyFileError, match=r"refused to load.*(system|eval)") as e:
        load_legacy_file(f)
    assert str(f) in str(e.value) and "nothing in it was run" in str(e.value)
    assert not marker.exists()
    (tmp_path / "images").mkdir()
    assert main(["data", "import-legacy", str(f), str(tmp_path / "ds"), "--images", str(tmp_path / "images")]) == 2
    assert not marker.exists() and not (tmp_path / "ds").exists()


def test_a_numpy_function_outside_the_allowlist_is_refused(tmp_path: Path) -> None:
    class LoadAny:
        def __reduce__(self) -> tuple[Any, ...]:
            return (np.load, ("/etc/passwd",))

    f = _plain(tmp_path / "x.pkl", [LoadAny()], 4)
    with pytest.raises(LegacyFileError, match=r"numpy.*load"):
        load_legacy_file(f)


def test_wrong_layouts_are_clear_errors(tmp_path: Path, images: Path) -> None:
    for obj, msg in (
        ({"a": 1}, "expected a list of trajectories"),
        ([{"action": "x"}], "item 0 is a dict"),
        ([[{"reward": 1}]], "no 'action'"),
    ):
        f = tmp_path / "w.pt"
        torch.save(obj, f)
        with pytest.raises(LegacyFileError, match=msg):
            import_legacy(f, images, tmp_path / "ds")
        assert not (tmp_path / "ds").exists()  # checked before the dataset is made
    (tmp_path / "junk.pt").write_bytes(b"not a pickle at all")
    with pytest.raises(LegacyFileError, match="not a pickle"):
        load_legacy_file(tmp_path / "junk.pt")
    with pytest.raises(LegacyFileError, match="does not exist"):
        import_legacy(tmp_path / "w.pt", tmp_path / "nope", tmp_path / "ds2")


def test_cli_import_then_offline_training(tmp_path: Path, images: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "webshop.pt"
    torch.save(legacy_data(), f)
    ds = tmp_path / "ds"
    assert main(["data", "import-legacy", str(f), str(ds), "--images", str(images), "--family", "webshop", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["imported"] == 3 and rep["out"] == str(ds)
    run = tmp_path / "run"
    args = [
        "train",
        str(run),
        "mode=offline",
        f"offline_dataset={ds}",
        "algo.name=filtered_bc",
        "algo.offline_actor_steps=2",
        "eval.test_tasks=0",
        "eval.train_tasks=0",
        "policy.default.dim=32",
        "policy.default.layers=1",
        "policy.default.heads=2",
        "log.tensorboard=false",
        "--json",
    ]
    assert main(args) == 0
    assert (run / "policy" / "model.safetensors").is_file()


def _long1(n: int) -> bytes:
    raw = n.to_bytes((n.bit_length() + 8) // 8, "little", signed=True)
    return b"\x8a" + bytes([len(raw)]) + raw


_BIG = 2**45
_LEN8 = _BIG.to_bytes(8, "little")
#: Tiny files whose length fields or calls ask for 32 TiB; each must fail in a line naming the file.
_BOMBS = {
    "unicode8": b"\x80\x04\x8d" + _LEN8 + b"abc",  # the 14-byte file of issue 43
    "bytes8": b"\x80\x04\x8e" + _LEN8 + b"abc",
    "bytearray8": b"\x80\x05\x96" + _LEN8 + b"abc",
    "frame": b"\x80\x04\x95" + _LEN8 + b"abc",
    "bytearray(n)": b"\x80\x02c__builtin__\nbytearray\n" + _long1(_BIG) + b"\x85R.",
    "ndarray(shape)": b"\x80\x02cnumpy\nndarray\n" + _long1(_BIG) + b"\x85\x85R.",
    "_reconstruct": b"\x80\x02cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\n" + _long1(_BIG) + b"\x85C\x01b\x87R.",
}


@pytest.mark.parametrize("kind", sorted(_BOMBS))
def test_a_tiny_pickle_declaring_a_huge_object_is_a_clear_error(tmp_path: Path, kind: str, images: Path) -> None:
    f = tmp_path / "bomb.pkl"
    f.write_bytes(_BOMBS[kind])
    with pytest.raises(LegacyFileError) as ei:
        load_legacy_file(f)
    size = len(_BOMBS[kind])
    want = 2**48 if kind == "ndarray(shape)" else _BIG  # float64: 8 bytes an element
    assert str(ei.value).startswith(f"{f}: declares a {want:,}-byte ")
    assert f"but the file holds only {size} bytes" in str(ei.value)
    assert main(["data", "import-legacy", str(f), str(tmp_path / "ds"), "--images", str(images)]) == 2
    assert not (tmp_path / "ds").exists()


def test_a_wrong_value_deep_in_the_file_leaves_no_dataset(tmp_path: Path, images: Path) -> None:
    data = legacy_data()
    data[2][3]["reward"] = "high"  # the last step of the last trajectory
    f = tmp_path / "d.pt"
    torch.save(data, f)
    with pytest.raises(LegacyFileError, match=r"trajectory 2 step 3: reward must be a number, got str"):
        import_legacy(f, images, tmp_path / "ds", shard_size=1)
    assert not (tmp_path / "ds").exists()


def test_no_importable_trajectory_leaves_no_dataset_and_a_rerun_skips_what_is_stored(tmp_path: Path, images: Path) -> None:
    f = tmp_path / "d.pt"
    torch.save(legacy_data(), f)
    empty = tmp_path / "empty-images"
    empty.mkdir()
    with pytest.raises(LegacyFileError, match=r"no trajectory could be imported from its 3 \(first missing screenshots: "):
        import_legacy(f, empty, tmp_path / "ds")
    assert not (tmp_path / "ds").exists()
    first = import_legacy(f, images, tmp_path / "ds")
    again = import_legacy(f, images, tmp_path / "ds")  # e.g. after an interrupted import
    assert (first.imported, again.imported, again.already_stored) == (3, 0, 3)
    assert len(TrajectoryStore(tmp_path / "ds", create=False)) == 3
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(DataError, match="exists and is not a digirl dataset"):
        import_legacy(f, images, tmp_path / "other")
