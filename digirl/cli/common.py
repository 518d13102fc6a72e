"""Helpers shared by the command modules: JSON output, example-bearing help, stopping on signals."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Any


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    pass


def add_parser(sub: Any, name: str, help: str, example: str, **kw: Any) -> argparse.ArgumentParser:
    """A subcommand parser whose ``--help`` ends with a copy-paste example."""
    return sub.add_parser(name, help=help, description=help, epilog=f"example:\n  {example}", formatter_class=HelpFormatter, **kw)  # type: ignore[no-any-return]


def add_group(sub: Any, name: str, help: str, example: str, *, metavar: str = "SUBCOMMAND", **kw: Any) -> Any:
    """A command of subcommands (``digirl data info``, ...); alone it prints its own help.

    Returns the group's subparsers, for :func:`add_parser`; ``kw`` go to ``add_subparsers``."""
    p = add_parser(sub, name, help, example)

    def show_help(_args: argparse.Namespace) -> int:
        p.print_help()
        return 0

    p.set_defaults(func=show_help)
    return p.add_subparsers(dest=f"{name}_command", metavar=metavar, **kw)


@dataclass(frozen=True)
class Arg:
    """One argument of a command, declared with the command (:func:`add_command`); ``group``: the
    title of the help section it is listed under (default: argparse's own sections)."""

    flags: tuple[str, ...]
    options: dict[str, Any]
    group: str | None = None


def arg(*flags: str, group: str | None = None, **options: Any) -> Arg:
    """An :class:`Arg`: the same words as ``parser.add_argument``."""
    return Arg(flags, options, group)


#: ``--json``: the commands' machine-readable output, listed last unless a command says otherwise.
JSON_FLAG = arg("--json", action="store_true", help="print one JSON object instead of tables")

#: ``--host`` of the commands that serve over HTTP (``view``, ``serve``): this machine only unless asked.
LOCAL_HOST = arg("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")


#: ``--families`` of the simulator commands: task families of the user's, registered before the command runs.
FAMILY_FILES = arg(
    "--families",
    metavar="SPEC",
    action="append",
    default=[],
    help="YAML file of user-defined task families to register first (repeatable; see docs/tasks.md)",
)


def register_family_files(paths: list[str]) -> None:
    """Register the task families of each ``--families`` file, in order."""
    if paths:
        from digirl.sim.families.spec import load_family_file

        for path in paths:
            load_family_file(path)


def add_command(
    sub: Any, name: str, help: str, example: str, func: Callable[[argparse.Namespace], int], *args: Arg, json: bool = True
) -> argparse.ArgumentParser:
    """A subcommand (see :func:`add_parser`) with ``args`` in order, ``--json`` last unless ``json`` is
    false, running ``func``."""
    p = add_parser(sub, name, help, example)
    groups: dict[str, Any] = {}
    for a in (*args, JSON_FLAG) if json else args:
        if a.group is not None and a.group not in groups:
            groups[a.group] = p.add_argument_group(a.group)
        (p if a.group is None else groups[a.group]).add_argument(*a.flags, **a.options)
    p.set_defaults(func=func)
    return p


def one_line_error(e: BaseException) -> str | None:
    """The one line a user sees for an error they can act on, or ``None`` for a bug (a traceback).

    Errors raised deliberately (``DigirlError``, ``ValueError``, ``KeyError``) keep their message;
    an ``OSError`` from the operating system (disk full, read-only file system, a path component
    that is a file, permission denied) names the path and the problem instead of a traceback.
    """
    from digirl.core.errors import DigirlError

    if isinstance(e, DigirlError):
        return str(e)
    if isinstance(e, OSError):
        if e.strerror is None:  # raised with a message of its own
            return str(e)
        where = "" if e.filename is None else f"{e.filename}: "
        to = "" if getattr(e, "filename2", None) is None else f" (-> {e.filename2})"
        return f"{where}{e.strerror}{to}"
    if isinstance(e, (KeyError, ValueError)):
        return str(e)
    return None


def emit_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=None, default=str, sort_keys=False)
    sys.stdout.write("\n")


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread as Ctrl-C is."""


@contextmanager
def stop_on_signals(*, sigint: bool = False) -> Iterator[None]:
    """While inside, SIGTERM (``kill``, schedulers, a benchmark's timeout) raises :class:`Terminated`,
    so a command leaves as on Ctrl-C: a run's env workers and their shared memory closed, its
    metrics flushed. A second SIGTERM ends the process at once. With ``sigint``, Ctrl-C raises
    KeyboardInterrupt even where the parent left SIGINT ignored (a shell's background job, ``nohup
    ... &``), for commands that run until stopped; otherwise SIGINT keeps what the parent gave it.
    Only the main thread may install handlers; elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_term(_signum: int, _frame: FrameType | None) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        raise Terminated

    def on_int(_signum: int, _frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    before = {signal.SIGTERM: signal.signal(signal.SIGTERM, on_term)}
    if sigint:
        before[signal.SIGINT] = signal.signal(signal.SIGINT, on_int)
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
