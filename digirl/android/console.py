"""A client for the Android emulator console (the telnet port an emulator listens on).

``adb emu <command>`` is implemented by the adb *client*: it opens the emulator's console port
(``emulator-5554`` → 127.0.0.1:5554), authenticates with the token in
``~/.emulator_console_auth_token`` and sends the command. This class does the same without
spawning ``adb``, so snapshot loads (``avd snapshot load <name>``) and ``kill`` need no binary.
The token is read from its file at each call and never logged.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from pathlib import Path

from digirl.core.errors import EnvFailure

__all__ = ["ConsoleError", "EmulatorConsole"]

log = logging.getLogger(__name__)
DEFAULT_TOKEN_PATH = "~/.emulator_console_auth_token"


class ConsoleError(EnvFailure):
    """The console could not be reached, refused authentication or answered ``KO``."""


class EmulatorConsole:
    """Send commands to the console of the emulator listening on ``port``."""

    def __init__(
        self,
        port: int,
        *,
        host: str = "127.0.0.1",
        token_path: str | os.PathLike[str] | None = None,
        timeout_s: float = 10.0,
    ) -> None:
        self.port = port
        self.host = host
        self.token_path = Path(os.path.expanduser(str(token_path or DEFAULT_TOKEN_PATH)))
        self.timeout_s = timeout_s

    def __repr__(self) -> str:
        return f"EmulatorConsole({self.host}:{self.port})"

    def _read_reply(self, sock: socket.socket, buf: bytearray, deadline: float) -> tuple[bool, str]:
        """Read lines until one starts with OK or KO; return (ok, text before it + that line)."""
        lines: list[str] = []
        while True:
            while b"\n" in buf:
                i = buf.index(b"\n")
                line = buf[:i].decode("utf-8", errors="replace").rstrip("\r")
                del buf[: i + 1]
                if line.startswith("OK"):
                    lines.append(line[2:].lstrip(": "))
                    return True, "\n".join(x for x in lines if x)
                if line.startswith("KO"):
                    return False, line[2:].lstrip(": ")
                lines.append(line)
            if time.monotonic() > deadline:
                raise ConsoleError(f"console {self.host}:{self.port}: no OK/KO within {self.timeout_s}s")
            chunk = sock.recv(4096)
            if not chunk:
                # `kill` closes the socket right after its OK; anything else is a lost emulator.
                raise ConsoleError(f"console {self.host}:{self.port} closed the connection")
            buf.extend(chunk)

    def command(self, cmd: str) -> str:
        """Run one console command; return its output, raise :class:`ConsoleError` on ``KO``."""
        if "\n" in cmd or "\r" in cmd:
            raise ValueError("console commands are single lines")
        deadline = time.monotonic() + self.timeout_s
        try:
            with socket.create_connection((self.host, self.port), timeout=self.timeout_s) as sock:
                buf = bytearray()
                ok, banner = self._read_reply(sock, buf, deadline)
                if "Authentication required" in banner:
                    try:
                        token = self.token_path.read_text().strip()
                    except OSError as e:
                        raise ConsoleError(f"console needs the auth token file {self.token_path}: {e}") from e
                    sock.sendall(f"auth {token}\n".encode())
                    ok, _ = self._read_reply(sock, buf, deadline)
                    if not ok:
                        raise ConsoleError(f"console {self.host}:{self.port} refused the token in {self.token_path}")
                sock.sendall(cmd.encode() + b"\n")
                ok, out = self._read_reply(sock, buf, deadline)
        except OSError as e:
            raise ConsoleError(f"console {self.host}:{self.port} unreachable: {e}") from e
        if not ok:
            raise ConsoleError(f"console `{cmd}` failed: {out}")
        log.debug("console %s: %s -> %s", self.port, cmd, out[:80])
        return out

    def snapshot_load(self, name: str) -> None:
        """``adb emu avd snapshot load <name>``."""
        self.command(f"avd snapshot load {name}")

    def kill(self) -> None:
        """``adb emu kill``: ask the emulator to exit."""
        self.command("kill")
