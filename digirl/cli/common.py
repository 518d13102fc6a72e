"""Helpers shared by the command modules: JSON output and example-bearing help."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def add_parser(sub: Any, name: str, help: str, example: str, **kw: Any) -> argparse.ArgumentParser:
    """A subcommand parser whose ``--help`` ends with a copy-paste example."""
    from digirl.cli.main import HelpFormatter

    return sub.add_parser(name, help=help, description=help, epilog=f"example:\n  {example}", formatter_class=HelpFormatter, **kw)  # type: ignore[no-any-return]


def add_json_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON object instead of tables")


def emit_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=None, default=str, sort_keys=False)
    sys.stdout.write("\n")
