"""The viewer's login: --auth / DIGIRL_VIEW_AUTH parsing, and a server that refuses its data without it."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from digirl.cli.view import parse_auth
from tests.viewer.runfactory import make_run


def test_parse_auth() -> None:
    assert parse_auth(None) is None and parse_auth("") is None
    assert parse_auth("me:pa:ss") == ("me", "pa:ss")
    for bad in ("nocolon", ":pw", "user:"):
        with pytest.raises(ValueError, match="USER:PASSWORD"):
            parse_auth(bad)


def test_login_required(tmp_path: Path) -> None:
    pytest.importorskip("gradio")
    requests = pytest.importorskip("requests")
    from digirl.viewer.app import launch
    from digirl.viewer.source import ViewerSource

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = launch(ViewerSource(make_run(tmp_path)), port=port, auth=("me", "s3cret-pw"), block=False)
    base = f"http://127.0.0.1:{port}"
    try:
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(f"{base}/config", timeout=30)
        assert e.value.code == 401
        session = requests.Session()
        assert not session.post(f"{base}/login", data={"username": "me", "password": "wrong"}, timeout=30).ok
        assert session.post(f"{base}/login", data={"username": "me", "password": "s3cret-pw"}, timeout=30).ok
        assert b"traj-table" in session.get(f"{base}/config", timeout=30).content
    finally:
        app.close()
