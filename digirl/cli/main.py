"""The ``digirl`` command. Each subcommand group lives in its own module under ``digirl.cli``.

A module exposes ``add_commands(subparsers)``; it adds its parsers and sets ``func`` on each,
a callable taking the parsed ``argparse.Namespace`` and returning an exit code. Heavy imports
happen inside those functions, so ``digirl --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import signal
import sys
from collections.abc import Sequence

from digirl.cli.common import HelpFormatter, Terminated, one_line_error, stop_on_signals

# Order here is the order shown by --help.
_COMMAND_MODULES = (
    "digirl.cli.quickstart",
    "digirl.cli.train",
    "digirl.cli.digiq",
    "digirl.cli.policy",
    "digirl.cli.vlm",
    "digirl.cli.envs",
    "digirl.cli.sim",
    "digirl.cli.tasks",
    "digirl.cli.data",
    "digirl.cli.view",
    "digirl.cli.serve",
    "digirl.cli.config_cmd",
    "digirl.cli.judge",
    "digirl.cli.bench",
)

EPILOG = """examples:
  digirl quickstart                      # demos -> SFT -> DigiRL on the embedded simulator (CPU)
  digirl envs list                       # every registered environment
  digirl config show train algo.name=digirl
  digirl data info runs/demo/data        # summarize a trajectory dataset
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="digirl",
        description="Train device-control agents with autonomous RL (DigiRL, Digi-Q, Filtered BC) on a simulated phone, "
        "a real browser or Android devices.",
        epilog=EPILOG,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod_name in _COMMAND_MODULES:
        try:
            mod = importlib.import_module(mod_name)
        except ModuleNotFoundError as e:
            if e.name == mod_name:  # this command group is not part of the build
                continue
            raise
        mod.add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    # key=value overrides may follow options (`eval POLICY --out D k=v`); argparse alone rejects that.
    args, extra = parser.parse_known_args(argv)
    if extra:
        if isinstance(getattr(args, "overrides", None), list) and all("=" in e and not e.startswith("-") for e in extra):
            args.overrides += extra
        else:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.version:
        from digirl import __version__

        print(__version__)
        return 0
    level = logging.WARNING - 10 * min(args.verbose, 2) if args.verbose else logging.INFO
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        with stop_on_signals():
            return int(args.func(args) or 0)
    except Terminated:
        print("terminated", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # user-facing errors (and OS faults): one clear line, no traceback unless -vv
        line = one_line_error(e)
        if line is not None and args.verbose < 2:
            print(f"error: {line}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
