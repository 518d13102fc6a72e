"""A TEST ADB SERVER: a protocol-level test double, not a substitute for an emulator.

It speaks the adb *smart-socket* protocol that clients (adbutils, the adb CLI) use to talk to the
adb server on 127.0.0.1: 4-hex-digit length-prefixed requests, ``OKAY``/``FAIL`` replies,
``host:version``, ``host:devices[-l]``, ``host:tport:serial:<s>`` / ``host:transport:<s>`` followed
by ``shell:``, ``shell,v2:`` (framed stdout/stderr/exit packets) and ``exec:`` services,
``host-serial:<s>:get-state|get-serialno|features``, and ``host:emulator:<port>`` (how an emulator
announces itself). Devices behind it are Python objects:

* :class:`ScreenDevice` interprets the shell commands the device layer sends (``screencap -p``,
  ``input tap|swipe|text|keyevent``, ``getprop``, ``wm size``, ``dumpsys window``, ``am``,
  ``monkey``, ``uiautomator dump``, ``cat``, ``settings get``, ``echo``) against a :class:`Screen`
  (a digirl env behind a tiny interface), so ``input tap`` really drives the env;
* :class:`RemoteDevice` forwards commands as JSON lines to a fake emulator process.
"""

from __future__ import annotations

import base64
import io
import json
import shlex
import socket
import socketserver
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from PIL import Image

from digirl.core.actions import Action

ADB_VERSION = 41  # what adb 1.0.41 reports; adbutils then uses host:tport:serial


def free_port_block(n_ports: int, start: int = 20000, stop: int = 60000) -> int:
    """An even port P such that P .. P+n_ports-1 can all be bound on 127.0.0.1 right now."""
    import random

    rnd = random.Random()
    for _ in range(200):
        p = rnd.randrange(start, stop - n_ports) & ~1
        socks = []
        try:
            for q in range(p, p + n_ports):
                s = socket.socket()
                s.bind(("127.0.0.1", q))
                socks.append(s)
            return p
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no free port block")


class Screen(Protocol):
    """The device-side screen: pixels plus normalized input."""

    def screenshot(self) -> np.ndarray: ...

    def act(self, action: Action) -> None: ...


class EnvScreen:
    """A digirl env as a :class:`Screen`: actions go through ``env.step``; after the episode ends
    the screen freezes (a phone keeps showing its last screen)."""

    def __init__(self, env: Any, *, seed: int = 0, task: Any = None) -> None:
        self.env = env
        self.obs, _ = env.reset(seed=seed, options={"task": task} if task is not None else None)
        self.done = False
        self.rewards: list[float] = []
        self.actions: list[Action] = []

    def screenshot(self) -> np.ndarray:
        shot: np.ndarray = self.obs.screenshot
        return shot

    def act(self, action: Action) -> None:
        self.actions.append(action)
        if self.done:
            return
        self.obs, r, term, trunc, _ = self.env.step(action)
        self.rewards.append(r)
        self.done = term or trunc


def png(img: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(img, "RGB").save(buf, format="PNG")
    return buf.getvalue()


@dataclass
class ScreenDevice:
    """An in-process device whose shell understands the commands digirl sends."""

    screen: Screen
    state: str = "device"
    props: dict[str, str] = field(default_factory=lambda: {"sys.boot_completed": "1", "ro.build.version.sdk": "30"})
    adbkeyboard: bool = False
    foreground: str = "com.android.launcher3/.Launcher"
    typed: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    screencap_override: bytes | None = None
    #: Called with each shell command before it runs (tests use it to take the device offline).
    hook: Callable[[str], None] | None = None

    def size(self) -> tuple[int, int]:
        h, w = self.screen.screenshot().shape[:2]
        return int(w), int(h)

    def run(self, cmd: str) -> tuple[bytes, bytes, int]:
        self.commands.append(cmd)
        if self.hook is not None:
            self.hook(cmd)
        try:
            argv = shlex.split(cmd)
        except ValueError as e:
            return b"", f"sh: syntax error: {e}\n".encode(), 2
        if not argv:
            return b"", b"", 0
        w, h = self.size()
        prog, args = argv[0], argv[1:]
        if prog == "echo":
            return (" ".join(args) + "\n").encode(), b"", 0
        if prog == "screencap":
            return (
                (self.screencap_override if self.screencap_override is not None else png(self.screen.screenshot())),
                b"",
                0,
            )
        if prog == "getprop":
            return (self.props.get(args[0], "") + "\n").encode() if args else b"", b"", 0
        if prog == "wm" and args[:1] == ["size"]:
            return f"Physical size: {w}x{h}\n".encode(), b"", 0
        if prog == "settings":
            ime = "com.android.adbkeyboard/.AdbIME" if self.adbkeyboard else "com.google.android.inputmethod.latin/.LatinIME"
            return (ime + "\n").encode(), b"", 0
        if prog == "dumpsys" and args[:1] == ["window"]:
            return (
                (
                    f"  mCurrentFocus=Window{{5e1d u0 {self.foreground}}}\n"
                    f"  mFocusedApp=ActivityRecord{{a1b2 u0 {self.foreground} t12}}\n"
                ).encode(),
                b"",
                0,
            )
        if prog == "monkey" and "-p" in args:
            self.foreground = args[args.index("-p") + 1] + "/.MainActivity"
            return b"Events injected: 1\n", b"", 0
        if prog == "am" and args[:1] == ["start"] and "-n" in args:
            self.foreground = args[args.index("-n") + 1]
            return b"Status: ok\nLaunchState: COLD\n", b"", 0
        if prog == "am" and args[:1] == ["force-stop"]:
            return b"", b"", 0
        if prog == "am" and args[:1] == ["broadcast"] and "ADB_INPUT_B64" in args:
            if not self.adbkeyboard:
                return b"Broadcasting: Intent { act=ADB_INPUT_B64 }\nBroadcast completed: result=0\n", b"", 0
            msg = base64.b64decode(args[args.index("msg") + 1]).decode("utf-8")
            self.typed.append(msg)
            self.screen.act(Action.type_text(msg))
            return b"Broadcasting: Intent { act=ADB_INPUT_B64 }\nBroadcast completed: result=0\n", b"", 0
        if prog == "uiautomator":
            return b"UI hierchary dumped to: /sdcard/digirl_window_dump.xml\n", b"", 0
        if prog == "cat":
            return self._ui_xml(w, h), b"", 0
        if prog == "input":
            return self._input(args, w, h)
        return b"", f"/system/bin/sh: {prog}: inaccessible or not found\n".encode(), 127

    def _input(self, args: list[str], w: int, h: int) -> tuple[bytes, bytes, int]:
        kind = args[0] if args else ""
        if kind == "tap" and len(args) == 3:
            x, y = int(args[1]), int(args[2])
            self.screen.act(Action.tap(x / w, y / h))
        elif kind == "swipe" and len(args) >= 5:
            x0, y0, x1, y1 = (int(v) for v in args[1:5])
            self.screen.act(Action.swipe((x0 / w, y0 / h), (x1 / w, y1 / h)))
        elif kind == "text" and len(args) == 2:
            text = args[1]
            if not text.isascii():  # what Android's `input` does with characters it cannot map
                return b"", b"java.lang.IllegalArgumentException: invalid text\n", 1
            text = text.replace("%s", " ")
            self.typed.append(text)
            self.screen.act(Action.type_text(text))
        elif kind == "keyevent" and len(args) == 2:
            code = int(args[1])
            self.typed.append({66: "\n", 61: "\t"}.get(code, f"<key {code}>"))
            act = {3: Action.home(), 4: Action.back(), 66: Action.enter()}.get(code)
            if act is not None:
                self.screen.act(act)
        else:
            return b"", f"Error: bad input command {args!r}\n".encode(), 1
        return b"", b"", 0

    def _ui_xml(self, w: int, h: int) -> bytes:
        env = getattr(self.screen, "env", None)
        els = env._elements() if env is not None else ()
        nodes = "".join(
            f'<node index="{i}" text="{e.text}" resource-id="{e.ref}" class="android.widget.Button" '
            f'clickable="{str(e.clickable).lower()}" focused="{str(e.focused).lower()}" '
            f'bounds="[{int(e.bounds[0] * w)},{int(e.bounds[1] * h)}]'
            f'[{int(e.bounds[2] * w)},{int(e.bounds[3] * h)}]"/>'
            for i, e in enumerate(els or ())
        )
        return f"<?xml version='1.0' encoding='UTF-8'?><hierarchy rotation=\"0\">{nodes}</hierarchy>".encode()


class RemoteDevice:
    """A device living in another process (the fake emulator), reached over a JSON-line socket."""

    def __init__(self, port: int) -> None:
        self.port = port

    def request(self, cmd: str) -> dict[str, Any]:
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
            s.sendall(json.dumps({"cmd": cmd}).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        return dict(json.loads(data))

    @property
    def state(self) -> str:
        return str(self.request("__state__")["out"])

    def run(self, cmd: str) -> tuple[bytes, bytes, int]:
        r = self.request(cmd)
        return base64.b64decode(r["out"]), base64.b64decode(r.get("err", "")), int(r.get("rc", 0))


class _Handler(socketserver.BaseRequestHandler):
    server: AdbTestServer

    def _read(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = self.request.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("client closed")
            buf += chunk
        return buf

    def _request(self) -> str:
        n = int(self._read(4), 16)
        return self._read(n).decode("utf-8")

    def _okay(self, payload: bytes | None = None) -> None:
        self.request.sendall(b"OKAY" + (b"" if payload is None else f"{len(payload):04x}".encode() + payload))

    def _fail(self, msg: str) -> None:
        data = msg.encode()
        self.request.sendall(b"FAIL" + f"{len(data):04x}".encode() + data)

    def handle(self) -> None:
        try:
            self._handle()
        except (ConnectionError, OSError, ValueError):
            pass

    def _handle(self) -> None:
        srv = self.server
        req = self._request()
        srv.requests.append(req)
        if req == "host:version":
            return self._okay(f"{ADB_VERSION:04x}".encode())
        if req in ("host:devices", "host:devices-l"):
            lines = "".join(f"{s}\t{st}\n" for s, st in srv.device_states().items())
            return self._okay(lines.encode())
        if req.startswith("host:emulator:"):
            port = int(req.rsplit(":", 1)[1])
            srv.add_device(f"emulator-{port - 1}", RemoteDevice(port))
            return None
        if req.startswith("host-serial:"):
            _, serial, cmd = req.split(":", 2)
            dev, err = srv.lookup(serial, need_online=False)
            if dev is None:
                return self._fail(err)
            if cmd == "get-state":
                return self._okay(srv.state_of(serial).encode())
            if cmd == "get-serialno":
                return self._okay(serial.encode())
            if cmd == "features":
                return self._okay(b"shell_v2,cmd,stat_v2")
            return self._fail(f"unknown host-serial service {cmd}")
        if req.startswith(("host:tport:serial:", "host:transport:")):
            serial = req.rsplit(":", 1)[1]
            dev, err = srv.lookup(serial, need_online=True)
            if dev is None:
                return self._fail(err)
            if req.startswith("host:tport:"):
                self._okay()
                self.request.sendall(struct.pack("<Q", srv.transport_id(serial)))
            else:
                self._okay()
            return self._service(serial, dev, self._request())
        return self._fail(f"unknown host service {req}")

    def _service(self, serial: str, dev: Any, svc: str) -> None:
        self.server.requests.append(svc)
        try:
            if svc.startswith("shell,v2:"):
                out, err, rc = dev.run(svc[len("shell,v2:") :])
                self._okay()
                for pid, data in ((1, out), (2, err)):
                    if data:
                        self.request.sendall(bytes([pid]) + struct.pack("<I", len(data)) + data)
                self.request.sendall(bytes([3]) + struct.pack("<I", 1) + bytes([rc & 0xFF]))
            elif svc.startswith("shell:"):
                out, err, _ = dev.run(svc[len("shell:") :])
                self._okay()
                self.request.sendall(out + err)
            elif svc.startswith("exec:"):
                out, _, _ = dev.run(svc[len("exec:") :])
                self._okay()
                self.request.sendall(out)
            else:
                self._fail(f"unknown service {svc}")
        except (ConnectionError, OSError) as e:
            if isinstance(dev, RemoteDevice):
                self.server.remove_device(serial)
            self._fail(f"device '{serial}' not found ({e})")


class AdbTestServer(socketserver.ThreadingTCPServer):
    """The test ADB server on 127.0.0.1 (an ephemeral port unless given). Use as a context manager."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.devices: dict[str, Any] = {}
        self.requests: list[str] = []
        self._ids: dict[str, int] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def add_device(self, serial: str, dev: Any) -> None:
        with self._lock:
            self.devices[serial] = dev
            self._ids.setdefault(serial, len(self._ids) + 1)

    def remove_device(self, serial: str) -> None:
        with self._lock:
            self.devices.pop(serial, None)

    def transport_id(self, serial: str) -> int:
        return self._ids[serial]

    def state_of(self, serial: str) -> str:
        dev = self.devices.get(serial)
        if dev is None:
            return "absent"
        try:
            return str(dev.state)
        except (ConnectionError, OSError):
            self.remove_device(serial)  # the emulator process is gone
            return "absent"

    def device_states(self) -> dict[str, str]:
        out = {}
        for s in list(self.devices):
            st = self.state_of(s)
            if st != "absent":
                out[s] = st
        return out

    def lookup(self, serial: str, *, need_online: bool) -> tuple[Any, str]:
        st = self.state_of(serial)
        if st == "absent":
            return None, f"device '{serial}' not found"
        if need_online and st != "device":
            return None, f"device {st}"
        return self.devices[serial], ""

    def __enter__(self) -> AdbTestServer:
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
