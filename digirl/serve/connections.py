"""An HTTP server with a bounded number of connections and threads.

``http.server.ThreadingHTTPServer`` starts a thread for every connection it accepts, with no cap:
300 idle sockets hold 300 threads. :class:`BoundedHTTPServer` hands connections to a pool of at
most ``max_connections`` worker threads (started as needed, reused, daemonic so that a kept-alive
idle client never holds the process up on exit). When all are taken, a new connection displaces
the connection that has waited longest for its next request (idle sockets cannot lock clients
out); when none is idle, it is answered ``503 Service Unavailable`` with ``Retry-After`` by a
separate thread and closed. A connection
that breaks (reset, timeout, broken pipe) is one log line, never a traceback.
"""

from __future__ import annotations

import json
import logging
import queue
import selectors
import socket
import sys
import threading
import time
from http.server import HTTPServer
from typing import Any, cast

__all__ = ["BoundedHTTPServer", "busy_response"]

log = logging.getLogger("digirl.serve.server")

_Conn = tuple[socket.socket, Any]
#: Refused connections being drained at once; past it, a refused connection is closed at once.
_MAX_DRAINING = 1024
#: Seconds a kept-alive connection must have waited for its next request before a new connection
#: may displace it (a client that just got its answer is likely to send again at once).
_MIN_IDLE_S = 0.5


def busy_response(message: str, retry_after: int = 1) -> bytes:
    """A complete ``503`` HTTP/1.1 response with an OpenAI-style error body that closes the connection."""
    body = json.dumps({"error": {"message": message, "type": "server_busy", "param": None, "code": "server_busy"}}).encode()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nRetry-After: {retry_after}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


def describe(exc: BaseException | None) -> str:
    """One line for a failed connection: the exception's type and message, whitespace folded."""
    if exc is None:
        return "unknown error"
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}" if str(exc) else type(exc).__name__


class _Pool:
    """At most ``size`` daemon threads running ``work(conn)``; a thread is started only when none is idle."""

    def __init__(self, size: int, work: Any, done: Any) -> None:
        self.size = size
        self._work = work
        self._done = done  # called once the thread is idle again (so the caller's count of items never outruns threads)
        self._q: queue.SimpleQueue[_Conn | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._idle = 0  # threads waiting for work and not yet promised an item

    @property
    def threads(self) -> int:
        return len(self._threads)

    def submit(self, conn: _Conn) -> None:
        # Each queued item is promised a thread: an idle one, else a new one (the caller keeps the
        # number of items in the pool at most ``size``, so the pool never needs more threads).
        with self._lock:
            if self._idle:
                self._idle -= 1
            else:
                t = threading.Thread(target=self._loop, name=f"digirl-serve-conn-{len(self._threads)}", daemon=True)
                self._threads.append(t)
                t.start()
        self._q.put(conn)

    def _loop(self) -> None:
        while True:
            item = self._q.get()
            if item is None:
                return
            try:
                self._work(item)
            finally:
                with self._lock:
                    self._idle += 1
                self._done()

    def close(self) -> None:
        for _ in self._threads:
            self._q.put(None)


class BoundedHTTPServer(HTTPServer):
    """``HTTPServer`` serving up to ``max_connections`` connections at once, each on a pooled thread."""

    #: Pending connections the kernel holds before refusing (http.server's default of 5 resets bursts of clients).
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], handler: Any, *, max_connections: int = 256) -> None:
        if max_connections < 1:
            raise ValueError(f"max_connections must be >= 1, got {max_connections}")
        super().__init__(address, handler)
        self.max_connections = max_connections
        self._slots = threading.BoundedSemaphore(max_connections)
        self._active = 0
        self._count_lock = threading.Lock()
        self.refused_connections = 0
        self.aborted_connections = 0
        self.evicted_connections = 0
        #: Kept-alive connections waiting for their next request, with the time they started waiting.
        self._idle: dict[socket.socket, float] = {}
        self._pool = _Pool(max_connections, self._serve_one, self._release_slot)
        # Refusals are written (and the client's request drained) off the accept loop.
        self._refusals: queue.Queue[socket.socket | None] = queue.Queue(maxsize=_MAX_DRAINING)
        self._refuser = threading.Thread(target=self._refuse_loop, name="digirl-serve-refuse", daemon=True)
        self._refuser.start()

    @property
    def active_connections(self) -> int:
        return self._active

    @property
    def worker_threads(self) -> int:
        return self._pool.threads

    @property
    def idle_connections(self) -> int:
        return len(self._idle)

    def mark_idle(self, sock: socket.socket) -> None:
        """The connection waits for its next request: it may be closed to make room for a new one."""
        with self._count_lock:
            self._idle[sock] = time.monotonic()

    def mark_busy(self, sock: socket.socket) -> None:
        with self._count_lock:
            self._idle.pop(sock, None)

    def _evict_idle(self) -> bool:
        """Close the connection that has waited longest for its next request (at least
        ``_MIN_IDLE_S``), so that a full server makes room for a new client instead of refusing it
        while idle kept-alive sockets hold every slot. Its thread sees end-of-stream and frees the slot."""
        now = time.monotonic()
        with self._count_lock:
            idle = [(since, sock) for sock, since in self._idle.items() if now - since >= _MIN_IDLE_S]
            if not idle:
                return False
            _, victim = min(idle, key=lambda x: x[0])
            del self._idle[victim]
            self.evicted_connections += 1
        try:
            victim.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        return True

    # socketserver calls process_request in the accept loop for every accepted connection.
    def process_request(self, request: Any, client_address: Any) -> None:
        took = self._slots.acquire(blocking=False)
        if not took and self._evict_idle():
            took = self._slots.acquire(timeout=2.0)  # the evicted connection's thread frees its slot at once
        if not took:
            with self._count_lock:
                self.refused_connections += 1
            try:
                self._refusals.put_nowait(request)
            except queue.Full:  # a flood: close at once
                self.shutdown_request(request)
            return
        with self._count_lock:
            self._active += 1
        self._pool.submit((request, client_address))

    def _serve_one(self, conn: _Conn) -> None:
        request, client_address = conn
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.mark_busy(request)  # forget it
            self.shutdown_request(request)

    def _release_slot(self) -> None:
        with self._count_lock:
            self._active -= 1
        self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One line per broken connection (socketserver's default prints a traceback to stderr)."""
        self.handle_error_line(client_address, sys.exc_info()[1])

    def handle_error_line(self, client_address: Any, exc: BaseException | None) -> None:
        with self._count_lock:
            self.aborted_connections += 1
        log.info("connection from %s aborted (%s)", _peer(client_address), describe(exc))

    def _refuse_loop(self) -> None:
        """Answer refused connections 503, then read what their clients send (up to 1 MiB, for up to
        2 s) before closing: closing with unread input would reset the connection, and the client
        would see a reset instead of the 503. All at once, on one thread, with a selector."""
        payload = busy_response(f"the server is serving its maximum of {self.max_connections} connections; retry shortly")
        sel = selectors.DefaultSelector()
        held: dict[socket.socket, tuple[float, int]] = {}  # socket -> (deadline, bytes still to read)
        stop = False
        while not stop or held:
            try:  # take new refusals without blocking while some are being drained
                new = self._refusals.get(timeout=None if not held else 0.0)
                if new is None:
                    stop = True
                elif len(held) >= _MAX_DRAINING:
                    new.close()
                else:
                    try:
                        new.setblocking(False)
                        new.send(payload)  # a few hundred bytes: fits a fresh socket's send buffer
                        new.shutdown(socket.SHUT_WR)
                        sel.register(new, selectors.EVENT_READ)
                        held[new] = (time.monotonic() + 2.0, 1 << 20)
                    except OSError:
                        new.close()
                continue
            except queue.Empty:
                pass
            for key, _ in sel.select(timeout=0.05):
                sock = cast(socket.socket, key.fileobj)
                deadline, left = held[sock]
                try:
                    chunk = sock.recv(min(left, 1 << 16))
                except OSError:
                    chunk = b""
                if chunk and left > len(chunk):
                    held[sock] = (deadline, left - len(chunk))
                else:
                    sel.unregister(sock)
                    del held[sock]
                    sock.close()
            now = time.monotonic()
            for sock in [s for s, (deadline, _) in held.items() if deadline < now]:
                sel.unregister(sock)
                del held[sock]
                sock.close()
        sel.close()

    def server_close(self) -> None:
        super().server_close()
        self._pool.close()
        try:
            self._refusals.put_nowait(None)
        except queue.Full:
            pass


def _peer(address: Any) -> str:
    if isinstance(address, tuple) and len(address) >= 2:
        return f"{address[0]}:{address[1]}"
    return str(address)
