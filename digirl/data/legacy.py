"""Import the trajectory files released with DigiRL and Digi-Q, without ever running their code.

Those files are pickles (``torch.save`` of a list of trajectories, each a list of step dicts with
``observation`` and ``next_observation`` (Auto-UI prompt text ``Previous Actions: … Goal: …</s>``),
``action`` (Auto-UI action text), ``reward``, ``done``, ``mc_return``, ``trajectory_reward``,
``image_path``, ``next_image_path``, ``image_features``, ``task``; Digi-Q adds ``action_list``,
``q_rep_out``, ``traj_id``, ``step_id``, …). A pickle can run any code while it loads, so it is read
with an allowlist: plain containers, numbers, strings, numpy arrays and torch tensors — anything
else is refused with :class:`LegacyFileError` naming the file and the refused global, before
anything is built from it.

- ``torch.save`` files (zip or the older stream format) go through ``torch.load(weights_only=True)``,
  torch's restricted unpickler, with numpy's array-rebuilding functions added to its allowlist;
- plain pickle files go through :class:`_AllowlistUnpickler`, whose ``find_class`` knows only
  numpy's array and scalar rebuilders and a few builtin containers.

The steps become a normal :class:`~digirl.data.store.TrajectoryStore`: screenshots are found under
an images folder by file name (the files name paths on the authors' machines), actions are parsed
with the Auto-UI codec (unparseable text becomes an INVALID action that keeps the text), the
instruction is the ``task`` field or, without one, the text after ``Goal:`` in the prompt.
"""

from __future__ import annotations

import logging
import math
import os
import pickle
import re
import struct
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, ClassVar, Literal

import numpy as np
from PIL import Image

from digirl.core.actions import Action
from digirl.core.codecs import AutoUICodec, action_to_dict
from digirl.core.errors import DataError
from digirl.core.types import Observation, Step, TaskSpec, Trajectory
from digirl.utils.images import resize

__all__ = [
    "ImageIndex",
    "ImportReport",
    "LegacyFileError",
    "convert_legacy",
    "import_legacy",
    "instruction_from_prompt",
    "load_legacy_file",
]

log = logging.getLogger(__name__)

OnMissing = Literal["skip", "blank"]

#: The number torch's pre-1.6 stream format pickles first (``torch.serialization.MAGIC_NUMBER``).
_TORCH_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_GLOBAL_RE = re.compile(r"GLOBAL ([\w.]+)")
#: Step keys the import reads; the others (feature arrays, Digi-Q's representations) are reported as dropped.
_STEP_KEYS_USED = {
    "observation",
    "next_observation",
    "action",
    "reward",
    "done",
    "mc_return",
    "trajectory_reward",
    "image_path",
    "next_image_path",
    "task",
    "action_list",
    "traj_id",
    "step_id",
}


class LegacyFileError(DataError):
    """A legacy file that cannot be imported: refused content, or not the expected layout."""


# --------------------------------------------------------------------------- restricted loading
# (module, name) pairs a plain pickle may reference. numpy pickles arrays as
# _reconstruct(ndarray, shape, dtype) + __setstate__, scalars as scalar(dtype, bytes); numpy < 2 wrote
# the modules as numpy.core.*, numpy >= 2 as numpy._core.*. Each builds an array or a scalar from data.
_PLAIN_ALLOWED = {
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
    ("numpy.core.numeric", "_frombuffer"),  # protocol 5 writes arrays as _frombuffer(bytes, dtype, shape, order)
    ("numpy._core.numeric", "_frombuffer"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("collections", "OrderedDict"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("builtins", "complex"),
    ("builtins", "bytearray"),
    ("__builtin__", "set"),
    ("__builtin__", "frozenset"),
    ("__builtin__", "complex"),
    ("__builtin__", "bytearray"),
    ("_codecs", "encode"),  # protocol-2 pickles write bytes as _codecs.encode(str, 'latin1')
}


def _refused(path: Path, name: str) -> LegacyFileError:
    return LegacyFileError(
        f"{path}: refused to load: the file references the Python global {name!r}; only plain containers, "
        "numbers, strings, numpy arrays and torch tensors are allowed (a crafted file, or one this importer "
        "does not support; nothing in it was run)"
    )


def _too_large(path: Path, n: int, what: str, limit: int) -> LegacyFileError:
    return LegacyFileError(
        f"{path}: declares a {n:,}-byte {what}, but the file holds only {limit:,} bytes "
        "(a truncated or crafted file; nothing that large was allocated)"
    )


class _BoundedFile:
    """A file whose reads may not ask for more bytes than remain in it: a length field of a crafted
    pickle (a 14-byte file declaring a 2^45-byte string) fails here instead of allocating it."""

    def __init__(self, f: Any, path: Path, size: int) -> None:
        self._f, self._path, self.size = f, path, size

    def _check(self, n: int) -> None:
        if n > self.size - self._f.tell():
            raise _too_large(self._path, n, "object", self.size)

    def read(self, n: int = -1) -> bytes:
        if n is not None and n >= 0:
            self._check(n)
        return bytes(self._f.read(n))

    def readinto(self, b: Any) -> int:
        self._check(len(b))
        return int(self._f.readinto(b))

    def readline(self) -> bytes:
        return bytes(self._f.readline())


def _nbytes(shape: Any, dtype: Any) -> int:
    """Bytes an array of ``shape`` and ``dtype`` takes (Python ints: no overflow); 0 when unknown."""
    dims = (shape,) if isinstance(shape, int) else tuple(shape) if isinstance(shape, (tuple, list)) else ()
    if not all(isinstance(d, int) for d in dims):
        return 0
    try:
        item = np.dtype(dtype).itemsize if dtype is not None else 8
    except (TypeError, ValueError):
        item = 1  # numpy's _reconstruct is given the typecode b'b'
    n = max(item, 1)
    for d in dims:
        n *= max(d, 0)
    return n


class _AllowlistUnpickler(pickle._Unpickler):
    """A pickle reader that resolves only the globals in :data:`_PLAIN_ALLOWED` and allocates
    nothing larger than the file: Python's pure reader (the C one allocates a declared length
    before reading it), with lengths checked by :class:`_BoundedFile`, ``BYTEARRAY8``, and the
    calls that allocate from their arguments (``bytearray(n)``, ``ndarray(shape)``, numpy's
    ``_reconstruct``)."""

    # the pure reader's internals, untyped in the stubs
    stack: list[Any]
    read: Callable[[int], bytes]
    readinto: Callable[[bytearray], int]
    append: Callable[[Any], None]
    dispatch: ClassVar[dict[int, Callable[[Any], None]]] = dict(pickle._Unpickler.dispatch)

    def __init__(self, file: Any, path: Path, size: int) -> None:
        super().__init__(_BoundedFile(file, path, size), encoding="latin1")
        self._path, self._size = path, size

    def _check_call(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None) -> None:
        kw = kwargs or {}
        n = 0
        if func is bytearray and args and isinstance(args[0], int):
            n = args[0]
        elif func is np.ndarray and kw.get("buffer") is None and (len(args) < 3 or args[2] is None):
            n = _nbytes(args[0] if args else kw.get("shape", ()), args[1] if len(args) > 1 else kw.get("dtype", float))
        elif getattr(func, "__name__", "") == "_reconstruct" and len(args) >= 3:
            n = _nbytes(args[1], args[2])
        elif getattr(func, "__name__", "") == "scalar" and args:
            n = _nbytes((), args[0])
        if n > self._size:
            raise _too_large(self._path, n, f"{getattr(func, '__name__', 'object')}", self._size)

    def _load_bytearray8(self) -> None:
        (n,) = struct.unpack("<Q", self.read(8))
        if n > self._size:
            raise _too_large(self._path, n, "bytearray", self._size)
        b = bytearray(n)
        self.readinto(b)
        self.append(b)

    def _load_reduce(self) -> None:
        args = self.stack.pop()
        self._check_call(self.stack[-1], tuple(args))
        self.stack[-1] = self.stack[-1](*args)

    def _load_newobj(self) -> None:
        args = self.stack.pop()
        cls = self.stack.pop()
        self._check_call(cls, tuple(args))
        self.append(cls.__new__(cls, *args))

    def _load_newobj_ex(self) -> None:
        kwargs = self.stack.pop()
        args = self.stack.pop()
        cls = self.stack.pop()
        self._check_call(cls, tuple(args), dict(kwargs))
        self.append(cls.__new__(cls, *args, **kwargs))

    dispatch[pickle.BYTEARRAY8[0]] = _load_bytearray8
    dispatch[pickle.REDUCE[0]] = _load_reduce
    dispatch[pickle.NEWOBJ[0]] = _load_newobj
    dispatch[pickle.NEWOBJ_EX[0]] = _load_newobj_ex

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _PLAIN_ALLOWED:
            raise _refused(self._path, f"{module}.{name}")
        if module == "_codecs":
            import codecs

            return codecs.encode
        mod = module.replace("__builtin__", "builtins")
        if mod.startswith("numpy.core.") and not hasattr(np, "core"):
            mod = mod.replace("numpy.core.", "numpy._core.")
        return super().find_class(mod, name)

    def persistent_load(self, pid: Any) -> Any:
        raise LegacyFileError(f"{self._path}: a plain pickle with persistent ids (tensor storages) is not supported")


def _numpy_safe_globals() -> list[Any]:
    """numpy's rebuilders for torch's allowlist, under both the numpy 1 and numpy 2 module names."""
    try:
        from numpy._core import multiarray as ma
    except ImportError:  # numpy < 2
        from numpy.core import multiarray as ma  # type: ignore[no-redef]
    out: list[Any] = [np.ndarray, np.dtype]
    for fn in (ma._reconstruct, ma.scalar):
        out.append(fn)
        for mod in ("numpy.core.multiarray", "numpy._core.multiarray"):
            if f"{fn.__module__}.{fn.__name__}" != f"{mod}.{fn.__name__}":
                out.append((fn, f"{mod}.{fn.__name__}"))
    # numpy >= 1.25 may pickle a dtype through its class (numpy.dtypes.Float32DType, ...)
    dtypes = getattr(np, "dtypes", None)
    if dtypes is not None:
        out += [getattr(dtypes, n) for n in dir(dtypes) if n.endswith("DType") and isinstance(getattr(dtypes, n), type)]
    return out


def _torch_load(path: Path) -> Any:
    import torch

    safe_globals = getattr(torch.serialization, "safe_globals", None)
    if safe_globals is None:
        raise LegacyFileError(f"{path}: importing torch.save files safely needs torch >= 2.5 (torch.serialization.safe_globals)")
    try:
        with safe_globals(_numpy_safe_globals()):
            return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        m = _GLOBAL_RE.search(str(e))
        if m:
            raise _refused(path, m.group(1)) from None
        first = next((ln.strip() for ln in str(e).splitlines() if "WeightsUnpickler" in ln or "Unsupported" in ln), "")
        raise LegacyFileError(f"{path}: refused by the restricted loader ({first or type(e).__name__})") from None
    except MemoryError:
        raise LegacyFileError(
            f"{path}: declares an object larger than this machine's memory (a truncated or crafted file)"
        ) from None
    except (RuntimeError, EOFError, OSError, ValueError, zipfile.BadZipFile) as e:
        raise LegacyFileError(
            f"{path}: not a readable torch.save file ({str(e).splitlines()[0] if str(e) else type(e).__name__})"
        ) from e


def load_legacy_file(path: str | Path) -> Any:
    """The object pickled in ``path``, read through an allowlist (see the module docstring).

    Raises:
        LegacyFileError: the file needs a global outside the allowlist (the message names it), or it
            is not a pickle / ``torch.save`` file.
    """
    path = Path(path)
    if not path.is_file():
        raise LegacyFileError(f"{path}: no such file")
    if zipfile.is_zipfile(path):
        return _torch_load(path)
    with open(path, "rb") as f:
        try:
            first = _AllowlistUnpickler(f, path, os.fstat(f.fileno()).st_size).load()
        except LegacyFileError:
            raise
        except (
            pickle.UnpicklingError,
            EOFError,
            ValueError,
            TypeError,
            AttributeError,
            IndexError,
            KeyError,
            struct.error,
            OverflowError,
        ) as e:
            raise LegacyFileError(f"{path}: not a pickle or torch.save file ({type(e).__name__}: {e})") from None
        except MemoryError:  # what the checks above cannot bound: still one line, naming the file
            raise LegacyFileError(f"{path}: needs more memory than this machine has (a crafted or damaged file?)") from None
    if isinstance(first, int) and first == _TORCH_LEGACY_MAGIC:  # torch's pre-zip stream format
        return _torch_load(path)
    return first


# --------------------------------------------------------------------------- images
class ImageIndex:
    """Every image file under a folder, found by file name (the released paths name other machines).

    When several files share a name, the one whose parent folders match more of the original path wins.
    """

    SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp", ".gif")

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        if not self.root.is_dir():
            raise LegacyFileError(f"{self.root}: the images folder does not exist")
        self.by_name: dict[str, list[Path]] = {}
        for dirpath, _, files in os.walk(self.root):
            for f in files:
                if f.lower().endswith(self.SUFFIXES):
                    self.by_name.setdefault(f, []).append(Path(dirpath) / f)
        for paths in self.by_name.values():
            paths.sort()

    def __len__(self) -> int:
        return sum(len(v) for v in self.by_name.values())

    def find(self, original: str) -> Path | None:
        """The local file for a path written on another machine (POSIX or Windows), or ``None``."""
        parts = PureWindowsPath(original).parts if "\\" in original else PurePosixPath(original).parts
        if not parts:
            return None
        found = self.by_name.get(parts[-1])
        if not found:
            return None
        if len(found) == 1:
            return found[0]

        def shared_suffix(p: Path) -> int:
            n = 0
            for a, b in zip(reversed(p.parts), reversed(parts)):
                if a != b:
                    break
                n += 1
            return n

        return max(found, key=shared_suffix)


# --------------------------------------------------------------------------- conversion
@dataclass
class ImportReport:
    """What an import did: counts, and what it could not use."""

    source: str
    trajectories_in_file: int = 0
    imported: int = 0
    steps: int = 0
    skipped_empty: int = 0
    #: Trajectories already in the dataset (a re-run of an interrupted import skips them).
    already_stored: int = 0
    skipped_missing_images: int = 0
    blank_images: int = 0
    invalid_actions: int = 0
    with_candidates: int = 0
    missing_images: list[str] = field(default_factory=list)
    #: Step keys not stored (large feature arrays and keys this importer does not know).
    dropped_keys: list[str] = field(default_factory=list)

    MAX_LISTED = 20

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "MAX_LISTED"}


def _number(v: Any, what: str) -> float:
    if not isinstance(v, (bool, int, float)) and callable(getattr(v, "item", None)):
        try:  # numpy scalars and arrays, torch tensors: one element only
            v = v.item()
        except (ValueError, RuntimeError):
            raise ValueError(f"{what} must be a single number, got an array") from None
    if isinstance(v, (bool, int, float)):
        return float(v)
    raise ValueError(f"{what} must be a number, got {type(v).__name__}")


def _step_numbers(d: Mapping[Any, Any], where: str) -> tuple[float, bool, dict[str, float]]:
    """``(reward, done, {mc_return, trajectory_reward})`` of a step dict, or ``LegacyFileError``."""
    try:
        reward = _number(d.get("reward", 0.0), f"{where}: reward")
        done = bool(_number(d.get("done", False), f"{where}: done"))
        extra = {k: _number(d[k], f"{where}: {k}") for k in ("mc_return", "trajectory_reward") if k in d}
    except ValueError as e:
        raise LegacyFileError(str(e)) from None
    if not math.isfinite(reward):
        raise LegacyFileError(f"{where}: reward {reward} is not finite")
    return reward, done, extra


def check_layout(data: Any, source: str) -> None:
    """Raise ``LegacyFileError`` unless ``data`` is a list of trajectories, each a list of step dicts
    with an ``action`` and numeric ``reward`` / ``done``: the whole file is checked before an import
    writes anything, so a file of the wrong shape leaves no dataset behind."""
    if not isinstance(data, (list, tuple)):
        raise LegacyFileError(f"{source}: expected a list of trajectories, found {type(data).__name__}")
    for ti, raw in enumerate(data):
        if isinstance(raw, Mapping):  # a single step where a trajectory was expected
            raise LegacyFileError(f"{source}: item {ti} is a dict, expected a list of step dicts (a trajectory)")
        if not isinstance(raw, (list, tuple)):
            raise LegacyFileError(f"{source}: item {ti} is a {type(raw).__name__}, expected a list of step dicts")
        for si, d in enumerate(raw):
            if not isinstance(d, Mapping):
                raise LegacyFileError(f"{source}: trajectory {ti} step {si} is a {type(d).__name__}, expected a dict")
            if "action" not in d:
                raise LegacyFileError(f"{source}: trajectory {ti} step {si} has no 'action' (keys: {sorted(map(str, d))[:12]})")
            _step_numbers(d, f"{source}: trajectory {ti} step {si}")


def _text(v: Any) -> str:
    if isinstance(v, bytes):
        return v.decode("utf-8", errors="replace")
    return v if isinstance(v, str) else ""


def instruction_from_prompt(prompt: str) -> str:
    """The goal in an Auto-UI prompt (``Previous Actions: … Goal: open the settings</s>``); ``""`` if none."""
    if "Goal:" not in prompt:
        return ""
    return " ".join(prompt.rsplit("Goal:", 1)[1].split("</s>", 1)[0].split())


def _screenshot(path: Path, max_side: int | None) -> np.ndarray:
    with Image.open(path) as im:
        rgb = im.convert("RGB")
    if max_side and max(rgb.size) > max_side:
        scale = max_side / max(rgb.size)
        rgb = resize(rgb, (max(1, round(rgb.width * scale)), max(1, round(rgb.height * scale))), Image.Resampling.BILINEAR)
    return np.asarray(rgb, dtype=np.uint8)


def _safe_id(text: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._")
    return s[:80] or "legacy"


def convert_legacy(
    data: Any,
    images: ImageIndex,
    *,
    source: str,
    family: str = "",
    split: str = "",
    env_id: str = "",
    on_missing: OnMissing = "skip",
    max_side: int | None = None,
    report: ImportReport | None = None,
) -> Iterator[Trajectory]:
    """Trajectories built from loaded legacy data (see :func:`load_legacy_file`), in file order.

    ``on_missing="skip"`` leaves out a trajectory with any screenshot that cannot be found or read;
    ``"blank"`` puts a black frame there (the step keeps its action, text and reward). Either way the
    report counts it and lists the first missing paths.
    """
    if on_missing not in ("skip", "blank"):
        raise ValueError(f"on_missing must be 'skip' or 'blank', got {on_missing!r}")
    rep = report if report is not None else ImportReport(source)
    if not isinstance(data, (list, tuple)):
        raise LegacyFileError(f"{source}: expected a list of trajectories, found {type(data).__name__}")
    rep.trajectories_in_file = len(data)
    horizon = max((len(t) for t in data if isinstance(t, (list, tuple))), default=10) or 10
    codec = AutoUICodec()
    dropped: set[str] = set(rep.dropped_keys)
    stem = _safe_id(Path(source).stem)
    for ti, raw in enumerate(data):
        if isinstance(raw, Mapping):  # a single step where a trajectory was expected
            raise LegacyFileError(f"{source}: item {ti} is a dict, expected a list of step dicts (a trajectory)")
        if not isinstance(raw, (list, tuple)):
            raise LegacyFileError(f"{source}: item {ti} is a {type(raw).__name__}, expected a list of step dicts")
        if not raw:
            rep.skipped_empty += 1
            continue
        t = _trajectory(raw, ti, images, codec, rep, dropped, source, stem, family, split, env_id, horizon, on_missing, max_side)
        if t is None:
            rep.skipped_missing_images += 1
            continue
        rep.imported += 1
        rep.steps += t.length
        yield t
    rep.dropped_keys = sorted(dropped)


def _trajectory(
    raw: Sequence[Any],
    ti: int,
    images: ImageIndex,
    codec: AutoUICodec,
    rep: ImportReport,
    dropped: set[str],
    source: str,
    stem: str,
    family: str,
    split: str,
    env_id: str,
    horizon: int,
    on_missing: OnMissing,
    max_side: int | None,
) -> Trajectory | None:
    frames: list[np.ndarray | None] = []
    for si, d in enumerate(raw):
        if not isinstance(d, Mapping):
            raise LegacyFileError(f"{source}: trajectory {ti} step {si} is a {type(d).__name__}, expected a dict")
        if "action" not in d:
            raise LegacyFileError(f"{source}: trajectory {ti} step {si} has no 'action' (keys: {sorted(map(str, d))[:12]})")
        dropped.update(str(k) for k in d if str(k) not in _STEP_KEYS_USED)
        frames.append(_frame(_text(d.get("image_path")), images, rep, max_side))
    last = raw[-1]
    final_frame = _frame(_text(last.get("next_image_path")), images, rep, max_side) if last.get("next_image_path") else None
    if any(f is None for f in frames):
        if on_missing == "skip":
            return None
        size = next((f.shape for f in frames if f is not None), (1, 1, 3))
        rep.blank_images += sum(f is None for f in frames)
        frames = [f if f is not None else np.zeros(size, np.uint8) for f in frames]

    first = raw[0]
    instruction = _text(first.get("task")).strip() or instruction_from_prompt(_text(first.get("observation")))
    task = TaskSpec(instruction=instruction, task_id=instruction, family=family, split=split, horizon=horizon, env_id=env_id)
    steps: list[Step] = []
    history: list[Action] = []
    prev: np.ndarray | None = None
    for si, d in enumerate(raw):
        where = f"{source}: trajectory {ti} step {si}"
        action_text = _text(d.get("action"))
        action = codec.parse(action_text)
        rep.invalid_actions += int(not action.is_valid)
        frame = frames[si]
        assert frame is not None
        obs = Observation(screenshot=frame, instruction=instruction, step=si, history=tuple(history), previous_screenshot=prev)
        reward, done, extra = _step_numbers(d, where)
        info: dict[str, Any] = {"legacy_image": _text(d.get("image_path")), **extra}
        cands = _text(d.get("action_list"))
        if cands:
            info["candidates"] = [
                {"action": action_to_dict(codec.parse(c)), "text": c} for c in (p.strip() for p in cands.split("<split>")) if c
            ]
        is_last = si == len(raw) - 1
        steps.append(Step(obs, action, action_text, reward, terminated=done, truncated=is_last and not done, info=info))
        history.append(action)
        prev = frame
    rep.with_candidates += int(any("candidates" in s.info for s in steps))
    final = None
    if final_frame is not None:
        final = Observation(
            screenshot=final_frame, instruction=instruction, step=len(steps), history=tuple(history), previous_screenshot=prev
        )
    meta: dict[str, Any] = {"source": "legacy", "file": Path(source).name, "index": ti}
    if first.get("traj_id") is not None:
        raw_id = first["traj_id"]
        try:
            meta["legacy_traj_id"] = str(raw_id.item() if callable(getattr(raw_id, "item", None)) else raw_id)
        except (ValueError, RuntimeError):
            meta["legacy_traj_id"] = "?"
    return Trajectory(
        task=task,
        steps=steps,
        final_observation=final,
        metadata=meta,
        traj_id=f"{stem}-{ti:06d}",
    )


def _frame(original: str, images: ImageIndex, rep: ImportReport, max_side: int | None) -> np.ndarray | None:
    if not original:
        return None
    local = images.find(original)
    if local is None:
        if len(rep.missing_images) < rep.MAX_LISTED:
            rep.missing_images.append(original)
        return None
    try:
        return _screenshot(local, max_side)
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as e:
        log.warning("%s: unreadable image (%s)", local, e)
        if len(rep.missing_images) < rep.MAX_LISTED:
            rep.missing_images.append(f"{original} (unreadable: {local})")
        return None


def import_legacy(
    file: str | Path,
    images_dir: str | Path,
    out: str | Path,
    *,
    family: str = "",
    split: str = "",
    env_id: str = "",
    on_missing: OnMissing = "skip",
    max_side: int | None = None,
    shard_size: int = 64,
) -> ImportReport:
    """Read ``file`` safely and write its trajectories into the dataset ``out`` (created if needed).

    The file's layout, the images folder and an existing ``out`` are checked before anything is
    written; ``out`` is created with the first shard, so an import that stores nothing leaves no
    dataset. Trajectories already in ``out`` (a re-run of an interrupted import) are skipped.

    Raises:
        LegacyFileError: refused content, a file of the wrong shape, or nothing importable in it.
    """
    from digirl.data.store import TrajectoryStore

    file = Path(file)
    images = ImageIndex(images_dir)
    data = load_legacy_file(file)
    check_layout(data, str(file))
    rep = ImportReport(str(file))
    info = {
        "producer": "digirl data import-legacy",
        "source_file": file.name,
        "legacy_format": "digiq" if _has_key(data, "action_list") else "digirl",
        "action_codec": "autoui",
    }
    out = Path(out)
    store = TrajectoryStore(out, create=False) if (out / "meta.json").exists() else None
    if store is None and out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise DataError(f"{out}: exists and is not a digirl dataset (no meta.json); give a new or empty folder")
    stored = set(store.trajectory_ids()) if store is not None else set()
    batch: list[Trajectory] = []

    def flush() -> None:
        nonlocal store
        if store is None:
            store = TrajectoryStore(out, info=info)
        store.append(batch)
        batch.clear()

    for t in convert_legacy(
        data,
        images,
        source=str(file),
        family=family,
        split=split,
        env_id=env_id,
        on_missing=on_missing,
        max_side=max_side,
        report=rep,
    ):
        if t.traj_id in stored:  # converted, but stored by an earlier run: not counted as imported now
            rep.already_stored += 1
            rep.imported -= 1
            rep.steps -= t.length
            continue
        batch.append(t)
        if len(batch) >= shard_size:
            flush()
    if batch:
        flush()
    if store is None:
        why = f"first missing screenshots: {', '.join(rep.missing_images[:3])}" if rep.missing_images else "it holds none"
        raise LegacyFileError(
            f"{file}: no trajectory could be imported from its {rep.trajectories_in_file} ({why}); nothing written to {out}"
        )
    log.info("imported %d of %d trajectories from %s into %s", rep.imported, rep.trajectories_in_file, file, out)
    return rep


def _has_key(data: Any, key: str) -> bool:
    return isinstance(data, (list, tuple)) and any(
        isinstance(t, (list, tuple)) and any(isinstance(d, Mapping) and key in d for d in t) for t in data[:50]
    )
