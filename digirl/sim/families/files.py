"""The Files app's files (newer surfaces): ``open_file`` and ``delete_file`` (``folder``, ``kind`` an
extension, ``name``, ``which`` latest | oldest): the file the request names, or a folder's newest (or
oldest) file of that kind, is open in the viewer / deleted. A named file that is not there arrived in
its folder before the episode (a .docx in Documents, a .pdf in Downloads, ...)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from digirl.core.actions import Action
from digirl.sim.apps.simple import FILE_FOLDERS
from digirl.sim.family_registry import builtin_family
from digirl.sim.goals import TaskContext
from digirl.sim.intents import Intent
from digirl.sim.plans import ExpertStep, in_app

if TYPE_CHECKING:
    import numpy as np

    from digirl.sim.phone import Phone

__all__ = ["FOLDER_OF_KIND"]

#: A file extension → the folder it lives in.
FOLDER_OF_KIND = {kind: folder for folder, _, kind, _ in FILE_FOLDERS if kind != "recent"} | {
    "jpeg": "Images",
    "png": "Images",
    "doc": "Documents",
    "txt": "Documents",
    "xlsx": "Documents",
    "pptx": "Documents",
    "mov": "Videos",
}


def _files(phone: Phone) -> Any:
    return phone.apps["files"]


def _note_file(phone: Phone, intent: Intent, ctx: TaskContext, rng: np.random.Generator) -> None:
    f, name, kind = _files(phone), intent.get("name"), intent.get("kind").lower().lstrip(".")
    if name:
        ext = name.rsplit(".", 1)[-1].lower() if "." in name else kind or "pdf"
        folder = intent.get("folder") or FOLDER_OF_KIND.get(ext, "Downloads")
        full = name if "." in name else f"{name}.{ext}"
        if not any(n.lower() == full.lower() for n, _ in f.files(folder)):
            f.added.setdefault(folder, []).insert(0, (full, f"{int(rng.integers(20, 900))} KB · Jun 3"))
        target = next(n for n, _ in f.files(folder) if n.lower() == full.lower())
    else:
        folder = intent.get("folder") or FOLDER_OF_KIND.get(kind, "Recent")
        mine = [n for n, _ in f.files(folder) if not kind or n.lower().endswith("." + kind)]
        if not mine:
            raise ValueError(f"no {kind or 'file'} in {folder}")
        target = mine[-1] if intent.get("which") == "oldest" else mine[0]
    ctx.initial["folder"], ctx.initial["file"] = folder, target


def _file_open(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    return phone.fg == "files" and _files(phone).viewing == ctx.initial.get("file")


def _file_deleted(phone: Phone, intent: Intent, ctx: TaskContext) -> bool:
    return list(_files(phone).deleted) == [ctx.initial.get("file")]


def _to_file(e: ExpertStep) -> Action | None:
    """Steps until the viewer shows the task's file; None when it does."""
    f, folder, target = _files(e.phone), e.ctx.initial["folder"], e.ctx.initial["file"]
    if f.viewing == target:
        return None
    if f.viewing is not None or (f.folder is not None and f.folder != folder):
        return Action.back()
    if f.folder is None:
        return e.goto(f"files.{[n for n, *_ in FILE_FOLDERS].index(folder)}") or Action.back()
    names = [n for n, _ in f.files(folder)]
    return e.goto(f"files.file.{names.index(target)}") or Action.back()


@builtin_family("open_file", "phone", predicate=_file_open, setup=_note_file, doc="the file is open in Files' viewer")
@in_app("files")
def _open_file_plan(e: ExpertStep) -> Action:
    return _to_file(e) or Action.complete()


@builtin_family("delete_file", "phone", predicate=_file_deleted, setup=_note_file, doc="the file (only it) is deleted in Files")
@in_app("files")
def _delete_file_plan(e: ExpertStep) -> Action:
    return _to_file(e) or e.goto("files.viewer.delete") or Action.back()
