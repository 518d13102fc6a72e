"""Helpers shared by the command modules: JSON output, example-bearing help, stopping on signals."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
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


def add_json_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON object instead of tables")


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
