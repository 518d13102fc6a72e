"""``digirl view``: browse a run or a dataset in the browser (trajectories, actions on screenshots, V/Q)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from digirl.cli.common import LOCAL_HOST, add_command, arg

AUTH_ENV = "DIGIRL_VIEW_AUTH"


def add_commands(sub: Any) -> None:
    add_command(
        sub,
        "view",
        "web viewer of a run folder or dataset: trajectories, screenshots with actions, V / Q / advantage / kept",
        "digirl view runs/digirl          # then open http://127.0.0.1:7860",
        _view,
        arg("path", help="a run folder (digirl train output) or a dataset folder (holds meta.json)"),
        LOCAL_HOST,
        arg("--port", type=int, default=7860, help="port (default 7860)"),
        arg(
            "--auth",
            help=f"require a login, USER:PASSWORD (or set {AUTH_ENV}; the flag is visible to other users of this machine)",
        ),
        json=False,
    )


def parse_auth(value: str | None) -> tuple[str, str] | None:
    if not value:
        return None
    user, sep, password = value.partition(":")
    if not sep or not user or not password:
        raise ValueError("--auth / DIGIRL_VIEW_AUTH must be USER:PASSWORD")
    return user, password


def _view(args: argparse.Namespace) -> int:
    from digirl.viewer.app import launch
    from digirl.viewer.source import ViewerSource

    auth = parse_auth(args.auth or os.environ.get(AUTH_ENV))
    src = ViewerSource(args.path)
    if auth is None and args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"warning: serving on {args.host} without a login; set {AUTH_ENV}=USER:PASSWORD", file=sys.stderr)
    print(
        f"viewing {src.kind} {args.path} ({len(src.rows)} trajectories) at http://{args.host}:{args.port}"
        + (" (login required)" if auth else "")
        + "; Ctrl-C stops",
        flush=True,
    )
    launch(src, host=args.host, port=args.port, auth=auth)
    return 0
