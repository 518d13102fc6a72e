"""A quiet static HTTP server on 127.0.0.1 (a free port), for MiniWoB++ pages and local test apps."""

from __future__ import annotations

import functools
import logging
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from digirl.utils.shared import SharedInstances

__all__ = ["StaticServer"]

log = logging.getLogger(__name__)


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        log.debug("http: " + format, *args)

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


class StaticServer:
    """Serves the files under ``root`` at ``http://127.0.0.1:<port>/`` from a daemon thread.

    Use as a context manager, or :meth:`shared` for a process-wide, reference-counted instance.
    """

    _shared: SharedInstances[Path, StaticServer] = SharedInstances()

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise FileNotFoundError(f"static server root {self.root} is not a folder")
        handler = functools.partial(_QuietHandler, directory=str(self.root))
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self.port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="digirl-static-http", daemon=True)
        self._thread.start()
        self._closed = False

    @property
    def url(self) -> str:
        """Base URL, ending with ``/``."""
        return f"http://127.0.0.1:{self.port}/"

    @classmethod
    def shared(cls, root: str | Path) -> StaticServer:
        return cls._shared.acquire(Path(root).resolve(), cls)

    @property
    def closed(self) -> bool:
        return self._closed

    def release(self) -> None:
        if self._shared.release(self.root, self):
            self.close()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> StaticServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
